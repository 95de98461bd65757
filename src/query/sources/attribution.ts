import { CONVERSION_TOUCHES } from "../../derived/conversion-touches.js";
import { hourOf } from "../../derived/order-hours.js";
import { hopsCte } from "../../identity/links-sql.js";
import { FRACTIONAL_MODELS, POSITION_ENDS_SHARE, POSITION_MIDDLE_SHARE } from "../attribution-models.js";
import { FIELD_BY_NAME } from "../filters/fields.js";
import { bucketKeySql } from "../time.js";
import { countedOrdersCte, fxCtes, fxJoin, groupBy, ratesFrom, totalsColumn } from "./common.js";
import type { EmitContext } from "./context.js";
import { cellRows } from "./credit-cells.js";
import { type Placeholders, placeholders } from "./facts.js";

/** The placeholders attribution reads: a query's, or the SQL a cells build gives for them. */
export type AttributionPlaceholders = Pick<Placeholders, "pixel" | "start" | "end" | "target" | "tz">;

export const NO_TOUCH = "(none)";
/** The CTE of the orders created in the hours a statement credits one by one (`DerivedTouches.hours`). */
const HOUR_ORDERS = "hour_orders";
export const NOT_SET = "(not set)";

export interface AttributionSpec {
  valueSource: "orders" | "events";
  eventName: string;
  /** SQL over touch alias `t` / conversion alias `o` (orders) or `e` (events), compiled by the caller. */
  convWhere: string;
  touchWhere: string;
  /**
   * Only conversions with a touch in the window: the caller reads no `(none)` row (channel details,
   * whose rows are ad entities). The derived form then joins the conversions to their credited touches
   * with an inner join, which leaves out most conversions before they are grouped.
   */
  touchedOnly?: boolean;
}

/**
 * The conversions of the range and what each is credited to (`credited`: one row per conversion with
 * its value, refunds in the target currency, conversion dimensions, the count of touches in the
 * window and the model's credit column), shared by the aggregate and the credited-orders listing.
 */
