import type { Binder } from "../binder.js";
import type { FieldDef } from "./fields.js";
import type { Moment, Positive, ResolvedFilter, ResolvedValue } from "./resolve.js";

/**
 * The second half of filter compilation: a resolved filter as a SQL boolean over the family row
 * aliases, every value a bound parameter. Nothing here can fail on input — `resolve.ts` checked it.
 * A value that is absent (NULL, '' for text, [] for lists) never matches a positive operator;
 * `not_*` operators and `not` are their exact negations, so they match absent values.
 */
export function printFilter(filter: ResolvedFilter | undefined, binder: Binder): string {
  return filter ? node(filter, binder) : "1";
}

function node(f: ResolvedFilter, b: Binder): string {
  if ("and" in f) return f.and.length === 0 ? "1" : `(${f.and.map((x) => node(x, b)).join(" AND ")})`;
  if ("or" in f) return f.or.length === 0 ? "0" : `(${f.or.map((x) => node(x, b)).join(" OR ")})`;
  if ("not" in f) return `(NOT ${node(f.not, b)})`;
  const sql = predicate(f.field, f.op, f.value, b);
  return f.negated ? `(NOT ${sql})` : sql;
}

function predicate(def: FieldDef, op: Positive, value: ResolvedValue, b: Binder): string {
  const col = def.column;
  switch (value.kind) {
    case "presence": {
      const set =
        def.type === "string"
          ? `${col} != ''`
          : def.type === "string_array"
            ? `notEmpty(${col})`
            : `${col} IS NOT NULL`;
      return op === "is_set" ? `(${set})` : `(NOT (${set}))`;
    }
    case "boolean":
      return `(${col} = ${value.value ? 1 : 0})`;
    case "text_list": {
      if (value.values.length === 0) return "0";
      const p = b.bind(value.values, "Array(String)");
      return def.type === "string_array" ? `hasAny(${col}, ${p})` : `(${col} IN ${p})`;
    }
    case "text": {
      const v = b.bind(value.value, "String");
      const match = (x: string) =>
        op === "equals"
          ? `${x} = ${v}`
          : op === "contains"
            ? `positionCaseInsensitiveUTF8(${x}, ${v}) > 0`
            : op === "starts_with"
              ? `startsWith(lowerUTF8(${x}), lowerUTF8(${v}))`
              : `endsWith(lowerUTF8(${x}), lowerUTF8(${v}))`;
      return def.type === "string_array" ? `arrayExists(x -> ${match("x")}, ${col})` : `(${match(col)})`;
    }
    case "number_list": {
      if (value.values.length === 0) return "0";
      for (const x of value.values) b.bind(x, "Float64");
      return guard(col, `${col} IN ${b.bind(value.values, "Array(Float64)")}`);
    }
    case "number_range":
      return guard(
        col,
        `${col} BETWEEN ${b.bind(value.low, "Float64")} AND ${b.bind(value.high, "Float64")}`,
      );
    case "number":
      return guard(col, `${col} ${COMPARE[op as keyof typeof COMPARE]} ${b.bind(value.value, "Float64")}`);
    case "moment_range": {
      const t = instantBinder(b);
      const { low: a, high: z } = value;
      return guard(
        col,
        z.to
          ? `${col} >= ${t(a.from)} AND ${col} < ${t(z.to)}`
          : `${col} >= ${t(a.from)} AND ${col} <= ${t(z.from)}`,
      );
    }
    case "moment":
      return guard(col, moment(col, op, value.value, instantBinder(b)));
  }
}

const COMPARE = { equals: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

const guard = (col: string, s: string) => `(${col} IS NOT NULL AND ${s})`;

const instantBinder = (b: Binder) => (d: Date) => b.bind(d, "DateTime64(3, 'UTC')");

/** A local day compares as its [start, next start); an instant as itself. */
function moment(col: string, op: Positive, v: Moment, t: (d: Date) => string): string {
  switch (op) {
    case "equals":
      return v.to ? `${col} >= ${t(v.from)} AND ${col} < ${t(v.to)}` : `${col} = ${t(v.from)}`;
    case "gt":
      return v.to ? `${col} >= ${t(v.to)}` : `${col} > ${t(v.from)}`;
    case "gte":
      return `${col} >= ${t(v.from)}`;
    case "lt":
      return `${col} < ${t(v.from)}`;
    default:
      return v.to ? `${col} < ${t(v.to)}` : `${col} <= ${t(v.from)}`;
  }
}
