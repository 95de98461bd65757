/**
 * The cohort walk, shared by the raw cohort statement, the cohort cells' build and the cells'
 * correction, so all three number periods alike: every order of a customer in one window, sorted by
 * time, giving the customer's first order (the cohort) and whether the order opens a period (the
 * customer's first order, or a different period than their previous order: retention counts those).
 * The row is flagged by its number, not by a default for the previous order's time, which could fall
 * in the same bucket as a real order. The window partitions by the key's hash and then the key: the
 * sort compares integers and reaches the strings only on a tie, and the partition stays exactly the
 * customer.
 */
export type CohortGranularity = "week" | "month";

/** The start of `col`'s period in the timezone `tz` (an SQL expression or bound parameter): a Date. */
export function periodStart(granularity: CohortGranularity, col: string, tz: string): string {
  return granularity === "month" ? `toStartOfMonth(${col}, ${tz})` : `toMonday(${col}, ${tz})`;
}

/** The period index of an order created at `col` in the cohort starting at `cohort` (0: acquisition). */
export function periodIndex(granularity: CohortGranularity, cohort: string, col: string, tz: string): string {
  return granularity === "month"
    ? `dateDiff('month', ${cohort}, ${periodStart(granularity, col, tz)})`
    : `intDiv(dateDiff('day', ${cohort}, ${periodStart(granularity, col, tz)}), 7)`;
}

/**
 * The walk over `source` (a relation aliased `o` with customer_key, order_id, created_at, currency and
 * total_price, already holding only counted orders): per order its created_at, total_price, currency,
 * the customer's first_at and opens_period. `apart`: a column of `source` whose values are walked
 * apart (each customer's rows with one value as if the others were not there), and kept.
 */
export function cohortWalkSql(
  source: string,
  where: string,
  granularity: CohortGranularity,
  tz: string,
  apart?: string,
): string {
  const start = (col: string) => periodStart(granularity, col, tz);
  const keep = apart ? `o.${apart} AS ${apart}, ` : "";
  const by = apart ? `o.${apart}, ` : "";
  return `SELECT ${keep}o.created_at AS created_at, o.total_price AS total_price, o.currency AS currency,
    first_value(o.created_at) OVER per_customer AS first_at,
    row_number() OVER per_customer = 1
      OR ${start("lagInFrame(o.created_at) OVER per_customer")} != ${start("o.created_at")} AS opens_period
  FROM ${source} AS o WHERE ${where}
  WINDOW per_customer AS (PARTITION BY ${by}cityHash64(o.customer_key), o.customer_key ORDER BY o.created_at, o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
}

/**
 * The walk's orders summed per cohort, period, currency and UTC day (the day its rate is read for):
 * retained customers, orders and the exact revenue (a Decimal sum, so every form that adds and
 * subtracts these sums reaches the same number). `where` filters the walked rows (it may name cohort,
 * period and first_at); `apart`, the walk's, is kept and grouped by.
 */
export function cohortCellsSql(
  walked: string,
  where: string,
  granularity: CohortGranularity,
  tz: string,
  apart?: string,
): string {
  const keep = apart ? `${apart}, ` : "";
  return `SELECT ${keep}${periodStart(granularity, "first_at", tz)} AS cohort, ${periodIndex(granularity, "cohort", "created_at", tz)} AS period,
    currency, toDate(created_at) AS fx_day,
    toInt64(countIf(opens_period)) AS retained, toInt64(count()) AS orders, sum(total_price) AS revenue
  FROM (${walked})
  WHERE ${where}
  GROUP BY ${keep}cohort, period, currency, fx_day`;
}
