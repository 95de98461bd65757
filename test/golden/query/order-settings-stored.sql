-- order-settings-stored: stored settings (pending counted, refunds on the order's day, an exclusion) under a request override
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.net_revenue"],"orderSettings":{"countPendingOrders":false}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, stored order settings {"countPendingOrders":true,"countVoidedOrders":false,"refundDateAttribution":"order_date","exclusionFilters":[{"id":"00000000-0000-4000-8000-000000000011","name":"No country","enabled":true,"conditionGroups":[{"id":"00000000-0000-4000-8000-000000000012","logic":"or","conditions":[{"id":"00000000-0000-4000-8000-000000000013","field":"country","operator":"is_not_set","value":""}]}],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}]}

-- statement 1 of 2: orders, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided' AND NOT (((NOT (o.country != ''))))
)
SELECT q.bucket AS bucket,
  sum(if(q.orders_total = 0, 0., q.orders_total * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS orders_total,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.total_price)) AS orders_total
  FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
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

-- statement 2 of 2: refunds, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided' AND NOT (((NOT (o.country != ''))))
)
SELECT q.bucket AS bucket,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.amount)) AS refunds_amount
  FROM (SELECT o.created_at AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = {p0:String}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
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
