-- source-profit-report-costs: profit and total costs: four sources, report-time costs
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"none","measures":["profit.net_profit","profit.mer","costs.total"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 4: orders + refunds + ads, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT any(q.bucket) AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT * FROM (WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, toFloat64(count()) AS orders_count, 0. AS refunds_amount, 0. AS ads_spend
  FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND order_id IN (SELECT order_id FROM refunds FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')})) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, toFloat64(sum(r.amount)) AS refunds_amount, 0. AS ads_spend
  FROM (SELECT rf.created_at AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = {p0:String}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE rf.created_at >= {p3:DateTime64(3, 'UTC')} AND rf.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, 0. AS refunds_amount, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p1:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p0:String} AND date >= {p5:Date} AND date <= {p6:Date}
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day


-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   Date                  "2026-03-01"
--   p6   Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"

-- statement 2 of 4: orders + refunds + ads, primary, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p4:String})
SELECT any(q.bucket) AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '')), multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '') != '') AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, toFloat64(sum(r.n)) AS orders_count, 0. AS refunds_amount, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p2:String} AND hour >= {p5:DateTime64(3, 'UTC')} AND hour < {p6:DateTime64(3, 'UTC')} AND hour NOT IN {p0:Array(DateTime64(3, 'UTC'))}
  UNION ALL
  SELECT toDateTime64(toStartOfHour(created_at), 3, 'UTC') AS hour, currency, financial_status, count() AS orders,
    sum(total_price) AS total_price, sum(subtotal_price) AS subtotal_price, sum(total_shipping) AS total_shipping, sum(total_tax) AS total_tax, sum(total_discounts) AS total_discounts
  FROM (
    SELECT order_id, created_at, currency, financial_status, total_price, subtotal_price, total_shipping, total_tax, total_discounts
    FROM orders FINAL
    WHERE pixel_id = {p2:String} AND created_at >= greatest({p5:DateTime64(3, 'UTC')}, arrayMin({p0:Array(DateTime64(3, 'UTC'))})) AND created_at < {p6:DateTime64(3, 'UTC')}
      AND created_at < arrayMax({p0:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1)
  ) AS r
  WHERE toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p0:Array(DateTime64(3, 'UTC'))}
  GROUP BY hour, currency, financial_status
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, toFloat64(sum(r.amount)) AS refunds_amount, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.refunds AS n, o.amount AS amount
FROM (
  SELECT hour, order_hour, currency, financial_status, refunds, amount
  FROM refund_facts_hourly FINAL
  WHERE pixel_id = {p2:String} AND hour >= {p5:DateTime64(3, 'UTC')} AND hour < {p6:DateTime64(3, 'UTC')} AND hour NOT IN {p1:Array(DateTime64(3, 'UTC'))}
  UNION ALL
  SELECT toDateTime64(toStartOfHour(rf.created_at), 3, 'UTC') AS hour, toDateTime64(toStartOfHour(o.created_at), 3, 'UTC') AS order_hour,
    rf.currency AS currency, o.financial_status AS financial_status, count() AS refunds, sum(rf.amount) AS amount
  FROM (
    SELECT refund_id, order_id, created_at, currency, amount, ingested_at FROM refunds FINAL
      WHERE pixel_id = {p2:String} AND created_at >= arrayMin({p1:Array(DateTime64(3, 'UTC'))}) AND created_at < arrayMax({p1:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1) AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))}
  ) AS rf
  INNER JOIN (
    SELECT order_id, created_at, financial_status, ingested_at FROM orders FINAL
      WHERE pixel_id = {p2:String} AND order_id IN (
        SELECT order_id FROM refunds WHERE pixel_id = {p2:String} AND created_at >= arrayMin({p1:Array(DateTime64(3, 'UTC'))}) AND created_at < arrayMax({p1:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1) AND toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))})
  ) AS o ON o.order_id = rf.order_id
  GROUP BY hour, order_hour, currency, financial_status
) AS o
WHERE o.refunds > 0 AND o.hour >= {p5:DateTime64(3, 'UTC')} AND o.hour < {p6:DateTime64(3, 'UTC')} AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, 0. AS refunds_amount, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p3:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p2:String} AND date >= {p7:Date} AND date <= {p8:Date}
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day


-- parameters:
--   p0   Array(DateTime64(3, 'UTC')) []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "px_golden"
--   p3   String                "UTC"
--   p4   String                "USD"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   Date                  "2026-03-01"
--   p8   Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"

-- statement 3 of 4: orders + refunds + ads, primary, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT any(q.bucket) AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  sum(if(q.ads_spend = 0, 0., q.ads_spend * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS ads_spend,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, toFloat64(sum(r.n)) AS orders_count, 0. AS refunds_amount, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, toFloat64(sum(r.amount)) AS refunds_amount, 0. AS ads_spend
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.refunds AS n, o.amount AS amount
FROM (
  SELECT hour, order_hour, currency, financial_status, refunds, amount
  FROM refund_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}
) AS o
WHERE o.refunds > 0 AND o.hour >= {p3:DateTime64(3, 'UTC')} AND o.hour < {p4:DateTime64(3, 'UTC')} AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, 0. AS orders_count, 0. AS refunds_amount, sum(toFloat64(r.spend)) AS ads_spend
  FROM (SELECT toDateTime64(toDateTime(c.date, {p1:String}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k,
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = {p0:String} AND date >= {p5:Date} AND date <= {p6:Date}
) AS c
WHERE c.level = c.deepest AND 1) AS r
  GROUP BY cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day


-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   Date                  "2026-03-01"
--   p6   Date                  "2026-03-07"
--   rates_from Date                  "2025-12-29"

-- statement 4 of 4: order_costs, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT any(q.bucket) AS bucket,
  sum(if(q.cost_cogs = 0, 0., q.cost_cogs * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_cogs,
  sum(if(q.cost_handling = 0, 0., q.cost_handling * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_handling,
  sum(if(q.cost_shipping = 0, 0., q.cost_shipping * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_shipping,
  sum(if(q.cost_gateway = 0, 0., q.cost_gateway * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_gateway,
  sum(if(q.cost_order_level = 0, 0., q.cost_order_level * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_order_level,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT toUInt32(0) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.cogs)) AS cost_cogs, sum(toFloat64(r.handling)) AS cost_handling, sum(toFloat64(r.shipping)) AS cost_shipping, sum(toFloat64(r.gateway)) AS cost_gateway, sum(toFloat64(r.order_level)) AS cost_order_level
  FROM (SELECT o.created_at AS ts, oc.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  oc.cogs, oc.handling, oc.shipping, oc.gateway, oc.order_level
FROM (SELECT * FROM order_costs FINAL WHERE pixel_id = {p0:String}) AS oc INNER JOIN co AS o ON o.order_id = oc.order_id
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
  GROUP BY cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day


-- parameters:
--   p0   String                "px_golden"
--   p1   (not referenced)      "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   rates_from Date                  "2025-12-29"
