import { join } from "node:path";
import { Redis } from "ioredis";
import type { Bus } from "../../src/stores/bus/port.js";
import { RedisBus } from "../../src/stores/bus/redis.js";
import { SqlBus } from "../../src/stores/bus/sql.js";
import { RedisKv } from "../../src/stores/kv/redis.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { TEST_DATABASE_URL, TEST_REDIS_URL } from "./env.js";
import { createTestDatabase, tempDir, uniqueName } from "./stores.js";

/**
 * The Postgres schema the bus and the outbox need (migrations up to 005, and 008: how payloads are
 * stored), applied without the warehouse: these suites never touch ClickHouse. A later migration that
 * changes the bus's or the outbox's tables is added here too.
 */
export async function applyEventsSchema(sql: SqlStore): Promise<void> {
  for (const m of readMigrations(join(SQL_DIR, "postgres"))) {
    if (m.version <= 5 || m.version === 8) await sql.exec(m.sql);
  }
}

/** A SQL store that can be closed and opened again on the same data (to test restarts). */
export interface ReopenableSql {
  name: string;
  available: boolean;
  open(): Promise<{ sql: SqlStore; reopen(): Promise<SqlStore>; close(): Promise<void> }>;
}

export const reopenableSql: ReopenableSql[] = [
  {
    name: "pglite",
    available: true,
    async open() {
      const dir = tempDir("pixelhouse-bus-");
      let sql: SqlStore = await PgliteSqlStore.open(dir.path);
      await applyEventsSchema(sql);
      return {
        sql,
        async reopen() {
          await sql.close();
          sql = await PgliteSqlStore.open(dir.path);
          return sql;
        },
        async close() {
          await sql.close();
          dir.remove();
        },
      };
    },
  },
  {
    name: "postgres",
    available: !!TEST_DATABASE_URL,
    async open() {
      const db = await createTestDatabase("pxh_bus");
      let sql: SqlStore = new PgSqlStore(db.url);
      await applyEventsSchema(sql);
      return {
        sql,
        async reopen() {
          await sql.close();
          sql = new PgSqlStore(db.url);
          return sql;
        },
        async close() {
          await sql.close();
          await db.drop();
        },
      };
    },
  },
];

export interface OpenedBus {
  bus: Bus;
  /** Drops every connection and opens the bus again over the same data. */
  reopen(): Promise<Bus>;
  close(): Promise<void>;
}

export const busAdapters: { name: string; available: boolean; open(): Promise<OpenedBus> }[] = [
  ...reopenableSql.map((s) => ({
    name: `sql (${s.name})`,
    available: s.available,
    async open(): Promise<OpenedBus> {
      const opened = await s.open();
      return {
        bus: new SqlBus(opened.sql),
        reopen: async () => new SqlBus(await opened.reopen()),
        close: () => opened.close(),
      };
    },
  })),
  {
    name: "redis",
    available: !!TEST_REDIS_URL,
    async open(): Promise<OpenedBus> {
      const prefix = `${uniqueName("pxh_bus")}:`;
      let kv = new RedisKv(TEST_REDIS_URL!, prefix);
      return {
        bus: new RedisBus(kv.client, prefix),
        async reopen() {
          await kv.close();
          kv = new RedisKv(TEST_REDIS_URL!, prefix);
          return new RedisBus(kv.client, prefix);
        },
        async close() {
          await dropRedisPrefix(kv.client, prefix);
          await kv.close();
        },
      };
    },
  },
];

/** Deletes a test's private Redis keys (tests only: production code never SCANs). */
export async function dropRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
}

/** A Redis client on a port nothing listens on, failing at once: a real bus that refuses writes. */
export function unreachableRedisBus(): { bus: Bus; close(): void } {
  const client = new Redis("redis://127.0.0.1:1", {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  return { bus: new RedisBus(client), close: () => client.disconnect() };
}

/** Polls `probe` until it returns a value (bounded): for background work, never a timing assertion. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  tries = 400,
  delayMs = 25,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, delayMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}
