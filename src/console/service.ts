import { consoleQueries } from "../metrics.js";
import {
  type QueryStats,
  type ReaderOptions,
  WarehouseLimitError,
  type WarehouseStore,
} from "../stores/warehouse/port.js";
import { confine } from "./confine.js";
import { fromEngine, ResultTooLargeError } from "./errors.js";
import {
  type ConsoleLimits,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_ROW_LIMIT,
  parseSettings,
  runSettings,
} from "./limits.js";
import { ReaderPool } from "./pool.js";
import { ANALYST_TABLES } from "./tables.js";
import { validateSql } from "./validate.js";

/** Counts a console answer (ok) or error (refused when the client's to fix, else failed), passing it on. */
function counted<T>(value: T, failed = false): T {
  const status = (value as { status?: number } | null)?.status;
  consoleQueries.inc({
    outcome: !failed ? "ok" : status !== undefined && status < 500 ? "refused" : "failed",
  });
  return value;
}

export interface ConsoleOptions {
  limits: ConsoleLimits;
  /** Reader connections open at once (console queries running in parallel). */
  readers: number;
  /** Readers one pixel may hold at once (default 2). */
  readersPerPixel?: number;
  /** How long a query waits for a reader before 429 / 503 (default 10 s). */
  queueTimeoutMs?: number;
  /** A dedicated ClickHouse user for console reads (server only; see docs/sql-console.md). */
  user?: { username: string; password: string };
}

/** The margin of a server reader's HTTP timeout over the query's own time limit. */
export const READER_TIMEOUT_MARGIN_MS = 30_000;

export interface Column {
  name: string;
  type: string;
}

export interface ConsoleRequest {
  sql: string;
  limit?: number;
  format?: "json" | "csv";
}

/**
 * A JSON answer, already encoded: `{columns, rows, rowCount, truncated, elapsedMs, rowsRead, bytesRead,
 * limit}`. The rows are the engine's own JSON text, never parsed and encoded again — for a result of
 * tens of megabytes that would hold the event loop for seconds and take several times its size.
 */
export interface ConsoleJson {
  body: string;
  rowCount: number;
  truncated: boolean;
  /** The rows parsed from `body`, for callers other than the route. */
  readonly rows: unknown[][];
}

export interface CsvStats {
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
  limit: number;
}

/** Where a CSV result goes, chunk by chunk (the header row first). */
export interface CsvSink {
  /** Resolves when the consumer can take more (back-pressure). */
  write(chunk: Uint8Array): Promise<void>;
}

export interface SchemaTable {
  name: string;
  description: string;
  columns: { name: string; type: string; description?: string }[];
}

/**
 * JSON rows carry 64-bit (and wider) integers and decimals as strings: a JSON number is a double in
 * every client, which would round `18446744073709551615` or a Decimal(38, 9) without a word.
 */
const JSON_EXACT = { output_format_json_quote_64bit_integers: 1, output_format_json_quote_decimals: 1 };

/** The analysts' SQL console: validate (layer 1), confine (layer 2), run with limits (layer 3). */
export class ConsoleService {
  private readonly pool: ReaderPool;
  private readonly sandbox: string;
  private sandboxReady: Promise<void> | undefined;
  private schemaCache: Promise<SchemaTable[]> | undefined;

  constructor(
    private readonly warehouse: WarehouseStore,
    private readonly options: ConsoleOptions,
  ) {
    // Unqualified names resolve in this empty database: a name that is not one of the console's CTEs
    // finds no table at all, rather than a real one.
    this.sandbox = `${warehouse.database}_console`;
    const holdLimitMs = Math.ceil(options.limits.maxExecutionSeconds * 1000);
    const reader: ReaderOptions = {
      database: this.sandbox,
      // A server reader's HTTP request outlives the query's own time limit, so the engine's
      // TIMEOUT_EXCEEDED (a 400 with its message) comes first, never the client's socket timeout.
      requestTimeoutMs: holdLimitMs + READER_TIMEOUT_MARGIN_MS,
      ...(options.user ?? {}),
    };
    this.pool = new ReaderPool((o) => this.openReader(o), reader, {
      size: options.readers,
      perPixel: options.readersPerPixel ?? 2,
      queueTimeoutMs: options.queueTimeoutMs ?? 10_000,
      holdLimitMs,
    });
  }

