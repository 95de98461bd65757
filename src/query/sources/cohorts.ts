import type { Binder } from "../binder.js";
import { printFilter } from "../filters/print.js";
import type { ResolvedCohorts } from "../resolve.js";
import type { Instants } from "../time.js";
import { countedOrdersCte, fxCtes, fxJoin, ratesFrom } from "./common.js";

/**
 * Cohort rows: per cohort (start of the week or month of a customer's first counted order ever) and
 * period since, retained customers, orders and revenue in the target currency.
 *
 * One pass over the counted orders, sorted per customer by time in a single window: the first row
 * gives the customer's cohort and opens its period (the row is flagged by its number: a default for
 * the previous order's time could fall in the same bucket as a real order), and an order whose period
 * differs from the customer's previous order opens that period, so retention is a count of those orders. Reading the orders twice and
 * joining them to their customer's first order cost more (one more read, a hash join on the customer
 * key, a distinct count of keys per group), and so did keeping each customer's orders as arrays.
 * The window partitions by the key's hash and then the key: the sort compares integers and reaches
 * the strings only on a tie (~10 % of the statement), and the partition stays exactly the customer.
 * Orders are summed per cohort, period, currency and day before the rates, as the fact sources do.
 */
export function emitCohorts(b: Binder, r: ResolvedCohorts, range: Instants): string {
  const pixel = b.bind(r.pixelId, "String");
  const tz = b.bind(r.timezone, "String");
  const target = b.bind(r.currency, "String");
  const where = printFilter(r.where, b);
  const start = (col: string) =>
    r.granularity === "month" ? `toStartOfMonth(${col}, ${tz})` : `toMonday(${col}, ${tz})`;
  const period =
    r.granularity === "month"
      ? `dateDiff('month', cohort, ${start("created_at")})`
      : `intDiv(dateDiff('day', cohort, ${start("created_at")}), 7)`;
  const fx = fxJoin("q", target);
  return `WITH ${fxCtes(target, ratesFrom(b, range.start))},
${countedOrdersCte(pixel, r.settings, b, r.timezone, false)},
walked AS (
  SELECT o.created_at AS created_at, o.total_price AS total_price, o.currency AS currency,
    first_value(o.created_at) OVER per_customer AS first_at,
    row_number() OVER per_customer = 1
      OR ${start("lagInFrame(o.created_at) OVER per_customer")} != ${start("o.created_at")} AS opens_period
  FROM co AS o WHERE ${where}
  WINDOW per_customer AS (PARTITION BY cityHash64(o.customer_key), o.customer_key ORDER BY o.created_at, o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT toUnixTimestamp(toDateTime(q.cohort, ${tz})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * ${fx.factor})) AS revenue, ${fx.missing} AS fx_missing
FROM (
  SELECT ${start("first_at")} AS cohort, ${period} AS period, currency AS cur, toDate(created_at) AS fx_day,
    toUInt8(1) AS fx_k, countIf(opens_period) AS retained, count() AS orders, sum(toFloat64(total_price)) AS revenue
  FROM walked
  WHERE first_at >= ${b.bind(range.start, "DateTime64(3, 'UTC')")} AND first_at < ${b.bind(range.end, "DateTime64(3, 'UTC')")}
    AND ${period} < ${b.bind(r.periodsAhead, "Int64")}
  GROUP BY cohort, period, cur, fx_day
) AS q
${fx.joins}
GROUP BY cohort_key, period
ORDER BY cohort_key, period`;
}
