-- cohorts-week-cells: weekly cohorts in America/New_York to today, from the cohort cells
-- POST /db-mgmt/api/query-cohort-analysis {"pixelId":"px_golden","dateRange":{"start":"2026-01-05","end":"2026-03-15"},"timezone":"America/New_York","cohortGranularity":"week","periods":6}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 3: orders, primary
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toDateTime(q.cohort, {p1:String})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS revenue, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing
FROM (
  SELECT cohort, period, currency AS cur, fx_day, toUInt8(1) AS fx_k, sum(retained) AS retained, sum(orders) AS orders,
    toFloat64(sum(revenue)) AS revenue
  FROM (SELECT toMonday(first_at, {p1:String}) AS cohort, intDiv(dateDiff('day', cohort, toMonday(created_at, {p1:String})), 7) AS period,
    currency, toDate(created_at) AS fx_day,
    toInt64(countIf(opens_period)) AS retained, toInt64(count()) AS orders, sum(total_price) AS revenue
  FROM (SELECT o.created_at AS created_at, o.total_price AS total_price, o.currency AS currency,
    first_value(o.created_at) OVER per_customer AS first_at,
    row_number() OVER per_customer = 1
      OR toMonday(lagInFrame(o.created_at) OVER per_customer, {p1:String}) != toMonday(o.created_at, {p1:String}) AS opens_period
  FROM co AS o WHERE 1
  WINDOW per_customer AS (PARTITION BY cityHash64(o.customer_key), o.customer_key ORDER BY o.created_at, o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
  WHERE first_at >= {p3:DateTime64(3, 'UTC')} AND first_at < {p4:DateTime64(3, 'UTC')}
    AND period < {p5:Int64}
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
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   DateTime64(3, 'UTC')  "2026-01-05 05:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-16 04:00:00.000"
--   p5   Int64                 6
--   rates_from Date                  "2025-11-04"

-- statement 2 of 3: orders, primary, from the derived tables
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String}),
co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {cohort_orders_from:DateTime64(3, 'UTC')} AND order_id IN {cohort_orders:Array(String)}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toDateTime(q.cohort, {p1:String})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS revenue, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing
FROM (
  SELECT cohort, period, currency AS cur, fx_day, toUInt8(1) AS fx_k, sum(retained) AS retained, sum(orders) AS orders,
    toFloat64(sum(revenue)) AS revenue
  FROM (SELECT cohort, period, currency, fx_day, retained, orders, revenue
  FROM cohort_cells FINAL
  WHERE pixel_id = {p0:String} AND slot = {cohort_slot:UInt8} AND timezone = {p1:String} AND granularity = {p7:String}
    AND mask = {p3:Int64} AND cohort >= {p5:Date} AND cohort <= {p6:Date} AND period < {p4:Int64} AND orders != 0
  UNION ALL
  SELECT cohort, period, currency, fx_day, if(side = 0, -retained, retained), if(side = 0, -orders, orders),
    if(side = 0, -revenue, revenue)
  FROM (SELECT side, toMonday(first_at, {p1:String}) AS cohort, intDiv(dateDiff('day', cohort, toMonday(created_at, {p1:String})), 7) AS period,
    currency, toDate(created_at) AS fx_day,
    toInt64(countIf(opens_period)) AS retained, toInt64(count()) AS orders, sum(total_price) AS revenue
  FROM (SELECT o.side AS side, o.created_at AS created_at, o.total_price AS total_price, o.currency AS currency,
    first_value(o.created_at) OVER per_customer AS first_at,
    row_number() OVER per_customer = 1
      OR toMonday(lagInFrame(o.created_at) OVER per_customer, {p1:String}) != toMonday(o.created_at, {p1:String}) AS opens_period
  FROM (SELECT customer_key, order_id, created_at, currency, total_price,
      arrayJoin(if(created_at >= {cohort_orders_from:DateTime64(3, 'UTC')} AND order_id IN {cohort_orders:Array(String)}, [0], [0, 1])) AS side
    FROM cohort_orders FINAL
    WHERE pixel_id = {p0:String} AND slot = {cohort_slot:UInt8} AND customer_key IN {cohort_customers:Array(String)} AND bitAnd(kind, {p3:Int64}) != 0
    UNION ALL
    SELECT customer_key, order_id, created_at, currency, total_price, 1 AS side FROM co WHERE customer_key IN {cohort_customers:Array(String)}) AS o WHERE 1
  WINDOW per_customer AS (PARTITION BY o.side, cityHash64(o.customer_key), o.customer_key ORDER BY o.created_at, o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
  WHERE cohort >= {p5:Date} AND cohort <= {p6:Date} AND period < {p4:Int64} AND (side = 0 OR (first_at >= {p8:DateTime64(3, 'UTC')} AND first_at < {p9:DateTime64(3, 'UTC')}))
  GROUP BY side, cohort, period, currency, fx_day))
  GROUP BY cohort, period, cur, fx_day
  HAVING orders != 0
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY cohort_key, period
ORDER BY cohort_key, period

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   Int64                 1
--   p4   Int64                 6
--   p5   Date                  "2026-01-05"
--   p6   Date                  "2026-03-09"
--   p7   String                "week"
--   p8   DateTime64(3, 'UTC')  "2026-01-05 05:00:00.000"
--   p9   DateTime64(3, 'UTC')  "2026-03-16 04:00:00.000"
--   rates_from Date                  "2025-11-04"
--   cohort_slot (not referenced)      0
--   cohort_customers (not referenced)      []
--   cohort_orders (not referenced)      []
--   cohort_orders_from (not referenced)      "1970-01-01 00:00:00.000"

-- statement 3 of 3: orders, primary, from the derived tables alone (nothing past the watermark)
WITH fx AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates WHERE date >= {rates_from:Date} GROUP BY currency, date),
fx_target AS (SELECT toUInt8(1) AS k, date, rate FROM fx WHERE currency = {p2:String})
SELECT toUnixTimestamp(toDateTime(q.cohort, {p1:String})) AS cohort_key, q.period AS period,
  toFloat64(sum(q.retained)) AS retained, toFloat64(sum(q.orders)) AS orders,
  sum(if(q.revenue = 0, 0., q.revenue * if(q.cur = {p2:String}, 1., if({p2:String} = 'USD', 1., ft.rate) / if(q.cur = 'USD', 1., fs.rate)))) AS revenue, minIf(concat(toString(q.fx_day), ' ', multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '')), multiIf(q.cur = {p2:String}, '', q.cur != 'USD' AND fs.rate = 0, q.cur, {p2:String} != 'USD' AND ft.rate = 0, {p2:String}, '') != '') AS fx_missing
FROM (
  SELECT cohort, period, currency AS cur, fx_day, toUInt8(1) AS fx_k, sum(retained) AS retained, sum(orders) AS orders,
    toFloat64(sum(revenue)) AS revenue
  FROM (SELECT cohort, period, currency, fx_day, retained, orders, revenue
  FROM cohort_cells FINAL
  WHERE pixel_id = {p0:String} AND slot = {cohort_slot:UInt8} AND timezone = {p1:String} AND granularity = {p7:String}
    AND mask = {p3:Int64} AND cohort >= {p5:Date} AND cohort <= {p6:Date} AND period < {p4:Int64} AND orders != 0)
  GROUP BY cohort, period, cur, fx_day
  HAVING orders != 0
) AS q
ASOF LEFT JOIN fx AS fs ON fs.currency = q.cur AND fs.date <= q.fx_day
ASOF LEFT JOIN fx_target AS ft ON ft.k = q.fx_k AND ft.date <= q.fx_day
GROUP BY cohort_key, period
ORDER BY cohort_key, period

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "America/New_York"
--   p2   String                "USD"
--   p3   Int64                 1
--   p4   Int64                 6
--   p5   Date                  "2026-01-05"
--   p6   Date                  "2026-03-09"
--   p7   String                "week"
--   p8   (not referenced)      "2026-01-05 05:00:00.000"
--   p9   (not referenced)      "2026-03-16 04:00:00.000"
--   rates_from Date                  "2025-11-04"
--   cohort_slot (not referenced)      0
--   cohort_customers (not referenced)      []
--   cohort_orders (not referenced)      []
--   cohort_orders_from (not referenced)      "1970-01-01 00:00:00.000"