  /** Console queries holding a reader now: all of them, or one pixel's. */
  running(pixelId?: string): number {
    return this.pool.held(pixelId);
  }

  private get databases(): string[] {
    return [this.warehouse.database, this.sandbox];
  }

  private async openReader(options: ReaderOptions): Promise<WarehouseStore> {
    this.sandboxReady ??= this.warehouse
      .command(`CREATE DATABASE IF NOT EXISTS \`${this.sandbox}\``)
      .catch((err: unknown) => {
        this.sandboxReady = undefined;
        throw err;
      });
    await this.sandboxReady;
    return this.warehouse.openReader(options);
  }

  private get maxResultBytes(): number {
    return this.options.limits.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  }

  /**
   * Runs one query and answers it as JSON. `signal` (the caller went away) gives up the wait for a
   * reader, or stops the query in the engine and frees its reader.
   */
  async run(pixelId: string, request: ConsoleRequest, signal?: AbortSignal): Promise<ConsoleJson> {
    const limit = request.limit ?? DEFAULT_ROW_LIMIT;
    try {
      return await this.pool
        .use(
          pixelId,
          async (reader) => {
            const query = await this.prepare(reader, pixelId, request.sql, limit, signal);
            const { text, stats } = await reader.queryText(query.sql, query.params, {
              settings: { ...query.settings, ...JSON_EXACT },
              format: "JSONCompactEachRowWithNamesAndTypes",
              ...(signal ? { signal } : {}),
            });
            return encodeJson(text, limit, stats, this.maxResultBytes);
          },
          signal,
        )
        .then(counted);
    } catch (err) {
      throw counted(this.fromEngine(err), true);
    }
  }

  /**
   * Runs one query and streams its CSVWithNames output into `sink` as the engine produces it,
   * counting records: after `limit` rows the engine's stream is cancelled and `truncated` is set. An
   * engine failure after the first chunk is thrown like one before it; the caller knows what it sent.
   */
  async streamCsv(
    pixelId: string,
    request: ConsoleRequest,
    sink: CsvSink,
    signal?: AbortSignal,
  ): Promise<CsvStats> {
    const limit = request.limit ?? DEFAULT_ROW_LIMIT;
    const started = performance.now();
    try {
      return await this.pool
        .use(
          pixelId,
          async (reader) => {
            const query = await this.prepare(reader, pixelId, request.sql, limit, signal);
            const cutter = new CsvCutter(limit);
            // chDB's stream renders each block as a CSVWithNames document of its own, header included.
            const headers = reader.kind === "chdb" ? new RepeatedHeader() : undefined;
            let sent = 0;
            const options = {
              settings: query.settings,
              format: "CSVWithNames",
              ...(signal ? { signal } : {}),
            };
            // Where starting a stream would hold the event loop (chDB analyses the query, scalar
            // subqueries included, on the calling thread), the answer is computed whole off it: the
            // result-size cap bounds it, and a failure is a clean 400 before any byte is sent.
            const chunks = reader.streamStartBlocks
              ? wholeAnswer(reader.queryText(query.sql, query.params, options))
              : reader.queryStream(query.sql, query.params, options);
            for await (const chunk of chunks) {
              const part = cutter.push(headers ? headers.strip(chunk) : chunk);
              sent += part.length;
              // Thrown like an engine failure: a 400 before the first bytes went out, a reset after.
              if (sent > this.maxResultBytes) throw new ResultTooLargeError(this.maxResultBytes);
              if (part.length > 0) await sink.write(part);
              // Leaving the loop cancels the engine's stream: the row past the limit was all it needed.
              if (cutter.truncated) break;
            }
            return {
              rowCount: cutter.rowCount,
              truncated: cutter.truncated,
              limit,
              elapsedMs: performance.now() - started,
            };
          },
          signal,
        )
        .then(counted);
    } catch (err) {
      throw counted(this.fromEngine(err), true);
    }
  }

