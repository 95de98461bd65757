-- compare-rollup-ads: a compare period of the daily series: the hourly rollup and ad spend, both periods per statement
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count","orders.total_revenue","customers.count","ads.spend"],"compareDateRange":{"start":"2026-02-22","end":"2026-02-28"},"currency":"EUR"}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 6: orders + ads, both
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT q.bucket AS bucket,
  q.period AS period,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND ((created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) OR (created_at >= {p7:DateTime64(3, 'UTC')} AND created_at < {p8:DateTime64(3, 'UTC')}))) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(count()) AS orders_count, toFloat64(sum(r.total_price)) AS orders_total, 0. AS ads_spend
  FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE ((o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')}) OR (o.created_at >= {p7:DateTime64(3, 'UTC')} AND o.created_at < {p8:DateTime64(3, 'UTC')})) AND 1) AS r
  GROUP BY bucket, period, cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_count, 0. AS orders_total, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p1:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id, date >= {p5:Date} AND date <= {p6:Date}) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p0:String} AND ((date >= {p5:Date} AND date <= {p6:Date}) OR (date >= {p9:Date} AND date <= {p10:Date}))
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY bucket, period, cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "EUR"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   Date                  "2026-03-01"
--   p6   Date                  "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   Date                  "2026-02-22"
--   p10  Date                  "2026-02-28"
--   rates_from Date                  "2025-12-22"

-- statement 2 of 6: orders + ads, both, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p3:String})
SELECT q.bucket AS bucket,
  q.period AS period,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p3:String}, 1., if({p3:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '')), multiIf(q.cur = {p3:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p3:String} != 'USD' AND ft.rate = 0, {p3:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p2:String})) AS bucket, if(r.ts >= {p4:DateTime64(3, 'UTC')} AND r.ts < {p5:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.n)) AS orders_count, toFloat64(sum(r.total_price)) AS orders_total, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p1:String} AND ((hour >= {p4:DateTime64(3, 'UTC')} AND hour < {p5:DateTime64(3, 'UTC')}) OR (hour >= {p8:DateTime64(3, 'UTC')} AND hour < {p9:DateTime64(3, 'UTC')})) AND hour NOT IN {p0:Array(DateTime64(3, 'UTC'))}
  UNION ALL
  SELECT toDateTime64(toStartOfHour(created_at), 3, 'UTC') AS hour, currency, financial_status, count() AS orders,
    sum(total_price) AS total_price, sum(subtotal_price) AS subtotal_price, sum(total_shipping) AS total_shipping, sum(total_tax) AS total_tax, sum(total_discounts) AS total_discounts
  FROM (
    SELECT order_id, created_at, currency, financial_status, total_price, subtotal_price, total_shipping, total_tax, total_discounts
    FROM orders FINAL
    WHERE pixel_id = {p1:String} AND ((created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) OR (created_at >= {p8:DateTime64(3, 'UTC')} AND created_at < {p9:DateTime64(3, 'UTC')})) AND created_at >= arrayMin({p0:Array(DateTime64(3, 'UTC'))})
      AND created_at < arrayMax({p0:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1)
  ) AS r
  WHERE toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p0:Array(DateTime64(3, 'UTC'))}
  GROUP BY hour, currency, financial_status
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY bucket, period, cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p2:String})) AS bucket, if(r.ts >= {p4:DateTime64(3, 'UTC')} AND r.ts < {p5:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_count, 0. AS orders_total, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p2:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id, date >= {p6:Date} AND date <= {p7:Date}) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p1:String} AND ((date >= {p6:Date} AND date <= {p7:Date}) OR (date >= {p10:Date} AND date <= {p11:Date}))
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY bucket, period, cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   Array(DateTime64(3, 'UTC')) []
--   p1   String                "px_golden"
--   p2   String                "UTC"
--   p3   String                "EUR"
--   p4   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p6   Date                  "2026-03-01"
--   p7   Date                  "2026-03-07"
--   p8   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p9   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p10  Date                  "2026-02-22"
--   p11  Date                  "2026-02-28"
--   rates_from Date                  "2025-12-22"

-- statement 3 of 6: orders + ads, both, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT q.bucket AS bucket,
  q.period AS period,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.n)) AS orders_count, toFloat64(sum(r.total_price)) AS orders_total, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND ((hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}) OR (hour >= {p7:DateTime64(3, 'UTC')} AND hour < {p8:DateTime64(3, 'UTC')}))
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY bucket, period, cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_count, 0. AS orders_total, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p1:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id, date >= {p5:Date} AND date <= {p6:Date}) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p0:String} AND ((date >= {p5:Date} AND date <= {p6:Date}) OR (date >= {p9:Date} AND date <= {p10:Date}))
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY bucket, period, cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "EUR"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   Date                  "2026-03-01"
--   p6   Date                  "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   Date                  "2026-02-22"
--   p10  Date                  "2026-02-28"
--   rates_from Date                  "2025-12-22"

