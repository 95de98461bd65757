/** Values a statement may bind as `$N`. */
export type SqlValue = string | number | bigint | boolean | null | Date | Uint8Array | SqlValue[] | object;

export interface SqlResult<T> {
  rows: T[];
  rowCount: number;
}

/** Something that runs statements: the store itself or an open transaction. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, params?: readonly SqlValue[]): Promise<SqlResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/** The OLTP store (Postgres). Adapters: pg Pool, PGlite. */
export interface SqlStore extends SqlExecutor {
  readonly kind: "postgres" | "pglite";
  /** Runs `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` while no other caller holds `key`, in this process or in any process sharing the store
   * (Postgres: a session advisory lock on a connection of its own; PGlite: the data-dir lock makes
   * this process the only one). No transaction: `fn` may await other stores without holding up
   * this one's statements.
   */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Postgres error classes callers branch on; anything else stays a SqlError. */
export class SqlError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  get isUniqueViolation() {
    return this.code === "23505";
  }
  get isForeignKeyViolation() {
    return this.code === "23503";
  }
}

/** The store cannot be used now (down, restarting, out of connections): the request may be retried. */
export class SqlUnavailableError extends SqlError {
  /** Set when the store's circuit breaker refused the call: how long until it is tried again. */
  retryAfterMs?: number;
}

/**
 * SQLSTATEs that mean "the server cannot serve this now", not "this statement is wrong": class 08
 * (connection exceptions), 57P01–57P05 (admin/crash shutdown, cannot connect now — starting up or
 * shutting down —, database dropped, idle session timeout), 53000–53300 (insufficient resources, disk
 * full, out of memory, too many connections), 58000/58030 (system and I/O errors) and 25006 (a
 * read-only transaction: the server became a standby after a failover).
 */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "57P04",
  "57P05",
  "53000",
  "53100",
  "53200",
  "53300",
  "58000",
  "58030",
  "25006",
]);

/**
 * Errors of pg and pg-pool without a SQLSTATE whose connection is gone or never came: the server
 * closed it, it broke before, it timed out, or the pool is shut (the process is stopping). PGlite
 * says "PGlite is closed" once its instance is closed.
 */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end|Query read timeout|PGlite is closed)/;

/** Whether a driver error means the SQL store is not available (see the two lists above). */
export function isSqlOutage(code: string | undefined, message: string): boolean {
  if (code !== undefined) {
    // Node's socket errors (ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, EAI_AGAIN, ERR_STREAM_…).
    if (/^E[A-Z0-9_]+$/.test(code)) return true;
    if (code.startsWith("08") || UNAVAILABLE_SQLSTATES.has(code)) return true;
  }
  return UNAVAILABLE_MESSAGES.test(message);
}

export function toSqlError(err: unknown): SqlError {
  if (err instanceof SqlError) return err;
  const e = err as { message?: string; code?: unknown };
  const code = typeof e?.code === "string" ? e.code : undefined;
  const message = e?.message ?? String(err);
  if (isSqlOutage(code, message)) return new SqlUnavailableError(message, code, { cause: err });
  return new SqlError(message, code, { cause: err });
}