  /** The engine's result-size limit names the console's setting; other failures keep theirs. */
  private fromEngine(err: unknown): unknown {
    if (err instanceof WarehouseLimitError && /Limit for result exceeded, max bytes/i.test(err.message))
      return new ResultTooLargeError(this.maxResultBytes);
    return fromEngine(err, this.databases);
  }

  /**
   * One query for the ClickHouse HTTP interface: the same checks, confinement, limits and readers
   * as `run`, the answer as the engine writes it in `format` (bytes: binary formats included).
   * `tables` are extra names the query may read, each bound to a SELECT over constants the caller
   * built (emulated metadata tables); `maxRows` past which the engine fails the query.
   */
  async runFormatted(
    pixelId: string,
    sql: string,
    options: {
      format: string;
      maxRows: number;
      tables?: Readonly<Record<string, string>>;
      settings?: Readonly<Record<string, string>>;
      signal?: AbortSignal;
    },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }> {
    const { signal } = options;
    try {
      return await this.pool
        .use(
          pixelId,
          async (reader) => {
            const query = await this.prepare(reader, pixelId, sql, options.maxRows, signal, options.tables);
            return reader.queryBytes(query.sql, query.params, {
              settings: {
                ...options.settings,
                ...query.settings,
                max_result_rows: String(options.maxRows),
                result_overflow_mode: "throw",
              },
              format: options.format,
              ...(signal ? { signal } : {}),
            });
          },
          signal,
        )
        .then(counted);
    } catch (err) {
      throw counted(this.fromEngine(err), true);
    }
  }

  /** Layers 1 and 2: the checked, canonical text bound to the pixel, with the layer-3 settings. */
  private async prepare(
    reader: WarehouseStore,
    pixelId: string,
    sql: string,
    limit: number,
    signal: AbortSignal | undefined,
    tables: Readonly<Record<string, string>> = {},
  ) {
    const { limits } = this.options;
    const options = { settings: parseSettings(limits), ...(signal ? { signal } : {}) };
    const { canonical } = await validateSql(reader, sql, options, this.databases, Object.keys(tables));
    const query = confine(canonical, this.warehouse.database, pixelId, limit, tables);
    return { ...query, settings: { ...runSettings(limits, limit), ...query.settings } };
  }

  /** The analyst tables with their columns as the engine describes them (pixel_id and storage columns hidden). */
  schema(): Promise<SchemaTable[]> {
    this.schemaCache ??= this.loadSchema().catch((err: unknown) => {
      this.schemaCache = undefined;
      throw err;
    });
    return this.schemaCache;
  }

  private async loadSchema(): Promise<SchemaTable[]> {
    const out: SchemaTable[] = [];
    for (const table of ANALYST_TABLES) {
      const described = await this.warehouse.query<{ name: string; type: string }>(
        `DESCRIBE TABLE \`${this.warehouse.database}\`.\`${table.real}\``,
      );
      out.push({
        name: table.name,
        description: table.description,
        columns: described
          .filter((c) => c.name !== "pixel_id" && !table.hidden?.includes(c.name))
          .map((c) => {
            const description = table.columns[c.name];
            return { name: c.name, type: c.type, ...(description ? { description } : {}) };
          }),
      });
    }
    return out;
  }
}

/**
 * The JSON answer around the engine's JSONCompactEachRowWithNamesAndTypes text (names, types, then
 * one JSON array per row), cut to `limit` rows. Past `maxBytes` it is refused, as the whole answer
 * would be: the text's length in UTF-16 units is at most its size in bytes, so that check comes first
 * and nothing larger is copied.
 */
