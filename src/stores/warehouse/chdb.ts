import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { type ChdbQueryStream, type ChdbResult, Session } from "chdb";
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

/** The statement size a reader's session parses: room for the bound values of its `SET param_…`. */
const READER_MAX_QUERY_SIZE = 64 * 1024 * 1024;

/**
 * chDB: the ClickHouse engine inside this process. One Session per data directory per process (the
 * engine refuses a second directory), and `USE` is session state, so one adapter owns the session.
 */
export class ChdbWarehouse implements WarehouseStore {
  readonly kind = "chdb" as const;
  readonly streamStartBlocks = true;
  readonly materializedCte = true;
  private readonly readers = new Set<ChdbWarehouse>();

  private constructor(
    private readonly session: Session,
    readonly database: string,
    private readonly dir: string,
    /** A reader's session serves one caller at a time (see `run`). */
    private readonly exclusive = false,
    /** A reader's owner: its session kills the reader's queries when their signal aborts. */
    private readonly owner?: ChdbWarehouse,
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
    owner?: ChdbWarehouse,
  ): Promise<ChdbWarehouse> {
    let session: Session;
    try {
      session = new Session(dir);
    } catch (err) {
      throw mapChdbError(err);
    }
    const store = new ChdbWarehouse(session, database, dir, exclusive, owner);
    try {
      if (create) await store.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
      await store.command(`USE ${database}`);
      for (const [name, value] of Object.entries(SHARED_SETTINGS)) {
        await store.command(`SET ${name} = ${typeof value === "string" ? `'${value}'` : value}`);
      }
      // A reader's bound values travel inside a `SET param_…` statement, whose text the engine caps
      // at max_query_size (256 KiB by default): 10,000 long order ids are more than that.
      if (exclusive) await store.command(`SET max_query_size = ${READER_MAX_QUERY_SIZE}`);
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

  async queryBytes(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }> {
    const result = await this.run(sql, params, options, options.format);
    return {
      bytes: result.bytes(),
      stats: { elapsedMs: result.elapsed * 1000, rowsRead: result.rowsRead, bytesRead: result.bytesRead },
    };
  }

  /**
   * The output as the engine produces it (`Session.queryStream`, one chunk per block). Only a reader
   * streams: the owner's session runs bound queries through chDB's process-wide queue, so with
   * parameters it answers in one chunk.
   */
  async *queryStream(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): AsyncGenerator<Uint8Array> {
    const wire = toWireParams(params);
    const scalars = this.exclusive ? sessionParams(wire) : Object.keys(wire).length === 0 ? [] : undefined;
    if (!scalars) {
      yield Buffer.from((await this.queryText(sql, params, options)).text);
      return;
    }
    const signal = options.signal;
    const killable = signal !== undefined && this.owner !== undefined;
    const tag = `pxh-query:${randomUUID()}`;
    const text = killable
      ? tagged(sql, tag, wire, options.settings)
      : sql.trimEnd().replace(/;$/, "") + settingsClause(options.settings);
    let stream: ChdbQueryStream | undefined;
    const stopKilling = killable ? this.killOnAbort(signal, tag) : undefined;
    try {
      await this.setParams(scalars, signal);
      stream = this.session.queryStream(text, {
        format: options.format,
        ...(signal && !killable ? { signal } : {}),
      });
      for await (const chunk of stream) yield chunk.raw();
    } catch (err) {
      await this.drain();
      throw mapChdbError(err);
    } finally {
      stream?.cancel();
      stopKilling?.();
    }
  }

  /** Another Session on the same data directory: the same engine and tables, its own query queue. */
  async openReader(options: ReaderOptions = {}): Promise<ChdbWarehouse> {
    const database = options.database ?? this.database;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database))
      throw new WarehouseParameterError(`bad database name "${database}"`);
    const reader = await ChdbWarehouse.connect(this.dir, database, false, true, this);
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
      throw mapChdbError(err);
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
    const signal = options?.signal;
    // chDB's own signal only settles the promise early: the engine runs on, holding a libuv thread and
    // this session. A reader's query is killed by its owner instead, and awaited until it really ends.
    const killable = signal !== undefined && this.owner !== undefined;
    const tag = `pxh-query:${randomUUID()}`;
    const query = killable
      ? tagged(sql, tag, wire, options?.settings)
      : sql.trimEnd().replace(/;$/, "") + settingsClause(options?.settings);
    const opts = { format, ...(signal && !killable ? { signal } : {}) };
    const stopKilling = killable ? this.killOnAbort(signal, tag) : undefined;
    try {
      if (killable && signal.aborted) throw cancelled();
      if (Object.keys(wire).length === 0) return await this.session.queryAsync(query, opts);
      const scalars = this.exclusive ? sessionParams(wire) : undefined;
      if (!scalars) return await this.session.queryBindAsync(query, wire, opts);
      // chdb runs every queryBindAsync of the process in one queue, so a long bound read (a console
      // query may run for its whole time limit) would hold up every other bound query. A reader's
      // session has one caller at a time, so its values become the session's query parameters
      // (what `--param_x` does for clickhouse-client) and the query itself runs unbound.
      await this.setParams(scalars, killable ? signal : undefined);
      return await this.session.queryAsync(query, opts);
    } catch (err) {
      await this.drain();
      throw mapChdbError(err);
    } finally {
      stopKilling?.();
    }
  }

