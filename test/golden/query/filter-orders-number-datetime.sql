-- filter-orders-number-datetime: number and datetime operators; dates are New York days
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"America/New_York","granularity":"day","measures":["orders.count"],"filters":{"and":[{"field":"orders.total_price","op":"gt","value":10},{"field":"orders.total_price","op":"lte","value":500.5},{"field":"orders.subtotal_price","op":"between","value":[5,50]},{"field":"orders.subtotal_price","op":"in","value":[9.99,19.99]},{"field":"orders.total_price","op":"not_in","value":[0]},{"field":"orders.total_price","op":"is_set"},{"field":"orders.created_at","op":"equals","value":"2026-03-02"},{"field":"orders.created_at","op":"gt","value":"2026-03-01"},{"field":"orders.created_at","op":"lte","value":"2026-03-06T18:30:00Z"},{"field":"orders.created_at","op":"between","value":["2026-03-01","2026-03-05"]},{"field":"orders.created_at","op":"between","value":["2026-03-01T05:00:00Z","2026-03-05T12:00:00Z"]}]}}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: orders, primary
WITH co AS (
  SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p17:String} AND created_at >= {p20:DateTime64(3, 'UTC')} AND created_at < {p21:DateTime64(3, 'UTC')}) AS o
  WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p18:String})) AS bucket,
  toFloat64(count()) AS orders_count,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number
FROM co AS o
WHERE o.created_at >= {p20:DateTime64(3, 'UTC')} AND o.created_at < {p21:DateTime64(3, 'UTC')} AND ((toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) > {p0:Float64}) AND (toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) <= {p1:Float64}) AND (toFloat64(o.subtotal_price) IS NOT NULL AND toFloat64(o.subtotal_price) BETWEEN {p2:Float64} AND {p3:Float64}) AND (toFloat64(o.subtotal_price) IS NOT NULL AND toFloat64(o.subtotal_price) IN {p6:Array(Float64)}) AND (NOT (toFloat64(o.total_price) IS NOT NULL AND toFloat64(o.total_price) IN {p8:Array(Float64)})) AND (toFloat64(o.total_price) IS NOT NULL) AND (o.created_at IS NOT NULL AND o.created_at >= {p9:DateTime64(3, 'UTC')} AND o.created_at < {p10:DateTime64(3, 'UTC')}) AND (o.created_at IS NOT NULL AND o.created_at >= {p11:DateTime64(3, 'UTC')}) AND (o.created_at IS NOT NULL AND o.created_at <= {p12:DateTime64(3, 'UTC')}) AND (o.created_at IS NOT NULL AND o.created_at >= {p13:DateTime64(3, 'UTC')} AND o.created_at < {p14:DateTime64(3, 'UTC')}) AND (o.created_at IS NOT NULL AND o.created_at >= {p15:DateTime64(3, 'UTC')} AND o.created_at <= {p16:DateTime64(3, 'UTC')}))) AS r
GROUP BY GROUPING SETS ((bucket), ())

-- parameters:
--   p0   Float64               10
--   p1   Float64               500.5
--   p2   Float64               5
--   p3   Float64               50
--   p4   (not referenced)      9.99
--   p5   (not referenced)      19.99
--   p6   Array(Float64)        [9.99,19.99]
--   p7   (not referenced)      0
--   p8   Array(Float64)        [0]
--   p9   DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p10  DateTime64(3, 'UTC')  "2026-03-03 05:00:00.000"
--   p11  DateTime64(3, 'UTC')  "2026-03-02 05:00:00.000"
--   p12  DateTime64(3, 'UTC')  "2026-03-06 18:30:00.000"
--   p13  DateTime64(3, 'UTC')  "2026-03-01 05:00:00.000"
--   p14  DateTime64(3, 'UTC')  "2026-03-06 05:00:00.000"
--   p15  DateTime64(3, 'UTC')  "2026-03-01 05:00:00.000"
--   p16  DateTime64(3, 'UTC')  "2026-03-05 12:00:00.000"
--   p17  String                "px_golden"
--   p18  String                "America/New_York"
--   p19  (not referenced)      "USD"
--   p20  DateTime64(3, 'UTC')  "2026-03-01 05:00:00.000"
--   p21  DateTime64(3, 'UTC')  "2026-03-08 05:00:00.000"
--   p22  (not referenced)      "2026-03-01"
--   p23  (not referenced)      "2026-03-07"
