import { type CohortGranularity, cohortCellsSql, cohortWalkSql } from "../shared/cohort-walk.js";
import { customerKeySql } from "../shared/customer-key.js";
import { KIND, MAX_FRESH_CUSTOMERS } from "./customer-hours.js";
import { seenByRefresh } from "./order-hours.js";

/**
 * Cohort cells (docs/derived-tables.md, "cohort_cells"). A build copies the pixel's orders as the
 * refresh sees them (`seenByRefresh`) into `cohort_orders` and computes from that copy, per timezone,
 * granularity and mask of counted kinds it covers, every cohort's cells into `cohort_cells`, both in
 * one of two slots — the one the current build does not use, so a query reading the current slot never
 * meets a half-written one — then records itself in `cohort_builds`. Rows of the slot's previous
 * contents that the new build lacks are written with zeros (kind 0, orders 0), as the other rollups do.
 * Between builds a query corrects the cells for the customers whose orders changed.
 */

const PIXEL = "{pixel:String}";
const SLOT = "{slot:UInt8}";

export type CohortTarget = { timezones: string[]; masks: number[] };

/** What a build covers when nothing says otherwise (the default order settings count only kind 1). */
export const DEFAULT_COHORT_TARGET: CohortTarget = { timezones: ["UTC"], masks: [1] };

/** The orders snapshot of the build `{version}` in `{slot}`, of the orders seen at `{cutoff}`. */
export function cohortOrdersBuildSql(sliced = false): string {
  // `sliced`: only the customers whose key hashes to `{slice}` of `{slices}` (a large pixel's build
  // goes in parts; each order's row depends on its own versions alone).
  const part = sliced ? " AND cityHash64(customer_key) % {slices:UInt32} = {slice:UInt32}" : "";
  return `INSERT INTO cohort_orders (pixel_id, slot, customer_key, order_id, created_at, built_version, kind, currency, total_price)
SELECT ${PIXEL}, ${SLOT}, customer_key, order_id, created_at, {version:UInt64},
  argMax(kind, built), argMax(currency, built), argMax(total_price, built)
FROM (
  SELECT ${customerKeySql("o")} AS customer_key, o.order_id AS order_id, o.created_at AS created_at, ${KIND} AS kind,
    o.currency AS currency, o.total_price AS total_price, 1 AS built
  FROM (
    SELECT order_id, created_at, financial_status, customer_id, customer_email_hash, currency, total_price, ingested_at
    FROM orders FINAL WHERE pixel_id = ${PIXEL}
  ) AS o
  WHERE ${seenByRefresh("o")}${part}
  UNION ALL
  SELECT customer_key, order_id, created_at, toUInt8(0), currency, total_price, 0
  FROM cohort_orders FINAL WHERE pixel_id = ${PIXEL} AND slot = ${SLOT} AND kind != 0${part}
)
GROUP BY customer_key, order_id, created_at`;
}

/** The cells of one granularity, timezone `{tz}` and mask `{mask}`, from the snapshot in `{slot}`. */
export function cohortCellsBuildSql(granularity: CohortGranularity): string {
  const tz = "{tz:String}";
  const snapshot = `(SELECT customer_key, order_id, created_at, currency, total_price FROM cohort_orders FINAL
    WHERE pixel_id = ${PIXEL} AND slot = ${SLOT} AND bitAnd(kind, {mask:UInt8}) != 0)`;
  const cells = cohortCellsSql(cohortWalkSql(snapshot, "1", granularity, tz), "1", granularity, tz);
  return `INSERT INTO cohort_cells (pixel_id, slot, timezone, granularity, mask, cohort, period, currency, fx_day,
  built_version, retained, orders, revenue)
SELECT ${PIXEL}, ${SLOT}, ${tz}, '${granularity}', {mask:UInt8}, cohort, period, currency, fx_day, {version:UInt64},
  argMax(retained, built), argMax(orders, built), argMax(revenue, built)
FROM (
  SELECT cohort, period, currency, fx_day, retained, orders, revenue, 1 AS built FROM (${cells})
  UNION ALL
  SELECT cohort, period, currency, fx_day, toInt64(0), toInt64(0), toDecimal128(0, 4), 0
  FROM cohort_cells FINAL
  WHERE pixel_id = ${PIXEL} AND slot = ${SLOT} AND timezone = ${tz} AND granularity = '${granularity}'
    AND mask = {mask:UInt8} AND orders != 0
)
GROUP BY cohort, period, currency, fx_day`;
}

/**
 * The pixel's latest build: how long ago it was recorded (`age_s`), how many order rows arrived after
 * its cutoff, and `unsure`: whether it treats rows before its cutoff as new (it read closer to the
 * clock than the margin) and the margin has passed since, so a build now would not (`{margin}` in ms).
 * `safe`: the latest instant a build reading now can vouch for (the clock less the margin).
 */
