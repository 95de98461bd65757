/**
 * A result as chart series: x is the first column (the row number when there is only one), each later
 * column holding numbers is a series. No DOM: the unit tests import this file directly.
 */

import type { SqlResult } from "./query.js";
import { cellText, isNumericType } from "./result-format.js";

export type ChartData =
  /** Nothing to draw, and why (shown in place of the chart). */
  | { empty: string }
  | {
      /** What is drawn against what, said beside the Line / Bar switch. */
      note: string;
      xLabel: string;
      labels: string[];
      /** Whole-number y ticks: the first series is an integer column. */
      integer: boolean;
      series: { label: string; values: (number | null)[] }[];
    };

/** Null for a result without columns (the chart area stays blank and its note as it was). */
export function chartData(r: SqlResult): ChartData | null {
  if (r.columns.length === 0) return null;
  const single = r.columns.length === 1;
  const ys = r.columns
    .map((c, i) => ({ c, i }))
    .filter(
      ({ c, i }) =>
        (single || i > 0) &&
        // A column of a type not known as numeric still charts when every value came as a JSON number.
        (isNumericType(c.type) || r.rows.every((row) => row[i] === null || typeof row[i] === "number")),
    );
  if (r.rows.length === 0) return { empty: "No rows to chart." };
  if (ys.length === 0) {
    return {
      empty:
        "Nothing to chart: no column after the first holds numbers. Put the x value first and numbers after it.",
    };
  }
  const x = r.columns[0]!.name;
  return {
    note: single ? `${x} by row` : `${ys.map(({ c }) => c.name).join(", ")} by ${x}`,
    xLabel: single ? "row" : x,
    labels: r.rows.map((row, i) => (single ? String(i + 1) : cellText(row[0]))),
    integer: /^(Nullable\()?U?Int\d/.test(ys[0]!.c.type),
    series: ys.map(({ c, i }) => ({
      label: c.name,
      values: r.rows.map((row) => {
        const v = row[i];
        return v === null || v === undefined || v === "" ? null : Number(v);
      }),
    })),
  };
}
