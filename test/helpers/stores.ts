import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { MemoryKv } from "../../src/stores/kv/memory.js";
import type { KvStore } from "../../src/stores/kv/port.js";
import { RedisKv } from "../../src/stores/kv/redis.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { ChdbWarehouse } from "../../src/stores/warehouse/chdb.js";
import { ClickHouseWarehouse } from "../../src/stores/warehouse/clickhouse.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { TEST_CLICKHOUSE_URL, TEST_DATABASE_URL, TEST_REDIS_URL } from "./env.js";

export const uniqueName = (prefix: string) => `${prefix}_${randomBytes(5).toString("hex")}`;

export function tempDir(prefix = "pixelhouse-test-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Opened<T> {
  store: T;
  close(): Promise<void>;
}

/** A fresh, empty database on the test Postgres server (or the one of `server`): its URL and how to drop it. */
export async function createTestDatabase(
  prefix: string,
  server = TEST_DATABASE_URL,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!server) throw new Error("TEST_DATABASE_URL is not set");
  const admin = server;
  const name = uniqueName(prefix);
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A fresh, empty Postgres database on the test server; dropped on close. */
export async function openPostgres(): Promise<Opened<SqlStore>> {
  const db = await createTestDatabase("pxh_test");
  const store = new PgSqlStore(db.url);
  return {
    store,
    async close() {
      await store.close();
      await db.drop();
    },
  };
}

export async function openPglite(): Promise<Opened<SqlStore>> {
  const store = await PgliteSqlStore.open();
  return { store, close: () => store.close() };
}

export const sqlAdapters: { name: string; available: boolean; open: () => Promise<Opened<SqlStore>> }[] = [
  { name: "pglite", available: true, open: openPglite },
  { name: "postgres", available: !!TEST_DATABASE_URL, open: openPostgres },
];

/** An adapter's store with every Postgres migration applied (no warehouse: SQL-only suites). */
export async function openMigrated(adapter: (typeof sqlAdapters)[number]): Promise<Opened<SqlStore>> {
  const opened = await adapter.open();
  for (const m of readMigrations(join(SQL_DIR, "postgres"))) await opened.store.exec(m.sql);
  return opened;
}

/** chDB in a temp directory (one per test file: the engine allows one directory per process). */
export async function openChdb(database = uniqueName("pxh")): Promise<Opened<WarehouseStore>> {
  const dir = tempDir("pixelhouse-ch-");
  const store = await ChdbWarehouse.open(dir.path, database);
  return {
    store,
    async close() {
      await store.close();
      dir.remove();
    },
  };
}

export async function openClickHouseServer(): Promise<Opened<WarehouseStore>> {
  if (!TEST_CLICKHOUSE_URL) throw new Error("TEST_CLICKHOUSE_URL is not set");
  const url = new URL(TEST_CLICKHOUSE_URL);
  const database = uniqueName("pxh_test");
  const store = await ClickHouseWarehouse.open({
    url: `${url.protocol}//${url.host}`,
    username: decodeURIComponent(url.username) || "default",
    password: decodeURIComponent(url.password),
    database,
  });
  return {
    store,
    async close() {
      await store.command(`DROP DATABASE IF EXISTS ${database}`);
      await store.close();
    },
  };
}

export async function openRedis(): Promise<Opened<KvStore>> {
  if (!TEST_REDIS_URL) throw new Error("TEST_REDIS_URL is not set");
  const store = new RedisKv(TEST_REDIS_URL, `${uniqueName("pxh_test")}:`);
  return { store, close: () => store.close() };
}

export const kvAdapters: { name: string; available: boolean; open: () => Promise<Opened<KvStore>> }[] = [
  { name: "memory", available: true, open: async () => ({ store: new MemoryKv(), close: async () => {} }) },
  { name: "redis", available: !!TEST_REDIS_URL, open: openRedis },
];
