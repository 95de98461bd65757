-- order-settings-exclusions: exclusion filters: and / or groups, camelCase fields, a disabled one
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count","orders.refunds"],"orderSettings":{"exclusionFilters":[{"id":"00000000-0000-4000-8000-000000000001","name":"Drafts and tests","enabled":true,"conditionGroups":[{"id":"00000000-0000-4000-8000-000000000002","logic":"and","conditions":[{"id":"00000000-0000-4000-8000-000000000003","field":"source_name","operator":"equals","value":"draft_orders"},{"id":"00000000-0000-4000-8000-000000000004","field":"tags","operator":"contains","value":"test"}]},{"id":"00000000-0000-4000-8000-000000000005","logic":"or","conditions":[{"id":"00000000-0000-4000-8000-000000000006","field":"orders.gateway","operator":"in","value":"manual, cash"},{"id":"00000000-0000-4000-8000-000000000007","field":"totalPrice","operator":"lt","value":"1"}]}],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},{"id":"00000000-0000-4000-8000-000000000008","name":"Wholesale (off)","enabled":false,"conditionGroups":[{"id":"00000000-0000-4000-8000-000000000009","logic":"AND","conditions":[{"id":"00000000-0000-4000-8000-000000000010","field":"tags","operator":"equals","value":"wholesale"}]}],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 2: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided' AND NOT (((o.source_name = {p7:String}) AND arrayExists(x -> positionCaseInsensitiveUTF8(x, {p8:String}) > 0, o.tags)) OR ((o.gateway IN {p9:Array(String)}) OR (toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) < {p10:Float64})))
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
--   p7   String                "draft_orders"
--   p8   String                "test"
--   p9   Array(String)         ["manual","cash"]
--   p10  Float64               1

-- statement 2 of 2: refunds, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND order_id IN (SELECT order_id FROM refunds FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')})) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided' AND NOT (((o.source_name = {p7:String}) AND arrayExists(x -> positionCaseInsensitiveUTF8(x, {p8:String}) > 0, o.tags)) OR ((o.gateway IN {p9:Array(String)}) OR (toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) < {p10:Float64})))
)
SELECT q.bucket AS bucket,
  sum(if(q.refunds_amount = 0, 0., q.refunds_amount * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS refunds_amount,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, toFloat64(sum(r.amount)) AS refunds_amount
  FROM (SELECT rf.created_at AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = {p0:String}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE rf.created_at >= {p3:DateTime64(3, 'UTC')} AND rf.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r
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
--   p7   String                "draft_orders"
--   p8   String                "test"
--   p9   Array(String)         ["manual","cash"]
--   p10  Float64               1
--   rates_from Date                  "2025-12-29"
