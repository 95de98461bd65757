import { randomUUID } from "node:crypto";
import { SqlEngineError, SqlRefusedError } from "../console/errors.js";
import type { ConsoleService } from "../console/service.js";
import { canonicalize } from "../console/validate.js";
import { AppError } from "../errors.js";
import type { ApiKeyService } from "../keys/service.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { ClickHouseHttpError, chErrors, fromEngineMessage, fromRefusal } from "./errors.js";
import { DEFAULT_FORMAT, outputFormat } from "./formats.js";
import { emulate } from "./metadata.js";
import { clientSettings } from "./settings.js";

export interface ChRequest {
  /** URL parameters (query, database, default_format, settings…). */
  params: Readonly<Record<string, string>>;
  /** The POST body as text ('' for GET). */
  body: string;
  /** User and key from X-ClickHouse-User/-Key, Basic auth or user/password parameters. */
  user?: string;
  key?: string;
  signal?: AbortSignal;
}

export interface ChAnswer {
  bytes: Uint8Array;
  format: string;
  contentType: string;
  queryId: string;
  summary: { read_rows: number; read_bytes: number; elapsed_ns: number };
}

export interface ChOptions {
  /** The database clients see: the warehouse database holding the analyst tables. */
  database: string;
  /** Most rows one answer may hold; a query past it fails (TOO_MANY_ROWS_OR_BYTES). */
  maxRows: number;
}

/** A trailing `FORMAT name` (the query's own choice of output format). */
const TRAILING_FORMAT = /\s+FORMAT\s+([A-Za-z][A-Za-z0-9_]*)\s*;?\s*$/i;

/**
 * ClickHouse's HTTP interface over the pixel's analyst tables: who asks (user = pixel id, password =
 * an API key with analytics:read), what (the query from `query=` and the body), in which output
 * format; then the SQL console runs it with every confinement unchanged and the engine writes the
 * answer in that format. Knows nothing of HTTP (routes.ts adapts it).
 */
export class ClickHouseHttpService {
  private version: Promise<string> | undefined;

  constructor(
    private readonly keys: ApiKeyService,
    private readonly console: ConsoleService,
    private readonly warehouse: WarehouseStore,
    private readonly options: ChOptions,
  ) {}

  /** The engine's version (what `version()` answers and errors carry). */
  engineVersion(): Promise<string> {
    this.version ??= this.warehouse
      .query<{ v: string }>("SELECT version() AS v")
      .then((r) => r[0]?.v ?? "0.0.0")
      .catch(() => {
        this.version = undefined;
        return "0.0.0";
      });
    return this.version;
  }

  async run(req: ChRequest): Promise<ChAnswer> {
    const principal = await this.authenticate(req.user, req.key);
    const database = req.params.database;
    if (database && database !== this.options.database && database !== "default")
      throw chErrors.unknownDatabase(database);
    const settings = clientSettings(req.params);
    // POST: the `query` parameter and the body together make the query, as ClickHouse reads them.
    const raw = [req.params.query ?? "", req.body].filter((s) => s.trim() !== "").join("\n");
    if (!raw.trim()) throw chErrors.emptyQuery();
    const trailing = TRAILING_FORMAT.exec(raw);
    const sql = trailing ? raw.slice(0, trailing.index) : raw.replace(/;\s*$/, "");
    const asked = trailing?.[1] ?? req.params.default_format ?? DEFAULT_FORMAT;
    const format = outputFormat(asked);
    if (!format) throw chErrors.unknownFormat(asked);
    if (
      /^\s*(INSERT|CREATE|ALTER|DROP|TRUNCATE|RENAME|ATTACH|DETACH|OPTIMIZE|GRANT|REVOKE|SYSTEM|KILL|SET|USE)\b/i.test(
        sql,
      )
    )
      throw chErrors.readonly("Cannot execute query in readonly mode: this endpoint only reads (SELECT)");
    const queryId = req.params.query_id || randomUUID();
    try {
      const canonical = await canonicalize(this.warehouse, sql, {}, [this.options.database]);
      const emulated = emulate(canonical, {
        database: this.options.database,
        tables: await this.console.schema(),
        version: await this.engineVersion(),
        user: principal.pixelId,
      });
      const { bytes, stats } = await this.console.runFormatted(principal.pixelId, emulated.sql, {
        format: format.name,
        maxRows: this.options.maxRows,
        tables: emulated.tables,
        settings: {
          // ClickHouse's own defaults, which the service's JSON readers turn off.
          output_format_json_quote_64bit_integers: "1",
          ...settings.engine,
        },
        ...(req.signal ? { signal: req.signal } : {}),
      });
      return {
        bytes,
        format: format.name,
        contentType: format.contentType,
        queryId,
        summary: {
          read_rows: stats.rowsRead,
          read_bytes: stats.bytesRead,
          elapsed_ns: Math.round(stats.elapsedMs * 1e6),
        },
      };
    } catch (err) {
      throw asClickHouseError(err);
    }
  }

  private async authenticate(user: string | undefined, key: string | undefined) {
    if (!user || !key)
      throw chErrors.authFailed("Authentication failed: the user is the pixel id, the password an API key");
    try {
      const principal = await this.keys.authenticate(key, user);
      if (!principal.scopes.has("analytics:read"))
        throw chErrors.accessDenied(`${user}: the API key lacks the analytics:read scope`);
      return principal;
    } catch (err) {
      if (err instanceof ClickHouseHttpError) throw err;
      if (err instanceof AppError && (err.status === 401 || err.status === 403))
        throw chErrors.authFailed(
          `${user}: Authentication failed: password is incorrect, or there is no user with such name`,
        );
      throw err;
    }
  }
}

function asClickHouseError(err: unknown): unknown {
  if (err instanceof ClickHouseHttpError) return err;
  if (err instanceof SqlRefusedError) return fromRefusal(err.message);
  if (err instanceof SqlEngineError) return fromEngineMessage(err.message);
  if (err instanceof AppError) {
    if (err.status === 429) return chErrors.busy(err.message, 429);
    if (err.status === 503) return chErrors.busy(err.message, 503);
    if (err.status < 500) return fromEngineMessage(err.message);
  }
  return err;
}
