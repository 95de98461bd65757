import { countedKinds } from "../../derived/customer-hours.js";
import { cohortCellsSql, cohortWalkSql } from "../../shared/cohort-walk.js";
import type { Binder } from "../binder.js";
import { printFilter } from "../filters/print.js";
import type { ResolvedCohorts } from "../resolve.js";
import type { Instants } from "../time.js";
import { countedOrdersCte, fxCtes, fxJoin, ratesFrom } from "./common.js";

/**
 * Cohort rows: per cohort (start of the week or month of a customer's first counted order ever) and
 * period since, retained customers, orders and revenue in the target currency.
 *
 * One pass over the counted orders, sorted per customer by time in a single window
 * (src/shared/cohort-walk.ts). Reading the orders twice and joining them to their customer's first
 * order cost more (one more read, a hash join on the customer key, a distinct count of keys per
 * group), and so did keeping each customer's orders as arrays. Orders are summed exactly per cohort,
 * period, currency and day before the rates, as the fact sources do, so the derived form below (which
 * adds and subtracts such sums) reaches the same numbers.
 */
export function emitCohorts(b: Binder, r: ResolvedCohorts, range: Instants): string {
  const pixel = b.bind(r.pixelId, "String");
  const tz = b.bind(r.timezone, "String");
  const target = b.bind(r.currency, "String");
  const where = printFilter(r.where, b);
  const walked = cohortWalkSql("co", where, r.granularity, tz);
  const inRange = `first_at >= ${b.bind(range.start, "DateTime64(3, 'UTC')")} AND first_at < ${b.bind(range.end, "DateTime64(3, 'UTC')")}
    AND period < ${b.bind(r.periodsAhead, "Int64")}`;
  return `WITH ${fxCtes(target, ratesFrom(b, range.start))},
${countedOrdersCte(pixel, r.settings, b, r.timezone, false)}
${converted(cohortCellsSql(walked, inRange, r.granularity, tz), tz, target)}`;
}

/**
 * The cells converted at each day's rate and summed per cohort and period. A group whose orders net
 * to none (a corrected customer taken out of it) is dropped before the rates: it holds nothing, and
 * the raw statement, which never has it, reports no rate missing for its day.
 */
function converted(cells: string, tz: string, target: string): string {
  const fx = fxJoin("q", target);
  return `SELECT toUnixTimestamp(toDateTime(q.cohort, ${tz})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * ${fx.factor})) AS revenue, ${fx.missing} AS fx_missing
FROM (
  SELECT cohort, period, currency AS cur, fx_day, toUInt8(1) AS fx_k, sum(retained) AS retained, sum(orders) AS orders,
    toFloat64(sum(revenue)) AS revenue
  FROM (${cells})
  GROUP BY cohort, period, cur, fx_day
  HAVING orders != 0
) AS q
${fx.joins}
GROUP BY cohort_key, period
ORDER BY cohort_key, period`;
}

/** Parameters the service binds when it runs a cohort statement's derived form. */
export const COHORT_SLOT = "cohort_slot";
/** The customers to correct the cells for. */
export const COHORT_CUSTOMERS = "cohort_customers";
/** The orders with a row past the build's cutoff, and the first day of the earliest month of those rows. */
export const COHORT_ORDERS = "cohort_orders";
export const COHORT_ORDERS_FROM = "cohort_orders_from";

/** How recent a range's end must be for the cells to answer (older ranges: raw, see below). */
export const COHORT_RECENT_DAYS = 7;

/**
 * Whether the cohort cells can answer `r` (docs/derived-tables.md, "cohort_cells"): no filter, no
 * enabled exclusion filter (the cells know orders only by kind), the range starting on a period's
 * first day (the cells know a customer's first order only by its cohort), and ending recently (the
 * customers with an order on or after the end are corrected one by one: for an old range, nearly all).
 */
export function cohortCellsAnswer(r: ResolvedCohorts, range: Instants, now: Date): boolean {
  if (r.where !== undefined) return false;
  if (r.settings.exclusionFilters.some((f) => f.enabled)) return false;
  const startDay = new Date(`${range.startDate}T00:00:00Z`);
  const aligned = r.granularity === "month" ? range.startDate.endsWith("-01") : startDay.getUTCDay() === 1;
  if (!aligned) return false;
  return range.end.getTime() >= now.getTime() - COHORT_RECENT_DAYS * 86_400_000;
}

