/**
 * Hand-written floor SQL for the shapes of bench:query: the same answers as the service (checked by
 * the bench), written directly for each shape — no planner, no grouping sets, no generic currency
 * target, no cache — so the ratio shows what the engine's generality costs.
 */
export interface Floor {
  sql: string;
  params: Record<string, unknown>;
}

export interface FloorRange {
  pixel: string;
  start: Date;
  end: Date;
}

const RATES =
  "rates AS (SELECT currency, date, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates GROUP BY currency, date)";
const HOPS =
  "hops AS (SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links WHERE pixel_id = {p:String} AND alias_type = 'canonical' GROUP BY old)";

/** Attributed orders and USD net revenue by a touch column for one model and window (days, -1 = unlimited). */
// The path is built for every model (unused by the single-touch ones): the floor stays one query.
export function attributionFloor(r: FloorRange, model: string, window: number, column = "channel"): Floor {
  const win = window < 0 ? "" : " AND t.touch_time > subtractDays(c.ts, {w:Int64})";
  // Fractional models: (value, share) pairs over the time-ordered path (half-life 7 days).
  const shares: Record<string, string> = {
    linear: "arrayMap(x -> (x.2, 1 / n), path)",
    position_based:
      "arrayMap((x, i) -> (x.2, multiIf(n = 1, 1., n = 2, 0.5, i = 1 OR i = n, 0.4, 0.2 / (n - 2))), path, arrayEnumerate(path))",
    time_decay:
      "arrayMap(x -> (x.2, exp2((toUnixTimestamp64Milli(x.1) - toUnixTimestamp64Milli(path[-1].1)) / 604800000) / arraySum(arrayMap(y -> exp2((toUnixTimestamp64Milli(y.1) - toUnixTimestamp64Milli(path[-1].1)) / 604800000), path))), path)",
  };
  const pick = shares[model]
    ? `if(n = 0, [('(none)', 1.)], ${shares[model]})`
    : model === "any_click"
      ? "arrayMap(x -> (x, 1.), if(n = 0, ['(none)'], groupUniqArrayIf(dim, ok)))"
      : `[(if(n = 0, '(none)', ${model === "first_click" ? "argMinIf" : "argMaxIf"}(dim, touch_time, ok)), 1.)]`;
  const sql = `WITH ${HOPS}, ${RATES},
conv AS (
  SELECT o.order_id AS id, o.created_at AS ts, if(h.new != '', h.new, o.canonical_id) AS cid,
    (toFloat64(o.total_price) - ifNull(rf.refunded, 0)) / if(o.currency = 'USD', 1., x.rate) AS usd
  FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p:String} AND financial_status NOT IN ('pending', 'voided')
        AND created_at >= {s:DateTime64(3, 'UTC')} AND created_at < {e:DateTime64(3, 'UTC')}) AS o
  LEFT JOIN hops AS h ON h.old = o.canonical_id
  LEFT JOIN (SELECT order_id, toFloat64(sum(amount)) AS refunded FROM refunds FINAL WHERE pixel_id = {p:String} GROUP BY order_id) AS rf ON rf.order_id = o.order_id
  ASOF LEFT JOIN rates AS x ON x.currency = o.currency AND x.date <= toDate(o.created_at)
),
tp AS (
  SELECT if(h.new != '', h.new, t.canonical_id) AS cid, t.touch_time AS touch_time, if(t.${column} = '', '(not set)', t.${column}) AS dim
  FROM touchpoints AS t LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE t.pixel_id = {p:String} AND t.touch_time < {e:DateTime64(3, 'UTC')}
)
SELECT credit.1 AS dim, sum(credit.2) AS orders, round(sum(usd * credit.2), 2) AS revenue FROM (
  SELECT id, any(usd) AS usd, countIf(ok) AS n, arraySort(groupArrayIf((touch_time, dim), ok)) AS path, arrayJoin(${pick}) AS credit
  FROM (SELECT c.id AS id, c.usd AS usd, t.dim AS dim, t.touch_time AS touch_time,
          t.cid != '' AND t.touch_time <= c.ts${win} AS ok
        FROM conv AS c LEFT JOIN tp AS t ON t.cid = c.cid)
  GROUP BY id
) GROUP BY dim ORDER BY dim`;
  return { sql, params: { p: r.pixel, s: r.start, e: r.end, w: window } };
}

