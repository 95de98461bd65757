-- cohorts-filters-order-settings: orders. filters and order settings decide the first order
-- POST /db-mgmt/api/query-cohort-analysis {"pixelId":"px_golden","dateRange":{"start":"2025-10-01","end":"2026-03-31"},"timezone":"UTC","filters":{"and":[{"field":"orders.country","op":"in","value":["US","CA"]},{"field":"orders.tags","op":"not_contains","value":"test"}]},"orderSettings":{"countVoidedOrders":true,"exclusionFilters":[{"id":"00000000-0000-4000-8000-000000000001","name":"Drafts and tests","enabled":true,"conditionGroups":[{"id":"00000000-0000-4000-8000-000000000002","logic":"and","conditions":[{"id":"00000000-0000-4000-8000-000000000003","field":"source_name","operator":"equals","value":"draft_orders"},{"id":"00000000-0000-4000-8000-000000000004","field":"tags","operator":"contains","value":"test"}]},{"id":"00000000-0000-4000-8000-000000000005","logic":"or","conditions":[{"id":"00000000-0000-4000-8000-000000000006","field":"orders.gateway","operator":"in","value":"manual, cash"},{"id":"00000000-0000-4000-8000-000000000007","field":"totalPrice","operator":"lt","value":"1"}]}],"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String}) AS o
  WHERE o.financial_status != 'pending' AND NOT (((o.source_name = {p8:String}) AND arrayExists(x -> positionCaseInsensitiveUTF8(x, {p9:String}) > 0, o.tags)) OR ((o.gateway IN {p10:Array(String)}) OR (toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) < {p11:Float64})))
)
SELECT toUnixTimestamp(toDateTime(q.cohort, {p1:String})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS revenue, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing
FROM (
  SELECT cohort, period, currency AS cur, fx_day, toUInt8(1) AS fx_k, sum(retained) AS retained, sum(orders) AS orders,
    toFloat64(sum(revenue)) AS revenue
  FROM (SELECT toStartOfMonth(first_at, {p1:String}) AS cohort, dateDiff('month', cohort, toStartOfMonth(created_at, {p1:String})) AS period,
    currency, toDate(created_at) AS fx_day,
    toInt64(countIf(opens_period)) AS retained, toInt64(count()) AS orders, sum(total_price) AS revenue
  FROM (SELECT o.created_at AS created_at, o.total_price AS total_price, o.currency AS currency,
    first_value(o.created_at) OVER per_customer AS first_at,
    row_number() OVER per_customer = 1
      OR toStartOfMonth(lagInFrame(o.created_at) OVER per_customer, {p1:String}) != toStartOfMonth(o.created_at, {p1:String}) AS opens_period
  FROM co AS o WHERE ((o.country IN {p3:Array(String)}) AND (NOT arrayExists(x -> positionCaseInsensitiveUTF8(x, {p4:String}) > 0, o.tags)))
  WINDOW per_customer AS (PARTITION BY cityHash64(o.customer_key), o.customer_key ORDER BY o.created_at, o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
  WHERE first_at >= {p5:DateTime64(3, 'UTC')} AND first_at < {p6:DateTime64(3, 'UTC')}
    AND period < {p7:Int64}
  GROUP BY cohort, period, currency, fx_day)
  GROUP BY cohort, period, cur, fx_day
  HAVING orders != 0
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY cohort_key, period
ORDER BY cohort_key, period

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   String                "USD"
--   p3   Array(String)         ["US","CA"]
--   p4   String                "test"
--   p5   DateTime64(3, 'UTC')  "2025-10-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-04-01 00:00:00.000"
--   p7   Int64                 12
--   p8   String                "draft_orders"
--   p9   String                "test"
--   p10  Array(String)         ["manual","cash"]
--   p11  Float64               1
--   rates_from Date                  "2025-07-31"
