-- source-events: events: every event base, identities through merges
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["events.count","events.unique_identities","events.page_views","events.purchases","events.purchasers","events.conversion_rate","events.value"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: events, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p0:String} AND alias_type = 'canonical' GROUP BY alias_value
)
SELECT q.bucket AS bucket,
  toFloat64(sum(q.events_count)) AS events_count,
  toFloat64(uniqExactMerge(q.events_identities)) AS events_identities,
  toFloat64(sum(q.events_page_views)) AS events_page_views,
  toFloat64(sum(q.events_purchases)) AS events_purchases,
  toFloat64(uniqExactMerge(q.events_purchasers)) AS events_purchasers,
  sum(if(q.events_value = 0, 0., q.events_value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS events_value,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, count() AS events_count, uniqExactState(r.cid) AS events_identities, countIf(r.name = 'page_view') AS events_page_views, countIf(r.name = 'purchase') AS events_purchases, uniqExactStateIf(r.cid, r.name = 'purchase') AS events_purchasers, sumIf(toFloat64(r.value), r.value IS NOT NULL AND r.cur != '') AS events_value
  FROM (SELECT e.event_time AS ts, e.currency AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k,
  e.name AS name, e.value AS value, if(h.new != '', h.new, e.canonical_id) AS cid
FROM (SELECT * FROM events WHERE pixel_id = {p0:String} AND event_time >= {p3:DateTime64(3, 'UTC')} AND event_time < {p4:DateTime64(3, 'UTC')}) AS e
LEFT JOIN hops AS h ON h.old = e.canonical_id
WHERE 1) AS r
  GROUP BY bucket, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   rates_from Date                  "2025-12-29"
