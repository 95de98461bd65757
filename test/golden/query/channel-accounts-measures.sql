-- channel-accounts-measures: ad accounts with ads measures (no attribution at account level)
-- POST /db-mgmt/api/query-channel-details {"pixelId":"px_golden","measures":["ads.spend","ads.clicks","ads.ctr"],"dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC"}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings, page entity ids ["e1","e2"]

-- statement 1 of 2: ad_entities, primary
SELECT c.entity_id AS id, c.name AS name, c.platform AS platform, toString(c.level) AS level, c.status AS status,
  if(c.level = 'account', c.entity_id, c.account_id) AS account_id, c.campaign_id AS campaign_id, c.adset_id AS adset_id,
  c.currency AS currency, toString(c.daily_budget) AS daily_budget, toString(c.budget_remaining) AS budget_remaining,
  toString(c.amount_spent) AS amount_spent, c.source_created_at AS source_created_at, c.source_updated_at AS source_updated_at,
  count() OVER () AS total
FROM (SELECT * FROM ad_entities FINAL WHERE pixel_id = {p0:String} AND level = {p1:String}) AS c
WHERE 1
ORDER BY source_updated_at DESC, platform ASC, id ASC
LIMIT {p2:Int64} OFFSET {p3:Int64}

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "account"
--   p2   Int64                 50
--   p3   Int64                 0

-- statement 2 of 2: ads, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String})
SELECT any(q.bucket) AS bucket,
  q.d0 AS d0,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  toFloat64(sum(q.ads_clicks)) AS ads_clicks,
  toFloat64(sum(q.ads_impressions)) AS ads_impressions,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != '') AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT toUInt32(0) AS bucket, r.d0 AS d0, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.spend)) AS ads_spend, sum(r.clicks) AS ads_clicks, sum(r.impressions) AS ads_impressions
  FROM (SELECT toDateTime64(toDateTime(c.date, {p2:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k, toString(if(c.level = 'account', c.entity_id, c.account_id)) AS d0,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p1:String} AND date >= {p6:Date} AND date <= {p7:Date}
) AS c
WHERE c.level = c.deepest AND ((if(c.level = 'account', c.entity_id, c.account_id) IN {p0:Array(String)}))) AS r
  GROUP BY d0, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY d0

-- parameters:
--   p0   Array(String)         ["e1","e2"]
--   p1   String                "px_golden"
--   p2   String                "UTC"
--   p3   String                "USD"
--   p4   (not referenced)      "2026-03-01 00:00:00.000"
--   p5   (not referenced)      "2026-03-08 00:00:00.000"
--   p6   Date                  "2026-03-01"
--   p7   Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"
