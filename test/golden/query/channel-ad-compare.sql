-- channel-ad-compare: ads by hour in New York with a compare period, any_click unlimited
-- POST /db-mgmt/api/query-channel-details {"pixelId":"px_golden","level":"ad","granularity":"hour","measures":["ads.spend","attribution.cpa"],"dateRange":{"start":"2026-03-02","end":"2026-03-02"},"compareDateRange":{"start":"2026-02-23","end":"2026-02-23"},"timezone":"America/New_York","attributionModel":"any_click","attributionWindow":-1,"filters":{"field":"channel.adset_id","op":"equals","value":"as_1"}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings, page entity ids ["e1","e2"]

-- statement 1 of 13: ad_entities, primary
SELECT c.entity_id AS id, c.name AS name, c.platform AS platform, toString(c.level) AS level, c.status AS status,
  if(c.level = 'account', c.entity_id, c.account_id) AS account_id, c.campaign_id AS campaign_id, c.adset_id AS adset_id,
  c.currency AS currency, toString(c.daily_budget) AS daily_budget, toString(c.budget_remaining) AS budget_remaining,
  toString(c.amount_spent) AS amount_spent, c.source_created_at AS source_created_at, c.source_updated_at AS source_updated_at,
  count() OVER () AS total
FROM (SELECT * FROM ad_entities FINAL WHERE pixel_id = {p1:String} AND level = {p2:String}) AS c
WHERE (if(c.level = 'adset', c.entity_id, c.adset_id) = {p0:String})
ORDER BY source_updated_at DESC, platform ASC, id ASC
LIMIT {p3:Int64} OFFSET {p4:Int64}

-- parameters:
--   p0   String                "as_1"
--   p1   String                "px_golden"
--   p2   String                "ad"
--   p3   Int64                 50
--   p4   Int64                 0

-- statement 2 of 13: ads, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p4:String})
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '')), multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p3:String})) AS bucket, r.d0 AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p3:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k, toString(if(c.level = 'ad', c.entity_id, '')) AS d0,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p2:String} AND date >= {p7:Date} AND date <= {p8:Date}
) AS c
WHERE c.level = c.deepest AND ((if(c.level = 'adset', c.entity_id, c.adset_id) = {p0:String}) AND (if(c.level = 'ad', c.entity_id, '') IN {p1:Array(String)}))) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "as_1"
--   p1   Array(String)         ["e1","e2"]
--   p2   String                "px_golden"
--   p3   String                "America/New_York"
--   p4   String                "USD"
--   p5   (not referenced)      "2026-03-02 05:00:00.000"
--   p6   (not referenced)      "2026-03-03 05:00:00.000"
--   p7   Date                  "2026-03-02"
--   p8   Date                  "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 3 of 13: attribution, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p0:String} AND alias_type = 'canonical' GROUP BY alias_value
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, if(h.new != '', h.new, o.canonical_id) AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o LEFT JOIN hops AS h ON h.old = o.canonical_id
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p0:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1
),
tp AS (
  SELECT if(h.new != '', h.new, t.canonical_id) AS cid, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints WHERE pixel_id = {p0:String} AND touch_time < {p4:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE 1
),
credited AS (
  SELECT c.conv_id AS conv_id, any(c.ts) AS ts, any(c.cur) AS cur, any(c.fx_day) AS fx_day, toUInt8(1) AS fx_k,
    any(c.value) AS value, any(c.refunded) AS refunded, any(c.refund_missing) AS refund_missing,
    countIf(t.cid != '' AND t.touch_time <= c.ts) AS touches,
    groupUniqArrayIf(t.tdim, t.cid != '' AND t.touch_time <= c.ts) AS any_dims
  FROM conv AS c LEFT JOIN tp AS t ON t.cid = c.cid
  GROUP BY c.conv_id
  HAVING touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p1:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p5   (not referenced)      "2026-03-02"
--   p6   (not referenced)      "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 4 of 13: attribution, primary, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p1:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p4:DateTime64(3, 'UTC')} AND o.created_at < {p5:DateTime64(3, 'UTC')} AND 1
),
fresh_hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p1:String} AND alias_type = 'canonical' AND alias_value IN {p0:Array(String)} GROUP BY alias_value
),
rc AS (
  SELECT o.order_id AS conv_id, o.created_at AS conv_ts, if(h.new != '', h.new, o.canonical_id) AS cid
  FROM (SELECT order_id, created_at, canonical_id FROM orders FINAL
    WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')} AND canonical_id IN {p0:Array(String)}) AS o
  LEFT JOIN fresh_hops AS h ON h.old = o.canonical_id
),
tp AS (
  SELECT rc.conv_id AS conv_id, rc.conv_ts AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints PREWHERE canonical_id IN {p0:Array(String)} WHERE pixel_id = {p1:String}
    AND touch_time < {p5:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN fresh_hops AS h ON h.old = t.canonical_id
  INNER JOIN rc ON rc.cid = if(h.new != '', h.new, t.canonical_id)
  WHERE 1
  UNION ALL
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) AS d
  ARRAY JOIN d.touches AS t
  WHERE d.order_id NOT IN (SELECT conv_id FROM rc) AND 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p2:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   Array(String)         []
--   p1   String                "px_golden"
--   p2   String                "America/New_York"
--   p3   String                "USD"
--   p4   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p6   (not referenced)      "2026-03-02"
--   p7   (not referenced)      "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 5 of 13: attribution, primary, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p0:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1
),
tp AS (
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS d
  ARRAY JOIN d.touches AS t
  WHERE 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p1:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p5   (not referenced)      "2026-03-02"
--   p6   (not referenced)      "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 6 of 13: attribution, primary, from the credit cells (the fresh hours' conversions credited one by one)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p5:String}),
hour_orders AS (
  SELECT DISTINCT order_id FROM orders
  WHERE pixel_id = {p3:String} AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))}
),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders)) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p5:String}, 1., if({p5:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '')), multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders)) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p6:DateTime64(3, 'UTC')} AND o.created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(o.created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND 1
),
fresh_hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p3:String} AND alias_type = 'canonical' AND alias_value IN {p0:Array(String)} GROUP BY alias_value
),
rc AS (
  SELECT o.order_id AS conv_id, o.created_at AS conv_ts, if(h.new != '', h.new, o.canonical_id) AS cid
  FROM (SELECT order_id, created_at, canonical_id FROM orders FINAL
    WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders) AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND canonical_id IN {p0:Array(String)}) AS o
  LEFT JOIN fresh_hops AS h ON h.old = o.canonical_id
),
tp AS (
  SELECT rc.conv_id AS conv_id, rc.conv_ts AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints PREWHERE canonical_id IN {p0:Array(String)} WHERE pixel_id = {p3:String}
    AND touch_time < {p7:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN fresh_hops AS h ON h.old = t.canonical_id
  INNER JOIN rc ON rc.cid = if(h.new != '', h.new, t.canonical_id)
  WHERE 1
  UNION ALL
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p3:String} AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))}) AS d
  ARRAY JOIN d.touches AS t
  WHERE d.order_id NOT IN (SELECT conv_id FROM rc) AND 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p5:String}, 1., if({p5:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '')), multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p4:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(countIf(1)) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
  UNION ALL
  SELECT toUnixTimestamp(toStartOfHour(o.hour, {p4:String})) AS bucket, o.value AS d0, o.currency AS cur, o.fx_day AS fx_day, toUInt8(1) AS fx_k,
    sum(o.attributed) AS attributed, sum(if(o.refund = 1, -o.amount, o.amount)) AS value, 0. AS refunded,
    sum(o.conversions) AS conversions, '' AS refund_missing
  FROM (SELECT * FROM credit_cells FINAL WHERE pixel_id = {p3:String} AND shape = {p2:String}
    AND hour >= {p6:DateTime64(3, 'UTC')} AND hour < {p7:DateTime64(3, 'UTC')} AND hour NOT IN {p1:Array(DateTime64(3, 'UTC'))}) AS o
  WHERE o.rows != 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided' AND o.touched = 1
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   Array(String)         []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "any_click:-1:attribution.ad_id"
--   p3   String                "px_golden"
--   p4   String                "America/New_York"
--   p5   String                "USD"
--   p6   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p7   DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p8   (not referenced)      "2026-03-02"
--   p9   (not referenced)      "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 7 of 13: attribution, primary, from the credit cells alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String})
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(o.hour, {p2:String})) AS bucket, o.value AS d0, o.currency AS cur, o.fx_day AS fx_day, toUInt8(1) AS fx_k,
    sum(o.attributed) AS attributed, sum(if(o.refund = 1, -o.amount, o.amount)) AS value, 0. AS refunded,
    sum(o.conversions) AS conversions, '' AS refund_missing
  FROM (SELECT * FROM credit_cells FINAL WHERE pixel_id = {p1:String} AND shape = {p0:String}
    AND hour >= {p4:DateTime64(3, 'UTC')} AND hour < {p5:DateTime64(3, 'UTC')}) AS o
  WHERE o.rows != 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided' AND o.touched = 1
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "any_click:-1:attribution.ad_id"
--   p1   String                "px_golden"
--   p2   String                "America/New_York"
--   p3   String                "USD"
--   p4   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p6   (not referenced)      "2026-03-02"
--   p7   (not referenced)      "2026-03-02"
--   rates_from Date                  "2025-12-30"

