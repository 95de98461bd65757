/**
 * What the console sends to POST /db-mgmt/api/sql and what comes back (docs/sql-console.md). No DOM:
 * the unit tests import this file directly.
 */
import { formatNumber } from "../shared/format.js";

/** The answer of POST /db-mgmt/api/sql. */
export interface SqlResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
  rowsRead: number;
  bytesRead: number;
  limit: number;
}

export interface SqlRequest {
  pixelId: string;
  sql: string;
  limit?: number;
  format?: "csv";
}

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 50_000;
export const LIMIT_MESSAGE = `The limit must be a whole number from 1 to ${formatNumber(MAX_LIMIT, 0)}.`;

/** The Limit field as the API's `limit`; undefined when empty or out of range (the API's default then). */
export function parseLimit(text: string): number | undefined {
  const n = Number(text);
  return Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT ? n : undefined;
}

/** Text in the field that is not a usable limit: a run stops with LIMIT_MESSAGE rather than guess. */
export const isBadLimit = (text: string) => text !== "" && parseLimit(text) === undefined;

export function sqlRequest(pixelId: string, sql: string, limitText: string, format?: "csv"): SqlRequest {
  const limit = parseLimit(limitText);
  return {
    pixelId,
    sql,
    ...(limit !== undefined ? { limit } : {}),
    ...(format ? { format } : {}),
  };
}

/** Records of a CSV text: newlines outside quoted fields (a quote inside one is doubled). */
export function csvRecords(text: string): number {
  let records = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 10 && !quoted) records++;
  }
  return records;
}

/**
 * The status line after a CSV download. A short CSV states its count in headers; a long one streams,
 * and its count comes as HTTP trailers, which fetch does not show: then the body's records are
 * counted (less the header line).
 */
export async function csvStatus(
  headers: { get(name: string): string | null },
  body: () => Promise<string>,
): Promise<string> {
  const rows = headers.get("x-row-count");
  if (rows) {
    const cut = headers.get("x-truncated") === "true" ? " (truncated at the limit)" : "";
    return `CSV: ${formatNumber(Number(rows), 0)} rows${cut}`;
  }
  const n = csvRecords(await body()) - 1;
  const limit = Number(headers.get("x-row-limit"));
  return `CSV: ${formatNumber(n, 0)} rows${n === limit ? " (the limit: there may be more)" : ""}`;
}
