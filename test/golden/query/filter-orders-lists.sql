-- filter-orders-lists: list fields: an element matches
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["orders.count"],"filters":{"and":[{"field":"orders.tags","op":"equals","value":"vip"},{"field":"orders.tags","op":"not_equals","value":"test"},{"field":"orders.tags","op":"in","value":["wholesale","b2b"]},{"field":"orders.discount_codes","op":"not_in","value":["STAFF"]},{"field":"orders.discount_codes","op":"contains","value":"spring"},{"field":"orders.discount_codes","op":"starts_with","value":"WELCOME"},{"field":"orders.tags","op":"ends_with","value":"-eu"},{"field":"orders.discount_codes","op":"is_set"},{"field":"orders.tags","op":"is_not_set"}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p7:String} AND created_at >= {p10:DateTime64(3, 'UTC')} AND created_at < {p11:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p8:String})) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p10:DateTime64(3, 'UTC')} AND o.created_at < {p11:DateTime64(3, 'UTC')} AND (arrayExists(x -> x = {p0:String}, o.tags) AND (NOT arrayExists(x -> x = {p1:String}, o.tags)) AND hasAny(o.tags, {p2:Array(String)}) AND (NOT hasAny(o.discount_codes, {p3:Array(String)})) AND arrayExists(x -> positionCaseInsensitiveUTF8(x, {p4:String}) > 0, o.discount_codes) AND arrayExists(x -> startsWith(lowerUTF8(x), lowerUTF8({p5:String})), o.discount_codes) AND arrayExists(x -> endsWith(lowerUTF8(x), lowerUTF8({p6:String})), o.tags) AND (notEmpty(o.discount_codes)) AND (NOT (notEmpty(o.tags))))) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   String                "vip"
--   p1   String                "test"
--   p2   Array(String)         ["wholesale","b2b"]
--   p3   Array(String)         ["STAFF"]
--   p4   String                "spring"
--   p5   String                "WELCOME"
--   p6   String                "-eu"
--   p7   String                "px_golden"
--   p8   String                "UTC"
--   p9   (not referenced)      "USD"
--   p10  DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p11  DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p12  (not referenced)      "2026-03-01"
--   p13  (not referenced)      "2026-03-07"