  /**
   * chDB (libchdb 26.7) hands the output a failed query had already produced to the session's NEXT
   * query, in front of that query's own: after `SELECT …` fails at its time limit, `SELECT 1` answers
   * the first query's rows and then `1` (not seen with an outer LIMIT or `result_overflow_mode =
   * 'break'`, which console queries have — but a reader must not rely on that). On a reader the next
   * query may be another pixel's, so a throwaway query takes any leftover before the reader serves
   * anyone again. The owner's session is shared by concurrent callers, where nothing can be placed
   * next in line: it is drained too, which takes the leftover whenever no other caller's query was
   * already queued (the usual case), and is known not to cover the rest (docs/query.md).
   */
  private async drain(): Promise<void> {
    await this.session.queryAsync("SELECT 1", { format: "TSV" }).catch(() => undefined);
  }

  private async setParams(scalars: readonly [string, string][], signal?: AbortSignal): Promise<void> {
    if (scalars.length > 0) {
      const list = scalars.map(([name, value]) => `param_${name} = ${stringLiteral(value)}`).join(", ");
      await this.session.queryAsync(`SET ${list}`, { format: "TSV" });
    }
    if (signal?.aborted) throw cancelled();
  }

  /**
   * When `signal` aborts, the owner's session kills the query tagged `tag` (see `tagged`) — again
   * every 200 ms until the returned function is called, as the query may not have reached the engine
   * yet. `KILL QUERY … SYNC` never returns in chDB; ASYNC does, and the killed query ends at once.
   */
  private killOnAbort(signal: AbortSignal, tag: string): () => void {
    const owner = this.owner!;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (done) return;
      owner.session
        .queryAsync(
          `KILL QUERY WHERE Settings['log_comment'] = ${stringLiteral(tag)} OR startsWith(query, ${stringLiteral(`/* ${tag} */`)}) ASYNC`,
          { format: "TSV" },
        )
        .catch(() => undefined)
        .finally(() => {
          if (!done) timer = setTimeout(kill, 200);
        });
    };
    signal.addEventListener("abort", kill, { once: true });
    return () => {
      done = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", kill);
    };
  }
}

/**
 * The query text with `tag`, where `KILL QUERY` finds it in system.processes: as `log_comment` when
 * the query has settings or parameters (the engine lists such a query re-rendered from its tree, with
 * comments gone), else as a leading comment (a SETTINGS clause would change what `EXPLAIN AST` shows).
 */
function tagged(
  sql: string,
  tag: string,
  wire: Record<string, unknown>,
  settings: QueryOptions["settings"],
): string {
  const text = sql.trimEnd().replace(/;$/, "");
  if (Object.keys(wire).length === 0 && (!settings || Object.keys(settings).length === 0))
    return `/* ${tag} */ ${text}`;
  return text + settingsClause({ log_comment: tag, ...settings });
}

const cancelled = () => classifyWarehouseError("Query was cancelled (the caller went away)", 394, undefined);

/** Scalar parameters as the text the engine parses for their type; undefined when one is not scalar. */
function sessionParams(wire: ReturnType<typeof toWireParams>): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(wire)) {
    const text = paramText(value, false);
    if (text === undefined || text.includes("\0")) return undefined;
    // A scalar is read in the engine's escaped text form, as HTTP `param_x` values are; an array is
    // parsed as its literal, whose quoted elements carry their own escapes.
    out.push([name, Array.isArray(value) ? text : escapeParamText(text)]);
  }
  return out;
}

/**
 * A value as the text the engine parses for its declared type: scalars as they are, an array as its
 * literal with quoted strings (so `Array(String)` filters and id lists need not take the bound queue).
 * Maps and tuples are left to queryBind (undefined).
 */
function paramText(value: ReturnType<typeof toWireParams>[string], inArray: boolean): string | undefined {
  if (typeof value === "string") return inArray ? stringLiteral(value) : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null) return inArray ? "NULL" : undefined;
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (const v of value) {
      const t = paramText(v, true);
      if (t === undefined) return undefined;
      items.push(t);
    }
    return `[${items.join(",")}]`;
  }
  return undefined;
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

/**
 * The typed error of a chdb failure: a closed session (CHDB_CLOSED) or one that could not be opened
 * (CHDB_CONNECTION) is unavailable; an abort or the engine's own deadline is a limit; the rest is
 * classified by the engine's exception code.
 */
export function mapChdbError(err: unknown): WarehouseError {
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
