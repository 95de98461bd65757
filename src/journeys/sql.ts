import { Binder } from "../query/binder.js";
import { refundsInTarget } from "../query/sources/attribution.js";
import { fxCtes, fxJoin } from "../query/sources/common.js";
import type { Params } from "../stores/warehouse/port.js";

/**
 * The journey's statements. Every request value is a bound parameter. Orders, touchpoints and events
 * are read by their sort keys (order id; identity; day). Refunds (sorted by refund id) and
 * identity_links (sorted by alias, while the journey knows the identity) are found by a filter pass
 * over the pixel's rows, and only the rows found are grouped, so no statement holds every alias or
 * every link of the pixel in memory.
 */

export interface Statement {
  sql: string;
  params: Params;
}

const done = (sql: string, b: Binder): Statement => ({ sql, params: b.params });

/**
 * A link as the statements return it: `canonical_id` and `first_seen` of the alias's highest version.
 * An unmatched LEFT JOIN row carries the column defaults, so "no link" reads as linked_to '' and
 * linked_ms 0.
 */
const linkColumns =
  "argMax(canonical_id, version) AS linked_to, toUnixTimestamp64Milli(argMax(first_seen, version)) AS linked_ms";

/**
 * The order (latest version), its identity one hop resolved, and its value in `currency`: the total
 * at the rate of its UTC day, every refund at the rate of its own day in its own currency — the net
 * revenue attribution credits. `fx_missing` names the first currency and day without a rate.
 * No row: no such order in the pixel.
 */
export function orderStatement(pixelId: string, orderId: string, currency: string): Statement {
  const b = new Binder();
  const pixel = b.bind(pixelId, "String");
  const order = b.bind(orderId, "String");
  const target = b.bind(currency, "String");
  const fx = fxJoin("q", target);
  // The same conversion as attribution's refunds, restricted to this one order.
  const refunds = `rf AS (${refundsInTarget(pixel, target, { orderId: order })})`;
  const sql = `WITH ${fxCtes(target)},
o AS (
  SELECT order_id, created_at, financial_status, currency, total_price, canonical_id
  FROM orders FINAL WHERE pixel_id = ${pixel} AND order_id = ${order}
  ORDER BY version DESC LIMIT 1
),
hop AS (
  SELECT alias_value AS old, ${linkColumns}
  FROM identity_links
  WHERE pixel_id = ${pixel} AND alias_type = 'canonical' AND alias_value IN (SELECT canonical_id FROM o)
  GROUP BY alias_value
),
${refunds}
SELECT q.order_id AS order_id, any(q.created_ms) AS created_ms, any(q.status) AS status, any(q.cur) AS currency,
  any(q.total_price) AS total_price, any(q.canonical_id) AS stored_id, any(q.linked_to) AS linked_to,
  any(q.linked_ms) AS linked_ms,
  any(q.total_price * ${fx.factor}) AS total_target, any(q.refunded) AS refunded_target,
  arrayMin(arrayFilter(x -> x != '', [${fx.missing}, any(q.refund_missing)])) AS fx_missing
FROM (
  -- fx_k is stated after the joins rather than carried through them: a constant column carried
  -- through a join was seen to come out as its default (0), which reads as a missing rate.
  SELECT j.*, toUInt8(1) AS fx_k FROM (
    SELECT o.order_id AS order_id, toUnixTimestamp64Milli(o.created_at) AS created_ms,
      toString(o.financial_status) AS status, toString(o.currency) AS cur, toDate(o.created_at) AS fx_day,
      toFloat64(o.total_price) AS total_price, o.canonical_id AS canonical_id,
      h.linked_to AS linked_to, h.linked_ms AS linked_ms,
      ifNull(rf.refunded, 0.) AS refunded, ifNull(rf.refund_missing, '') AS refund_missing
    FROM o
    LEFT JOIN hop AS h ON h.old = o.canonical_id
    LEFT JOIN rf ON rf.order_id = o.order_id
  ) AS j
) AS q
${fx.joins}
GROUP BY q.order_id`;
  return done(sql, b);
}

/**
 * The touches attribution joins to an order of identity `identity` at `orderTime`: touches stored
 * under the identity or under an id whose canonical link points at it (one hop, as `hopsCte`
 * resolves), at or before the order; `in_window` when after orderTime − window days (always with
 * window -1). Touches before the window are kept up to `olderLimit`, the latest ones; `older` counts
 * them all. Rows come in time order, ties by event id. FINAL: a touch row stored twice and not yet
 * merged is one touch, as attribution's path counts it (one identity's touches, so FINAL is cheap).
 */
