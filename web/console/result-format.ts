/**
 * How a result reads in the grid and its header: cell text, numeric columns, the stats line. No DOM:
 * the unit tests import this file directly.
 */
import { formatNumber } from "../shared/format.js";
import type { SqlResult } from "./query.js";

const NUMERIC = /^(Nullable\()?(LowCardinality\()?(U?Int\d+|Float\d+|Decimal\d*|BFloat16)\b/;
export const isNumericType = (type: string) => NUMERIC.test(type);

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export interface Cell {
  text: string;
  class: string;
  /** The whole text on hover, for cells long enough to be cut by the grid. */
  title?: string;
}

export function cellOf(v: unknown, numeric: boolean): Cell {
  const text = cellText(v);
  return {
    text,
    class: `${numeric ? "num" : ""}${v === null ? " null" : ""}`,
    ...(text.length > 60 ? { title: text } : {}),
  };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${formatNumber(v, 1)} ${units[u]}`;
}

/** One entry of the line above the grid; `id` is what the page and its tests find it by. */
export interface Stat {
  id: string;
  class: string;
  text: string;
  title?: string;
}

export function resultStats(r: SqlResult): Stat[] {
  const stats: Stat[] = [
    {
      id: "row-count",
      class: "stat strong",
      text: `${formatNumber(r.rowCount, 0)} ${r.rowCount === 1 ? "row" : "rows"}`,
    },
    {
      id: "applied-limit",
      class: "stat",
      text: `limit ${formatNumber(r.limit, 0)}`,
      title: "The row limit applied to this query",
    },
    { id: "elapsed", class: "stat", text: `${formatNumber(r.elapsedMs, 1)} ms` },
    {
      id: "read",
      class: "stat muted",
      text: `read ${formatNumber(r.rowsRead, 0)} rows, ${formatBytes(r.bytesRead)}`,
    },
  ];
  if (r.truncated) {
    stats.push({
      id: "truncated",
      class: "badge warn",
      text: `truncated at ${formatNumber(r.limit, 0)} rows`,
      title: "The query had more rows than the limit",
    });
  }
  return stats;
}
