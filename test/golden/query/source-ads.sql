-- source-ads: ads: every ad metric, each account at its deepest level
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["ads.spend","ads.impressions","ads.clicks","ads.ctr","ads.cpc","ads.cpm","ads.platform_conversions","ads.platform_conversion_value","ads.platform_roas"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: ads, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT q.bucket AS bucket,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  toFloat64(sum(q.ads_impressions)) AS ads_impressions,
  toFloat64(sum(q.ads_clicks)) AS ads_clicks,
  toFloat64(sum(q.ads_conversions)) AS ads_conversions,
  sum(if(q.ads_conversion_value = 0, 0., q.ads_conversion_value * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_conversion_value,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.spend)) AS ads_spend, sum(r.impressions) AS ads_impressions, sum(r.clicks) AS ads_clicks, sum(r.conversions) AS ads_conversions, sum(toFloat64(r.conversion_value)) AS ads_conversion_value
  FROM (SELECT toDateTime64(toDateTime(c.date, {p1:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p0:String} AND date >= {p5:Date} AND date <= {p6:Date}
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY bucket, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   (not referenced)      "2026-03-01 00:00:00.000"
--   p4   (not referenced)      "2026-03-08 00:00:00.000"
--   p5   Date                  "2026-03-01"
--   p6   Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"
