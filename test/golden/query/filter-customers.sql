-- filter-customers: customers. fields: numbering is computed for the filter
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count"],"filters":{"and":[{"field":"customers.is_returning","op":"equals","value":true},{"field":"customers.order_number","op":"lte","value":3},{"field":"customers.id","op":"not_in","value":["c:staff"]}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, row_number() OVER (PARTITION BY customer_key ORDER BY o.created_at, o.order_id) AS customer_order_number,
       customer_order_number > 1 AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p2:String}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p3:String})) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p5:DateTime64(3, 'UTC')} AND o.created_at < {p6:DateTime64(3, 'UTC')} AND ((o.is_returning = 1) AND (o.customer_order_number IS NOT NULL AND o.customer_order_number <= {p0:Float64}) AND (NOT (o.customer_key IN {p1:Array(String)})))) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   Float64               3
--   p1   Array(String)         ["c:staff"]
--   p2   String                "px_golden"
--   p3   String                "UTC"
--   p4   (not referenced)      "USD"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   (not referenced)      "2026-03-01"
--   p8   (not referenced)      "2026-03-07"
