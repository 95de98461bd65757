import { customerKeySql } from "../shared/customer-key.js";
import { changedCustomers, HOUR, seenByRefresh } from "./order-hours.js";

/**
 * `customer_hours` (docs/derived-tables.md): one row per pixel, UTC hour and customer with an order
 * created in that hour, holding which kinds of order it was (`kinds`) and, for each way of counting
 * pending and voided orders, the customer's previous hour with a counted order (`prev…`). Distinct
 * customers over any span of hours are then a count, not a hash set: a customer counts once in
 * [start, end), on their first counted hour in it — the row whose previous counted hour is before
 * `start`. A stored row with `kinds` = 0 is a customer-hour that no longer holds an order.
 */

export const CUSTOMER_HOURS = "customer_hours";

/** `kinds` bits: an order counted under every setting, a pending one, a voided one (of an order row). */
export const KIND = "multiIf(financial_status = 'pending', 2, financial_status = 'voided', 4, 1)";

/** The `prev` column for each setting, by the mask of kinds that count under it. */
const PREV_BY_MASK: Record<number, string> = {
  1: "prev",
  3: "prev_with_pending",
  5: "prev_with_voided",
  7: "prev_with_both",
};

/** No previous counted hour: before every stored fact (they lie in 1970–2149). */
export const NO_PREVIOUS = "toDateTime64('1900-01-01 00:00:00', 3, 'UTC')";

/** The mask of `kinds` bits counted under the order settings' pending and voided switches. */
export function countedKinds(settings: { countPendingOrders: boolean; countVoidedOrders: boolean }): number {
  return 1 | (settings.countPendingOrders ? 2 : 0) | (settings.countVoidedOrders ? 4 : 0);
}

/** The `prev…` column that belongs to a mask of counted kinds. */
export const prevColumn = (mask: number): string => PREV_BY_MASK[mask]!;

const PIXEL = "{pixel:String}";

/**
 * The rebuild of whole customers (every row of each, since a new order moves the `prev` of every
 * later row of its customer): `since` — every customer an order with a row ingested after `{since}`
 * is or was counted for (`changedCustomers`: an order that changed customer moves rows of both); `all` — every
 * customer of the pixel, for a first build. Each customer's rows are written again with
 * `built_version` = `{version}`, and a stored row of theirs with no order any more is written with
 * `kinds` = 0, so no stale row survives. A first build of a large pixel goes in `sliced` parts (by
 * a hash of the customer key): the window over every customer's hours held ~350 MB of the engine's
 * memory for 1M orders in one statement, and chDB keeps what a statement took.
 */
export function customerHoursRefreshSql(
  scope: "since" | "all",
  materialized = false,
  sliced = false,
): string {
  // The set is read twice: computed once where the engine can (see refreshSql).
  const customers =
    scope === "since"
      ? `WITH customers AS ${materialized ? "MATERIALIZED " : ""}(
  SELECT DISTINCT k FROM (
  ${changedCustomers("{since:DateTime64(3, 'UTC')}")}
  )
)
`
      : "";
  // `sliced` (a first build in parts): only the customers whose key hashes to `{slice}` of
  // `{slices}`. Every row of a customer comes from that customer's orders and stored rows alone.
  const ofCustomers =
    scope === "since"
      ? " AND customer_key IN (SELECT k FROM customers)"
      : sliced
        ? " AND cityHash64(customer_key) % {slices:UInt32} = {slice:UInt32}"
        : "";
  const prevs = Object.entries(PREV_BY_MASK).map(
    ([mask, col]) =>
      `ifNull(max(if(bitAnd(kinds, ${mask}) != 0, hour, NULL)) OVER w, ${NO_PREVIOUS}) AS ${col}`,
  );
  // The stored rows of the same customers come in with nothing to count: a customer-hour with no
  // order now is written with kinds = 0 (a first build after the watermarks were cleared meets rows
  // of an earlier one).
  const stored = `
  UNION ALL
  SELECT hour, customer_key, toUInt8(0), ${Object.values(PREV_BY_MASK)
    .map(() => NO_PREVIOUS)
    .join(", ")}
  FROM ${CUSTOMER_HOURS} FINAL WHERE pixel_id = ${PIXEL}${ofCustomers}`;
  const cols = Object.values(PREV_BY_MASK);
  // A customer-hour both rebuilt and stored takes the rebuilt row's values: picked by `kinds` (≥ 1
  // rebuilt, 0 stored), not by max() of the times, which over this union returned the stored row's
  // 1900 in chDB once the table held other pixels' rows (the worked example in
  // test/e2e/derived-tables.test.ts caught it).
  return `INSERT INTO ${CUSTOMER_HOURS} (pixel_id, hour, customer_key, built_version, kinds, ${cols.join(", ")})
${customers}SELECT ${PIXEL}, hour, customer_key, {version:UInt64}, max(kinds), ${cols.map((c) => `argMax(${c}, kinds)`).join(", ")}
FROM (
  SELECT hour, customer_key, kinds, ${prevs.join(",\n    ")}
  FROM (
    SELECT ${HOUR} AS hour, ${customerKeySql("o")} AS customer_key, groupBitOr(${KIND}) AS kinds
    FROM (
      SELECT order_id, created_at, financial_status, customer_id, customer_email_hash, ingested_at
      FROM orders FINAL WHERE pixel_id = ${PIXEL}
    ) AS o
    WHERE ${seenByRefresh("o")}${ofCustomers}
    GROUP BY hour, customer_key
  )
  WINDOW w AS (PARTITION BY customer_key ORDER BY hour ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)${stored}
)
GROUP BY hour, customer_key`;
}

/** More customers than this past the watermark: a query counts its customers from raw orders. */
export const MAX_FRESH_CUSTOMERS = 5_000;

/**
 * The customers an order with a row past the watermark `since` is or was counted for (at most
 * MAX_FRESH_CUSTOMERS + 1): a query counts them from raw orders. A scalar subquery over
 * `{pixel:String}`.
 */
export function freshCustomersSql(since: string): string {
  return `(SELECT groupUniqArray(${MAX_FRESH_CUSTOMERS + 1})(k) FROM (
  ${changedCustomers(since)}
  ))`;
}