export function encodeJson(
  text: string,
  limit: number,
  stats: { elapsedMs: number; rowsRead: number; bytesRead: number },
  maxBytes: number,
): ConsoleJson {
  if (text.length > maxBytes) throw new ResultTooLargeError(maxBytes);
  const namesEnd = text.indexOf("\n");
  const typesEnd = namesEnd < 0 ? -1 : text.indexOf("\n", namesEnd + 1);
  const names = JSON.parse(namesEnd < 0 ? "[]" : text.slice(0, namesEnd)) as string[];
  const types = JSON.parse(typesEnd < 0 ? "[]" : text.slice(namesEnd + 1, typesEnd)) as string[];
  const rowsStart = typesEnd < 0 ? text.length : typesEnd + 1;
  let end = rowsStart;
  let rowCount = 0;
  while (rowCount < limit && end < text.length) {
    const next = text.indexOf("\n", end);
    end = next < 0 ? text.length : next + 1;
    rowCount++;
  }
  const truncated = text.slice(end).trim().length > 0;
  // Rows are one line each (JSON escapes newlines in strings): the lines joined by commas are the array.
  const rows = text.slice(rowsStart, end).replace(/\n$/, "").replaceAll("\n", ",");
  const columns = names.map((name, i) => ({ name, type: types[i] ?? "" }));
  // The rest as JSON.stringify writes it: a missing statistic is left out, as `res.json` would.
  const rest = JSON.stringify({ rowCount, truncated, ...stats, limit });
  const body = `{"columns":${JSON.stringify(columns)},"rows":[${rows}],${rest.slice(1)}`;
  if (Buffer.byteLength(body) > maxBytes) throw new ResultTooLargeError(maxBytes);
  return {
    body,
    rowCount,
    truncated,
    get rows() {
      return (JSON.parse(body) as { rows: unknown[][] }).rows;
    },
  };
}

/**
 * Drops the header record that chDB repeats at the start of every chunk of a CSVWithNames stream
 * (one document per block: `"n"\n1\n"n"\n2\n…`). The first chunk's header is kept and learnt, and
 * only a chunk that starts with exactly those bytes loses them.
 */
export class RepeatedHeader {
  private header: Buffer | undefined;
  private pending = Buffer.alloc(0);
  private quoted = false;

  strip(chunk: Uint8Array): Uint8Array {
    if (this.header === undefined) {
      // Learning the header: it ends at the first newline outside quotes, wherever the chunk ends.
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i];
        if (c === 34) this.quoted = !this.quoted;
        else if (c === 10 && !this.quoted) {
          this.header = Buffer.concat([this.pending, chunk.subarray(0, i + 1)]);
          this.pending = Buffer.alloc(0);
          return chunk;
        }
      }
      this.pending = Buffer.concat([this.pending, chunk]);
      return chunk;
    }
    const h = this.header;
    if (chunk.length >= h.length && Buffer.from(chunk.buffer, chunk.byteOffset, h.length).equals(h))
      return chunk.subarray(h.length);
    return chunk;
  }
}

/**
 * Counts CSVWithNames records as chunks pass and cuts after the header and `limit` rows. Fields with
 * newlines are quoted (a quote inside is doubled), so a newline outside quotes ends a record; the
 * bytes are scanned as they come, so a chunk may end anywhere (inside a field, a UTF-8 character…).
 */
export class CsvCutter {
  private records = 0;
  private quoted = false;
  /** True once a byte followed the last row within the limit: the result had more rows. */
  truncated = false;

  constructor(private readonly limit: number) {}

  get rowCount(): number {
    return Math.max(0, Math.min(this.records - 1, this.limit));
  }

  /** The part of `chunk` that belongs to the output (all of it until the cut). */
  push(chunk: Uint8Array): Uint8Array {
    if (this.truncated) return chunk.subarray(0, 0);
    // The header plus `limit` rows are complete: anything more is the extra row that marks the cut.
    if (this.records === this.limit + 1 && chunk.length > 0) {
      this.truncated = true;
      return chunk.subarray(0, 0);
    }
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 34) this.quoted = !this.quoted;
      else if (c === 10 && !this.quoted) {
        this.records++;
        if (this.records === this.limit + 1 && i + 1 < chunk.length) {
          this.truncated = true;
          return chunk.subarray(0, i + 1);
        }
      }
    }
    return chunk;
  }
}

/** CSVWithNames text cut to `limit` records (the whole text at once; see CsvCutter). */
export function cutCsv(text: string, limit: number): { csv: string; rowCount: number; truncated: boolean } {
  const cutter = new CsvCutter(limit);
  const part = cutter.push(Buffer.from(text));
  return { csv: Buffer.from(part).toString("utf8"), rowCount: cutter.rowCount, truncated: cutter.truncated };
}

async function* wholeAnswer(answer: Promise<{ text: string }>): AsyncGenerator<Uint8Array> {
  yield Buffer.from((await answer).text);
}