export function attributionCtes(
  ctx: EmitContext,
  p: AttributionPlaceholders,
  spec: AttributionSpec,
  options: { derived?: DerivedTouches; build?: boolean },
): { ctes: string[]; credits: Credits } {
  const b = ctx.binder;
  const touchDim = ctx.dimensions.find((d) => d.startsWith("attribution."));
  const convDims = ctx.dimensions.map((d, i) =>
    d.startsWith("attribution.") ? "" : `, toString(${FIELD_BY_NAME.get(d)!.column}) AS d${i}`,
  );
  const windowDays = ctx.attribution.window;
  const lookbackStart =
    windowDays < 0 ? "" : ` AND touch_time > subtractDays(${p.start}, ${b.bind(windowDays, "Int64")})`;
  // Derived touches come with the conversion they belong to (and its time); raw ones with their identity.
  const derived = options.derived !== undefined && spec.valueSource === "orders";
  const windowParam = windowDays < 0 ? "" : b.bind(windowDays, "Int64");
  // A touch counts for a conversion at `ts` when it is at or before it and inside the window.
  const inWindowOf = (ts: string) =>
    `t.touch_time <= ${ts}` +
    (windowDays < 0 ? "" : ` AND t.touch_time > subtractDays(${ts}, ${windowParam})`);
  const inWindow = `t.cid != '' AND ${inWindowOf("c.ts")}`;
  // An event without a value or a currency is worth 0 and needs no rate (a '' currency made the
  // factor 1/0, and 0 × inf a NaN that wiped out its whole group's revenue).
  const valuelessAsUsd = "if(e.value IS NULL OR e.currency = '', 'USD', e.currency)";
  // A build of credit cells keeps each conversion's status and books its refunds itself (per refund day).
  const build = options.build === true;
  // Conversions of some hours only: their orders are found first (`hour_orders`, every version
  // created in those hours) and read by the sort key, with their refunds alone.
  const inHours = derived ? options.derived!.hours : undefined;
  const hours = inHours ? ` AND ${hourOf("o.created_at")} IN ${inHours}` : "";
  const hourOrders = `SELECT order_id FROM ${HOUR_ORDERS}`;
  const conv =
    spec.valueSource === "orders"
      ? `conv AS (
  SELECT o.order_id AS conv_id, o.created_at AS ts, ${derived ? "o.canonical_id" : "if(h.new != '', h.new, o.canonical_id)"} AS cid,
    o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
    toFloat64(o.total_price) AS value, ${build ? "o.financial_status AS status, 0. AS refunded, '' AS refund_missing" : "ifNull(rf.refunded, 0.) AS refunded,\n    ifNull(rf.refund_missing, '') AS refund_missing"}${convDims.join("")}
  FROM co AS o${derived ? "" : " LEFT JOIN hops AS h ON h.old = o.canonical_id"}${build ? "" : `\n  LEFT JOIN (${refundsInTarget(p.pixel, p.target, inHours ? { among: hourOrders } : {})}) AS rf ON rf.order_id = o.order_id`}
  WHERE o.created_at >= ${p.start} AND o.created_at < ${p.end}${hours} AND ${spec.convWhere}
)`
      : `conv AS (
  SELECT e.event_id AS conv_id, e.event_time AS ts, if(h.new != '', h.new, e.canonical_id) AS cid,
    ${valuelessAsUsd} AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k,
    if(e.value IS NULL OR e.currency = '', 0., toFloat64(e.value)) AS value, 0. AS refunded,
    '' AS refund_missing${convDims.join("")}
  FROM (SELECT * FROM events WHERE pixel_id = ${p.pixel} AND name = ${b.bind(spec.eventName, "String")}
    AND event_time >= ${p.start} AND event_time < ${p.end}) AS e
  LEFT JOIN hops AS h ON h.old = e.canonical_id
  WHERE ${spec.convWhere}
)`;
  const tdimExpr = touchDim ? `toString(${FIELD_BY_NAME.get(touchDim)!.column})` : "''";
  const touchCtes = derived
    ? derivedTouchCtes(p, spec, tdimExpr, lookbackStart, options.derived!)
    : [
        `tp AS (
  SELECT if(h.new != '', h.new, t.canonical_id) AS cid, t.touch_time AS touch_time, t.event_id AS event_id, ${tdimExpr} AS tdim
  FROM (SELECT * FROM touchpoints WHERE pixel_id = ${p.pixel} AND touch_time < ${p.end}${lookbackStart}) AS t
  LEFT JOIN hops AS h ON h.old = t.canonical_id
  WHERE ${spec.touchWhere}
)`,
      ];
  const carried = ctx.dimensions
    .map((d, i) => (d.startsWith("attribution.") ? "" : `, any(c.d${i}) AS d${i}`))
    .join("");
  // Only the model's own credit is aggregated (CREDIT_AGGREGATES): the others cost as much again
  // over every touch.
  const model = ctx.attribution.model;
  const fractional = FRACTIONAL_MODELS.has(model) && touchDim !== undefined;
  // Without an attribution dimension only "has a touch" matters: the count alone, whatever the model.
  const aggregate = touchDim ? CREDIT_AGGREGATES[model] : undefined;
  const modelCredit = (cond: string) =>
    aggregate ? `,\n    ${aggregate.sql(cond)} AS ${aggregate.col}` : "";
  // fx_k (the ASOF key of the target rate) is restated after the join instead of carried through it:
  // a property test saw, rarely, the target rate reported missing for a day that had one, and a
  // constant left column coming out of the join as its default (0) is the suspect.
  const credited = derived
    ? // Derived touches carry their conversion (and its time): credit is aggregated over the touches
      // alone, then joined one to one to the conversions — no grouping of every conversion.
      `tagg AS (
  SELECT ${conversionKey("t.conv_id", "t.conv_ts")} AS conv_key, countIf(${inWindowOf("t.conv_ts")}) AS touches${modelCredit(inWindowOf("t.conv_ts"))}
  FROM tp AS t
  GROUP BY t.conv_id, t.conv_ts
),
credited AS (
  SELECT c.conv_id AS conv_id, c.ts AS ts, c.cur AS cur, c.fx_day AS fx_day, toUInt8(1) AS fx_k,
    c.value AS value, c.refunded AS refunded, c.refund_missing AS refund_missing${build ? ", c.status AS status" : ""}${ctx.dimensions
      .map((d, i) => (d.startsWith("attribution.") ? "" : `, c.d${i} AS d${i}`))
      .join("")},
    a.touches AS touches${aggregate ? `, a.${aggregate.col} AS ${aggregate.col}` : ""}
  FROM conv AS c ${spec.touchedOnly ? "INNER" : "LEFT"} JOIN tagg AS a ON a.conv_key = ${conversionKey("c.conv_id", "c.ts")}${spec.touchedOnly ? " AND a.touches > 0" : ""}
)`
    : `credited AS (
  SELECT c.conv_id AS conv_id, any(c.ts) AS ts, any(c.cur) AS cur, any(c.fx_day) AS fx_day, toUInt8(1) AS fx_k,
    any(c.value) AS value, any(c.refunded) AS refunded, any(c.refund_missing) AS refund_missing${carried},
    countIf(${inWindow}) AS touches${modelCredit(inWindow)}
  FROM conv AS c LEFT JOIN tp AS t ON t.cid = c.cid
  GROUP BY c.conv_id${spec.touchedOnly ? "\n  HAVING touches > 0" : ""}
)`;
  const label = (x: string) => `if(${x} = '', '${NOT_SET}', ${x})`;
  const credits: Credits = !touchDim
    ? { labels: "['']" }
    : fractional
      ? fractionalCredits(model, label, () => b.bind(ctx.attribution.halfLifeDays, "Float64"))
      : model === "any_click"
        ? { labels: `if(touches = 0, ['${NO_TOUCH}'], arrayMap(x -> ${label("x")}, any_dims))` }
        : { labels: `[if(touches = 0, '${NO_TOUCH}', ${label(aggregate!.col)})]` };
  const ctes = [
    ...(build ? [] : [fxCtes(p.target, ratesFrom(ctx.binder, ctx.range.start))]),
    ...(inHours
      ? [
          `${HOUR_ORDERS} AS (
  SELECT DISTINCT order_id FROM orders
  WHERE pixel_id = ${p.pixel} AND created_at >= ${p.start} AND created_at < ${p.end} AND ${hourOf("created_at")} IN ${inHours}
)`,
        ]
      : []),
    countedOrdersCte(
      p.pixel,
      ctx.orderSettings,
      b,
      ctx.timezone,
      ctx.needsCustomerNumbering,
      spec.valueSource !== "orders"
        ? undefined
        : inHours
          ? { rows: `order_id IN (${hourOrders})` }
          : { created: [{ start: p.start, end: p.end }] },
    ),
    ...(derived ? [] : [hopsCte(p.pixel)]),
    conv,
    ...touchCtes,
    credited,
  ];
  return { ctes, credits };
}

