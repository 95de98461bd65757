-- compare-orders-refunds: a compare period: each source answers both periods in one statement
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count","orders.net_revenue","customers.repeat_rate"],"compareDateRange":{"start":"2026-02-22","end":"2026-02-28"}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 2: orders, both
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, row_number() OVER (PARTITION BY customer_key ORDER BY o.created_at, o.order_id) AS customer_order_number,
       customer_order_number > 1 AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT q.bucket AS bucket,
  q.period AS period,
  toFloat64(sum(q.orders_count)) AS orders_count,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  toFloat64(uniqExactMerge(q.customers_returning)) AS customers_returning,
  toFloat64(uniqExactMerge(q.customers_unique)) AS customers_unique,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, count() AS orders_count, toFloat64(sum(r.total_price)) AS orders_total, uniqExactStateIf(r.customer_key, r.customer_order_number > 1) AS customers_returning, uniqExactState(r.customer_key) AS customers_unique
  FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE ((o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')}) OR (o.created_at >= {p7:DateTime64(3, 'UTC')} AND o.created_at < {p8:DateTime64(3, 'UTC')})) AND 1) AS r
  GROUP BY bucket, period, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   (not referenced)      "2026-02-22"
--   p10  (not referenced)      "2026-02-28"
--   rates_from Date                  "2025-12-22"

-- statement 2 of 2: refunds, both
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, row_number() OVER (PARTITION BY customer_key ORDER BY o.created_at, o.order_id) AS customer_order_number,
       customer_order_number > 1 AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT q.bucket AS bucket,
  q.period AS period,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, if(r.ts >= {p3:DateTime64(3, 'UTC')} AND r.ts < {p4:DateTime64(3, 'UTC')}, 0, 1) AS period, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.amount)) AS refunds_amount
  FROM (SELECT rf.created_at AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = {p0:String}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE ((rf.created_at >= {p3:DateTime64(3, 'UTC')} AND rf.created_at < {p4:DateTime64(3, 'UTC')}) OR (rf.created_at >= {p7:DateTime64(3, 'UTC')} AND rf.created_at < {p8:DateTime64(3, 'UTC')})) AND 1) AS r
  GROUP BY bucket, period, cur, fx_day
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY GROUPING SETS ((bucket, period), (period))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   p7   DateTime64(3, 'UTC')  "2026-02-22 00:00:00.000"
--   p8   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p9   (not referenced)      "2026-02-22"
--   p10  (not referenced)      "2026-02-28"
--   rates_from Date                  "2025-12-22"
