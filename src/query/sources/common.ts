import type { OrderSettings } from "../../accounts/schemas.js";
import { BadRequestError } from "../../errors.js";
import { customerKeySql } from "../../shared/customer-key.js";
import { addDays } from "../../shared/days.js";
import type { Binder } from "../binder.js";
import { compileFilter } from "../filters/compile.js";
import { FIELD_BY_NAME } from "../filters/fields.js";
import type { Filter, FilterValue } from "../filters/schema.js";

/**
 * Which orders count (docs/query.md, "Order settings"): pending and voided only when the settings say so,
 * and no order an enabled exclusion filter matches. Exclusion conditions use the orders filter
 * fields (`orders.source_name`, `source_name` or `sourceName`); conditions of a group combine with
 * the group's `logic` (`and` | `or`), and a filter excludes an order when any of its groups matches.
 */
export function countedPredicate(settings: OrderSettings, b: Binder, timezone: string): string {
  const parts: string[] = [];
  if (!settings.countPendingOrders) parts.push("o.financial_status != 'pending'");
  if (!settings.countVoidedOrders) parts.push("o.financial_status != 'voided'");
  settings.exclusionFilters.forEach((ef, i) => {
    if (!ef.enabled) return;
    const groups: Filter[] = ef.conditionGroups.map((g, gi) => {
      const logic = g.logic.toLowerCase();
      if (logic !== "and" && logic !== "or")
        throw new BadRequestError(
          `orderSettings.exclusionFilters[${i}].conditionGroups[${gi}].logic must be "and" or "or"`,
        );
      const conditions: Filter[] = g.conditions.map((c) => {
        // Order settings spell fields in camelCase (`sourceName`); the catalog in snake_case.
        const field = c.field.includes(".")
          ? c.field
          : `orders.${c.field.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`)}`;
        return { field, op: c.operator as never, value: conditionValue(field, c.operator, c.value) };
      });
      return logic === "and" ? { and: conditions } : { or: conditions };
    });
    if (groups.length === 0) return;
    const sql = compileFilter(
      { or: groups },
      { binder: b, families: ["orders"], timezone, path: ["orderSettings", "exclusionFilters", i] },
    );
    parts.push(`NOT ${sql}`);
  });
  return parts.length ? parts.join(" AND ") : "1";
}

/**
 * A stored condition's value is text: a number field compares it as a number, `in` / `not_in` /
 * `between` take a comma-separated list, and `is_set` / `is_not_set` ignore it.
 */
function conditionValue(field: string, op: string, value: string): FilterValue {
  if (op === "is_set" || op === "is_not_set") return null;
  const numeric = FIELD_BY_NAME.get(field)?.type === "number";
  const one = (v: string) => (numeric && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);
  if (op === "in" || op === "not_in" || op === "between") return value.split(",").map((v) => one(v.trim()));
  return one(value);
}

/** Half-open spans of time [start, end), as placeholders: a statement's period, or its two periods. */
export type Spans = readonly { start: string; end: string }[];

/** `col` in one of the spans (which never overlap). */
export function withinSpans(col: string, spans: Spans): string {
  const one = (s: Spans[number]) => `${col} >= ${s.start} AND ${col} < ${s.end}`;
  return spans.length === 1 ? one(spans[0]!) : `(${spans.map((s) => `(${one(s)})`).join(" OR ")})`;
}

/**
 * `co`: the pixel's counted orders (latest version each), with the customer key and, when asked,
 * each order's number among its customer's counted orders (all time, so "new" means first ever).
 * `only` narrows the orders read to the ones the caller can use, inside the FINAL read (the engine
 * does not push a filter through the CTE): `created` — created in one of the spans [start, end),
 * which prunes the months outside them; `refunded` — with a refund created in one of them, looked up
 * by the sort key; `rows` — a condition of the caller's on the sort key and months (it must select
 * whole versions: every row of an order in a month, or none). Ignored with numbering, which needs
 * every earlier order of a customer.
 */
export function countedOrdersCte(
  pixel: string,
  settings: OrderSettings,
  b: Binder,
  timezone: string,
  numbering: boolean,
  only?: { created: Spans } | { refunded: Spans } | { rows: string },
): string {
  const key = customerKeySql("o");
  const numberCols = numbering
    ? `, row_number() OVER (PARTITION BY customer_key ORDER BY o.created_at, o.order_id) AS customer_order_number,
       customer_order_number > 1 AS is_returning`
    : ", toUInt64(0) AS customer_order_number, false AS is_returning";
  const inRange =
    !only || numbering
      ? ""
      : "created" in only
        ? ` AND ${withinSpans("created_at", only.created)}`
        : "rows" in only
          ? ` AND ${only.rows}`
          : ` AND order_id IN (SELECT order_id FROM refunds FINAL WHERE pixel_id = ${pixel} AND ${withinSpans("created_at", only.refunded)})`;
  return `co AS (
  SELECT o.*, ${key} AS customer_key${numberCols}
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = ${pixel}${inRange}) AS o
  WHERE ${countedPredicate(settings, b, timezone)}
)`;
}

/** The parameter holding the first day of rates a statement reads (see `fxCtes`). */
export const RATES_FROM = "rates_from";
/** RATES_FROM reading every rate ever loaded: the form a statement runs again in (`withEveryRate`). */
export const EVERY_RATE = "1970-01-01";
/**
 * How many days of rates before a statement's first day it reads: enough to reach the latest earlier
 * rate across weekends, holidays and monthly-published rates; a rate further back takes a second run.
 */
export const RATES_LOOKBACK_DAYS = 62;

/**
 * RATES_FROM for a statement whose amounts fall on or after the UTC day of `first` (in practice:
 * its range's start), bound under its fixed name.
 */
export function ratesFrom(b: Binder, first: Date): string {
  const day = addDays(first.toISOString().slice(0, 10), -RATES_LOOKBACK_DAYS);
  return b.bindNamed(RATES_FROM, day < EVERY_RATE ? EVERY_RATE : day, "Date");
}

/**
 * Daily rates (units per USD), latest version of each day, from the day `from` (a RATES_FROM
 * placeholder; omitted: every rate). Reading only the rates from a little before the statement's days
 * keeps the cost of the conversion from growing with the rate history (a 10-year history of 30
 * currencies tripled the cost of each statement's two joins). It is exact: a day whose latest earlier
 * rate lies before `from` finds no rate and reports it missing, and `withEveryRate` then runs the
 * statement again reading every rate, so an answer never depends on `from`.
 */
export function fxCtes(target: string, from?: string): string {
  const since = from ? ` WHERE date >= ${from}` : "";
  return `fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates${since} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = ${target})`;
}

/**
 * Conversion of a fact row to the target currency at the rate of its own UTC day, falling back to
 * the latest earlier rate (ASOF). The row subquery aliased `alias` must expose `cur`, `fx_day` and
 * `fx_k` (constant 1). `missing` names the first currency and day without a rate, '' when none.
 */
export function fxJoin(alias: string, target: string): { joins: string; factor: string; missing: string } {
  const joins = `ASOF LEFT JOIN fx AS fs ON fs.currency = ${alias}.cur AND fs.date <= ${alias}.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = ${alias}.fx_k AND ft.date <= ${alias}.fx_day`;
  const same = `${alias}.cur = ${target}`;
  const src = `if(${alias}.cur = 'USD', 1., fs.rate)`;
  const tgt = `if(${target} = 'USD', 1., ft.rate)`;
  const factor = `if(${same}, 1., ${tgt} / ${src})`;
  const missingCur = `multiIf(${same}, '', ${alias}.cur != 'USD' AND fs.rate = 0, ${alias}.cur, ${target} != 'USD' AND ft.rate = 0, ${target}, '')`;
  const missing = `minIf(concat(toString(${alias}.fx_day), ' ', ${missingCur}), ${missingCur} != '')`;
  return { joins, factor, missing };
}

/**
 * Per bucket (and dimension values) plus the totals over the range in one pass: GROUPING SETS with
 * `is_total` marking the total rows. With granularity none the one bucket is the total (a constant
 * key cannot be grouped on), so rows are grouped by the dimensions only and count as both.
 */
export function groupBy(granularity: string, dimKeys: readonly string[]): string {
  if (granularity === "none") return dimKeys.length ? `GROUP BY ${dimKeys.join(", ")}` : "";
  return `GROUP BY GROUPING SETS ((${["bucket", ...dimKeys].join(", ")}), (${dimKeys.join(", ")}))`;
}

export function totalsColumn(granularity: string): string[] {
  return [granularity === "none" ? "toUInt8(2) AS is_total" : "grouping(bucket) AS is_total"];
}
