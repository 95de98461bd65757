/**
 * The warehouse (ClickHouse) port. Both adapters run the same ClickHouse SQL; values only ever travel
 * as `{name:Type}` bound parameters, normalised here by `toWireParams`.
 */
export type ParamValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | Date
  | readonly ParamValue[]
  | { readonly [key: string]: ParamValue };

export type Params = Readonly<Record<string, ParamValue>>;

export interface QueryOptions {
  /** Per-query ClickHouse settings (max_execution_time, readonly…). */
  settings?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Stops the query. On a server the HTTP request is closed and a read-only query is cancelled with
   * it; a chDB reader has the engine kill it (`KILL QUERY` from its owner's session) and settles only
   * once the engine has let go, so a reader is never handed on while its last query still runs.
   */
  signal?: AbortSignal;
}

/** A separate connection of the same warehouse (see `openReader`). */
export interface ReaderOptions {
  /** The database unqualified names resolve in (default: the store's). It must exist. */
  database?: string;
  /** Server only: how long a request may take before the client gives up (default: the store's). */
  requestTimeoutMs?: number;
  /** Another ClickHouse user (server only: chDB has no users, so it keeps its single identity). */
  username?: string;
  password?: string;
}

export interface QueryStats {
  elapsedMs: number;
  rowsRead: number;
  bytesRead: number;
}

export interface WarehouseStore {
  readonly kind: "clickhouse" | "chdb";
  /**
   * True when `queryStream` parses and analyses the query — constant expressions and scalar
   * subqueries included — on the calling thread before its first chunk (chDB), so a caller that must
   * not hold the event loop asks `queryText` (computed off it) instead.
   */
  readonly streamStartBlocks: boolean;
  /**
   * True when `WITH name AS MATERIALIZED (…)` under `enable_materialized_cte = 1` runs the CTE once
   * and reads every reference from its result (ClickHouse 26.3+: chDB). On older servers (the pinned
   * 25.8) the keyword is a syntax error, so a caller writes the plain CTE there.
   */
  readonly materializedCte: boolean;
  /** The database every unqualified table name resolves in. */
  readonly database: string;
  /** Runs a SELECT and returns its rows as objects (JSONEachRow). */
  query<T = Record<string, unknown>>(sql: string, params?: Params, options?: QueryOptions): Promise<T[]>;
  /** Like `query`, with the engine's read statistics. */
  queryWithStats<T = Record<string, unknown>>(
    sql: string,
    params?: Params,
    options?: QueryOptions,
  ): Promise<{ rows: T[]; stats: QueryStats }>;
  /** Like `queryWithStats`, with the output in the engine's `format` (CSVWithNames, JSONCompactEachRow…) as text. */
  queryText(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ text: string; stats: QueryStats }>;
  /** Like `queryText`, with the output as bytes: for binary formats (Parquet, Arrow, Native, RowBinary). */
  queryBytes(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }>;
  /**
   * Like `queryText`, with the output handed over as the engine produces it, chunk by chunk. Leaving
   * the iteration early (break, return, throw) cancels the query; an engine failure after the first
   * chunk is thrown from the iteration.
   */
  queryStream(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): AsyncIterable<Uint8Array>;
  /**
   * A separate connection to the same warehouse: its own session (chDB runs one query at a time per
   * session, so a long read there never queues the others), optionally another database and user.
   * A reader serves one caller at a time; it is closed with this store.
   */
  openReader(options?: ReaderOptions): Promise<WarehouseStore>;
  /** Runs a statement that returns nothing (DDL, INSERT … SELECT, ALTER). */
  command(sql: string, params?: Params, options?: QueryOptions): Promise<void>;
  /** Inserts rows in one batch. Column values follow ClickHouse's JSON input rules. */
  insert(table: string, rows: readonly Record<string, unknown>[], options?: QueryOptions): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Typed engine failures: callers branch on the class, never on message text. */
export class WarehouseError extends Error {
  constructor(
    message: string,
    readonly clickhouseCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
/** Bad SQL text (syntax). */
export class WarehouseSyntaxError extends WarehouseError {}
/** Unknown table, column, function, database or setting. */
export class WarehouseUnknownIdentifierError extends WarehouseError {}
/** A bound parameter was missing or did not fit its declared type. */
export class WarehouseParameterError extends WarehouseError {}
/** Time, memory, rows or bytes limit hit. */
export class WarehouseLimitError extends WarehouseError {}
/** The statement was refused by permissions or readonly mode. */
export class WarehouseAccessError extends WarehouseError {}
/** The engine could not be reached, is closed or too busy now: retryable. */
export class WarehouseUnavailableError extends WarehouseError {
  /** Set when the store's circuit breaker refused the call: how long until it is tried again. */
  retryAfterMs?: number;
}

const SYNTAX = new Set([62]);
const UNKNOWN = new Set([16, 46, 47, 60, 81, 115, 36, 10, 179, 8]);
const PARAMETER = new Set([456, 457, 6, 27, 41, 53, 69, 70, 72, 26, 38, 117, 130, 386, 43]);
const LIMIT = new Set([158, 159, 160, 241, 307, 396, 394]);
const ACCESS = new Set([164, 497, 516, 192, 193, 194, 195, 291]);
/**
 * Network failures (SOCKET_TIMEOUT 209, NETWORK_ERROR 210, DNS_ERROR 198, ALL_CONNECTION_TRIES_FAILED
 * 279, NO_FREE_CONNECTION 203), coordination and replicas (KEEPER_EXCEPTION 999, NO_ZOOKEEPER 225,
 * TABLE_IS_READ_ONLY 242, TOO_FEW_LIVE_REPLICAS 285), and "not now" answers: TOO_MANY_SIMULTANEOUS_QUERIES
 * 202 (a concurrency cap: the same query succeeds once others finish), TOO_MANY_PARTS 252 (inserts
 * throttled until merges catch up), CANNOT_SCHEDULE_TASK 439, SYSTEM_ERROR 425.
 */
const UNAVAILABLE = new Set([209, 210, 198, 279, 203, 999, 225, 242, 285, 202, 252, 439, 425]);
/** The unavailable codes where the server itself was not reached: what the circuit breaker counts. */
const UNREACHABLE = new Set([209, 210, 198, 279, 203]);

/**
 * Whether the server could not be reached at all (socket errors, timeouts, a proxy's 502/503 carry
 * no ClickHouse code), as opposed to a server that answered "busy": only the former opens the
 * breaker, so one user's concurrency cap never makes the warehouse refuse everyone.
 */
export function isWarehouseUnreachable(err: unknown): boolean {
  return (
    err instanceof WarehouseUnavailableError &&
    (err.clickhouseCode === undefined || UNREACHABLE.has(err.clickhouseCode))
  );
}

/** Maps a ClickHouse exception code (from either adapter) to the typed error. */
export function classifyWarehouseError(
  message: string,
  code: number | undefined,
  cause: unknown,
): WarehouseError {
  const clean = message.replace(/\s*\(version [^)]*\)\s*$/, "");
  if (code === undefined) return new WarehouseError(clean, code, { cause });
  if (SYNTAX.has(code)) return new WarehouseSyntaxError(clean, code, { cause });
  if (UNKNOWN.has(code)) return new WarehouseUnknownIdentifierError(clean, code, { cause });
  if (PARAMETER.has(code)) return new WarehouseParameterError(clean, code, { cause });
  if (LIMIT.has(code)) return new WarehouseLimitError(clean, code, { cause });
  if (ACCESS.has(code)) return new WarehouseAccessError(clean, code, { cause });
  if (UNAVAILABLE.has(code)) return new WarehouseUnavailableError(clean, code, { cause });
  return new WarehouseError(clean, code, { cause });
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** UTC text ClickHouse parses for Date, DateTime and DateTime64 parameters alike (keeps milliseconds). */
export function formatDateTime(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

type WireValue = string | number | boolean | null | WireValue[] | { [key: string]: WireValue };

function toWire(v: ParamValue): WireValue {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new WarehouseParameterError(`parameter value ${v} is not a finite number`);
    return v;
  }
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw new WarehouseParameterError("parameter value is an invalid Date");
    return formatDateTime(v);
  }
  if (Array.isArray(v)) return v.map(toWire);
  const out: { [key: string]: WireValue } = {};
  for (const [k, x] of Object.entries(v)) out[k] = toWire(x as ParamValue);
  return out;
}

/** The one place where parameter values are shaped for the engine, identically for both adapters. */
export function toWireParams(params: Params | undefined): Record<string, WireValue> {
  const out: Record<string, WireValue> = {};
  if (!params) return out;
  for (const [k, v] of Object.entries(params)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new WarehouseParameterError(`bad parameter name "${k}"`);
    out[k] = toWire(v);
  }
  return out;
}
