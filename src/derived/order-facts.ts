import { changedHours, HOUR, refreshHours, seenByRefresh } from "./order-hours.js";

/**
 * `order_facts_hourly` (docs/derived-tables.md): per pixel, UTC hour of creation, currency and
 * financial status, the sums of the latest version of every order. Every order is in it: which orders
 * count (order settings) is decided when it is read, on `financial_status`. Distinct customers live in
 * `customer_hours`.
 */

export const ORDER_FACTS = "order_facts_hourly";

/** The order amounts summed per hour, named alike in `orders` and in the rollup. */
export const ORDER_FACT_AMOUNTS = [
  "total_price",
  "subtotal_price",
  "total_shipping",
  "total_tax",
  "total_discounts",
] as const;

const PIXEL = "{pixel:String}";

/**
 * The rebuild of a set of hours: `since` — every hour an order with a row (a version, or the tombstone
 * left in the old month when an order's creation time moved) ingested after `{since}` is or was
 * counted in (`changedHours`);
 * `month` — every hour of `{month}` (YYYYMM), for a first build. Each group of those hours is written
 * again with `built_version` = `{version}`, and a group the hour had before and has no order in now
 * is written with zeros (its stored rows come in with nothing to count), so no stale group survives.
 */
export function orderFactsRefreshSql(scope: "since" | "month", materialized = false): string {
  const hours = refreshHours(scope, changedHours("{since:DateTime64(3, 'UTC')}"), materialized);
  const zero = "toDecimal64(0, 4)";
  const amounts = ORDER_FACT_AMOUNTS.map((a) => `sumIf(${a}, counts) AS ${a}`).join(", ");
  return `INSERT INTO ${ORDER_FACTS} (pixel_id, hour, currency, financial_status, built_version, orders, ${ORDER_FACT_AMOUNTS.join(", ")})
${hours.with}SELECT ${PIXEL}, hour, currency, financial_status, {version:UInt64}, countIf(counts) AS orders, ${amounts}
FROM (
  SELECT ${HOUR} AS hour, currency, financial_status, ${ORDER_FACT_AMOUNTS.join(", ")}, true AS counts
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = ${PIXEL} AND ${hours.rowsIn("created_at")}) AS o
  WHERE ${seenByRefresh("o")}
  UNION ALL
  SELECT hour, currency, financial_status, ${ORDER_FACT_AMOUNTS.map(() => zero).join(", ")}, false AS counts
  FROM ${ORDER_FACTS} WHERE pixel_id = ${PIXEL} AND ${hours.storedIn}
)
GROUP BY hour, currency, financial_status`;
}

/**
 * More fresh hours than this: a query reads its orders raw instead (a large load just landed, or the
 * worker is far behind). Bounded so the bound list stays small.
 */
export const MAX_FRESH_HOURS = 2_000;

/**
 * Every hour an order with a row past the pixel's watermark `since` is or was counted in (at most
 * MAX_FRESH_HOURS + 1): the hours a query reads from raw orders. A scalar subquery over `{pixel:String}`.
 */
export function freshHoursSql(since: string): string {
  return `(SELECT groupUniqArray(${MAX_FRESH_HOURS + 1})(toString(h)) FROM (
  ${changedHours(since)}
  ))`;
}
