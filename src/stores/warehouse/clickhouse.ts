import {
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  ClickHouseError,
  ClickHouseLogLevel,
  createClient,
  type DataFormat,
  type ResultSet,
} from "@clickhouse/client";
import { type BreakerOptions, CircuitBreaker, DEFAULT_BREAKER } from "../breaker.js";
import {
  classifyWarehouseError,
  isWarehouseUnreachable,
  type Params,
  type QueryOptions,
  type QueryStats,
  type ReaderOptions,
  toWireParams,
  WarehouseError,
  type WarehouseStore,
  WarehouseUnavailableError,
} from "./port.js";
import { positionalRows, SHARED_SETTINGS } from "./settings.js";

export interface ClickHouseOptions {
  url: string;
  username: string;
  password: string;
  database: string;
  /** A pluggable transport (chDB's `chdb/connection` in tests); HTTP when absent. */
  connection?: ClickHouseClientConfigOptions["connection"];
  requestTimeoutMs?: number;
  breaker?: BreakerOptions;
  /**
   * Tables whose inserts the server batches with other clients' (`async_insert`) into one part, while
   * each insert still returns only once its rows are written (`wait_for_async_insert`):
   * docs/clickhouse-cluster.md, "Many writers, one table".
   */
  asyncInsertTables?: readonly string[];
}

/** Last in the settings, so no caller can turn the wait off: an acknowledged insert is a stored one. */
const ASYNC_INSERT = { async_insert: 1, wait_for_async_insert: 1 } as const;

/** ClickHouse server over HTTP with @clickhouse/client. */
export class ClickHouseWarehouse implements WarehouseStore {
  readonly kind = "clickhouse" as const;
  readonly streamStartBlocks = false;
  readonly materializedCte = false;
  private readonly readers = new Set<ClickHouseWarehouse>();