-- statement 4 of 6: orders, both
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND ((created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) OR (created_at >= {p7:DateTime64(3, 'UTC')} AND created_at < {p8:DateTime64(3, 'UTC')}))) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket,
  if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period,
  toFloat64(uniqExact(r.customer_key)) AS customers_unique,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE ((o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')}) OR (o.created_at >= {p7:DateTime64(3, 'UTC')} AND o.created_at < {p8:DateTime64(3, 'UTC')})) AND 1) AS r
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   (not referenced)      "EUR"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   (not referenced)      "2026-02-22"
--   p10  (not referenced)      "2026-02-28"

-- statement 5 of 6: orders, both, from the derived tables
SELECT x.bucket AS bucket,
  x.period AS period,
  toFloat64(if(grouping(bucket) = 1, sum(x.np), sum(x.nb)) + uniqExactIf(x.k, x.k != '')) AS customers_unique,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p3:String})) AS bucket,
    if(r.ts >= {p5:DateTime64(3, 'UTC')} AND r.ts < {p6:DateTime64(3, 'UTC')}, 0, 1) AS period,
    r.prev_hour < greatest(toDateTime64(bucket, 3, 'UTC'), if(r.ts >= {p5:DateTime64(3, 'UTC')} AND r.ts < {p6:DateTime64(3, 'UTC')}, {p5:DateTime64(3, 'UTC')}, {p9:DateTime64(3, 'UTC')}), toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS nb,
    r.prev_hour < greatest(if(r.ts >= {p5:DateTime64(3, 'UTC')} AND r.ts < {p6:DateTime64(3, 'UTC')}, {p5:DateTime64(3, 'UTC')}, {p9:DateTime64(3, 'UTC')}), toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS np,
    r.k AS k
  FROM (
  SELECT hour AS ts, if(customer_key IN {p0:Array(String)}, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), prev) AS prev_hour,
    if(customer_key IN {p0:Array(String)}, customer_key, '') AS k
  FROM customer_hours FINAL
  WHERE pixel_id = {p2:String} AND ((hour >= {p5:DateTime64(3, 'UTC')} AND hour < {p6:DateTime64(3, 'UTC')}) OR (hour >= {p9:DateTime64(3, 'UTC')} AND hour < {p10:DateTime64(3, 'UTC')})) AND bitAnd(kinds, 1) != 0
    AND NOT (customer_key IN {p0:Array(String)} AND hour IN {p1:Array(DateTime64(3, 'UTC'))})
  UNION ALL
  SELECT o.created_at AS ts, toDateTime64('2299-12-31 23:59:59', 3, 'UTC') AS prev_hour, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS k
  FROM (
    SELECT order_id, created_at, financial_status, customer_id, customer_email_hash FROM orders FINAL
    WHERE pixel_id = {p2:String} AND ((created_at >= {p5:DateTime64(3, 'UTC')} AND created_at < {p6:DateTime64(3, 'UTC')}) OR (created_at >= {p9:DateTime64(3, 'UTC')} AND created_at < {p10:DateTime64(3, 'UTC')}))
      AND created_at >= arrayMin({p1:Array(DateTime64(3, 'UTC'))}) AND created_at < arrayMax({p1:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1)
  ) AS o
  WHERE toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND o.financial_status != 'pending' AND o.financial_status != 'voided'
    AND if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) IN {p0:Array(String)}
  ) AS r
) AS x
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   Array(String)         []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "px_golden"
--   p3   String                "UTC"
--   p4   (not referenced)      "EUR"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   (not referenced)      "2026-03-01"
--   p8   (not referenced)      "2026-03-07"
--   p9   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p10  DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p11  (not referenced)      "2026-02-22"
--   p12  (not referenced)      "2026-02-28"

-- statement 6 of 6: orders, both, from the derived tables alone (nothing past the watermark)
SELECT x.bucket AS bucket,
  x.period AS period,
  toFloat64(if(grouping(bucket) = 1, sum(x.np), sum(x.nb))) AS customers_unique,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket,
    if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period,
    r.prev_hour < greatest(toDateTime64(bucket, 3, 'UTC'), if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, {p3:DateTime64(3, 'UTC')}, {p7:DateTime64(3, 'UTC')}), toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS nb,
    r.prev_hour < greatest(if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, {p3:DateTime64(3, 'UTC')}, {p7:DateTime64(3, 'UTC')}), toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS np
  FROM (
  SELECT hour AS ts, prev AS prev_hour
  FROM customer_hours FINAL
  WHERE pixel_id = {p0:String} AND ((hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}) OR (hour >= {p7:DateTime64(3, 'UTC')} AND hour < {p8:DateTime64(3, 'UTC')})) AND bitAnd(kinds, 1) != 0
  ) AS r
) AS x
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   (not referenced)      "EUR"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   (not referenced)      "2026-02-22"
--   p10  (not referenced)      "2026-02-28"