/**
 * What a conversion of `credited` is credited to: `labels` (an array of values, each credited the
 * whole conversion) or `pairs` (value, share) adding up to 1, with `columns` the pairs read.
 */
type Credits = { labels: string } | { pairs: string; columns: string };

/**
 * The share of a conversion each touch of its rank-ordered `path` gets (src/query/attribution-models.ts
 * is the same arithmetic in TypeScript). time_decay weighs relative to the latest touch so that no
 * weight underflows to 0 on a long window.
 */
function fractionalCredits(model: string, label: (x: string) => string, halfLife: () => string): Credits {
  const pairs = (share: string) =>
    `if(length(path) = 0, [('${NO_TOUCH}', 1.)], arrayMap((x, i) -> (${label("x.3")}, ${share}), path, arrayEnumerate(path)))`;
  if (model === "linear") return { pairs: pairs("1 / length(path)"), columns: "" };
  if (model === "position_based")
    return {
      pairs: pairs(
        `multiIf(length(path) = 1, 1., length(path) = 2, 0.5, i = 1 OR i = length(path), ${POSITION_ENDS_SHARE}, ${POSITION_MIDDLE_SHARE} / (length(path) - 2))`,
      ),
      columns: "",
    };
  // Only time_decay binds the half-life: the other models' SQL (and cache entries) do not depend on it.
  const h = halfLife();
  const weight = (x: string) =>
    `pow(2, (toUnixTimestamp64Milli(${x}.1) - toUnixTimestamp64Milli(path[-1].1)) / (${h} * 86400000))`;
  return {
    pairs: pairs(`${weight("x")} / decay_sum`),
    columns: `, arraySum(arrayMap(x -> ${weight("x")}, path)) AS decay_sum`,
  };
}

/**
 * What each model aggregates over a conversion's touches in the window. Touches at the same instant
 * rank by event id, so credit never depends on read order; a fractional model keeps the whole path,
 * each distinct touch once (a touch row stored twice and not yet merged counts once).
 */
