import { z } from "zod";
import { defaultConsoleMemoryBytes } from "./console/limits.js";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const optionalUrl = (protocols: readonly string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || URL.canParse(v), "must be a URL")
    .refine(
      // zod runs every refinement; the first one already reported a value that is no URL at all.
      (v) => v === undefined || !URL.canParse(v) || protocols.includes(new URL(v).protocol),
      `must start with ${protocols.map((p) => `${p}//`).join(" or ")}`,
    );

/** Every setting the process reads from its environment; the docs' configuration table mirrors it. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./.pixelhouse"),
  /**
   * Embedded Postgres's buffer pool (PGlite's `shared_buffers`), in MiB. Its pages live in the
   * process's memory for good once touched; reads past it come from the OS's file cache. At most
   * 1 GiB: PGlite's WebAssembly memory ends at 2 GiB, which Postgres shares with everything else.
   */
  PGLITE_SHARED_BUFFERS_MB: z.coerce.number().int().min(1).max(1024).default(32),
  DATABASE_URL: optionalUrl(["postgres:", "postgresql:"]),
  CLICKHOUSE_URL: optionalUrl(["http:", "https:"]),
  CLICKHOUSE_USER: z.string().default("default"),
  CLICKHOUSE_PASSWORD: z.string().default(""),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be a plain identifier (letters, digits, underscore)")
    .default("pixelhouse"),
  /**
   * Server only: inserts into `events` ask the server to batch them with every other writer's
   * (`async_insert = 1`) and still answer only once stored (`wait_for_async_insert = 1`).
   */
  CLICKHOUSE_ASYNC_INSERT: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  REDIS_URL: optionalUrl(["redis:", "rediss:"]),
  /** Prefix of every Redis key, so several deployments can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default("pixelhouse:"),
  KEY_SECRET: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || v.length >= 32, "must be at least 32 characters"),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** Bearer token that opens GET /metrics on the service's port; without it /metrics is not served there. */
  METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || v.length >= 16, "must be at least 16 characters"),
  /** A port of its own serving only /metrics, without a token (bind it to a private address). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  /** A port of its own for ClickHouse's HTTP interface (clients that cannot take a path prefix); bound like HOST. */
  CLICKHOUSE_HTTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Most rows one answer of the ClickHouse HTTP interface may hold. */
  CLICKHOUSE_HTTP_MAX_ROWS: z.coerce.number().int().min(1).max(100_000_000).default(1_000_000),
  /** `pixelhouse status` and /readyz call a background consumer behind when its oldest message is older. */
  CONSUMER_MAX_LAG_SECONDS: z.coerce.number().min(1).max(86_400).default(300),
  /** How long a verified key may be served from the in-process cache; revocation waits at most this long. */
  KEY_CACHE_MS: z.coerce.number().int().min(0).max(5000).default(4000),
  /** Bounds opening a Postgres connection and waiting for a free one of the pool (then 503). */
  PG_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /** How long a Redis command waits for its reply (then 503); also bounds a connection attempt. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** Circuit breaker per server store: this many outage errors in a row make it refuse calls at once… */
  STORE_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** …for this long, then one call probes the store again. */
  STORE_BREAKER_COOLDOWN_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /** How long the query API reuses an account's timezone and order settings; a direct edit waits at most this long. */
  ACCOUNT_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(4000),
  /** Ingestion batching: one warehouse INSERT per this many rows or this many ms, whichever comes first. */
  INGEST_FLUSH_ROWS: z.coerce.number().int().min(1).max(1_000_000).default(5000),
  INGEST_FLUSH_MS: z.coerce.number().int().min(0).max(10_000).default(20),
  /** Ingestion groups processed at once (1 suits the single-connection embedded stores). */
  INGEST_GROUPS: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * How long a copy waits for another writer's in-flight write of the same eventId before a 503. Longer
   * than a dead writer's liveness TTL (10 s), so a retry right after a crash takes the lease over
   * within its own request instead of answering 503.
   */
  DEDUP_INFLIGHT_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(12_000),
  /** eventId dedup window and the Redis digest-set layout (see docs/ingestion.md). */
  DEDUP_WINDOW_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  DEDUP_BUCKET_BITS: z.coerce.number().int().min(4).max(24).default(14),
  /**
   * Derived tables (docs/derived-tables.md): queries answer attribution from them where current.
   * The margin is how long an insert may take to become visible after the engine stamped its rows;
   * the refresh interval how often the worker in `serve` looks for new rows.
   */
  DERIVED_TABLES: z
    .enum(["true", "false", "1", "0"])
    .default("true")
    .transform((v) => v === "true" || v === "1"),
  /** Reader connections the query API's statements run on side by side (docs/performance.md). */
  QUERY_READERS: z.coerce.number().int().min(0).max(64).default(4),
  DERIVED_MARGIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  DERIVED_REFRESH_MS: z.coerce.number().int().min(100).max(3_600_000).default(2_000),
  /**
   * The least time between two cohort builds of a pixel; a process keeps a build it read for half of
   * it (0: builds whenever due, kept by nobody — for tests that settle again and again).
   */
  DERIVED_COHORT_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /**
   * The least time between two refreshes of a pixel's credit cells (each a statement per built shape);
   * queries credit the hours changed meanwhile one by one.
   */
  DERIVED_CREDIT_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(30_000),
  /** Stored IPs are truncated to these prefixes; forwarders receive the original. */
  IP_V4_PREFIX_BITS: z.coerce.number().int().min(0).max(32).default(24),
  IP_V6_PREFIX_BITS: z.coerce.number().int().min(0).max(128).default(48),
  /** Take the browser's IP from X-Forwarded-For (only behind a proxy you control). */
  TRUST_PROXY: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /** Token buckets per API key (requests/second, burst = 2 s worth) and per pixel + browser IP. */
  RATE_INGEST_PER_SEC: z.coerce.number().min(0.1).default(1000),
  RATE_QUERY_PER_SEC: z.coerce.number().min(0.1).default(50),
  RATE_COLLECT_PER_SEC: z.coerce.number().min(0.1).default(20),
  /** SQL console limits per query (docs/sql-console.md) and parallel console queries. */
  /** At most 3600: the console user's profile caps max_execution_time there (console-user.sql). */
  CONSOLE_MAX_EXECUTION_SECONDS: z.coerce.number().min(0.1).max(3600).default(30),
  CONSOLE_MAX_ROWS_TO_READ: z.coerce.number().int().min(1).default(1_000_000_000),
  CONSOLE_MAX_BYTES_TO_READ: z.coerce.number().int().min(1).default(100_000_000_000),
  /** Default: 1 GiB, or an eighth of the machine's memory when less (defaultConsoleMemoryBytes). */
  CONSOLE_MAX_MEMORY_BYTES: z.coerce
    .number()
    .int()
    .min(1_000_000)
    .default(() => defaultConsoleMemoryBytes()),
  /** The largest result one console query may answer (engine memory and encoded bytes), then 400. */
  CONSOLE_MAX_RESULT_BYTES: z.coerce.number().int().min(1024).default(67_108_864),
  /** Engine threads one console query may use; unset = cores / CONSOLE_READERS, at least 1. */
  CONSOLE_MAX_THREADS: z.coerce.number().int().min(1).max(256).optional(),
  CONSOLE_READERS: z.coerce.number().int().min(1).max(64).default(4),
  /** Console readers one pixel may hold at once (capped at CONSOLE_READERS). */
  CONSOLE_READERS_PER_PIXEL: z.coerce.number().int().min(1).max(64).default(2),
  /** How long a console query waits for a reader before 429 (its pixel's share is busy) or 503. */
  CONSOLE_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** The ClickHouse user console queries run as (server only; unset = CLICKHOUSE_USER). */
  CLICKHOUSE_CONSOLE_USER: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
  CLICKHOUSE_CONSOLE_PASSWORD: z.string().default(""),
  /** On first start of an empty embedded store, create a demo account, pixel and key. */
  DEMO_ON_FIRST_START: z
    .enum(["true", "false", "1", "0"])
    .default("true")
    .transform((v) => v === "true" || v === "1"),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Parses the environment; the first problem becomes one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string | undefined> = {};
  // An empty variable means "not set", so it takes the default rather than failing or becoming 0.
  for (const key of Object.keys(configSchema.shape)) picked[key] = env[key] === "" ? undefined : env[key];
  const parsed = configSchema.safeParse(picked);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = String(issue.path[0] ?? "environment");
  const raw = picked[name];
  // Secrets are never echoed, nor a password inside a URL.
  const safe = raw?.replace(/\/\/[^/@\s]*@/, "//***@");
  const secret = name.includes("SECRET") || name.includes("PASSWORD");
  const shown = safe === undefined || secret ? "" : ` (got "${safe}")`;
  throw new ConfigError(`invalid configuration: ${name} ${issue.message}${shown}`);
}

export const storeModes = (config: Config) => ({
  sql: config.DATABASE_URL ? "postgres" : "pglite",
  warehouse: config.CLICKHOUSE_URL ? "clickhouse" : "chdb",
  kv: config.REDIS_URL ? "redis" : "memory",
});
