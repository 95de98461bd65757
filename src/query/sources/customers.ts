import { CUSTOMER_HOURS, countedKinds, prevColumn } from "../../derived/customer-hours.js";
import { HOUR } from "../../derived/order-hours.js";
import { customerKeySql } from "../../shared/customer-key.js";
import { bucketKeySql } from "../time.js";
import { countedPredicate, groupBy, withinSpans } from "./common.js";
import type { EmitContext } from "./context.js";
import { periodOf, placeholders } from "./facts.js";

/** Before every stored fact: a bound earlier than this counts every customer without an earlier hour. */
const EPOCH = "toDateTime64('1970-01-01 00:00:00', 3, 'UTC')";
/** After every bound: a row whose customer is counted by key, not by `prev`. */
const NEVER = "toDateTime64('2299-12-31 23:59:59', 3, 'UTC')";

/** The fresh sets of the statement's derived form: placeholders of customer keys and UTC hours. */
export interface FreshCustomers {
  customers: string;
  hours: string;
}

/**
 * `customers.count` (base `customers_unique`) from `customer_hours` (docs/derived-tables.md): a
 * customer counts in a bucket (clipped to its period) when one of their rows in it has its previous
 * counted hour before the bucket's start, and in a period's total when that hour is before the
 * period's start — a count, where the raw form keeps a hash set of every customer.
 *
 * `fresh` (null: nothing past the watermark): the customers and the hours an order with a row past
 * the watermark is or was counted under (`FreshIds`). Their stored `prev` may be stale, so they are
 * counted by key instead: from their stored rows outside the fresh hours (no order there changed) and
 * from raw orders in the fresh hours. Every other customer's rows are current, in any hour.
 */
export function emitCustomersFromHours(ctx: EmitContext, fresh: FreshCustomers | null): string {
  const p = placeholders(ctx);
  const mask = countedKinds(ctx.orderSettings);
  const prev = prevColumn(mask);
  const two = p.periods.length > 1;
  const stored = fresh
    ? `SELECT hour AS ts, if(customer_key IN ${fresh.customers}, ${NEVER}, ${prev}) AS prev_hour,
    if(customer_key IN ${fresh.customers}, customer_key, '') AS k
  FROM ${CUSTOMER_HOURS} FINAL
  WHERE pixel_id = ${p.pixel} AND ${withinSpans("hour", p.periods)} AND bitAnd(kinds, ${mask}) != 0
    AND NOT (customer_key IN ${fresh.customers} AND hour IN ${fresh.hours})`
    : `SELECT hour AS ts, ${prev} AS prev_hour
  FROM ${CUSTOMER_HOURS} FINAL
  WHERE pixel_id = ${p.pixel} AND ${withinSpans("hour", p.periods)} AND bitAnd(kinds, ${mask}) != 0`;
  const raw = fresh
    ? `
  UNION ALL
  SELECT o.created_at AS ts, ${NEVER} AS prev_hour, ${customerKeySql("o")} AS k
  FROM (
    SELECT order_id, created_at, financial_status, customer_id, customer_email_hash FROM orders FINAL
    WHERE pixel_id = ${p.pixel} AND ${withinSpans("created_at", p.periods)}
      AND created_at >= arrayMin(${fresh.hours}) AND created_at < arrayMax(${fresh.hours}) + toIntervalHour(1)
  ) AS o
  WHERE ${HOUR} IN ${fresh.hours} AND ${countedPredicate(ctx.orderSettings, ctx.binder, ctx.timezone)}
    AND ${customerKeySql("o")} IN ${fresh.customers}`
    : "";
  const start = two
    ? `if(r.ts >= ${p.start} AND r.ts < ${p.end}, ${p.start}, ${p.periods[1]!.start})`
    : p.start;
  const bucket = bucketKeySql("r.ts", ctx.granularity, p.tz);
  const none = ctx.granularity === "none";
  const rows = [
    `${bucket} AS bucket`,
    ...(two ? [`${periodOf("r.ts", p)} AS period`] : []),
    // First counted hour of the customer in the bucket (clipped to its period) / in the period.
    ...(none ? [] : [`r.prev_hour < greatest(toDateTime64(bucket, 3, 'UTC'), ${start}, ${EPOCH}) AS nb`]),
    `r.prev_hour < greatest(${start}, ${EPOCH}) AS np`,
    ...(fresh ? ["r.k AS k"] : []),
  ];
  const byKey = fresh ? " + uniqExactIf(x.k, x.k != '')" : "";
  const count = none ? `sum(x.np)${byKey}` : `if(grouping(bucket) = 1, sum(x.np), sum(x.nb))${byKey}`;
  const select = [
    none ? "any(x.bucket) AS bucket" : "x.bucket AS bucket",
    ...(two ? ["x.period AS period"] : []),
    `toFloat64(${count}) AS customers_unique`,
    "'' AS fx_missing",
    none ? "toUInt8(2) AS is_total" : "grouping(bucket) AS is_total",
  ];
  return `SELECT ${select.join(",\n  ")}
FROM (
  SELECT ${rows.join(",\n    ")}
  FROM (
  ${stored}${raw}
  ) AS r
) AS x
${groupBy(ctx.granularity, two ? ["period"] : [])}`;
}
