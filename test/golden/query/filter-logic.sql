-- filter-logic: nested and / or / not, empty and / or, empty in / not_in
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count"],"filters":{"or":[{"and":[{"field":"orders.country","op":"equals","value":"US"},{"not":{"or":[{"field":"orders.tags","op":"equals","value":"test"},{"and":[]}]}}]},{"and":[{"field":"orders.country","op":"in","value":[]},{"or":[]}]},{"field":"orders.source_name","op":"not_in","value":[]}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p2:String} AND created_at >= {p5:DateTime64(3, 'UTC')} AND created_at < {p6:DateTime64(3, 'UTC')}) AS o
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
WHERE o.created_at >= {p5:DateTime64(3, 'UTC')} AND o.created_at < {p6:DateTime64(3, 'UTC')} AND (((o.country = {p0:String}) AND (NOT (arrayExists(x -> x = {p1:String}, o.tags) OR 1))) OR (0 AND 0) OR (NOT 0))) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "US"
--   p1   String                "test"
--   p2   String                "px_golden"
--   p3   String                "UTC"
--   p4   (not referenced)      "USD"
--   p5   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p6   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p7   (not referenced)      "2026-03-01"
--   p8   (not referenced)      "2026-03-07"