-- statement 8 of 13: ads, compare
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p4:String})
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '')), multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p3:String})) AS bucket, r.d0 AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p3:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k, toString(if(c.level = 'ad', c.entity_id, '')) AS d0,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p2:String} AND date >= {p7:Date} AND date <= {p8:Date}
) AS c
WHERE c.level = c.deepest AND ((if(c.level = 'adset', c.entity_id, c.adset_id) = {p0:String}) AND (if(c.level = 'ad', c.entity_id, '') IN {p1:Array(String)}))) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "as_1"
--   p1   Array(String)         ["e1","e2"]
--   p2   String                "px_golden"
--   p3   String                "America/New_York"
--   p4   String                "USD"
--   p5   (not referenced)      "2026-02-23 05:00:00.000"
--   p6   (not referenced)      "2026-02-24 05:00:00.000"
--   p7   Date                  "2026-02-23"
--   p8   Date                  "2026-02-23"
--   rates_from Date                  "2025-12-23"

-- statement 9 of 13: attribution, compare
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p0:String} AND alias_type = 'canonical' GROUP BY alias_value
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, if(h.new != '', h.new, o.canonical_id) AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o LEFT JOIN hops AS h ON h.old = o.canonical_id
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p0:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1
),
tp AS (
  SELECT if(h.new != '', h.new, t.canonical_id) AS cid, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints WHERE pixel_id = {p0:String} AND touch_time < {p4:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE 1
),
credited AS (
  SELECT c.conv_id AS conv_id, any(c.ts) AS ts, any(c.cur) AS cur, any(c.fx_day) AS fx_day, toUInt8(1) AS fx_k,
    any(c.value) AS value, any(c.refunded) AS refunded, any(c.refund_missing) AS refund_missing,
    countIf(t.cid != '' AND t.touch_time <= c.ts) AS touches,
    groupUniqArrayIf(t.tdim, t.cid != '' AND t.touch_time <= c.ts) AS any_dims
  FROM conv AS c LEFT JOIN tp AS t ON t.cid = c.cid
  GROUP BY c.conv_id
  HAVING touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p1:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-02-23 05:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-02-24 05:00:00.000"
--   p5   (not referenced)      "2026-02-23"
--   p6   (not referenced)      "2026-02-23"
--   rates_from Date                  "2025-12-23"

-- statement 10 of 13: attribution, compare, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p1:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p4:DateTime64(3, 'UTC')} AND o.created_at < {p5:DateTime64(3, 'UTC')} AND 1
),
fresh_hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p1:String} AND alias_type = 'canonical' AND alias_value IN {p0:Array(String)} GROUP BY alias_value
),
rc AS (
  SELECT o.order_id AS conv_id, o.created_at AS conv_ts, if(h.new != '', h.new, o.canonical_id) AS cid
  FROM (SELECT order_id, created_at, canonical_id FROM orders FINAL
    WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')} AND canonical_id IN {p0:Array(String)}) AS o
  LEFT JOIN fresh_hops AS h ON h.old = o.canonical_id
),
tp AS (
  SELECT rc.conv_id AS conv_id, rc.conv_ts AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints PREWHERE canonical_id IN {p0:Array(String)} WHERE pixel_id = {p1:String}
    AND touch_time < {p5:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN fresh_hops AS h ON h.old = t.canonical_id
  INNER JOIN rc ON rc.cid = if(h.new != '', h.new, t.canonical_id)
  WHERE 1
  UNION ALL
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) AS d
  ARRAY JOIN d.touches AS t
  WHERE d.order_id NOT IN (SELECT conv_id FROM rc) AND 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p2:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   Array(String)         []
--   p1   String                "px_golden"
--   p2   String                "America/New_York"
--   p3   String                "USD"
--   p4   DateTime64(3, 'UTC')  "2026-02-23 05:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-02-24 05:00:00.000"
--   p6   (not referenced)      "2026-02-23"
--   p7   (not referenced)      "2026-02-23"
--   rates_from Date                  "2025-12-23"

-- statement 11 of 13: attribution, compare, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p0:String}) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1
),
tp AS (
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS d
  ARRAY JOIN d.touches AS t
  WHERE 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p1:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, countIf(1) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-02-23 05:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-02-24 05:00:00.000"
--   p5   (not referenced)      "2026-02-23"
--   p6   (not referenced)      "2026-02-23"
--   rates_from Date                  "2025-12-23"

-- statement 12 of 13: attribution, compare, from the credit cells (the fresh hours' conversions credited one by one)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p5:String}),
hour_orders AS (
  SELECT DISTINCT order_id FROM orders
  WHERE pixel_id = {p3:String} AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))}
),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders)) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, o.canonical_id AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ifNull(rf.refunded, 0.) AS refunded,
    ifNull(rf.refund_missing, '') AS refund_missing
  FROM co AS o
  LEFT JOIN (SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * if(q.cur = {p5:String}, 1., if({p5:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate))) AS refunded, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '')), multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '') != '') AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders)) AS q
    ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
    ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
    GROUP BY q.order_id) AS rf ON rf.order_id = o.order_id
  WHERE o.created_at >= {p6:DateTime64(3, 'UTC')} AND o.created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(o.created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND 1
),
fresh_hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p3:String} AND alias_type = 'canonical' AND alias_value IN {p0:Array(String)} GROUP BY alias_value
),
rc AS (
  SELECT o.order_id AS conv_id, o.created_at AS conv_ts, if(h.new != '', h.new, o.canonical_id) AS cid
  FROM (SELECT order_id, created_at, canonical_id FROM orders FINAL
    WHERE pixel_id = {p3:String} AND order_id IN (SELECT order_id FROM hour_orders) AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND canonical_id IN {p0:Array(String)}) AS o
  LEFT JOIN fresh_hops AS h ON h.old = o.canonical_id
),
tp AS (
  SELECT rc.conv_id AS conv_id, rc.conv_ts AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM touchpoints PREWHERE canonical_id IN {p0:Array(String)} WHERE pixel_id = {p3:String}
    AND touch_time < {p7:DateTime64(3, 'UTC')}) AS t
  LEFT JOIN fresh_hops AS h ON h.old = t.canonical_id
  INNER JOIN rc ON rc.cid = if(h.new != '', h.new, t.canonical_id)
  WHERE 1
  UNION ALL
  SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, toString(t.ad_id) AS tdim
  FROM (SELECT * FROM conversion_touches FINAL WHERE pixel_id = {p3:String} AND created_at >= {p6:DateTime64(3, 'UTC')} AND created_at < {p7:DateTime64(3, 'UTC')} AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))}) AS d
  ARRAY JOIN d.touches AS t
  WHERE d.order_id NOT IN (SELECT conv_id FROM rc) AND 1
),
tagg AS (
  SELECT concat(t.conv_id, '@', toString(toUnixTimestamp64Milli(t.conv_ts))) AS conv_key, countIf(t.touch_time <= t.conv_ts) AS touches,
    groupUniqArrayIf(t.tdim, t.touch_time <= t.conv_ts) AS any_dims
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing,
    a.touches AS touches, a.any_dims AS any_dims
  FROM conv AS c INNER JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts))) AND a.touches > 0
)
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p5:String}, 1., if({p5:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '')), multiIf(q.cur = {p5:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p5:String} != 'USD' AND ft.rate = 0, {p5:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(r.ts, {p4:String})) AS bucket, r.credit AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(countIf(1)) AS attributed, sumIf(r.value, 1) AS value, sumIf(r.refunded, 1) AS refunded, count() AS conversions, minIf(r.refund_missing, r.refund_missing != '') AS refund_missing
  FROM (SELECT *, arrayJoin(if(touches = 0, ['(none)'], arrayMap(x -> if(x = '', '(not set)', x), any_dims))) AS credit FROM credited) AS r
  GROUP BY bucket, d0, cur, fx_day
  UNION ALL
  SELECT toUnixTimestamp(toStartOfHour(o.hour, {p4:String})) AS bucket, o.value AS d0, o.currency AS cur, o.fx_day AS fx_day, toUInt8(1) AS fx_k,
    sum(o.attributed) AS attributed, sum(if(o.refund = 1, -o.amount, o.amount)) AS value, 0. AS refunded,
    sum(o.conversions) AS conversions, '' AS refund_missing
  FROM (SELECT * FROM credit_cells FINAL WHERE pixel_id = {p3:String} AND shape = {p2:String}
    AND hour >= {p6:DateTime64(3, 'UTC')} AND hour < {p7:DateTime64(3, 'UTC')} AND hour NOT IN {p1:Array(DateTime64(3, 'UTC'))}) AS o
  WHERE o.rows != 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided' AND o.touched = 1
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   Array(String)         []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "any_click:-1:attribution.ad_id"
--   p3   String                "px_golden"
--   p4   String                "America/New_York"
--   p5   String                "USD"
--   p6   DateTime64(3, 'UTC')  "2026-02-23 05:00:00.000"
--   p7   DateTime64(3, 'UTC')  "2026-02-24 05:00:00.000"
--   p8   (not referenced)      "2026-02-23"
--   p9   (not referenced)      "2026-02-23"
--   rates_from Date                  "2025-12-23"

-- statement 13 of 13: attribution, compare, from the credit cells alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String})
SELECT q.bucket AS bucket,
  q.d0 AS d0,
  toFloat64(sum(q.attributed)) AS attr_orders,
  sum(q.value * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)) - q.refunded) AS attr_revenue,
  toFloat64(sum(q.conversions)) AS conversions,
  arrayMin(arrayFilter(x -> x != '', [minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != ''), minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfHour(o.hour, {p2:String})) AS bucket, o.value AS d0, o.currency AS cur, o.fx_day AS fx_day, toUInt8(1) AS fx_k,
    sum(o.attributed) AS attributed, sum(if(o.refund = 1, -o.amount, o.amount)) AS value, 0. AS refunded,
    sum(o.conversions) AS conversions, '' AS refund_missing
  FROM (SELECT * FROM credit_cells FINAL WHERE pixel_id = {p1:String} AND shape = {p0:String}
    AND hour >= {p4:DateTime64(3, 'UTC')} AND hour < {p5:DateTime64(3, 'UTC')}) AS o
  WHERE o.rows != 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided' AND o.touched = 1
  GROUP BY bucket, d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, d0), (d0))

-- parameters:
--   p0   String                "any_click:-1:attribution.ad_id"
--   p1   String                "px_golden"
--   p2   String                "America/New_York"
--   p3   String                "USD"
--   p4   DateTime64(3, 'UTC')  "2026-02-23 05:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-02-24 05:00:00.000"
--   p6   (not referenced)      "2026-02-23"
--   p7   (not referenced)      "2026-02-23"
--   rates_from Date                  "2025-12-23"
