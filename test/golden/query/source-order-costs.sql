-- source-order-costs: order_costs: every cost base
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["costs.cogs","costs.handling","costs.shipping","costs.gateway","costs.order_level"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: order_costs, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT q.bucket AS bucket,
  sum(if(q.cost_cogs = 0, 0., q.cost_cogs * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_cogs,
  sum(if(q.cost_handling = 0, 0., q.cost_handling * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_handling,
  sum(if(q.cost_shipping = 0, 0., q.cost_shipping * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_shipping,
  sum(if(q.cost_gateway = 0, 0., q.cost_gateway * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_gateway,
  sum(if(q.cost_order_level = 0, 0., q.cost_order_level * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS cost_order_level,
  minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing,
  grouping(bucket) AS is_total
FROM (
  SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket, r.cur AS cur, r.fx_day AS fx_day, toUInt8(1) AS fx_k, sum(toFloat64(r.cogs)) AS cost_cogs, sum(toFloat64(r.handling)) AS cost_handling, sum(toFloat64(r.shipping)) AS cost_shipping, sum(toFloat64(r.gateway)) AS cost_gateway, sum(toFloat64(r.order_level)) AS cost_order_level
  FROM (SELECT o.created_at AS ts, oc.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  oc.cogs, oc.handling, oc.shipping, oc.gateway, oc.order_level
FROM (SELECT * FROM order_costs FINAL WHERE pixel_id = {p0:String}) AS oc INNER JOIN co AS o ON o.order_id = oc.order_id
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