export const COHORT_STATE_SQL = `WITH (SELECT max(built_version) FROM cohort_builds WHERE pixel_id = ${PIXEL}) AS v,
  (SELECT any(cutoff) FROM cohort_builds WHERE pixel_id = ${PIXEL} AND built_version = v) AS c,
  now64(3, 'UTC') - toIntervalMillisecond({margin:UInt32}) AS safe_at
SELECT count() AS builds, any(slot) AS slot, any(timezones) AS timezones, any(masks) AS masks,
  toUInt64(greatest(0, toUnixTimestamp64Milli(now64(3, 'UTC')) - toUnixTimestamp64Milli(any(recorded_at))) / 1000) AS age_s,
  (SELECT count() FROM orders WHERE pixel_id = ${PIXEL} AND ingested_at > c) AS rows_after,
  count() > 0 AND any(fresh_after) < c AND c <= safe_at AS unsure,
  toString(safe_at) AS safe
FROM cohort_builds WHERE pixel_id = ${PIXEL} AND built_version = v`;

/**
 * Pixels whose derived tables are built and whose cohort cells are not, or are unsure (as above) and
 * were recorded at least `{interval}` ms ago: the worker builds them even with nothing new to refresh.
 */
export const COHORT_BUILDS_DUE_SQL = `WITH latest AS (
  SELECT pixel_id, argMax(cutoff, built_version) AS c, argMax(fresh_after, built_version) AS f,
    argMax(recorded_at, built_version) AS r
  FROM cohort_builds GROUP BY pixel_id
)
SELECT DISTINCT w.pixel_id AS pixel_id FROM derived_watermarks AS w LEFT JOIN latest AS b ON b.pixel_id = w.pixel_id
WHERE w.name = {name:String} AND (b.pixel_id = ''
  OR (b.f < b.c AND b.c <= now64(3, 'UTC') - toIntervalMillisecond({margin:UInt32})
    AND toUnixTimestamp64Milli(now64(3, 'UTC')) - toUnixTimestamp64Milli(b.r) >= {interval:UInt64}))
ORDER BY pixel_id`;

/** Rebuild once this many order rows arrived after the build, or any did and the build is this old. */
export const COHORT_REBUILD_ROWS = 1_000;
export const COHORT_REBUILD_AGE_S = 300;
/**
 * The least time from a build's record to the start of the next (DERIVED_COHORT_INTERVAL_MS): the
 * build after next overwrites the slot a query may have read its build from. A process stops using a
 * build half of it after it read it, and reads the newer one once it is recorded, so a query whose
 * statement runs for less than the other half (well under a second here) never meets a slot being
 * overwritten.
 */
export const COHORT_MIN_INTERVAL_MS = 60_000;

/** At most this many rows past a build's cutoff are looked at: more, and queries read raw. */
const MAX_CHANGED_ROWS = 4 * MAX_FRESH_CUSTOMERS;

/**
 * The order rows past the cutoff `{cutoff}`, bounded: how many were read (more than MAX_CHANGED_ROWS:
 * too many to correct for), their orders and the customers they are counted for now (at most
 * MAX_FRESH_CUSTOMERS + 1 of each), and the first instant of the earliest month of those rows.
 */
export const COHORT_CHANGED_SQL = `SELECT count() AS n, groupUniqArray(${MAX_FRESH_CUSTOMERS + 1})(order_id) AS orders,
  groupUniqArray(${MAX_FRESH_CUSTOMERS + 1})(k) AS customers,
  toString(toDateTime64(toStartOfMonth(min(created_at)), 3, 'UTC')) AS orders_from
FROM (
  SELECT o.order_id AS order_id, o.created_at AS created_at, ${customerKeySql("o")} AS k
  FROM orders AS o WHERE o.pixel_id = ${PIXEL} AND o.ingested_at > {cutoff:DateTime64(3, 'UTC')}
  LIMIT ${MAX_CHANGED_ROWS + 1}
)`;
export const MAX_COHORT_CHANGED_ROWS = MAX_CHANGED_ROWS;

/** The customers the snapshot in `{slot}` counts the orders `{orders}` for (at most MAX_FRESH_CUSTOMERS + 1). */
export const COHORT_SNAPSHOT_CUSTOMERS_SQL = `SELECT groupUniqArray(${MAX_FRESH_CUSTOMERS + 1})(customer_key) AS customers
FROM cohort_orders WHERE pixel_id = ${PIXEL} AND slot = ${SLOT} AND order_id IN {orders:Array(String)}`;

/** Customers with a snapshot order created at or after `{end}` (at most MAX_FRESH_CUSTOMERS + 1). */
export function cohortLateCustomersSql(): string {
  return `SELECT groupUniqArray(${MAX_FRESH_CUSTOMERS + 1})(customer_key) AS customers FROM cohort_orders
  WHERE pixel_id = ${PIXEL} AND slot = ${SLOT} AND created_at >= {end:DateTime64(3, 'UTC')}`;
}