const PATH = {
  col: "path",
  sql: (c: string) => `arraySort(groupUniqArrayIf((t.touch_time, t.event_id, t.tdim), ${c}))`,
};
const CREDIT_AGGREGATES: Record<string, { col: string; sql: (cond: string) => string }> = {
  first_click: { col: "first_dim", sql: (c) => `argMinIf(t.tdim, (t.touch_time, t.event_id), ${c})` },
  last_click: { col: "last_dim", sql: (c) => `argMaxIf(t.tdim, (t.touch_time, t.event_id), ${c})` },
  any_click: { col: "any_dims", sql: (c) => `groupUniqArrayIf(t.tdim, ${c})` },
  linear: PATH,
  time_decay: PATH,
  position_based: PATH,
};

/**
 * One String key for (conversion id, conversion time). The time is in it because the derived row of
 * an order whose time changed stays under the earlier time (part of the table's sort key) beside the
 * new one, and only the row of its current time may match. The engine joins 200k–900k conversions on
 * this one column ~20 % faster than on the (String, DateTime64) pair (measured at 100M events).
 */
const conversionKey = (id: string, ts: string) =>
  `concat(${id}, '@', toString(toUnixTimestamp64Milli(${ts})))`;

/**
 * Attribution (docs/query.md): each conversion in the range is joined to the touches of its identity
 * (both resolved one hop through merges) that happened at or before it and inside the window.
 * first_click credits the earliest such touch, last_click the latest, any_click every distinct
 * dimension value touched, and linear / time_decay / position_based spread the conversion over its
 * touches in shares adding up to 1; a conversion without a touch is credited to `(none)` so totals
 * reconcile. Dimensions: at most one attribution field (the credited touch's value) and any orders
 * fields (the conversion's own). Without an attribution dimension, attributed = has a touch.
 */
export function emitAttribution(
  ctx: EmitContext,
  spec: AttributionSpec,
  options: { derived?: DerivedTouches; cells?: CellsRead } = {},
): string {
  const p = placeholders(ctx);
  const cells = options.cells;
  // From the cells alone (nothing past the watermark), or the cells but for the fresh hours, whose
  // conversions are credited one by one from the derived touches.
  const perConversion = cells === undefined || cells.hours !== null;
  const derived = cells
    ? { fresh: options.derived?.fresh ?? null, hours: cells.hours ?? undefined }
    : options.derived;
  const { ctes, credits } = perConversion
    ? attributionCtes(ctx, p, spec, derived ? { derived } : {})
    : {
        ctes: [fxCtes(p.target, ratesFrom(ctx.binder, ctx.range.start))],
        credits: { labels: "" } as Credits,
      };
  const shared = "pairs" in credits;
  const touchDim = ctx.dimensions.some((d) => d.startsWith("attribution."));
  const fx = fxJoin("q", p.target);
  const dimSelect = ctx.dimensions.map((d, i) =>
    d.startsWith("attribution.") ? `r.credit AS d${i}` : `r.d${i} AS d${i}`,
  );
  const dimKeys = ctx.dimensions.map((_, i) => `d${i}`);
  const attributed = touchDim ? "1" : "r.touches > 0";
  // Under a fractional model a row holds a share of its conversion: counted and valued by it.
  const times = shared ? " * r.share" : "";
  // Conversions are summed per bucket, dimension values, currency and day first, and each sum is
  // converted once: a rate applies to a whole day of one currency, so this is the same figure as
  // converting each conversion, at a few thousand rows instead of every conversion.
  const perDay = [
    `${bucketKeySql("r.ts", ctx.granularity, p.tz)} AS bucket`,
    ...dimSelect,
    "r.cur AS cur",
    "r.fx_day AS fx_day",
    "toUInt8(1) AS fx_k",
    // Beside the cells' rows (Float64) a count is a Float64 too: the engine unites no other way.
    shared
      ? `sumIf(r.share, ${attributed}) AS attributed`
      : cells
        ? `toFloat64(countIf(${attributed})) AS attributed`
        : `countIf(${attributed}) AS attributed`,
    `sumIf(r.value${times}, ${attributed}) AS value`,
    `sumIf(r.refunded${times}, ${attributed}) AS refunded`,
    "count() AS conversions",
    "minIf(r.refund_missing, r.refund_missing != '') AS refund_missing",
  ];
  const perDayKeys = [...(ctx.granularity === "none" ? [] : ["bucket"]), ...dimKeys, "cur", "fx_day"];
  const rows = [
    ...(perConversion
      ? [
          `SELECT ${perDay.join(", ")}
  FROM (${creditRows(credits)}) AS r
  GROUP BY ${perDayKeys.join(", ")}`,
        ]
      : []),
    ...(cells ? [cellRows(ctx, p, cells.shape, cells.hours, spec.touchedOnly === true)] : []),
  ];
  const select = [
    // With granularity none the bucket is a constant, not a grouping key (see groupBy).
    ctx.granularity === "none" ? "any(q.bucket) AS bucket" : "q.bucket AS bucket",
    ...dimKeys.map((k) => `q.${k} AS ${k}`),
    "toFloat64(sum(q.attributed)) AS attr_orders",
    // Net revenue in the target currency: the orders at their day's rate, each refund at its own day's.
    `sum(q.value * ${fx.factor} - q.refunded) AS attr_revenue`,
    "toFloat64(sum(q.conversions)) AS conversions",
    `arrayMin(arrayFilter(x -> x != '', [${fx.missing}, minIf(q.refund_missing, q.refund_missing != '')])) AS fx_missing`,
    ...totalsColumn(ctx.granularity),
  ];
  return `WITH ${ctes.join(",\n")}
SELECT ${select.join(",\n  ")}
FROM (
  ${rows.join("\n  UNION ALL\n  ")}
) AS q
${fx.joins}
${groupBy(ctx.granularity, dimKeys)}`;
}

