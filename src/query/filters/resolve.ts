import { ValidationError } from "../../errors.js";
import { addDays } from "../../shared/days.js";
import { inQueryRange, isCalendarDate, localMidnight, QUERY_DATE_RANGE_MESSAGE } from "../time.js";
import { type Family, FIELD_BY_NAME, type FieldDef, OPERATORS_BY_TYPE } from "./fields.js";
import type { Filter, FilterValue, Operator } from "./schema.js";

/**
 * The first half of filter compilation: a canonical filter checked and resolved against the field
 * catalog — fields known and allowed at this place, operators valid for the field's type, values of
 * the right kind, local days turned into instants — with no SQL and no parameters. `print.ts` turns
 * the result into SQL; a caller that only needs to know a filter is valid (dashboard views) stops
 * here. Every 400 a filter can cause comes from this file.
 */

export interface ResolveContext {
  /** Families the filter may use at this place; any other field → 400 naming it. */
  families: readonly Family[];
  /** Query timezone: a `YYYY-MM-DD` value of a datetime field is that local day. */
  timezone: string;
  /** Where in the request the filter sits (for error paths), e.g. ["filters"]. */
  path: (string | number)[];
  /** Why a family is refused here, for the error message. */
  refusal?: (field: FieldDef) => string;
}

export type Positive = Exclude<Operator, "not_equals" | "not_in" | "not_contains">;

/** A datetime operand: an instant (`to` null), or a local day as [from, to). */
export interface Moment {
  from: Date;
  to: Date | null;
}

export type ResolvedValue =
  | { kind: "presence" }
  | { kind: "boolean"; value: boolean }
  | { kind: "text"; value: string }
  | { kind: "text_list"; values: string[] }
  | { kind: "number"; value: number }
  | { kind: "number_list"; values: number[] }
  | { kind: "number_range"; low: number; high: number }
  | { kind: "moment"; value: Moment }
  | { kind: "moment_range"; low: Moment; high: Moment };

export type ResolvedFilter =
  | { and: ResolvedFilter[] }
  | { or: ResolvedFilter[] }
  | { not: ResolvedFilter }
  | { field: FieldDef; op: Positive; negated: boolean; value: ResolvedValue };

const bad = (path: (string | number)[], message: string) =>
  new ValidationError([{ message, key: String(path[0] ?? "filters"), path: path.map(String) }], message);

const NEGATIONS: Partial<Record<Operator, Positive>> = {
  not_equals: "equals",
  not_in: "in",
  not_contains: "contains",
};

/** Checks and resolves a filter; `undefined` stays `undefined` (no filter: every row). */
export function resolveFilter(filter: Filter | undefined, ctx: ResolveContext): ResolvedFilter | undefined {
  return filter ? node(filter, ctx, ctx.path) : undefined;
}

function node(f: Filter, ctx: ResolveContext, path: (string | number)[]): ResolvedFilter {
  if ("and" in f) return { and: f.and.map((x, i) => node(x, ctx, [...path, "and", i])) };
  if ("or" in f) return { or: f.or.map((x, i) => node(x, ctx, [...path, "or", i])) };
  if ("not" in f) return { not: node(f.not, ctx, [...path, "not"]) };
  return condition(f, ctx, path);
}

function condition(
  c: { field: string; op: Operator; value?: FilterValue },
  ctx: ResolveContext,
  path: (string | number)[],
): ResolvedFilter {
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
  const op = negation ?? (c.op as Positive);
  return { field: def, op, negated: !!negation, value: operandOf(def, op, c.value, ctx, [...path, "value"]) };
}

function operandOf(
  def: FieldDef,
  op: Positive,
  value: FilterValue | undefined,
  ctx: ResolveContext,
  path: (string | number)[],
): ResolvedValue {
  if (op === "is_set" || op === "is_not_set") {
    if (value !== undefined && value !== null && typeof value !== "boolean")
      throw bad(path, `${op} takes no value`);
    return { kind: "presence" };
  }
  if (def.type === "boolean") {
    if (typeof value !== "boolean") throw bad(path, `${def.field} takes true or false`);
    return { kind: "boolean", value };
  }
  if (def.type === "number") return numeric(op, value, path, def.field);
  if (def.type === "datetime") return datetime(op, value, ctx, path, def.field);
  return text(def, op, value, path);
}

function listOf(
  value: FilterValue | undefined,
  path: (string | number)[],
  field: string,
): (string | number)[] {
  if (!Array.isArray(value)) throw bad(path, `${field} in / not_in take a list of values`);
  return value;
}

const TEXT_OPS: readonly Positive[] = ["equals", "contains", "starts_with", "ends_with"];

function text(def: FieldDef, op: Positive, value: FilterValue | undefined, path: (string | number)[]) {
  if (op === "in") return { kind: "text_list" as const, values: listOf(value, path, def.field).map(String) };
  if (typeof value !== "string" && typeof value !== "number")
    throw bad(path, `${def.field} ${op} takes a text value`);
  if (!TEXT_OPS.includes(op)) throw bad(path, `operator ${op} is not valid for text`);
  return { kind: "text" as const, value: String(value) };
}

function numeric(
  op: Positive,
  value: FilterValue | undefined,
  path: (string | number)[],
  field: string,
): ResolvedValue {
  const num = (v: unknown, p: (string | number)[]) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw bad(p, `${field} takes numbers`);
    return v;
  };
  switch (op) {
    case "in": {
      const list = listOf(value, path, field);
      for (const [i, x] of list.entries()) num(x, [...path, i]);
      return { kind: "number_list", values: list as number[] };
    }
    case "between": {
      if (!Array.isArray(value) || value.length !== 2) throw bad(path, `${field} between takes [low, high]`);
      return { kind: "number_range", low: num(value[0], [...path, 0]), high: num(value[1], [...path, 1]) };
    }
    case "equals":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return { kind: "number", value: num(value, path) };
    default:
      throw bad(path, `operator ${op} is not valid for numbers`);
  }
}

/** A datetime operand: an instant, or a local day of the query timezone as [start, next start). */
function moment(v: unknown, ctx: ResolveContext, p: (string | number)[], field: string): Moment {
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

function datetime(
  op: Positive,
  value: FilterValue | undefined,
  ctx: ResolveContext,
  path: (string | number)[],
  field: string,
): ResolvedValue {
  if (op === "between") {
    if (!Array.isArray(value) || value.length !== 2) throw bad(path, `${field} between takes [from, to]`);
    return {
      kind: "moment_range",
      low: moment(value[0], ctx, [...path, 0], field),
      high: moment(value[1], ctx, [...path, 1], field),
    };
  }
  const v = moment(value, ctx, path, field);
  if (!["equals", "gt", "gte", "lt", "lte"].includes(op))
    throw bad(path, `operator ${op} is not valid for datetimes`);
  return { kind: "moment", value: v };
}
