import type { ReaderOptions, WarehouseStore } from "../stores/warehouse/port.js";
import { confine } from "./confine.js";
import { fromEngine } from "./errors.js";
import { type ConsoleLimits, DEFAULT_ROW_LIMIT, parseSettings, runSettings } from "./limits.js";
import { ReaderPool } from "./pool.js";
import { ANALYST_TABLES } from "./tables.js";
import { validateSql } from "./validate.js";

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

interface Stats {
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
  rowsRead: number;
  bytesRead: number;
  limit: number;
}

export type ConsoleResult = { columns: Column[]; rows: unknown[][] } & Stats;

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

  /**
   * Runs one query and answers its rows as JSON values. `signal` (the caller went away) gives up the
   * wait for a reader, or stops the query in the engine and frees its reader.
   */
  async run(pixelId: string, request: ConsoleRequest, signal?: AbortSignal): Promise<ConsoleResult> {
    const limit = request.limit ?? DEFAULT_ROW_LIMIT;
    try {
      return await this.pool.use(
        pixelId,
        async (reader) => {
          const query = await this.prepare(reader, pixelId, request.sql, limit, signal);
          const { text, stats } = await reader.queryText(query.sql, query.params, {
            settings: { ...query.settings, ...JSON_EXACT },
            format: "JSONCompactEachRowWithNamesAndTypes",
            ...(signal ? { signal } : {}),
          });
          const lines = text.split("\n").filter((l) => l.length > 0);
          const names = JSON.parse(lines[0] ?? "[]") as string[];
          const types = JSON.parse(lines[1] ?? "[]") as string[];
          const rows = lines.slice(2).map((l) => JSON.parse(l) as unknown[]);
          const truncated = rows.length > limit;
          if (truncated) rows.length = limit;
          return {
            columns: names.map((name, i) => ({ name, type: types[i] ?? "" })),
            rows,
            rowCount: rows.length,
            truncated,
            limit,
            ...stats,
          };
        },
        signal,
      );
    } catch (err) {
      throw fromEngine(err, this.databases);
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
      return await this.pool.use(
        pixelId,
        async (reader) => {
          const query = await this.prepare(reader, pixelId, request.sql, limit, signal);
          const cutter = new CsvCutter(limit);
          for await (const chunk of reader.queryStream(query.sql, query.params, {
            settings: query.settings,
            format: "CSVWithNames",
            ...(signal ? { signal } : {}),
          })) {
            const part = cutter.push(chunk);
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
      );
    } catch (err) {
      throw fromEngine(err, this.databases);
    }
  }

  /** Layers 1 and 2: the checked, canonical text bound to the pixel, with the layer-3 settings. */
  private async prepare(
    reader: WarehouseStore,
    pixelId: string,
    sql: string,
    limit: number,
    signal: AbortSignal | undefined,
  ) {
    const { limits } = this.options;
    const options = { settings: parseSettings(limits), ...(signal ? { signal } : {}) };
    const { canonical } = await validateSql(reader, sql, options, this.databases);
    const query = confine(canonical, this.warehouse.database, pixelId, limit);
    return { ...query, settings: { ...runSettings(limits, limit), ...query.settings } };
  }

  /** The analyst tables with their columns as the engine describes them (pixel_id hidden). */
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
          .filter((c) => c.name !== "pixel_id")
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
