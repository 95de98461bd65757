/**
 * Errors as ClickHouse's HTTP interface sends them, so clients show them properly: an HTTP status,
 * `X-ClickHouse-Exception-Code`, and a body `Code: N. DB::Exception: message. (NAME) (version V)`.
 */
export class ClickHouseHttpError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export const chErrors = {
  authFailed: (why: string) => new ClickHouseHttpError(516, "AUTHENTICATION_FAILED", why, 401),
  accessDenied: (why: string) => new ClickHouseHttpError(497, "ACCESS_DENIED", why, 403),
  readonly: (why: string) => new ClickHouseHttpError(164, "READONLY", why, 403),
  unknownFormat: (format: string) =>
    new ClickHouseHttpError(73, "UNKNOWN_FORMAT", `Unknown or not allowed output format ${format}`, 400),
  unknownDatabase: (db: string) =>
    new ClickHouseHttpError(81, "UNKNOWN_DATABASE", `Database ${db} does not exist`, 404),
  unknownSetting: (name: string) =>
    new ClickHouseHttpError(115, "UNKNOWN_SETTING", `Setting ${name} is not accepted by this endpoint`, 400),
  badArguments: (why: string) => new ClickHouseHttpError(36, "BAD_ARGUMENTS", why, 400),
  emptyQuery: () => new ClickHouseHttpError(62, "SYNTAX_ERROR", "Empty query", 400),
  busy: (why: string, status: number) =>
    new ClickHouseHttpError(202, "TOO_MANY_SIMULTANEOUS_QUERIES", why, status),
  unavailable: (why: string) => new ClickHouseHttpError(210, "NETWORK_ERROR", why, 503),
};

/** Code numbers of the engine errors an analyst meets most; the rest are reported as BAD_ARGUMENTS. */
const CODES: Record<string, [number, number]> = {
  SYNTAX_ERROR: [62, 400],
  UNKNOWN_IDENTIFIER: [47, 404],
  UNKNOWN_TABLE: [60, 404],
  UNKNOWN_FUNCTION: [46, 404],
  UNKNOWN_DATABASE: [81, 404],
  TYPE_MISMATCH: [53, 400],
  ILLEGAL_TYPE_OF_ARGUMENT: [43, 400],
  NUMBER_OF_ARGUMENTS_DOESNT_MATCH: [42, 400],
  NOT_AN_AGGREGATE: [215, 400],
  ILLEGAL_AGGREGATION: [184, 400],
  CANNOT_PARSE_TEXT: [6, 400],
  CANNOT_PARSE_DATETIME: [41, 400],
  CANNOT_CONVERT_TYPE: [70, 400],
  AMBIGUOUS_IDENTIFIER: [207, 400],
  MULTIPLE_EXPRESSIONS_FOR_ALIAS: [179, 400],
  TIMEOUT_EXCEEDED: [159, 400],
  TOO_MANY_ROWS: [158, 400],
  TOO_MANY_BYTES: [307, 400],
  TOO_MANY_ROWS_OR_BYTES: [396, 400],
  MEMORY_LIMIT_EXCEEDED: [241, 400],
  QUERY_WAS_CANCELLED: [394, 400],
};

/** An engine error's message as the console words it (ending in `(CODE_NAME)`), as a ClickHouse error. */
export function fromEngineMessage(message: string): ClickHouseHttpError {
  const name = /\(([A-Z][A-Z0-9_]{2,})\)\s*\.?\s*$/.exec(message)?.[1];
  const text = name ? message.replace(/\s*\.?\s*\([A-Z][A-Z0-9_]{2,}\)\s*\.?\s*$/, "") : message;
  const [code, status] = (name && CODES[name]) || [36, 400];
  return new ClickHouseHttpError(code, name && CODES[name] ? name : (name ?? "BAD_ARGUMENTS"), text, status);
}

/** The console's refusal ("Refused: …") as ClickHouse would word a permission error. */
export function fromRefusal(message: string): ClickHouseHttpError {
  const what = message.replace(/^Refused:\s*/, "");
  if (/only SELECT queries are allowed|SETTINGS clauses/.test(what))
    return chErrors.readonly(`Cannot execute query in readonly mode: ${what}`);
  if (/^unknown table/.test(what)) return new ClickHouseHttpError(60, "UNKNOWN_TABLE", what, 404);
  if (/exactly one statement/.test(what)) return new ClickHouseHttpError(62, "SYNTAX_ERROR", what, 400);
  return chErrors.accessDenied(what);
}

export function errorBody(err: ClickHouseHttpError, version: string): string {
  const message = err.message.replace(/\.?\s*$/, "");
  return `Code: ${err.code}. DB::Exception: ${message}. (${err.codeName}) (version ${version})\n`;
}
