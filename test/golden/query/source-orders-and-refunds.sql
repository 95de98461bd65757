-- source-orders-and-refunds: net revenue: orders and refunds (both from their rollups) in one statement
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.net_revenue"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 3: orders + refunds, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT q.bucket AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, 0. AS refunds_amount
  FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
  GROUP BY bucket, cur, fx_day)
  UNION ALL
  SELECT * FROM (WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND order_id IN (SELECT order_id FROM refunds FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')})) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, toFloat64(sum(r.amount)) AS refunds_amount
  FROM (SELECT rf.created_at AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = {p0:String}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE rf.created_at >= {p3:DateTime64(3, 'UTC')} AND rf.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
  GROUP BY bucket, cur, fx_day)
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

-- statement 2 of 3: orders + refunds, primary, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p4:String})
SELECT q.bucket AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p4:String}, 1., if({p4:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '')), multiIf(q.cur = {p4:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p4:String} != 'USD' AND ft.rate = 0, {p4:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p3:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, 0. AS refunds_amount
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
  GROUP BY bucket, cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p3:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, toFloat64(sum(r.amount)) AS refunds_amount
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
  GROUP BY bucket, cur, fx_day)
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   Array(DateTime64(3, 'UTC')) []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "px_golden"
--   p3   String                "UTC"
--   p4   String                "USD"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   (not referenced)      "2026-03-01"
--   p8   (not referenced)      "2026-03-07"
--   rates_from Date                  "2025-12-29"

-- statement 3 of 3: orders + refunds, primary, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT q.bucket AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total, 0. AS refunds_amount
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY bucket, cur, fx_day)
  UNION ALL
  SELECT * FROM (SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, 0. AS orders_total, toFloat64(sum(r.amount)) AS refunds_amount
  FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.refunds AS n, o.amount AS amount
FROM (
  SELECT hour, order_hour, currency, financial_status, refunds, amount
  FROM refund_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}
) AS o
WHERE o.refunds > 0 AND o.hour >= {p3:DateTime64(3, 'UTC')} AND o.hour < {p4:DateTime64(3, 'UTC')} AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r
  GROUP BY bucket, cur, fx_day)
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
