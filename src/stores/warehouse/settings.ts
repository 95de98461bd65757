import { WarehouseParameterError } from "./port.js";

/** Settings that make both adapters answer in the same shapes. */
export const SHARED_SETTINGS = {
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_decimals: 0,
  date_time_output_format: "simple",
} as const;

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