/**
 * Reading a shape's credit cells (sources/credit-cells.ts): `shape`, the placeholder of its key, and
 * `hours`, the placeholder of the UTC hours whose conversions are credited one by one instead (those
 * with rows past the watermark), or null when there are none.
 */
export interface CellsRead {
  shape: string;
  hours: string | null;
}

/** One row per conversion and credited value: `credit` (the value) and, for pairs, `share`. */
function creditRows(credits: Credits): string {
  return "pairs" in credits
    ? `SELECT *${credits.columns}, arrayJoin(${credits.pairs}) AS cw, cw.1 AS credit, cw.2 AS share FROM credited`
    : `SELECT *, arrayJoin(${credits.labels}) AS credit FROM credited`;
}

/** `creditRows` with a `share` on every row (1 where each value is credited the whole conversion). */
export function creditRowsWithShare(credits: Credits): string {
  return "pairs" in credits
    ? creditRows(credits)
    : `SELECT *, arrayJoin(${credits.labels}) AS credit, toFloat64(1) AS share FROM credited`;
}

/**
 * The latest conversions (orders) credited to one value of the attribution dimension, a page of
 * them: each with its net value in the target currency and the share of it credited to the value
 * (1 under first_click, last_click and any_click), plus `total`, the number of such orders. Like
 * the aggregate, it has a derived form (`options.derived`) that answers alike.
 */
export function emitCreditedOrders(
  ctx: EmitContext,
  spec: AttributionSpec,
  page: { value: string; limit: number; offset: number },
  options: { derived?: DerivedTouches | undefined } = {},
): string {
  const p = placeholders(ctx);
  const b = ctx.binder;
  const { ctes, credits } = attributionCtes(ctx, p, spec, options);
  const fx = fxJoin("q", p.target);
  const rows = creditRowsWithShare(credits);
  return `WITH ${ctes.join(",\n")}
SELECT q.conv_id AS order_id, any(q.ts) AS created_at, any(q.value * ${fx.factor} - q.refunded) AS value,
  any(q.credit) AS credit, count() OVER () AS total,
  arrayMin(arrayFilter(x -> x != '', [${fx.missing}, any(q.refund_missing)])) AS fx_missing
FROM (
  SELECT r.conv_id AS conv_id, any(r.ts) AS ts, any(r.cur) AS cur, any(r.fx_day) AS fx_day, toUInt8(1) AS fx_k,
    any(r.value) AS value, any(r.refunded) AS refunded, any(r.refund_missing) AS refund_missing, sum(r.share) AS credit
  FROM (${rows}) AS r
  WHERE r.credit = ${b.bind(page.value, "String")}
  GROUP BY r.conv_id
) AS q
${fx.joins}
GROUP BY q.conv_id
ORDER BY created_at DESC, order_id DESC
LIMIT ${b.bind(page.limit, "Int64")} OFFSET ${b.bind(page.offset, "Int64")}`;
}

/**
 * Reading touches from `conversion_touches`: `fresh` is the placeholder of the stored ids past its
 * watermark (the service binds them), or null when nothing is past it — then the table alone answers.
 * `hours` (a set of UTC hours in SQL) narrows the conversions to those created in these hours: the
 * part of a credit-cells answer its cells cannot give, and the hours a cells build rebuilds.
 */
