import { AppError, BadRequestError, UnavailableError } from "../errors.js";
import { WarehouseError, WarehouseUnavailableError } from "../stores/warehouse/port.js";
import { ANALYST_TABLES } from "./tables.js";

/** A query the console will not run: the message says what was refused. */
export class SqlRefusedError extends BadRequestError {
  constructor(what: string) {
    super(`Refused: ${what}`);
  }
}

/** The engine's own explanation of why a query failed (syntax, unknown column, a limit…). */
export class SqlEngineError extends BadRequestError {}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** 429: the pixel already runs its share of console queries, and none finished within the wait. */
export class ConsoleBusyError extends AppError {
  readonly status = 429;
  constructor(
    perPixel: number,
    waitedMs: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      `Too many console queries for this pixel: ${perPixel} already running (CONSOLE_READERS_PER_PIXEL), ` +
        `none finished within ${seconds(waitedMs)}. Retry when one of them ends (at the latest after ` +
        `Retry-After seconds), or stop one.`,
    );
  }
  override headers() {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/** 503: other pixels' console queries hold every reader, and none was freed within the wait. */
export class ConsoleSaturatedError extends UnavailableError {
  constructor(size: number, waitedMs: number, retryAfterSeconds: number) {
    super(
      `The SQL console is busy: all ${size} console readers are running queries (CONSOLE_READERS), ` +
        `none was freed within ${seconds(waitedMs)}. Retry after Retry-After seconds.`,
      retryAfterSeconds,
    );
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The engine's message with real names put back to analyst names: `db.ad_metrics_daily` and
 * `ad_metrics_daily` read `ad_metrics`, the database and the console's empty database disappear, and
 * the `In scope …` quotes (which would print the console's own wrapper) are cut.
 */
export function toAnalystMessage(message: string, databases: readonly string[]): string {
  let text = message.replace(/^Code: \d+\.\s*/, "").replace(/^DB::Exception:\s*/, "");
  text = text.replace(/\s*[.:]?\s*In scope [\s\S]*?(?=\([A-Z_]+\)\s*$|$)/i, ". ");
  text = text.replace(/ in scope [\s\S]*?(?=\([A-Z_]+\)\s*$|$)/i, ". ");
  for (const db of [...databases].sort((a, b) => b.length - a.length)) {
    text = text.replace(new RegExp(`\`?${escapeRe(db)}\`?\\.`, "g"), "");
    text = text.replace(new RegExp(`\\b${escapeRe(db)}\\b`, "g"), "<database>");
  }
  for (const t of ANALYST_TABLES) {
    if (t.real !== t.name) text = text.replace(new RegExp(`\\b${escapeRe(t.real)}\\b`, "g"), t.name);
  }
  text = text.replace(/\{pxh_[a-z]+:[A-Za-z0-9()]+\}/g, "<bound>");
  return text
    .replace(/\s+\.\s+/g, ". ")
    .replace(/\.\s*\./g, ".")
    .trim();
}

/** Engine failures become 400 with the analyst-named message; outages stay 503. */
export function fromEngine(err: unknown, databases: readonly string[]): unknown {
  if (err instanceof WarehouseUnavailableError || !(err instanceof WarehouseError)) return err;
  return new SqlEngineError(toAnalystMessage(err.message, databases));
}
