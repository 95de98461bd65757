-- filter-orders-text: text operators on orders fields
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count"],"filters":{"and":[{"field":"orders.country","op":"equals","value":"US"},{"field":"orders.currency","op":"not_equals","value":"JPY"},{"field":"orders.source_name","op":"in","value":["web","pos"]},{"field":"orders.gateway","op":"not_in","value":["manual"]},{"field":"orders.order_id","op":"contains","value":"A-"},{"field":"orders.financial_status","op":"not_contains","value":"refund"},{"field":"orders.customer_id","op":"starts_with","value":"cus_"},{"field":"orders.gateway","op":"ends_with","value":"pay"},{"field":"orders.customer_id","op":"is_set"},{"field":"orders.country","op":"is_not_set"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p8:String} AND created_at >= {p11:DateTime64(3, 'UTC')} AND created_at < {p12:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p9:String})) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p11:DateTime64(3, 'UTC')} AND o.created_at < {p12:DateTime64(3, 'UTC')} AND ((o.country = {p0:String}) AND (NOT (o.currency = {p1:String})) AND (o.source_name IN {p2:Array(String)}) AND (NOT (o.gateway IN {p3:Array(String)})) AND (positionCaseInsensitiveUTF8(o.order_id, {p4:String}) > 0) AND (NOT (positionCaseInsensitiveUTF8(o.financial_status, {p5:String}) > 0)) AND (startsWith(lowerUTF8(o.customer_id), lowerUTF8({p6:String}))) AND (endsWith(lowerUTF8(o.gateway), lowerUTF8({p7:String}))) AND (o.customer_id != '') AND (NOT (o.country != '')))) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "US"
--   p1   String                "JPY"
--   p2   Array(String)         ["web","pos"]
--   p3   Array(String)         ["manual"]
--   p4   String                "A-"
--   p5   String                "refund"
--   p6   String                "cus_"
--   p7   String                "pay"
--   p8   String                "px_golden"
--   p9   String                "UTC"
--   p10  (not referenced)      "USD"
--   p11  DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p12  DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p13  (not referenced)      "2026-03-01"
--   p14  (not referenced)      "2026-03-07"