export interface DerivedTouches {
  fresh: string | null;
  hours?: string;
}

/**
 * Touches from the derived `conversion_touches` (docs/derived-tables.md), one row per touch and
 * conversion (`tp`: conv_id, conv_ts, touch_time, event_id, tdim). Conversions of the identities with
 * a row ingested after the table's watermark — their stored ids are bound as `fresh` when the
 * statement runs — are answered from raw touches instead (`rc`), so the answer equals the raw path's
 * whatever the derived table has caught up with. With `fresh` null (caught up) there is no raw
 * branch: its scans of orders and touches cost ~15–20 ms even when they find nothing. The fresh
 * touches are picked in PREWHERE: a hundred ids meet most granules of `touchpoints` (each id in every
 * monthly part), and reading the other columns of all their rows before filtering took ~100 ms at
 * 100M events instead of ~15.
 */
function derivedTouchCtes(
  p: AttributionPlaceholders,
  spec: AttributionSpec,
  tdimExpr: string,
  lookbackStart: string,
  derived: DerivedTouches,
): string[] {
  const { fresh } = derived;
  const hours = derived.hours ? ` AND ${hourOf("created_at")} IN ${derived.hours}` : "";
  const inRange = `created_at >= ${p.start} AND created_at < ${p.end}${hours}`;
  const stored = `SELECT d.order_id AS conv_id, d.created_at AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, ${tdimExpr} AS tdim
  FROM (SELECT * FROM ${CONVERSION_TOUCHES} FINAL WHERE pixel_id = ${p.pixel} AND ${inRange}) AS d
  ARRAY JOIN d.touches AS t
  WHERE ${fresh === null ? "" : "d.order_id NOT IN (SELECT conv_id FROM rc) AND "}${spec.touchWhere}`;
  if (fresh === null) return [`tp AS (\n  ${stored}\n)`];
  return [
    // Only the fresh ids are ever resolved here: their merges, read by the sort key.
    `fresh_hops AS (
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = ${p.pixel} AND alias_type = 'canonical' AND alias_value IN ${fresh} GROUP BY alias_value
)`,
    `rc AS (
  SELECT o.order_id AS conv_id, o.created_at AS conv_ts, if(h.new != '', h.new, o.canonical_id) AS cid
  FROM (SELECT order_id, created_at, canonical_id FROM orders FINAL
    WHERE pixel_id = ${p.pixel}${derived.hours ? ` AND order_id IN (SELECT order_id FROM ${HOUR_ORDERS})` : ""} AND ${inRange} AND canonical_id IN ${fresh}) AS o
  LEFT JOIN fresh_hops AS h ON h.old = o.canonical_id
)`,
    `tp AS (
  SELECT rc.conv_id AS conv_id, rc.conv_ts AS conv_ts, t.touch_time AS touch_time, t.event_id AS event_id, ${tdimExpr} AS tdim
  FROM (SELECT * FROM touchpoints PREWHERE canonical_id IN ${fresh} WHERE pixel_id = ${p.pixel}
    AND touch_time < ${p.end}${lookbackStart}) AS t
  LEFT JOIN fresh_hops AS h ON h.old = t.canonical_id
  INNER JOIN rc ON rc.cid = if(h.new != '', h.new, t.canonical_id)
  WHERE ${spec.touchWhere}
  UNION ALL
  ${stored}
)`,
  ];
}

/**
 * Each order's refunds summed in the target currency, every refund converted at the rate of its own
 * UTC day in its own currency — as the refunds source converts them — with the first refund day
 * without a rate (`refund_missing`, '' when none). `orderId` (a placeholder) narrows it to one order,
 * `among` (a subquery of order ids) to those.
 */
export function refundsInTarget(
  pixel: string,
  target: string,
  only: { orderId?: string; among?: string } = {},
): string {
  const fx = fxJoin("q", target);
  const narrowed = only.orderId
    ? ` AND order_id = ${only.orderId}`
    : only.among
      ? ` AND order_id IN (${only.among})`
      : "";
  return `SELECT q.order_id AS order_id, sum(toFloat64(q.amount) * ${fx.factor}) AS refunded, ${fx.missing} AS refund_missing
    FROM (SELECT order_id, amount, currency AS cur, toDate(created_at) AS fx_day, toUInt8(1) AS fx_k
      FROM refunds FINAL WHERE pixel_id = ${pixel}${narrowed}) AS q
    ${fx.joins.replace("\n", "\n    ")}
    GROUP BY q.order_id`;
}