export function touchesStatement(
  pixelId: string,
  identity: string,
  orderTime: Date,
  window: number,
  olderLimit: number,
): Statement {
  const b = new Binder();
  const pixel = b.bind(pixelId, "String");
  const id = b.bind(identity, "String");
  const ts = b.bind(orderTime, "DateTime64(3, 'UTC')");
  const inWindow =
    window < 0 ? "toUInt8(1)" : `toUInt8(t.touch_time > subtractDays(${ts}, ${b.bind(window, "Int64")}))`;
  // Only the links that can matter (from the identity, or to it) are grouped, found by a filter pass
  // first: grouping every canonical link of the pixel, as a whole-range query does, would hold them
  // all in memory for one order.
  const sql = `WITH hops AS (
  SELECT alias_value AS old, ${linkColumns}
  FROM identity_links
  WHERE pixel_id = ${pixel} AND alias_type = 'canonical' AND alias_value IN (
    SELECT alias_value FROM identity_links
    WHERE pixel_id = ${pixel} AND alias_type = 'canonical' AND (canonical_id = ${id} OR alias_value = ${id}))
  GROUP BY alias_value
),
tp AS (
  SELECT t.event_id AS event_id, t.touch_time AS touch_time, toString(t.channel) AS channel,
    toString(t.source) AS source, t.medium AS medium, t.campaign AS campaign, t.campaign_id AS campaign_id,
    t.adset_id AS adset_id, t.ad_id AS ad_id, toString(t.click_id_type) AS click_id_type,
    t.identity_id AS identity_id, t.canonical_id AS stored_id,
    h.linked_to AS linked_to, h.linked_ms AS linked_ms, ${inWindow} AS in_window
  FROM (SELECT * FROM touchpoints FINAL WHERE pixel_id = ${pixel} AND touch_time <= ${ts}
    AND (canonical_id = ${id} OR canonical_id IN (SELECT old FROM hops))) AS t
  LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE if(h.linked_to != '', h.linked_to, t.canonical_id) = ${id}
)
SELECT *, toUnixTimestamp64Milli(touch_time) AS touch_ms FROM (
  SELECT *, row_number() OVER (PARTITION BY in_window ORDER BY touch_time DESC, event_id DESC) AS recency,
    countIf(in_window = 0) OVER () AS older
  FROM tp
)
WHERE in_window = 1 OR recency <= ${b.bind(olderLimit, "Int64")}
ORDER BY touch_time, event_id`;
  return done(sql, b);
}

/**
 * page_url of the touches' events, by (event id, time). The events table is sorted by day first, so
 * the days are bound one by one and the read is pruned to them.
 */
export function landingPagesStatement(
  pixelId: string,
  touches: readonly { eventId: string; time: number }[],
): Statement {
  const b = new Binder();
  const pixel = b.bind(pixelId, "String");
  const days = [...new Set(touches.map((t) => new Date(t.time).toISOString().slice(0, 10)))].sort();
  const dayList = days.map((d) => b.bind(d, "Date")).join(", ");
  const ids = b.bind([...new Set(touches.map((t) => t.eventId))], "Array(String)");
  const sql = `SELECT event_id, toUnixTimestamp64Milli(event_time) AS time_ms, any(page_url) AS page_url
FROM events
WHERE pixel_id = ${pixel} AND toDate(event_time) IN (${dayList}) AND event_id IN ${ids}
GROUP BY event_id, event_time`;
  return done(sql, b);
}

/**
 * Every alias whose current link names `identity`, with the highest version's first_seen, oldest
 * first, at most `limit` (plus `total`, how many there are). The aliases are found by a filter pass
 * (any row naming the identity), then only theirs are grouped, by the sort key.
 */
export function identityLinksStatement(pixelId: string, identity: string, limit: number): Statement {
  const b = new Binder();
  const pixel = b.bind(pixelId, "String");
  const id = b.bind(identity, "String");
  const sql = `SELECT alias_type, alias_value, linked_to, linked_ms, count() OVER () AS total FROM (
  SELECT toString(alias_type) AS alias_type, alias_value, ${linkColumns}
  FROM identity_links
  WHERE pixel_id = ${pixel} AND (alias_type, alias_value) IN (
    SELECT alias_type, alias_value FROM identity_links WHERE pixel_id = ${pixel} AND canonical_id = ${id})
  GROUP BY alias_type, alias_value
  HAVING linked_to = ${id}
)
ORDER BY linked_ms, alias_type, alias_value
LIMIT ${b.bind(limit, "Int64")}`;
  return done(sql, b);
}
