import { customerKeySql } from "../shared/customer-key.js";

/**
 * `order_hours` (docs/derived-tables.md): every UTC hour and customer the derived tables counted an
 * order under. The engine merges an order's older versions away (within a month a new version
 * replaces the old one in place, no tombstone), so once an order moved to another hour or customer,
 * only this table still says where the rollups may count it — the places a refresh must rebuild, and
 * a query must read raw until then. Places are only added: one the rollups no longer count costs a
 * needless rebuild of that hour or customer when the order changes again, never a wrong count.
 */

export const ORDER_HOURS = "order_hours";

/** The UTC hour of an instant `col`: the rollups' `hour`. */
export const hourOf = (col: string) => `toDateTime64(toStartOfHour(${col}), 3, 'UTC')`;

/** The UTC hour an order row was created in. */
export const HOUR = hourOf("created_at");

const PIXEL = "{pixel:String}";

/**
 * The orders every refresh statement that feeds the rollups reads: those the new watermark vouches
 * for (`{cutoff}`, all visible before the refresh's first read), over `alias`, a FINAL read of orders. An order whose newest version came later is left out by all of them
 * alike (the next round has it), so the rollups, customer_hours and order_hours always agree on where
 * an order counts, whatever the engine merges between their reads: the filter applies after FINAL
 * (ingested_at is not in the sorting key), so it never falls back to a version merged away meanwhile.
 */
export const seenByRefresh = (alias: string) => `${alias}.ingested_at <= {cutoff:DateTime64(3, 'UTC')}`;

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
 * Adds where each order counts in this refresh's view (`seenByRefresh`; an order moving to another
 * month has both rows live until the sync writes the old month's tombstone, and both are added):
 * `since` — the orders with a row ingested after `{since}`; `all` — every order of the pixel. Run
 * before the rollups are rebuilt: they count the same view, so every place they count is here before
 * they count it, whatever lands or merges meanwhile, and a crash in between only adds places.
 */
export function orderHoursRefreshSql(scope: "since" | "all"): string {
  const only = scope === "since" ? ` AND order_id IN (${changedIds("{since:DateTime64(3, 'UTC')}")})` : "";
  return `INSERT INTO ${ORDER_HOURS} (pixel_id, order_id, built_version, hour, customer_key)
SELECT ${PIXEL}, o.order_id, {version:UInt64}, ${HOUR}, ${customerKeySql("o")}
FROM (
  SELECT order_id, created_at, customer_id, customer_email_hash, ingested_at FROM orders FINAL WHERE pixel_id = ${PIXEL}${only}
) AS o
WHERE ${seenByRefresh("o")}`;
}

/**
 * The hours a rollup refresh rebuilds, and the clauses that select them: `since` — the distinct hours
 * of `changed` (a UNION of rows with column `h`, read with `{since}` bound), as a `hours` CTE
 * (`materialized`: computed once where the engine can); `month` — every hour of `{month}` (YYYYMM).
 * `rowsIn(col)` selects source rows by their instant `col` (the month, or the hours' span and then the
 * hours themselves), `storedIn` the rollup's stored rows by `hour`.
 */
export function refreshHours(
  scope: "since" | "month",
  changed: string,
  materialized: boolean,
): { with: string; rowsIn: (col: string) => string; storedIn: string } {
  if (scope === "month")
    return {
      with: "",
      rowsIn: (col) => `toYYYYMM(${col}) = {month:UInt32}`,
      storedIn: "toYYYYMM(hour) = {month:UInt32}",
    };
  return {
    with: `WITH hours AS ${materialized ? "MATERIALIZED " : ""}(
  SELECT DISTINCT h FROM (
  ${changed}
  )
)
`,
    rowsIn: (col) =>
      `${col} >= (SELECT min(h) FROM hours) AND ${col} < (SELECT max(h) FROM hours) + toIntervalHour(1) AND ${hourOf(col)} IN (SELECT h FROM hours)`,
    storedIn: "hour IN (SELECT h FROM hours)",
  };
}
