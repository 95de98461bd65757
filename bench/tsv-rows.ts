import { formatDateTime, WarehouseParameterError } from "../src/stores/warehouse/port.js";

/**
 * Rows as TabSeparated text, shaped by the table's column types (bench:insert's TabSeparated and CSV
 * payloads; measured no faster than JSONCompactEachRow in chDB, so the adapters do not use it). TabSeparated is the cheapest text
 * format for the engine to parse (no key matching, no JSON tokenizer), but unlike JSON it cannot be
 * written without the types: a Map and a named Tuple are both JS objects, and inside an array a
 * string is quoted while a number must not be.
 */
export type ColumnType =
  | { kind: "text" | "number" | "bool" }
  | { kind: "nullable"; of: ColumnType }
  | { kind: "array"; of: ColumnType }
  | { kind: "map"; key: ColumnType; value: ColumnType }
  | { kind: "tuple"; names: string[] | undefined; of: ColumnType[] };

/** Types whose nested text form is a bare literal (anything else is quoted like a string). */
const NUMBER = /^(U?Int\d+|Float\d+|Decimal\d*(\(.*\))?|BFloat16)$/;

/** A ClickHouse type name (as system.columns lists it) → how its values are written. */
export function parseColumnType(type: string): ColumnType {
  const t = type.trim();
  const open = t.indexOf("(");
  const head = open < 0 ? t : t.slice(0, open);
  const args = open < 0 ? [] : splitArgs(t.slice(open + 1, t.lastIndexOf(")")));
  switch (head) {
    case "LowCardinality":
      return parseColumnType(args[0]!);
    case "Nullable":
      return { kind: "nullable", of: parseColumnType(args[0]!) };
    case "Array":
      return { kind: "array", of: parseColumnType(args[0]!) };
    case "Map":
      return { kind: "map", key: parseColumnType(args[0]!), value: parseColumnType(args[1]!) };
    case "Tuple": {
      const named = args.map((a) => /^([A-Za-z_][A-Za-z0-9_]*)\s+(\S.*)$/.exec(a));
      const allNamed = named.every((m) => m !== null);
      return {
        kind: "tuple",
        names: allNamed ? named.map((m) => m![1]!) : undefined,
        of: args.map((a, i) => parseColumnType(allNamed ? named[i]![2]! : a)),
      };
    }
    case "Bool":
      return { kind: "bool" };
    default:
      return { kind: NUMBER.test(t) ? "number" : "text" };
  }
}

/** Splits `A, B(C, D), 'x,y'` at top-level commas. */
function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === "'") quoted = false;
    } else if (c === "'") quoted = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (s.trim()) out.push(s.slice(start).trim());
  return out;
}

// A field ends at a tab or newline; a backslash starts an escape. Nothing else is special.
const FIELD = /[\\\t\n\r\0]/;
const FIELD_ALL = /[\\\t\n\r\0]/g;
// A nested string is quoted: its quote must be escaped too, and it must hold no raw tab or newline.
const QUOTED = /[\\'\t\n\r\0]/;
const QUOTED_ALL = /[\\'\t\n\r\0]/g;
const ESCAPES: Record<string, string> = {
  "\\": "\\\\",
  "'": "\\'",
  "\t": "\\t",
  "\n": "\\n",
  "\r": "\\r",
  "\0": "\\0",
};
const escapeOne = (c: string) => ESCAPES[c]!;
const NUMERIC_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf|nan)$/i;

function scalarText(v: unknown, column: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") {
    // As JSON does (NaN and ±Infinity are not numbers there): the column's default.
    return Number.isFinite(v) ? String(v) : "";
  }
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw new WarehouseParameterError(`${column}: invalid Date`);
    return formatDateTime(v);
  }
  throw new WarehouseParameterError(`${column}: cannot write ${typeof v} as a scalar`);
}

/** A value inside an array, map or tuple: strings quoted, numbers bare, NULL for null. */
function nested(v: unknown, t: ColumnType, column: string): string {
  if (v === null || v === undefined) return "NULL";
  switch (t.kind) {
    case "nullable":
      return nested(v, t.of, column);
    case "array":
    case "map":
    case "tuple":
      return composite(v, t, column);
    case "number":
    case "bool": {
      const s = scalarText(v, column);
      if (t.kind === "number" && !NUMERIC_TEXT.test(s))
        throw new WarehouseParameterError(`${column}: "${s}" is not a number`);
      return s === "" ? "0" : s;
    }
    default: {
      const s = scalarText(v, column);
      return QUOTED.test(s) ? `'${s.replace(QUOTED_ALL, escapeOne)}'` : `'${s}'`;
    }
  }
}

function composite(v: unknown, t: ColumnType, column: string): string {
  if (t.kind === "array") {
    if (!Array.isArray(v)) throw new WarehouseParameterError(`${column}: expected an array`);
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i ? "," : "") + nested(v[i], t.of, column);
    return `${out}]`;
  }
  if (t.kind === "map") {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      throw new WarehouseParameterError(`${column}: expected an object for a Map`);
    let out = "{";
    let first = true;
    for (const [k, x] of Object.entries(v)) {
      out += `${first ? "" : ","}${nested(k, t.key, column)}:${nested(x, t.value, column)}`;
      first = false;
    }
    return `${out}}`;
  }
  if (t.kind === "tuple") {
    const values = Array.isArray(v)
      ? v
      : t.names && typeof v === "object" && v !== null
        ? t.names.map((n) => (v as Record<string, unknown>)[n])
        : undefined;
    if (!values || values.length !== t.of.length)
      throw new WarehouseParameterError(`${column}: expected ${t.of.length} tuple elements`);
    let out = "(";
    for (let i = 0; i < values.length; i++) out += (i ? "," : "") + nested(values[i], t.of[i]!, column);
    return `${out})`;
  }
  return nested(v, t, column);
}

/** One top-level field: `\N` for null (the column's default when not Nullable), else escaped text. */
export function tsvField(v: unknown, t: ColumnType, column: string): string {
  if (v === null || v === undefined) return "\\N";
  const k = t.kind === "nullable" ? t.of.kind : t.kind;
  if (k === "array" || k === "map" || k === "tuple")
    return composite(v, t.kind === "nullable" ? t.of : t, column);
  const s = scalarText(v, column);
  // Non-finite numbers: the default, as the JSON formats write them.
  if (s === "" && typeof v === "number") return "\\N";
  return FIELD.test(s) ? s.replace(FIELD_ALL, escapeOne) : s;
}

/** The rows as TabSeparated lines under `columns` (each with its parsed type). */
export function tsvRows(
  rows: readonly Record<string, unknown>[],
  columns: readonly { name: string; type: ColumnType }[],
): string {
  let out = "";
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!;
      out += (i ? "\t" : "") + tsvField(row[c.name], c.type, c.name);
    }
    out += "\n";
  }
  return out;
}
