-- filter-channel: channel. fields on ads measures
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["ads.spend","ads.impressions"],"filters":{"and":[{"field":"channel.resource_source","op":"equals","value":"facebook"},{"field":"channel.account_id","op":"in","value":["act_1","act_2"]},{"field":"channel.campaign_id","op":"not_equals","value":"c9"},{"field":"channel.adset_id","op":"starts_with","value":"as_"},{"field":"channel.ad_id","op":"is_set"},{"field":"channel.level","op":"not_equals","value":"account"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: ads, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p7:String})
SELECT q.bucket AS bucket,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p7:String}, 1., if({p7:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  toFloat64(sum(q.ads_impressions)) AS ads_impressions,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p7:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p7:String} != 'USD' AND ft.rate = 0, {p7:String}, '')), multiIf(q.cur = {p7:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p7:String} != 'USD' AND ft.rate = 0, {p7:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p6:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.spend)) AS ads_spend, sum(r.impressions) AS ads_impressions
  FROM (SELECT toDateTime64(toDateTime(c.date, {p6:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p5:String} AND date >= {p10:Date} AND date <= {p11:Date}
) AS c
WHERE c.level = c.deepest AND ((c.platform = {p0:String}) AND (if(c.level = 'account', c.entity_id, c.account_id) IN {p1:Array(String)}) AND (NOT (if(c.level = 'campaign', c.entity_id, c.campaign_id) = {p2:String})) AND (startsWith(lowerUTF8(if(c.level = 'adset', c.entity_id, c.adset_id)), lowerUTF8({p3:String}))) AND (if(c.level = 'ad', c.entity_id, '') != '') AND (NOT (toString(c.level) = {p4:String})))) AS r
  GROUP BY bucket, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "facebook"
--   p1   Array(String)         ["act_1","act_2"]
--   p2   String                "c9"
--   p3   String                "as_"
--   p4   String                "account"
--   p5   String                "px_golden"
--   p6   String                "UTC"
--   p7   String                "USD"
--   p8   (not referenced)      "2026-03-01 00:00:00.000"
--   p9   (not referenced)      "2026-03-08 00:00:00.000"
--   p10  Date                  "2026-03-01"
--   p11  Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"
