import type { Binder } from "../binder.js";
import { printFilter } from "../filters/print.js";
import type { ResolvedCohorts } from "../resolve.js";
import type { Instants } from "../time.js";
import { countedOrdersCte, fxCtes, fxJoin } from "./common.js";

/**
 * Cohort rows: per cohort (start of the week or month of a customer's first counted order in the
 * range) and period since, retained customers, orders and revenue in the target currency. Orders are
 * summed per cohort, period, currency and day before the rates (as the fact sources do).
 */
export function emitCohorts(b: Binder, r: ResolvedCohorts, range: Instants): string {
  const pixel = b.bind(r.pixelId, "String");
  const tz = b.bind(r.timezone, "String");
  const target = b.bind(r.currency, "String");
  const where = printFilter(r.where, b);
  const start = (col: string) =>
    r.granularity === "month" ? `toStartOfMonth(${col}, ${tz})` : `toMonday(${col}, ${tz})`;
  const periodOf =
    r.granularity === "month"
      ? "dateDiff('month', f.cohort, toStartOfMonth(f.created_at, " + tz + "))"
      : "intDiv(dateDiff('day', f.cohort, toMonday(f.created_at, " + tz + ")), 7)";
  const fx = fxJoin("q", target);
  return `WITH ${fxCtes(target)},
${countedOrdersCte(pixel, r.settings, b, r.timezone, false)},
f0 AS (SELECT * FROM co AS o WHERE ${where}),
firsts AS (SELECT customer_key, min(created_at) AS first_at FROM f0 GROUP BY customer_key),
cohorted AS (
  SELECT customer_key, ${start("first_at")} AS cohort FROM firsts
  WHERE first_at >= ${b.bind(range.start, "DateTime64(3, 'UTC')")} AND first_at < ${b.bind(range.end, "DateTime64(3, 'UTC')")}
)
SELECT toUnixTimestamp(toDateTime(q.cohort, ${tz})) AS cohort_key, q.period AS period,
  toFloat64(uniqExactMerge(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * ${fx.factor})) AS revenue, ${fx.missing} AS fx_missing
FROM (
  SELECT r.cohort AS cohort, r.period AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k,
    uniqExactState(r.customer_key) AS retained, count() AS orders, sum(toFloat64(r.total_price)) AS revenue
  FROM (
    SELECT f.customer_key AS customer_key, f.cohort AS cohort, ${periodOf} AS period, f.total_price AS total_price,
      f.currency AS cur, toDate(f.created_at) AS fx_day
    FROM (SELECT f0.*, c.cohort AS cohort FROM f0 INNER JOIN cohorted AS c ON c.customer_key = f0.customer_key) AS f
    WHERE ${periodOf} < ${b.bind(r.periodsAhead, "Int64")}
  ) AS r
  GROUP BY cohort, period, cur, fx_day
) AS q
${fx.joins}
GROUP BY cohort_key, period
ORDER BY cohort_key, period`;
}
