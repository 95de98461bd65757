import { ValidationError } from "../../errors.js";
import { addDays } from "../../shared/days.js";
import type { Binder } from "../binder.js";
import { inQueryRange, isCalendarDate, localMidnight, QUERY_DATE_RANGE_MESSAGE } from "../time.js";
import { type Family, FIELD_BY_NAME, type FieldDef, OPERATORS_BY_TYPE } from "./fields.js";
import type { Filter, FilterValue, Operator } from "./schema.js";

export interface FilterContext {
  binder: Binder;
  /** Families the filter may use at this place; any other field → 400 naming it. */
  families: readonly Family[];
  /** Query timezone: a `YYYY-MM-DD` value of a datetime field is that local day. */
  timezone: string;
  /** Where in the request the filter sits (for error paths), e.g. ["filters"]. */
  path: (string | number)[];
  /** Why a family is refused here, for the error message. */
  refusal?: (field: FieldDef) => string;
}

const bad = (path: (string | number)[], message: string) =>
  new ValidationError([{ message, key: String(path[0] ?? "filters"), path: path.map(String) }], message);

/** Every field a filter names (for deciding which sources it must reach). */
export function filterFields(filter: Filter | undefined): string[] {
  if (!filter) return [];
  if ("and" in filter) return filter.and.flatMap(filterFields);
  if ("or" in filter) return filter.or.flatMap(filterFields);
  if ("not" in filter) return filterFields(filter.not);
  return [filter.field];
}

/**
 * Compiles a canonical filter to a SQL boolean over the family row aliases. A value that is absent
 * (NULL, '' for text, [] for lists) never matches a positive operator; `not_*` operators and `not`
 * are their exact negations, so they match absent values.
 */
export function compileFilter(filter: Filter | undefined, ctx: FilterContext): string {
  if (!filter) return "1";
  return node(filter, ctx, ctx.path);
}

function node(f: Filter, ctx: FilterContext, path: (string | number)[]): string {
  if ("and" in f) {
    if (f.and.length === 0) return "1";
    return `(${f.and.map((x, i) => node(x, ctx, [...path, "and", i])).join(" AND ")})`;
  }
  if ("or" in f) {
    if (f.or.length === 0) return "0";
    return `(${f.or.map((x, i) => node(x, ctx, [...path, "or", i])).join(" OR ")})`;
  }
  if ("not" in f) return `(NOT ${node(f.not, ctx, [...path, "not"])})`;
  return condition(f, ctx, path);
}

function condition(
  c: { field: string; op: Operator; value?: FilterValue },
  ctx: FilterContext,
  path: (string | number)[],
): string {
  const def = FIELD_BY_NAME.get(c.field);
  if (!def)
    throw bad([...path, "field"], `unknown filter field "${c.field}" (GET /db-mgmt/api/filters lists them)`);
  if (!ctx.families.includes(def.family)) {
    throw bad(
      [...path, "field"],
      ctx.refusal?.(def) ??
        `filter field "${c.field}" is not valid here; fields of ${ctx.families.map((x) => `${x}.`).join(", ")} are`,
    );
  }
  const allowed = OPERATORS_BY_TYPE[def.type];
  if (!allowed.includes(c.op)) {
    throw bad(
      [...path, "op"],
      `operator "${c.op}" is not valid for ${def.type} field "${c.field}"; use one of ${allowed.join(", ")}`,
    );
  }
  const negation = NEGATIONS[c.op];
  const sql = predicate(def, negation ?? (c.op as Positive), c.value, ctx, [...path, "value"]);
  return negation ? `(NOT ${sql})` : sql;
}

type Positive = Exclude<Operator, "not_equals" | "not_in" | "not_contains">;
const NEGATIONS: Partial<Record<Operator, Positive>> = {
  not_equals: "equals",
  not_in: "in",
  not_contains: "contains",
};

function predicate(
  def: FieldDef,
  op: Positive,
  value: FilterValue | undefined,
  ctx: FilterContext,
  path: (string | number)[],
): string {
  const col = def.column;
  const b = ctx.binder;
  if (op === "is_set" || op === "is_not_set") {
    if (value !== undefined && value !== null && typeof value !== "boolean")
      throw bad(path, `${op} takes no value`);
    const set =
      def.type === "string"
        ? `${col} != ''`
        : def.type === "string_array"
          ? `notEmpty(${col})`
          : `${col} IS NOT NULL`;
    return op === "is_set" ? `(${set})` : `(NOT (${set}))`;
  }
  if (def.type === "boolean") {
    if (typeof value !== "boolean") throw bad(path, `${def.field} takes true or false`);
    return `(${col} = ${value ? 1 : 0})`;
  }
  if (def.type === "number") return numeric(col, op, value, b, path, def.field);
  if (def.type === "datetime") return instant(col, op, value, ctx, path, def.field);
  return text(def, op, value, b, path);
}