/** Daily orders, revenue, refunds and spend in EUR, each amount at its own day's rates. */
export function timeSeriesFloors(r: FloorRange): Floor[] {
  const conv = (cur: string) =>
    `if(${cur} = 'EUR', 1., if(te.rate = 0, nan, te.rate) / if(${cur} = 'USD', 1., x.rate))`;
  const eur = `eur AS (SELECT toUInt8(1) AS k, date, rate FROM rates WHERE currency = 'EUR')`;
  const params = {
    p: r.pixel,
    s: r.start,
    e: r.end,
    sd: r.start.toISOString().slice(0, 10),
    ed: new Date(r.end.getTime() - 1).toISOString().slice(0, 10),
  };
  return [
    {
      sql: `WITH ${RATES}, ${eur}
SELECT toDate(o.created_at) AS d, count() AS orders, sum(toFloat64(o.total_price) * ${conv("o.currency")}) AS revenue,
  uniqExact(if(o.customer_id != '', o.customer_id, o.order_id)) AS customers
FROM (SELECT *, toUInt8(1) AS k FROM orders FINAL WHERE pixel_id = {p:String} AND financial_status NOT IN ('pending', 'voided')
      AND created_at >= {s:DateTime64(3, 'UTC')} AND created_at < {e:DateTime64(3, 'UTC')}) AS o
ASOF LEFT JOIN rates AS x ON x.currency = o.currency AND x.date <= toDate(o.created_at)
ASOF LEFT JOIN eur AS te ON te.k = o.k AND te.date <= toDate(o.created_at)
GROUP BY d ORDER BY d`,
      params,
    },
    {
      sql: `WITH ${RATES}, ${eur}
SELECT toDate(rf.created_at) AS d, sum(toFloat64(rf.amount) * ${conv("rf.currency")}) AS refunds
FROM (SELECT *, toUInt8(1) AS k FROM refunds FINAL WHERE pixel_id = {p:String}
      AND created_at >= {s:DateTime64(3, 'UTC')} AND created_at < {e:DateTime64(3, 'UTC')}) AS rf
INNER JOIN (SELECT order_id FROM orders FINAL WHERE pixel_id = {p:String} AND financial_status NOT IN ('pending', 'voided')) AS o ON o.order_id = rf.order_id
ASOF LEFT JOIN rates AS x ON x.currency = rf.currency AND x.date <= toDate(rf.created_at)
ASOF LEFT JOIN eur AS te ON te.k = rf.k AND te.date <= toDate(rf.created_at)
GROUP BY d ORDER BY d`,
      params,
    },
    {
      sql: `WITH ${RATES}, ${eur}
SELECT a.date AS d, sum(toFloat64(a.spend) * ${conv("a.currency")}) AS spend
FROM (SELECT *, toUInt8(1) AS k FROM ad_metrics_daily FINAL WHERE pixel_id = {p:String} AND level = 'ad'
      AND date >= {sd:Date} AND date <= {ed:Date}) AS a
ASOF LEFT JOIN rates AS x ON x.currency = a.currency AND x.date <= a.date
ASOF LEFT JOIN eur AS te ON te.k = a.k AND te.date <= a.date
GROUP BY d ORDER BY d`,
      params,
    },
  ];
}

/** A page of 50 ads by last update with USD spend, clicks and impressions, and last-click 30-day orders and revenue. */
export function channelFloors(r: FloorRange, adIds: string[]): Floor[] {
  const params = {
    p: r.pixel,
    s: r.start,
    e: r.end,
    sd: r.start.toISOString().slice(0, 10),
    ed: new Date(r.end.getTime() - 1).toISOString().slice(0, 10),
    ids: adIds,
    w: 30,
  };
  return [
    {
      sql: `SELECT entity_id, name, platform, status, currency, daily_budget, source_updated_at, count() OVER () AS total
FROM ad_entities FINAL WHERE pixel_id = {p:String} AND level = 'ad' ORDER BY source_updated_at DESC, platform, entity_id LIMIT 50`,
      params,
    },
    {
      sql: `WITH ${RATES}
SELECT a.entity_id AS id, sum(toFloat64(a.spend) / if(a.currency = 'USD', 1., x.rate)) AS spend, sum(a.clicks) AS clicks, sum(a.impressions) AS impressions
FROM (SELECT * FROM ad_metrics_daily FINAL WHERE pixel_id = {p:String} AND level = 'ad' AND entity_id IN {ids:Array(String)}
      AND date >= {sd:Date} AND date <= {ed:Date}) AS a
ASOF LEFT JOIN rates AS x ON x.currency = a.currency AND x.date <= a.date
GROUP BY id`,
      params,
    },
    attributionFloor(r, "last_click", 30, "ad_id"),
  ];
}

/** Monthly cohorts of first counted orders: retained customers, orders and USD revenue per period. */
export function cohortFloor(r: FloorRange, periods: number): Floor {
  return {
    sql: `WITH ${RATES},
o AS (SELECT order_id, created_at, currency, total_price,
        if(customer_id != '', concat('c:', customer_id), if(customer_email_hash != '', concat('e:', customer_email_hash), concat('o:', order_id))) AS ck
      FROM orders FINAL WHERE pixel_id = {p:String} AND financial_status NOT IN ('pending', 'voided')),
c AS (SELECT ck, toStartOfMonth(min(created_at)) AS cohort FROM o GROUP BY ck
      HAVING min(created_at) >= {s:DateTime64(3, 'UTC')} AND min(created_at) < {e:DateTime64(3, 'UTC')})
SELECT c.cohort AS cohort, dateDiff('month', c.cohort, toStartOfMonth(o.created_at)) AS period, uniqExact(o.ck) AS retained, count() AS orders,
  sum(toFloat64(o.total_price) / if(o.currency = 'USD', 1., x.rate)) AS revenue
FROM o INNER JOIN c ON c.ck = o.ck
ASOF LEFT JOIN rates AS x ON x.currency = o.currency AND x.date <= toDate(o.created_at)
WHERE period < {n:Int64}
GROUP BY cohort, period ORDER BY cohort, period`,
    params: { p: r.pixel, s: r.start, e: r.end, n: periods },
  };
}
