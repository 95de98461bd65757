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

export class SqlUnavailableError extends SqlError {}

export function toSqlError(err: unknown): SqlError {
  if (err instanceof SqlError) return err;
  const e = err as { message?: string; code?: string };
  const code = typeof e?.code === "string" ? e.code : undefined;
  const message = e?.message ?? String(err);
  // Connection-level failures from pg carry errno codes (ECONNREFUSED…) or class 08 SQLSTATEs.
  if (code && (/^E[A-Z]+$/.test(code) || code.startsWith("08") || code === "57P01")) {
    return new SqlUnavailableError(message, code, { cause: err });
  }
  if (/Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(message)) {
    return new SqlUnavailableError(message, code, { cause: err });
  }
  return new SqlError(message, code, { cause: err });
}
