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
  /** A dedicated ClickHouse user for console reads (server only; see docs/sql-console.md). */
  user?: { username: string; password: string };
}

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

export type ConsoleResult =
  | ({ format: "json"; columns: Column[]; rows: unknown[][] } & Stats)
  | ({ format: "csv"; csv: string } & Stats);

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
    const reader: ReaderOptions = { database: this.sandbox, ...(options.user ?? {}) };
    this.pool = new ReaderPool((o) => this.openReader(o), reader, options.readers);
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

  async run(pixelId: string, request: ConsoleRequest): Promise<ConsoleResult> {
    const limit = request.limit ?? DEFAULT_ROW_LIMIT;
    const { limits } = this.options;
    try {
      return await this.pool.use(async (reader) => {
        const { canonical } = await validateSql(
          reader,
          request.sql,
          { settings: parseSettings(limits) },
          this.databases,
        );
        const query = confine(canonical, this.warehouse.database, pixelId, limit);
        const settings = { ...runSettings(limits, limit), ...query.settings };
        if (request.format === "csv") {
          const { text, stats } = await reader.queryText(query.sql, query.params, {
            settings,
            format: "CSVWithNames",
          });
          const { csv, rowCount, truncated } = cutCsv(text, limit);
          return { format: "csv" as const, csv, rowCount, truncated, limit, ...stats };
        }
        const { text, stats } = await reader.queryText(query.sql, query.params, {
          settings: { ...settings, ...JSON_EXACT },
          format: "JSONCompactEachRowWithNamesAndTypes",
        });
        const lines = text.split("\n").filter((l) => l.length > 0);
        const names = JSON.parse(lines[0] ?? "[]") as string[];
        const types = JSON.parse(lines[1] ?? "[]") as string[];
        const rows = lines.slice(2).map((l) => JSON.parse(l) as unknown[]);
        const truncated = rows.length > limit;
        if (truncated) rows.length = limit;
        return {
          format: "json" as const,
          columns: names.map((name, i) => ({ name, type: types[i] ?? "" })),
          rows,
          rowCount: rows.length,
          truncated,
          limit,
          ...stats,
        };
      });
    } catch (err) {
      throw fromEngine(err, this.databases);
    }
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
 * CSVWithNames cut to `limit` records. Fields with newlines are quoted (a quote inside is doubled), so
 * a newline outside quotes ends a record.
 */
export function cutCsv(text: string, limit: number): { csv: string; rowCount: number; truncated: boolean } {
  let records = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 10 && !quoted) {
      records++;
      // The header plus `limit` rows: anything after is the extra row that marks truncation.
      if (records === limit + 1 && i + 1 < text.length) {
        return { csv: text.slice(0, i + 1), rowCount: limit, truncated: true };
      }
    }
  }
  return { csv: text, rowCount: Math.max(0, records - 1), truncated: false };
}
