-- attribution-events: events as conversions: eventName, events. and touch filters
-- POST /db-mgmt/api/query-attribution {"pixelId":"px_golden","dimension":"attribution.medium","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","attributionModel":"last_click","attributionWindow":7,"valueSource":"events","eventName":"add_to_cart","filters":{"and":[{"field":"events.currency","op":"is_set"},{"field":"attribution.channel","op":"not_equals","value":"direct"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: attribution, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p1:String}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p1:String} AND alias_type = 'canonical' GROUP BY alias_value
),
conv AS (
  SELECT e.event_id AS conv_id, e.event_time AS ts, if(h.new != '', h.new, e.canonical_id) AS cid,
    if(e.value IS NULL OR e.currency = '', 'USD', e.currency) AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k,
    if(e.value IS NULL OR e.currency = '', 0., toFloat64(e.value)) AS value, 0. AS refunded,
    '' AS refund_missing
  FROM (SELECT * FROM events WHERE pixel_id = {p1:String} AND name = {p10:String}
    AND event_time >= {p4:DateTime64(3, 'UTC')} AND event_time < {p5:DateTime64(3, 'UTC')}) AS e
  LEFT JOIN hops AS h ON h.old = e.canonical_id
  WHERE ((e.currency != ''))
),
tp AS (
  SELECT if(h.new != '', h.new, t.canonical_id) AS cid, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.medium) AS tdim
  FROM (SELECT * FROM touchpoints WHERE pixel_id = {p1:String} AND touch_time < {p5:DateTime64(3, 'UTC')} AND touch_time > subtractDays({p4:DateTime64(3, 'UTC')}, {p8:Int64})) AS t
  LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE ((NOT (t.channel = {p0:String})))
),
credited AS (
  SELECT c.conv_id AS conv_id, any(c.ts) AS ts, any(c.cur) AS cur, any(c.fx_day) AS fx_day, toUInt8(1) AS fx_k,
    any(c.value) AS value, any(c.refunded) AS refunded, any(c.refund_missing) AS refund_missing,
    countIf(t.cid != '' AND t.touch_time <= c.ts AND t.touch_time > subtractDays(c.ts, {p9:Int64})) AS touches,
    argMaxIf(t.tdim, (t.touch_time, t.event_id), t.cid != '' AND t.touch_time <= c.ts AND t.touch_time > subtractDays(c.ts, {p9:Int64})) AS last_dim
  FROM conv AS c LEFT JOIN tp AS t ON t.cid = c.cid
  GROUP BY c.conv_id
)
SELECT any(q.bucket) AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT toUInt32(0) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin([if(touches = 0, '(none)', if(last_dim = '', '(not set)', last_dim))]) AS credit FROM credited) AS r
  GROUP BY d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY d0

-- parameters:
--   p0   String                "direct"
--   p1   String                "px_golden"
--   p2   (not referenced)      "UTC"
--   p3   String                "USD"
--   p4   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p6   (not referenced)      "2026-03-01"
--   p7   (not referenced)      "2026-03-07"
--   p8   Int64                 7
--   p9   Int64                 7
--   p10  String                "add_to_cart"
--   rates_from Date                  "2025-12-29"