  private constructor(
    private readonly client: ClickHouseClient,
    readonly database: string,
    private readonly options: ClickHouseOptions,
    /** A reader over a pluggable connection shares its owner's transport and leaves it open. */
    private readonly sharesConnection = false,
    /** One per server: readers share their owner's. */
    private readonly breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER, Date.now, "warehouse"),
  ) {}

  static async open(options: ClickHouseOptions): Promise<ClickHouseWarehouse> {
    const base = clientBase(options);
    // The database may not exist yet: create it through a client bound to `default`.
    if (!options.connection) {
      const bootstrap = createClient({ ...base, database: "default" });
      try {
        await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${options.database}` });
      } catch (err) {
        throw mapClientError(err);
      } finally {
        await bootstrap.close();
      }
    }
    const client = createClient({ ...base, database: options.database });
    return new ClickHouseWarehouse(client, options.database, options);
  }

  /** A client of its own (own connection pool), possibly as another user; no database is created. */
  async openReader(reader: ReaderOptions = {}): Promise<ClickHouseWarehouse> {
    const options: ClickHouseOptions = {
      ...this.options,
      database: reader.database ?? this.database,
      ...(reader.requestTimeoutMs !== undefined ? { requestTimeoutMs: reader.requestTimeoutMs } : {}),
      ...(reader.username !== undefined
        ? { username: reader.username, password: reader.password ?? "" }
        : {}),
    };
    const client = createClient({ ...clientBase(options), database: options.database });
    const store = new ClickHouseWarehouse(
      client,
      options.database,
      options,
      !!options.connection,
      this.breaker,
    );
    this.readers.add(store);
    return store;
  }

  async query<T>(sql: string, params?: Params, options?: QueryOptions): Promise<T[]> {
    return (await this.queryWithStats<T>(sql, params, options)).rows;
  }

  async queryWithStats<T>(
    sql: string,
    params?: Params,
    options?: QueryOptions,
  ): Promise<{ rows: T[]; stats: QueryStats }> {
    const { body, stats } = await this.timed(sql, params, options, "JSONEachRow" as const, (rs) =>
      rs.json<T>(),
    );
    return { rows: body, stats };
  }

  async queryText(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ text: string; stats: QueryStats }> {
    const format = options.format as DataFormat;
    const { body, stats } = await this.timed(sql, params, options, format, (rs) => rs.text());
    return { text: body, stats };
  }

  async queryBytes(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }> {
    const started = performance.now();
    return this.guard(async () => {
      try {
        // exec: the body as the server sends it, whatever the format (query() parses known ones).
        const res = await this.client.exec({
          query: `${sql.trimEnd().replace(/;$/, "")}\nFORMAT ${options.format}`,
          query_params: toWireParams(params),
          ...readOptions(options),
        });
        const chunks: Buffer[] = [];
        for await (const chunk of res.stream) chunks.push(Buffer.from(chunk as Uint8Array));
        const summary = parseSummary(res.response_headers["x-clickhouse-summary"]);
        return {
          bytes: Buffer.concat(chunks),
          stats: {
            elapsedMs: performance.now() - started,
            rowsRead: summary.read_rows,
            bytesRead: summary.read_bytes,
          },
        };
      } catch (err) {
        throw mapClientError(err);
      }
    });
  }

  /** One read, its whole body taken by `read`, with the elapsed time and the server's read counters. */
  private async timed<F extends DataFormat, R>(
    sql: string,
    params: Params | undefined,
    options: QueryOptions | undefined,
    format: F,
    read: (rs: ResultSet<F>) => Promise<R>,
  ): Promise<{ body: R; stats: QueryStats }> {
    const started = performance.now();
    return this.guard(async () => {
      try {
        const rs = await this.client.query({
          query: sql.trimEnd().replace(/;$/, ""),
          query_params: toWireParams(params),
          format,
          ...readOptions(options),
        });
        const body = await read(rs);
        const summary = parseSummary(rs.response_headers["x-clickhouse-summary"]);
        return {
          body,
          stats: {
            elapsedMs: performance.now() - started,
            rowsRead: summary.read_rows,
            bytesRead: summary.read_bytes,
          },
        };
      } catch (err) {
        throw mapClientError(err);
      }
    });
  }

  /**
   * The HTTP response body as it arrives. ClickHouse 25.11+ marks an exception written after the first
   * bytes (the client throws it); older servers append its text to the body, so the last line is held
   * back until the end and a `Code: N. DB::Exception:` there is thrown, not passed on as data.
   */
  async *queryStream(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): AsyncGenerator<Uint8Array> {
    const rs = await this.guard(async () => {
      try {
        return await this.client.query({
          query: sql.trimEnd().replace(/;$/, ""),
          query_params: toWireParams(params),
          format: options.format as DataFormat,
          ...readOptions(options),
        });
      } catch (err) {
        throw mapClientError(err);
      }
    });
    const rows = rs.stream();
    let held: string | undefined;
    try {
      for await (const batch of rows as AsyncIterable<{ text: string }[]>) {
        let out = "";
        for (const row of batch) {
          if (held !== undefined) out += `${held}\n`;
          held = row.text;
        }
        if (out) yield Buffer.from(out);
      }
    } catch (err) {
      throw mapClientError(err);
    } finally {
      rows.destroy();
    }
    if (held === undefined) return;
    const exception = /Code: (\d+)\. DB::Exception: .*/.exec(held);
    if (exception) throw classifyWarehouseError(exception[0], Number(exception[1]), undefined);
    yield Buffer.from(`${held}\n`);
  }

  async command(sql: string, params?: Params, options?: QueryOptions): Promise<void> {
    await this.guard(async () => {
      try {
        await this.client.command({
          query: sql.trimEnd().replace(/;$/, ""),
          query_params: toWireParams(params),
          ...(options?.settings ? { clickhouse_settings: { ...options.settings } } : {}),
          ...(options?.signal ? { abort_signal: options.signal } : {}),
        });
      } catch (err) {
        throw mapClientError(err);
      }
    });
  }

  async insert(
    table: string,
    rows: readonly Record<string, unknown>[],
    options?: QueryOptions,
  ): Promise<void> {
    if (rows.length === 0) return;
    // Positional rows under one column list, as the chDB adapter sends them (see compactRows).
    const { columns, values } = positionalRows(rows);
    const settings = this.options.asyncInsertTables?.includes(table)
      ? { ...options?.settings, ...ASYNC_INSERT }
      : options?.settings;
    await this.guard(async () => {
      try {
        await this.client.insert({
          table,
          values,
          format: "JSONCompactEachRow",
          columns: columns as [string, ...string[]],
          ...(settings ? { clickhouse_settings: { ...settings } } : {}),
          ...(options?.signal ? { abort_signal: options.signal } : {}),
        });
      } catch (err) {
        throw mapClientError(err);
      }
    });
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  private guard<T>(fn: () => Promise<T>): Promise<T> {
    return this.breaker.run(fn, isWarehouseUnreachable, (retryAfterMs) => {
      const err = new WarehouseUnavailableError(
        `the warehouse failed repeatedly; not asked again for ${retryAfterMs} ms`,
      );
      err.retryAfterMs = retryAfterMs;
      return err;
    });
  }

  async close(): Promise<void> {
    for (const reader of this.readers) await reader.close();
    this.readers.clear();
    if (!this.sharesConnection) await this.client.close();
  }
}

function clientBase(options: ClickHouseOptions) {
  return {
    url: options.url,
    username: options.username,
    password: options.password,
    request_timeout: options.requestTimeoutMs ?? 300_000,
    // Progress headers keep long queries' connections alive through load balancers' idle timeouts.
    clickhouse_settings: {
      ...SHARED_SETTINGS,
      send_progress_in_http_headers: 1 as const,
      http_headers_progress_interval_ms: "110000",
    },
    // Failures reach callers as typed errors; the client's own console logging would repeat them.
    log: { level: ClickHouseLogLevel.OFF },
    ...(options.connection ? { connection: options.connection } : {}),
  };
}

/**
 * Settings and abort signal of a read. With a signal, the server cancels the query when the request
 * is closed (`cancel_http_readonly_queries_on_client_close`; it applies to read-only queries only):
 * without it, an aborted request's query would run on to its time limit.
 */
function readOptions(options: QueryOptions | undefined) {
  const settings: Record<string, string | number | boolean> = {
    ...options?.settings,
    ...(options?.signal ? { cancel_http_readonly_queries_on_client_close: 1 } : {}),
  };
  return {
    ...(Object.keys(settings).length > 0 ? { clickhouse_settings: settings } : {}),
    ...(options?.signal ? { abort_signal: options.signal } : {}),
  };
}

function parseSummary(header: unknown): { read_rows: number; read_bytes: number } {
  const text = Array.isArray(header) ? header[0] : header;
  if (typeof text !== "string") return { read_rows: 0, read_bytes: 0 };
  try {
    const s = JSON.parse(text) as { read_rows?: string; read_bytes?: string };
    return { read_rows: Number(s.read_rows ?? 0), read_bytes: Number(s.read_bytes ?? 0) };
  } catch {
    return { read_rows: 0, read_bytes: 0 };
  }
}

/**
 * The typed error of a @clickhouse/client failure: a server exception by its code; the client's own
 * abort (the caller's signal) as a cancelled query; anything else — refused, reset, DNS, the
 * request's own timeout ("Timeout error."), a proxy's 502/503/504 page, which the client hands over
 * as a plain Error with the page as its message — as unavailable.
 */
export function mapClientError(err: unknown): WarehouseError {
  if (err instanceof WarehouseError) return err;
  if (err instanceof ClickHouseError) return classifyWarehouseError(err.message, Number(err.code), err);
  const e = err as { message?: string; code?: string; name?: string; type?: string };
  // A ClickHouseError from another copy of the client library (pluggable connections) fails instanceof.
  if (typeof e?.code === "string" && /^\d+$/.test(e.code) && typeof e.type === "string") {
    return classifyWarehouseError(e.message ?? String(err), Number(e.code), err);
  }
  const message = e?.message ?? String(err);
  if (e?.name === "AbortError") return classifyWarehouseError(message, 159, err);
  // Not an outage: an aborted request must never count towards opening the breaker.
  if (message === "The user aborted a request.") return classifyWarehouseError(message, 394, err);
  const code = /Code: (\d+)\./.exec(message)?.[1];
  if (code) return classifyWarehouseError(message, Number(code), err);
  // Socket-level failures: refused, reset, DNS, timeouts of the HTTP request itself.
  return new WarehouseUnavailableError(message, undefined, { cause: err });
}
