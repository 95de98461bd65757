import { HOUR, hourOf, refreshHours, seenByRefresh } from "./order-hours.js";

/**
 * `refund_facts_hourly` (docs/derived-tables.md): per pixel, UTC hour of the refund, UTC hour of its
 * order, currency and the order's financial status, the count and exact sum of the latest version of
 * every refund whose order is stored. Which refunds count (order settings) and where they are booked
 * (`refundDateAttribution`: the refund's hour or the order's) is decided when it is read. `refund_hours`
 * remembers the hour each refund was counted in: refunds have no partitions, so once the engine
 * merged a moved refund's older version away only that table still says which hour to rebuild.
 */

export const REFUND_FACTS = "refund_facts_hourly";
export const REFUND_HOURS = "refund_hours";

const PIXEL = "{pixel:String}";

/**
 * Refunds with a row ingested after `since`, and refunds of orders with a row ingested after it (the
 * order's status or time is part of the refund's group): a subquery of refund ids.
 */
const changedRefundIds = (since: string) =>
  `SELECT refund_id FROM refunds WHERE pixel_id = ${PIXEL} AND ingested_at > ${since}
    UNION ALL
    SELECT refund_id FROM refunds WHERE pixel_id = ${PIXEL} AND order_id IN (
      SELECT order_id FROM orders WHERE pixel_id = ${PIXEL} AND ingested_at > ${since})`;

/**
 * Every refund hour a refund of `changedRefundIds(since)` is or was counted in, as column `h`: the
 * hours of its rows in refunds (versions not merged away yet) and of its places in refund_hours.
 */
export function changedRefundHours(since: string): string {
  return `SELECT ${HOUR} AS h FROM refunds WHERE pixel_id = ${PIXEL} AND refund_id IN (${changedRefundIds(since)})
  UNION ALL
  SELECT hour AS h FROM ${REFUND_HOURS} WHERE pixel_id = ${PIXEL} AND refund_id IN (${changedRefundIds(since)})`;
}

/**
 * Adds the hour each refund counts in, in this refresh's view (`seenByRefresh`): `since` — the
 * refunds with a row ingested after `{since}` (a refund of a changed order keeps its hour); `all` —
 * every refund of the pixel. Run before the rollup is rebuilt, for the same reason as order_hours.
 */
export function refundHoursRefreshSql(scope: "since" | "all"): string {
  const only =
    scope === "since"
      ? ` AND refund_id IN (SELECT refund_id FROM refunds WHERE pixel_id = ${PIXEL} AND ingested_at > {since:DateTime64(3, 'UTC')})`
      : "";
  return `INSERT INTO ${REFUND_HOURS} (pixel_id, refund_id, built_version, hour)
SELECT ${PIXEL}, r.refund_id, {version:UInt64}, ${HOUR}
FROM (SELECT refund_id, created_at, ingested_at FROM refunds FINAL WHERE pixel_id = ${PIXEL}${only}) AS r
WHERE ${seenByRefresh("r")}`;
}

/**
 * The groups of refunds (latest versions) created in the refund hours `hoursIn` selects, over
 * `created_at`, joined to their orders (latest versions): refunds of an order not stored are left
 * out, as the raw path's join leaves them out. `seen`: only rows the refresh's cutoff vouches for.
 * Columns: hour, order_hour, currency, financial_status, refunds, amount. `pixel`: its placeholder.
 */
export function refundGroupsSql(pixel: string, hoursIn: (col: string) => string, seen: boolean): string {
  // The cutoff applies after FINAL (ingested_at is not in the sorting key), as in order_hours.
  const latest = (read: string, alias: string) =>
    seen ? `SELECT * FROM (${read}) AS ${alias} WHERE ${seenByRefresh(alias)}` : read;
  const refunds = latest(
    `SELECT refund_id, order_id, created_at, currency, amount, ingested_at FROM refunds FINAL
      WHERE pixel_id = ${pixel} AND ${hoursIn("created_at")}`,
    "r",
  );
  const orders = latest(
    `SELECT order_id, created_at, financial_status, ingested_at FROM orders FINAL
      WHERE pixel_id = ${pixel} AND order_id IN (
        SELECT order_id FROM refunds WHERE pixel_id = ${pixel} AND ${hoursIn("created_at")})`,
    "v",
  );
  return `SELECT ${hourOf("rf.created_at")} AS hour, ${hourOf("o.created_at")} AS order_hour,
    rf.currency AS currency, o.financial_status AS financial_status, count() AS refunds, sum(rf.amount) AS amount
  FROM (
    ${refunds}
  ) AS rf
  INNER JOIN (
    ${orders}
  ) AS o ON o.order_id = rf.order_id
  GROUP BY hour, order_hour, currency, financial_status`;
}

/**
 * The rebuild of a set of refund hours: `since` — every hour of `changedRefundHours({since})`;
 * `month` — every hour of `{month}` (YYYYMM), for a first build. Each group of those hours is written
 * again with `built_version` = `{version}`, and a group the hour had before and has no refund in now
 * is written with zeros, so no stale group survives.
 */
export function refundFactsRefreshSql(scope: "since" | "month", materialized = false): string {
  const hours = refreshHours(scope, changedRefundHours("{since:DateTime64(3, 'UTC')}"), materialized);
  return `INSERT INTO ${REFUND_FACTS} (pixel_id, hour, order_hour, currency, financial_status, built_version, refunds, amount)
${hours.with}SELECT ${PIXEL}, hour, order_hour, currency, financial_status, {version:UInt64}, sum(refunds), sum(amount)
FROM (
  ${refundGroupsSql(PIXEL, hours.rowsIn, true)}
  UNION ALL
  SELECT hour, order_hour, currency, financial_status, toUInt64(0), toDecimal128(0, 4)
  FROM ${REFUND_FACTS} WHERE pixel_id = ${PIXEL} AND ${hours.storedIn}
)
GROUP BY hour, order_hour, currency, financial_status`;
}

/** More fresh refund hours than this: a query reads its refunds raw instead. */
export const MAX_FRESH_REFUND_HOURS = 2_000;

/**
 * Every refund hour a refund is or was counted in whose row, or whose order's row, is past the
 * watermark `since` (at most MAX_FRESH_REFUND_HOURS + 1): the hours a query reads from raw refunds. A
 * scalar subquery over `{pixel:String}`.
 */
export function freshRefundHoursSql(since: string): string {
  return `(SELECT groupUniqArray(${MAX_FRESH_REFUND_HOURS + 1})(toString(h)) FROM (
  ${changedRefundHours(since)}
  ))`;
}
