import { WarehouseParameterError } from "./port.js";

/** Settings that make both adapters answer in the same shapes. */
export const SHARED_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
  date_time_output_format: "simple",
  // FINAL resolves versions inside each partition. The partitioned tables either partition by a
  // function of their sort key (events, touchpoints, ad metrics) or keep one live row per key across
  // partitions with tombstones (orders), so this is exact — and it lets a date range prune months.
  do_not_merge_across_partitions_select_final: 1,
} as const;

/**
 * Rows as JSONCompactEachRow (positional arrays under one column list): the engine skips matching
 * ~50 key names per row, about a quarter less work per event than JSONEachRow. The rows are
 * separated by commas (`[…],[…]`), which the format's reader skips between rows like whitespace:
 * one `JSON.stringify` of the whole batch with its outer brackets cut off, a quarter cheaper on
 * this thread than a stringify and a concatenation per row. Every row must carry the keys of the first.
 */
export function compactRows(rows: readonly Record<string, unknown>[]): {
  columns: string[];
  payload: string;
} {
  const columns = Object.keys(rows[0] ?? {});
  for (const c of columns) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(c)) throw new WarehouseParameterError(`bad column name "${c}"`);
  }
  const positional = new Array<unknown[]>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const values = new Array<unknown>(columns.length);
    for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
    positional[r] = values;
  }
  return { columns, payload: JSON.stringify(positional).slice(1, -1) };
}

/** Renders settings as a `SETTINGS` clause for adapters without a per-query settings channel. */
export function settingsClause(
  settings: Readonly<Record<string, string | number | boolean>> | undefined,
): string {
  if (!settings) return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new WarehouseParameterError(`bad setting name "${name}"`);
    const v =
      typeof value === "number"
        ? String(value)
        : typeof value === "boolean"
          ? value
            ? "1"
            : "0"
          : `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
    parts.push(`${name} = ${v}`);
  }
  return parts.length ? `\nSETTINGS ${parts.join(", ")}` : "";
}
