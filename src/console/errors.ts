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

const mebibytes = (bytes: number) => `${Math.round((bytes / 1_048_576) * 100) / 100} MiB`;

/**
 * 400: the result is larger than CONSOLE_MAX_RESULT_BYTES — by the engine's count of the result in
 * memory or the console's of its encoded bytes. It carries the engine's code name for that limit.
 */
export class ResultTooLargeError extends BadRequestError {
  constructor(readonly limitBytes: number) {
    super(
      `The result is larger than ${mebibytes(limitBytes)} (CONSOLE_MAX_RESULT_BYTES): select fewer or ` +
        "narrower columns, fewer rows (a lower limit), or aggregate. (TOO_MANY_ROWS_OR_BYTES)",
    );
  }
}

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

/** `(MEMORY_LIMIT_EXCEEDED)` at the end of a message, with the punctuation around it. */
const TRAILING_CODE_NAME = /\s*\.?\s*\(([A-Z][A-Z0-9_]{2,})\)\s*\.?\s*$/;
/** The code names of exceptions rethrown inside it: each ends a sentence (`…KiB. (NAME)`). */
const NESTED_CODE_NAME = /\.\s*\(([A-Z][A-Z0-9_]{2,})\)\s*\.?\s*$/;

/**
 * The engine's message as the analyst reads it: the message and the error's code name, nothing of
 * the exception's wrapping. chDB repeats `Code: 241. DB::Exception:` and `(version …)` for every
 * level an exception was rethrown through (`Code: 241. DB::Exception: Code: 241. DB::Exception: Query
 * memory limit exceeded… (MEMORY_LIMIT_EXCEEDED) (version 26.7.2.1). (MEMORY_LIMIT_EXCEEDED)`), a
 * server's client library leaves the code name out of the message and gives it apart (`codeName`).
 * Real names are put back to analyst names: `db.ad_metrics_daily` and `ad_metrics_daily` read
 * `ad_metrics`, the database and the console's empty database disappear, and the `In scope …` quotes
 * (which would print the console's own wrapper) are cut.
 */
export function toAnalystMessage(message: string, databases: readonly string[], codeName?: string): string {
  let text = message
    .replace(/\s*Stack trace[\s\S]*$/, "")
    .replace(/\s*\(version [^)]*\)/g, "")
    .replace(/(?:Code: \d+[.,]\s*)?(?:e\.displayText\(\) = )?DB::Exception:\s*/g, "")
    .replace(/Code: \d+[.,]\s*/g, "")
    .trim();
  // Nested exceptions end in one code name each, the outermost last: that one is the error's.
  let code: string | undefined;
  for (let m = TRAILING_CODE_NAME.exec(text); m; m = NESTED_CODE_NAME.exec(text)) {
    code ??= m[1];
    text = text.slice(0, m.index + (m[0].startsWith(".") ? 1 : 0));
  }
  code ??= codeName;
  text = text.replace(/\s*[.:]?\s*\bIn scope [\s\S]*$/i, "");
  for (const db of [...databases].sort((a, b) => b.length - a.length)) {
    text = text.replace(new RegExp(`\`?${escapeRe(db)}\`?\\.`, "g"), "");
    text = text.replace(new RegExp(`\\b${escapeRe(db)}\\b`, "g"), "<database>");
  }
  for (const t of ANALYST_TABLES) {
    if (t.real !== t.name) text = text.replace(new RegExp(`\\b${escapeRe(t.real)}\\b`, "g"), t.name);
  }
  text = text.replace(/\{pxh_[a-z]+:[A-Za-z0-9()]+\}/g, "<bound>");
  text = text
    .replace(/\s+\.\s+/g, ". ")
    .replace(/\.\s*\./g, ".")
    .replace(/[\s:,]+$/, "")
    .trim();
  if (!code) return text;
  return `${/[.!?]$/.test(text) ? text : `${text}.`} (${code})`;
}

/** Engine failures become 400 with the analyst-named message; outages stay 503. */
export function fromEngine(err: unknown, databases: readonly string[]): unknown {
  if (err instanceof WarehouseUnavailableError || !(err instanceof WarehouseError)) return err;
  // A server's client library keeps the code name apart from the message.
  const type = (err.cause as { type?: unknown } | undefined)?.type;
  return new SqlEngineError(
    toAnalystMessage(err.message, databases, typeof type === "string" ? type : undefined),
  );
}