/** The first day of the period holding the local date `day` (YYYY-MM-DD). */
function periodOf(granularity: "week" | "month", day: string): string {
  if (granularity === "month") return `${day.slice(0, 8)}01`;
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

/**
 * The derived forms: the cells of the range's cohorts in the build's slot, corrected for the customers
 * bound under COHORT_CUSTOMERS (their orders changed since the build, or they ordered on or after the
 * range's end): their snapshot contributions subtracted, their contributions now added (with the raw
 * statement's own range test on the first order). `current`: the cells alone, for no such customer.
 *
 * A customer's orders now, without reading every order: an order with no row past the build's cutoff
 * is as the snapshot holds it; one with such rows (COHORT_ORDERS) is read from orders, whole months
 * from the earliest month of those rows (COHORT_ORDERS_FROM) — its rows in earlier months have none
 * past the cutoff, so the snapshot holds them too.
 */
export function emitCohortCells(
  b: Binder,
  r: ResolvedCohorts,
  range: Instants,
): { sql: string; current: string } {
  const pixel = b.bind(r.pixelId, "String");
  const tz = b.bind(r.timezone, "String");
  const target = b.bind(r.currency, "String");
  const slot = `{${COHORT_SLOT}:UInt8}`;
  const customers = `{${COHORT_CUSTOMERS}:Array(String)}`;
  const changed = `{${COHORT_ORDERS}:Array(String)}`;
  const from = `{${COHORT_ORDERS_FROM}:DateTime64(3, 'UTC')}`;
  const mask = b.bind(countedKinds(r.settings), "Int64");
  const periods = b.bind(r.periodsAhead, "Int64");
  const first = b.bind(range.startDate, "Date");
  const last = b.bind(periodOf(r.granularity, range.endDate), "Date");
  const inCohorts = `cohort >= ${first} AND cohort <= ${last} AND period < ${periods}`;
  const cells = `SELECT cohort, period, currency, fx_day, retained, orders, revenue
  FROM cohort_cells FINAL
  WHERE pixel_id = ${pixel} AND slot = ${slot} AND timezone = ${tz} AND granularity = ${b.bind(r.granularity, "String")}
    AND mask = ${mask} AND ${inCohorts} AND orders != 0`;
  // One read of the customers' snapshot rows, each walked as it was (side 0) and, unless its order
  // has rows past the cutoff, as it is now (side 1), beside their orders read now.
  const read = `created_at >= ${from} AND order_id IN ${changed}`;
  const rows = `(SELECT customer_key, order_id, created_at, currency, total_price,
      arrayJoin(if(${read}, [0], [0, 1])) AS side
    FROM cohort_orders FINAL
    WHERE pixel_id = ${pixel} AND slot = ${slot} AND customer_key IN ${customers} AND bitAnd(kind, ${mask}) != 0
    UNION ALL
    SELECT customer_key, order_id, created_at, currency, total_price, 1 AS side FROM co WHERE customer_key IN ${customers})`;
  const sides = cohortCellsSql(
    cohortWalkSql(rows, "1", r.granularity, tz, "side"),
    `${inCohorts} AND (side = 0 OR (first_at >= ${b.bind(range.start, "DateTime64(3, 'UTC')")} AND first_at < ${b.bind(range.end, "DateTime64(3, 'UTC')")}))`,
    r.granularity,
    tz,
    "side",
  );
  const head = `WITH ${fxCtes(target, ratesFrom(b, range.start))}`;
  return {
    sql: `${head},
${countedOrdersCte(pixel, r.settings, b, r.timezone, false, { rows: read })}
${converted(
  `${cells}
  UNION ALL
  SELECT cohort, period, currency, fx_day, if(side = 0, -retained, retained), if(side = 0, -orders, orders),
    if(side = 0, -revenue, revenue)
  FROM (${sides})`,
  tz,
  target,
)}`,
    current: `${head}
${converted(cells, tz, target)}`,
  };
}
