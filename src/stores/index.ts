import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.js";
import type { Bus } from "./bus/port.js";
import { RedisBus } from "./bus/redis.js";
import { SqlBus } from "./bus/sql.js";
import { lockDataDir } from "./data-dir-lock.js";
import { DEFAULT_DEDUP, type DedupStore } from "./dedup/port.js";
import { DEDUP_PERIOD_DAYS, RedisDedupStore } from "./dedup/redis.js";
import { SqlDedupStore } from "./dedup/sql.js";
import type { IdentityGraphStore } from "./identity/port.js";
import { SqlIdentityGraphStore } from "./identity/sql.js";
import { MemoryKv } from "./kv/memory.js";
import type { KvStore } from "./kv/port.js";
import { RedisKv } from "./kv/redis.js";
import type { SqlStore } from "./sql/port.js";
import { LazyWarehouse } from "./warehouse/lazy.js";
import type { WarehouseStore } from "./warehouse/port.js";

export interface Stores {
  sql: SqlStore;
  warehouse: WarehouseStore;
  kv: KvStore;
  /** The eventId dedup set: Redis digests with a Redis KV, full ids in the SQL store when embedded. */
  dedup: DedupStore;
  /** The event bus: Redis Streams with a Redis KV, tables in the SQL store otherwise (durable). */
  bus: Bus;
  /** The identity graph of record: Postgres `identity_aliases` on a server, LevelDB in DATA_DIR/identity when embedded. */
  identity: IdentityGraphStore;
  /** The server secret keyed into API key hashes. */
  keySecret: string;
  close(): Promise<void>;
}

export class StoreConfigError extends Error {}

export interface OpenOptions {
  /**
   * Open the warehouse on its first use rather than now (commands: most never query it, and chDB
   * costs ~150 MB the moment it loads). Its pending migrations run when it opens.
   */
  lazyWarehouse?: boolean;
}

/**
 * Opens each store with the adapter its configuration picks; the only place that knows adapters.
 * Adapters are imported only when picked: a process on server stores never loads chDB or PGlite.
 */
export async function openStores(
  config: Config,
  purpose: string,
  options: OpenOptions = {},
): Promise<Stores> {
  const embedded = !config.DATABASE_URL || !config.CLICKHOUSE_URL;
  const release = embedded ? lockDataDir(config.DATA_DIR, purpose) : () => {};
  const opened: { close(): Promise<void> }[] = [];
  try {
    const keySecret = resolveKeySecret(config);
    const breaker = { failures: config.STORE_BREAKER_FAILURES, cooldownMs: config.STORE_BREAKER_COOLDOWN_MS };
    const sql: SqlStore = config.DATABASE_URL
      ? new (await import("./sql/pg.js")).PgSqlStore(config.DATABASE_URL, {
          connectTimeoutMs: config.PG_CONNECT_TIMEOUT_MS,
          breaker,
        })
      : await (await import("./sql/pglite.js")).PgliteSqlStore.open(join(config.DATA_DIR, "pg"), {
          sharedBuffersMb: config.PGLITE_SHARED_BUFFERS_MB,
        });
    opened.push(sql);
    // Embedded Postgres means a data directory locked to this process: the graph can live beside it
    // in LevelDB, off PGlite's one thread and on a thread of its own (docs/identity.md).
    const identity: IdentityGraphStore = config.DATABASE_URL
      ? new SqlIdentityGraphStore(sql)
      : new (await import("./identity/level-thread.js")).LevelThreadIdentityGraphStore(
          join(config.DATA_DIR, "identity"),
          sql,
        );
    opened.push(identity);
    const openWarehouse = async (): Promise<WarehouseStore> =>
      config.CLICKHOUSE_URL
        ? (await import("./warehouse/clickhouse.js")).ClickHouseWarehouse.open({
            url: config.CLICKHOUSE_URL,
            username: config.CLICKHOUSE_USER,
            password: config.CLICKHOUSE_PASSWORD,
            database: config.CLICKHOUSE_DATABASE,
            breaker,
            // Ingestion is the one table many processes write small batches into.
            asyncInsertTables: config.CLICKHOUSE_ASYNC_INSERT ? ["events"] : [],
          })
        : (await import("./warehouse/chdb.js")).ChdbWarehouse.open(
            join(config.DATA_DIR, "ch"),
            config.CLICKHOUSE_DATABASE,
          );
    const warehouse: WarehouseStore = options.lazyWarehouse
      ? new LazyWarehouse(
          config.CLICKHOUSE_URL ? "clickhouse" : "chdb",
          config.CLICKHOUSE_DATABASE,
          openWarehouse,
        )
      : await openWarehouse();
    opened.push(warehouse);
    const kv = config.REDIS_URL
      ? new RedisKv(config.REDIS_URL, config.REDIS_KEY_PREFIX, {
          commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
          breaker,
        })
      : new MemoryKv();
    opened.push(kv);
    const dedupOptions = { ...DEFAULT_DEDUP, windowDays: config.DEDUP_WINDOW_DAYS };
    const dedup: DedupStore =
      kv instanceof RedisKv
        ? new RedisDedupStore(kv.client, {
            ...dedupOptions,
            periodDays: DEDUP_PERIOD_DAYS,
            bucketBits: config.DEDUP_BUCKET_BITS,
            prefix: config.REDIS_KEY_PREFIX,
            mayHoldIds: (sinceMs) => warehouseHoldsIdsSince(warehouse, sinceMs),
          })
        : new SqlDedupStore(sql, { ...dedupOptions, exclusive: !config.DATABASE_URL });
    const bus: Bus =
      kv instanceof RedisKv ? new RedisBus(kv.client, config.REDIS_KEY_PREFIX, kv.breaker) : new SqlBus(sql);
    return {
      sql,
      warehouse,
      kv,
      dedup,
      bus,
      identity,
      keySecret,
      async close() {
        await dedup.close().catch(() => {});
        for (const s of opened.reverse()) await s.close().catch(() => {});
        release();
      },
    };
  } catch (err) {
    for (const s of opened.reverse()) await s.close().catch(() => {});
    release();
    throw err;
  }
}

/** Whether the warehouse holds any event with a client eventId received since `sinceMs`. */
async function warehouseHoldsIdsSince(warehouse: WarehouseStore, sinceMs: number): Promise<boolean> {
  const rows = await warehouse.query<{ n: number }>(
    "SELECT count() AS n FROM (SELECT 1 FROM events WHERE client_event_id AND received_at >= {since:DateTime64(3)} LIMIT 1)",
    { since: new Date(sinceMs) },
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * KEY_SECRET when set. Embedded Postgres keeps a generated one beside its data (mode 0600); a server
 * Postgres is shared by several processes, so there the secret must be configured.
 */
export function resolveKeySecret(config: Config): string {
  if (config.KEY_SECRET) return config.KEY_SECRET;
  if (config.DATABASE_URL) {
    throw new StoreConfigError(
      "invalid configuration: KEY_SECRET is required when DATABASE_URL is set (every process must hash keys alike)",
    );
  }
  mkdirSync(config.DATA_DIR, { recursive: true });
  const file = join(config.DATA_DIR, "key-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return secret;
}
