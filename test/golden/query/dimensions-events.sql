-- dimensions-events: events by utm_source and device
-- POST /db-mgmt/api/query {"pixelId":"px_golden","dateRange":{"start":"2026-03-01","end":"2026-03-07"},"timezone":"UTC","granularity":"day","measures":["events.count","events.unique_identities"],"dimensions":["events.utm_source","events.device"]}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings

-- statement 1 of 1: events, primary
WITH hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = {p0:String} AND alias_type = 'canonical' GROUP BY alias_value
)
SELECT toUnixTimestamp(toStartOfDay(r.ts, {p1:String})) AS bucket,
  r.d0 AS d0,
  r.d1 AS d1,
  toFloat64(count()) AS events_count,
  toFloat64(uniqExact(r.cid)) AS events_identities,
  '' AS fx_missing,
  grouping(bucket) AS is_total
FROM (SELECT e.event_time AS ts, e.currency AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k, toString(e.utm_source) AS d0, toString(e.ua_device) AS d1,
  e.name AS name, e.value AS value, if(h.new != '', h.new, e.canonical_id) AS cid
FROM (SELECT * FROM events WHERE pixel_id = {p0:String} AND event_time >= {p3:DateTime64(3, 'UTC')} AND event_time < {p4:DateTime64(3, 'UTC')}) AS e
LEFT JOIN hops AS h ON h.old = e.canonical_id
WHERE 1) AS r
GROUP BY GROUPING SETS ((bucket, d0, d1), (d0, d1))

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "UTC"
--   p2   (not referenced)      "USD"
--   p3   DateTime64(3, 'UTC')  "2026-03-01 00:00:00.000"
--   p4   DateTime64(3, 'UTC')  "2026-03-08 00:00:00.000"
--   p5   (not referenced)      "2026-03-01"
--   p6   (not referenced)      "2026-03-07"
