-- source-orders-rollup-counts: orders: counts only, served by the hourly rollup without a rate
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"none","measures":["orders.count","customers.count"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 6: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUInt32(0) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r


-- parameters:
--   p0   String                "px_golden"
--   p1   (not referenced)      "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"

-- statement 2 of 6: orders, primary, from the derived tables
SELECT toUInt32(0) AS bucket,
  toFloat64(sum(r.n)) AS orders_count,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p1:String} AND hour >= {p4:DateTime64(3, 'UTC')} AND hour < {p5:DateTime64(3, 'UTC')} AND hour NOT IN {p0:Array(DateTime64(3, 'UTC'))}
  UNION ALL
  SELECT toDateTime64(toStartOfHour(created_at), 3, 'UTC') AS hour, currency, financial_status, count() AS orders,
    sum(total_price) AS total_price, sum(subtotal_price) AS subtotal_price, sum(total_shipping) AS total_shipping, sum(total_tax) AS total_tax, sum(total_discounts) AS total_discounts
  FROM (
    SELECT order_id, created_at, currency, financial_status, total_price, subtotal_price, total_shipping, total_tax, total_discounts
    FROM orders FINAL
    WHERE pixel_id = {p1:String} AND created_at >= greatest({p4:DateTime64(3, 'UTC')}, arrayMin({p0:Array(DateTime64(3, 'UTC'))})) AND created_at < {p5:DateTime64(3, 'UTC')}
      AND created_at < arrayMax({p0:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1)
  ) AS r
  WHERE toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p0:Array(DateTime64(3, 'UTC'))}
  GROUP BY hour, currency, financial_status
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r


-- parameters:
--   p0   Array(DateTime64(3, 'UTC')) []
--   p1   String                "px_golden"
--   p2   (not referenced)      "UTC"
--   p3   (not referenced)      "USD"
--   p4   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p5   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p6   (not referenced)      "2026-03-01"
--   p7   (not referenced)      "2026-03-07"

-- statement 3 of 6: orders, primary, from the derived tables alone (nothing past the watermark)
SELECT toUInt32(0) AS bucket,
  toFloat64(sum(r.n)) AS orders_count,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, o.total_price, o.subtotal_price, o.total_shipping, o.total_tax, o.total_discounts
FROM (
  SELECT hour, currency, financial_status, orders, total_price, subtotal_price, total_shipping, total_tax, total_discounts
  FROM order_facts_hourly FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')}
) AS o
WHERE o.orders > 0 AND o.financial_status != 'pending' AND o.financial_status != 'voided') AS r


-- parameters:
--   p0   String                "px_golden"
--   p1   (not referenced)      "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"

-- statement 4 of 6: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUInt32(0) AS bucket,
  toFloat64(uniqExact(r.customer_key)) AS customers_unique,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p3:DateTime64(3, 'UTC')} AND o.created_at < {p4:DateTime64(3, 'UTC')} AND 1) AS r


-- parameters:
--   p0   String                "px_golden"
--   p1   (not referenced)      "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"

-- statement 5 of 6: orders, primary, from the derived tables
SELECT any(x.bucket) AS bucket,
  toFloat64(sum(x.np) + uniqExactIf(x.k, x.k != '')) AS customers_unique,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT toUInt32(0) AS bucket,
    r.prev_hour < greatest({p5:DateTime64(3, 'UTC')}, toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS np,
    r.k AS k
  FROM (
  SELECT hour AS ts, if(customer_key IN {p0:Array(String)}, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), prev) AS prev_hour,
    if(customer_key IN {p0:Array(String)}, customer_key, '') AS k
  FROM customer_hours FINAL
  WHERE pixel_id = {p2:String} AND hour >= {p5:DateTime64(3, 'UTC')} AND hour < {p6:DateTime64(3, 'UTC')} AND bitAnd(kinds, 1) != 0
    AND NOT (customer_key IN {p0:Array(String)} AND hour IN {p1:Array(DateTime64(3, 'UTC'))})
  UNION ALL
  SELECT o.created_at AS ts, toDateTime64('2299-12-31 23:59:59', 3, 'UTC') AS prev_hour, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS k
  FROM (
    SELECT order_id, created_at, financial_status, customer_id, customer_email_hash FROM orders FINAL
    WHERE pixel_id = {p2:String} AND created_at >= {p5:DateTime64(3, 'UTC')} AND created_at < {p6:DateTime64(3, 'UTC')}
      AND created_at >= arrayMin({p1:Array(DateTime64(3, 'UTC'))}) AND created_at < arrayMax({p1:Array(DateTime64(3, 'UTC'))}) + toIntervalHour(1)
  ) AS o
  WHERE toDateTime64(toStartOfHour(created_at), 3, 'UTC') IN {p1:Array(DateTime64(3, 'UTC'))} AND o.financial_status != 'pending' AND o.financial_status != 'voided'
    AND if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) IN {p0:Array(String)}
  ) AS r
) AS x


-- parameters:
--   p0   Array(String)         []
--   p1   Array(DateTime64(3, 'UTC')) []
--   p2   String                "px_golden"
--   p3   (not referenced)      "UTC"
--   p4   (not referenced)      "USD"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   (not referenced)      "2026-03-01"
--   p8   (not referenced)      "2026-03-07"

-- statement 6 of 6: orders, primary, from the derived tables alone (nothing past the watermark)
SELECT any(x.bucket) AS bucket,
  toFloat64(sum(x.np)) AS customers_unique,
  '' AS fx_missing,
  toUInt8(2) AS is_total
FROM (
  SELECT toUInt32(0) AS bucket,
    r.prev_hour < greatest({p3:DateTime64(3, 'UTC')}, toDateTime64('1970-01-01 00:00:00', 3, 'UTC')) AS np
  FROM (
  SELECT hour AS ts, prev AS prev_hour
  FROM customer_hours FINAL
  WHERE pixel_id = {p0:String} AND hour >= {p3:DateTime64(3, 'UTC')} AND hour < {p4:DateTime64(3, 'UTC')} AND bitAnd(kinds, 1) != 0
  ) AS r
) AS x


-- parameters:
--   p0   String                "px_golden"
--   p1   (not referenced)      "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