function text(
  def: FieldDef,
  op: Positive,
  value: FilterValue | undefined,
  b: Binder,
  path: (string | number)[],
) {
  const col = def.column;
  const array = def.type === "string_array";
  if (op === "in") {
    const list = listOf(value, path, def.field).map(String);
    if (list.length === 0) return "0";
    const p = b.bind(list, "Array(String)");
    return array ? `hasAny(${col}, ${p})` : `(${col} IN ${p})`;
  }
  if (typeof value !== "string" && typeof value !== "number")
    throw bad(path, `${def.field} ${op} takes a text value`);
  const v = b.bind(String(value), "String");
  const match = (x: string): string => {
    switch (op) {
      case "equals":
        return `${x} = ${v}`;
      case "contains":
        return `positionCaseInsensitiveUTF8(${x}, ${v}) > 0`;
      case "starts_with":
        return `startsWith(lowerUTF8(${x}), lowerUTF8(${v}))`;
      case "ends_with":
        return `endsWith(lowerUTF8(${x}), lowerUTF8(${v}))`;
      default:
        throw bad(path, `operator ${op} is not valid for text`);
    }
  };
  return array ? `arrayExists(x -> ${match("x")}, ${col})` : `(${match(col)})`;
}

function listOf(
  value: FilterValue | undefined,
  path: (string | number)[],
  field: string,
): (string | number)[] {
  if (!Array.isArray(value)) throw bad(path, `${field} in / not_in take a list of values`);
  return value;
}

function numeric(
  col: string,
  op: Positive,
  value: FilterValue | undefined,
  b: Binder,
  path: (string | number)[],
  field: string,
): string {
  const num = (v: unknown, p: (string | number)[]) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw bad(p, `${field} takes numbers`);
    return b.bind(v, "Float64");
  };
  const guard = (s: string) => `(${col} IS NOT NULL AND ${s})`;
  switch (op) {
    case "in": {
      const list = listOf(value, path, field);
      if (list.length === 0) return "0";
      for (const [i, x] of list.entries()) num(x, [...path, i]);
      return guard(`${col} IN ${b.bind(list as number[], "Array(Float64)")}`);
    }
    case "between": {
      if (!Array.isArray(value) || value.length !== 2) throw bad(path, `${field} between takes [low, high]`);
      return guard(`${col} BETWEEN ${num(value[0], [...path, 0])} AND ${num(value[1], [...path, 1])}`);
    }
    case "equals":
      return guard(`${col} = ${num(value, path)}`);
    case "gt":
      return guard(`${col} > ${num(value, path)}`);
    case "gte":
      return guard(`${col} >= ${num(value, path)}`);
    case "lt":
      return guard(`${col} < ${num(value, path)}`);
    case "lte":
      return guard(`${col} <= ${num(value, path)}`);
    default:
      throw bad(path, `operator ${op} is not valid for numbers`);
  }
}

/** A datetime operand: an instant, or a local day of the query timezone as [start, next start). */
function operand(v: unknown, ctx: FilterContext, p: (string | number)[], field: string) {
  if (typeof v === "string" && isCalendarDate(v)) {
    if (!inQueryRange(v)) throw bad(p, `${field} ${QUERY_DATE_RANGE_MESSAGE}`);
    return { from: localMidnight(v, ctx.timezone), to: localMidnight(addDays(v, 1), ctx.timezone) };
  }
  if (typeof v === "string" && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v))) {
    const at = new Date(v);
    if (!inQueryRange(at.toISOString().slice(0, 10))) throw bad(p, `${field} ${QUERY_DATE_RANGE_MESSAGE}`);
    return { from: at, to: null };
  }
  throw bad(p, `${field} takes a date YYYY-MM-DD or an ISO-8601 instant`);
}

function instant(
  col: string,
  op: Positive,
  value: FilterValue | undefined,
  ctx: FilterContext,
  path: (string | number)[],
  field: string,
): string {
  const t = (d: Date) => ctx.binder.bind(d, "DateTime64(3, 'UTC')");
  const guard = (s: string) => `(${col} IS NOT NULL AND ${s})`;
  if (op === "between") {
    if (!Array.isArray(value) || value.length !== 2) throw bad(path, `${field} between takes [from, to]`);
    const a = operand(value[0], ctx, [...path, 0], field);
    const z = operand(value[1], ctx, [...path, 1], field);
    return guard(
      z.to
        ? `${col} >= ${t(a.from)} AND ${col} < ${t(z.to)}`
        : `${col} >= ${t(a.from)} AND ${col} <= ${t(z.from)}`,
    );
  }
  const v = operand(value, ctx, path, field);
  switch (op) {
    case "equals":
      return guard(v.to ? `${col} >= ${t(v.from)} AND ${col} < ${t(v.to)}` : `${col} = ${t(v.from)}`);
    case "gt":
      return guard(v.to ? `${col} >= ${t(v.to)}` : `${col} > ${t(v.from)}`);
    case "gte":
      return guard(`${col} >= ${t(v.from)}`);
    case "lt":
      return guard(`${col} < ${t(v.from)}`);
    case "lte":
      return guard(v.to ? `${col} < ${t(v.to)}` : `${col} <= ${t(v.from)}`);
    default:
      throw bad(path, `operator ${op} is not valid for datetimes`);
  }
}
