import { mkdirSync } from "node:fs";
import { type ChdbResult, Session } from "chdb";
import {
  classifyWarehouseError,
  type Params,
  type QueryOptions,
  type QueryStats,
  type ReaderOptions,
  toWireParams,
  WarehouseError,
  WarehouseParameterError,
  type WarehouseStore,
  WarehouseUnavailableError,
} from "./port.js";
import { compactRows, SHARED_SETTINGS, settingsClause } from "./settings.js";

/**
 * chDB: the ClickHouse engine inside this process. One Session per data directory per process (the
 * engine refuses a second directory), and `USE` is session state, so one adapter owns the session.
 */
export class ChdbWarehouse implements WarehouseStore {
  readonly kind = "chdb" as const;
  private readonly readers = new Set<ChdbWarehouse>();

  private constructor(
    private readonly session: Session,
    readonly database: string,
    private readonly dir: string,
    /** A reader's session serves one caller at a time (see `run`). */
    private readonly exclusive = false,
  ) {}

  static async open(dir: string, database: string): Promise<ChdbWarehouse> {
    mkdirSync(dir, { recursive: true });
    return ChdbWarehouse.connect(dir, database, true);
  }

  private static async connect(
    dir: string,
    database: string,
    create: boolean,
    exclusive = false,
  ): Promise<ChdbWarehouse> {
    let session: Session;
    try {
      session = new Session(dir);
    } catch (err) {
      throw mapError(err);
    }
    const store = new ChdbWarehouse(session, database, dir, exclusive);
    try {
      if (create) await store.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
      await store.command(`USE ${database}`);
      for (const [name, value] of Object.entries(SHARED_SETTINGS)) {
        await store.command(`SET ${name} = ${typeof value === "string" ? `'${value}'` : value}`);
      }
    } catch (err) {
      session.close();
      throw err;
    }
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
    const result = await this.run(sql, params, options, "JSONEachRow");
    const text = result.text();
    const rows: T[] = [];
    for (const line of text.split("\n")) if (line) rows.push(JSON.parse(line) as T);
    return {
      rows,
      stats: { elapsedMs: result.elapsed * 1000, rowsRead: result.rowsRead, bytesRead: result.bytesRead },
    };
  }

  async queryText(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ text: string; stats: QueryStats }> {
    const result = await this.run(sql, params, options, options.format);
    return {
      text: result.text(),
      stats: { elapsedMs: result.elapsed * 1000, rowsRead: result.rowsRead, bytesRead: result.bytesRead },
    };
  }

  /** Another Session on the same data directory: the same engine and tables, its own query queue. */
  async openReader(options: ReaderOptions = {}): Promise<ChdbWarehouse> {
    const database = options.database ?? this.database;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database))
      throw new WarehouseParameterError(`bad database name "${database}"`);
    const reader = await ChdbWarehouse.connect(this.dir, database, false, true);
    this.readers.add(reader);
    return reader;
  }

  async command(sql: string, params?: Params, options?: QueryOptions): Promise<void> {
    await this.run(sql, params, options, "TSV");
  }

  async insert(
    table: string,
    rows: readonly Record<string, unknown>[],
    options?: QueryOptions,
  ): Promise<void> {
    if (rows.length === 0) return;
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(table))
      throw new WarehouseParameterError(`bad table name "${table}"`);
    const { columns, payload } = compactRows(rows);
    try {
      await this.session.insert({
        table,
        values: Buffer.from(payload),
        format: "JSONCompactEachRow",
        columns,
        ...(options?.settings ? { settings: { ...options.settings } } : {}),
        ...(options?.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      throw mapError(err);
    }
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  async close(): Promise<void> {
    for (const reader of this.readers) await reader.close();
    this.readers.clear();
    this.session.close();
  }

  private async run(
    sql: string,
    params: Params | undefined,
    options: QueryOptions | undefined,
    format: string,
  ): Promise<ChdbResult> {
    const wire = toWireParams(params);
    const text = sql.trimEnd().replace(/;$/, "") + settingsClause(options?.settings);
    const opts = { format, ...(options?.signal ? { signal: options.signal } : {}) };
    try {
      if (Object.keys(wire).length === 0) return await this.session.queryAsync(text, opts);
      const scalars = this.exclusive ? sessionParams(wire) : undefined;
      if (!scalars) return await this.session.queryBindAsync(text, wire, opts);
      // chdb runs every queryBindAsync of the process in one queue, so a long bound read (a console
      // query may run for its whole time limit) would hold up every other bound query. A reader's
      // session has one caller at a time, so its values become the session's query parameters
      // (what `--param_x` does for clickhouse-client) and the query itself runs unbound.
      for (const [name, value] of scalars) {
        await this.session.queryAsync(`SET param_${name} = ${stringLiteral(value)}`, { format: "TSV" });
      }
      return await this.session.queryAsync(text, opts);
    } catch (err) {
      throw mapError(err);
    }
  }
}

/** Scalar parameters as the text the engine parses for their type; undefined when one is not scalar. */
function sessionParams(wire: ReturnType<typeof toWireParams>): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(wire)) {
    // Parameter values are read in the engine's escaped text form, as HTTP `param_x` values are.
    if (typeof value === "string") out.push([name, escapeParamText(value)]);
    else if (typeof value === "number" || typeof value === "boolean") out.push([name, String(value)]);
    else return undefined;
    if (out[out.length - 1]![1].includes("\0")) return undefined;
  }
  return out;
}

const PARAM_ESCAPES: Record<string, string> = {
  "\\": "\\\\",
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  "\b": "\\b",
  "\f": "\\f",
};
const escapeParamText = (value: string) => value.replace(/[\\\n\t\r\b\f]/g, (c) => PARAM_ESCAPES[c] ?? c);

/** A ClickHouse string literal: backslash and quote escaped, nothing else can end it. */
const stringLiteral = (value: string) => `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function mapError(err: unknown): WarehouseError {
  if (err instanceof WarehouseError) return err;
  const e = err as { message?: string; code?: string; clickhouseCode?: number; name?: string };
  const message = e?.message ?? String(err);
  if (e?.code === "CHDB_CLOSED" || e?.code === "CHDB_CONNECTION") {
    return new WarehouseUnavailableError(message, e.clickhouseCode, { cause: err });
  }
  if (e?.code === "CHDB_BIND") return new WarehouseParameterError(message, e.clickhouseCode, { cause: err });
  if (e?.name === "AbortError" || e?.code === "ABORT_ERR" || e?.code === "CHDB_TIMEOUT") {
    return classifyWarehouseError(message, 159, err);
  }
  return classifyWarehouseError(message, e?.clickhouseCode ?? codeFromMessage(message), err);
}

function codeFromMessage(message: string): number | undefined {
  const m = /Code: (\d+)\./.exec(message);
  return m ? Number(m[1]) : undefined;
}
