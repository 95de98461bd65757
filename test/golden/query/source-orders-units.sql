-- source-orders-units: orders: units join the current version's lines
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.units","orders.units_per_order"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p0:String} AND created_at >= {p3:DateTime64(3, 'UTC')} AND created_at < {p4:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
),
lines AS (SELECT order_id, version, sum(quantity) AS units FROM order_lines WHERE pixel_id = {p0:String} GROUP BY order_id, version)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket,
  toFloat64(sum(r.units)) AS orders_units,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number, l.units AS units
FROM co AS o LEFT JOIN lines AS l ON l.order_id = o.order_id AND l.version = o.version
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
