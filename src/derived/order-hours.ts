import { customerKeySql } from "../shared/customer-key.js";

/**
 * `order_hours` (docs/derived-tables.md): per order, the UTC hour and the customer the derived tables
 * last counted it under. The engine merges an order's older versions away (within a month a new
 * version replaces the old one in place, no tombstone), so once an order moved to another hour or
 * customer, only this row still says where the rollups count it — the place a refresh must rebuild,
 * and a query must read raw until then.
 */

export const ORDER_HOURS = "order_hours";

/** The UTC hour an order row was created in: the rollups' `hour`. */
export const HOUR = "toDateTime64(toStartOfHour(created_at), 3, 'UTC')";

const PIXEL = "{pixel:String}";

/** Orders with a row ingested after `since` (a subquery of their ids). */
const changedIds = (since: string) =>
  `SELECT order_id FROM orders WHERE pixel_id = ${PIXEL} AND ingested_at > ${since}`;

/**
 * Every place an order with a row ingested after `since` is or was counted, as a UNION ALL of rows
 * with `fromOrders` over each of its rows in orders (`v`: versions and tombstones not merged away yet)
 * and `fromIndex` over its rows in order_hours (where the derived tables counted it). Both looked up
 * by the sort key.
 */
export function changedPlaces(since: string, fromOrders: string, fromIndex: string): string {
  return `SELECT ${fromOrders} FROM orders AS v WHERE v.pixel_id = ${PIXEL} AND v.order_id IN (${changedIds(since)})
  UNION ALL
  SELECT ${fromIndex} FROM ${ORDER_HOURS} WHERE pixel_id = ${PIXEL} AND order_id IN (${changedIds(since)})`;
}

/** The hours of `changedPlaces`, as column `h`. */
export const changedHours = (since: string) => changedPlaces(since, `${HOUR} AS h`, "hour AS h");

/** The customers of `changedPlaces`, as column `k`. */
export const changedCustomers = (since: string) =>
  changedPlaces(since, `${customerKeySql("v")} AS k`, "customer_key AS k");

/**
 * Where each order counts now (its latest live version): `since` — the orders with a row ingested
 * after `{since}`; `all` — every order of the pixel. Run after the rollups were rebuilt, so a crash in
 * between leaves the old places, which the next refresh rebuilds again.
 */
export function orderHoursRefreshSql(scope: "since" | "all"): string {
  const only = scope === "since" ? ` AND order_id IN (${changedIds("{since:DateTime64(3, 'UTC')}")})` : "";
  return `INSERT INTO ${ORDER_HOURS} (pixel_id, order_id, built_version, hour, customer_key)
SELECT ${PIXEL}, o.order_id, {version:UInt64}, ${HOUR}, ${customerKeySql("o")}
FROM (SELECT order_id, created_at, customer_id, customer_email_hash FROM orders FINAL WHERE pixel_id = ${PIXEL}${only}) AS o`;
}
