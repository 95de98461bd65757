-- filter-events: events. fields on event measures
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["events.count","events.value"],"filters":{"and":[{"field":"events.name","op":"in","value":["purchase","add_to_cart"]},{"field":"events.origin","op":"equals","value":"server"},{"field":"events.utm_source","op":"starts_with","value":"goo"},{"field":"events.page_path","op":"contains","value":"/checkout"},{"field":"events.value","op":"gte","value":10},{"field":"events.currency","op":"is_set"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: events, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p7:String}),
hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p5:String} AND alias_type = 'canonical' GROUP BY alias_value
)
SELECT q.bucket AS bucket,
  toFloat64(sum(q.events_count)) AS events_count,
  sum(if(q.events_value = 0, 0., q.events_value * if(q.cur = {p7:String}, 1., if({p7:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS events_value,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p7:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p7:String} != 'USD' AND ft.rate = 0, {p7:String}, '')), multiIf(q.cur = {p7:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p7:String} != 'USD' AND ft.rate = 0, {p7:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p6:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, count() AS events_count, sumIf(toFloat64(r.value), r.value IS NOT NULL AND r.cur != '') AS events_value
  FROM (SELECT e.event_time AS ts, e.currency AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k,
  e.name AS name, e.value AS value, if(h.new != '', h.new, e.canonical_id) AS cid
FROM (SELECT * FROM events WHERE pixel_id = {p5:String} AND event_time >= {p8:DateTime64(3, 'UTC')} AND event_time < {p9:DateTime64(3, 'UTC')}) AS e
LEFT JOIN hops AS h ON h.old = e.canonical_id
WHERE ((e.name IN {p0:Array(String)}) AND (toString(e.origin) = {p1:String}) AND (startsWith(lowerUTF8(e.utm_source), lowerUTF8({p2:String}))) AND (positionCaseInsensitiveUTF8(e.page_path, {p3:String}) > 0) AND (toFloat64(e.value) IS NOT NULL AND toFloat64(e.value) >= {p4:Float64}) AND (e.currency != ''))) AS r
  GROUP BY bucket, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   Array(String)         ["purchase","add_to_cart"]
--   p1   String                "server"
--   p2   String                "goo"
--   p3   String                "/checkout"
--   p4   Float64               10
--   p5   String                "px_golden"
--   p6   String                "UTC"
--   p7   String                "USD"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p10  (not referenced)      "2026-03-01"
--   p11  (not referenced)      "2026-03-07"
--   rates_from Date                  "2025-12-29"
