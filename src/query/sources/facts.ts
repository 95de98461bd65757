import type { Binder } from "../binder.js";
import { FIELD_BY_NAME } from "../filters/fields.js";
import type { SourceName } from "../measures.js";
import { bucketKeySql } from "../time.js";
import { countedOrdersCte, fxCtes, fxJoin, groupBy, hopsCte, totalsColumn } from "./common.js";
import type { EmitContext } from "./context.js";

/**
 * Fact sources of the general query. Each has a row subquery (filtered to the range and the
 * request's filter, exposing `ts`, `cur`, `fx_day`, `fx_k`, the dimension columns `d0…` and the
 * amounts) and its base aggregates over those rows, money converted per row.
 */
interface FactSource {
  /** `bases`: the aggregates the statement computes, so a source joins only what they read. */
  ctes(ctx: EmitContext, p: Placeholders, bases: readonly string[]): string[];
  rows(ctx: EmitContext, p: Placeholders, dims: string, where: string, bases: readonly string[]): string;
  bases: Record<string, (money: (col: string) => string) => string>;
}

export interface Placeholders {
  pixel: string;
  tz: string;
  target: string;
  start: string;
  end: string;
  startDate: string;
  endDate: string;
}

export function placeholders(ctx: EmitContext): Placeholders {
  const b: Binder = ctx.binder;
  return {
    pixel: b.bind(ctx.pixelId, "String"),
    tz: b.bind(ctx.timezone, "String"),
    target: b.bind(ctx.currency, "String"),
    start: b.bind(ctx.range.start, "DateTime64(3, 'UTC')"),
    end: b.bind(ctx.range.end, "DateTime64(3, 'UTC')"),
    startDate: b.bind(ctx.range.startDate, "Date"),
    endDate: b.bind(ctx.range.endDate, "Date"),
  };
}

/** `only`: the orders the source can use — created in the range, or refunded in it. */
const counted = (ctx: EmitContext, p: Placeholders, only: "created" | "refunded") => {
  const range = { start: p.start, end: p.end };
  return [
    countedOrdersCte(
      p.pixel,
      ctx.orderSettings,
      ctx.binder,
      ctx.timezone,
      ctx.needsCustomerNumbering,
      only === "created" ? { created: range } : { refunded: range },
    ),
  ];
};

const FACTS: Record<Exclude<SourceName, "attribution">, FactSource> = {
  orders: {
    // Units need the order's lines: a join that doubles the statement's time, so only when asked.
    ctes: (ctx, p, bases) => [
      ...counted(ctx, p, "created"),
      ...(bases.includes("orders_units")
        ? [
            `lines AS (SELECT order_id, version, sum(quantity) AS units FROM order_lines WHERE pixel_id = ${p.pixel} GROUP BY order_id, version)`,
          ]
        : []),
    ],
    rows: (_ctx, p, dims, where, bases) => {
      const units = bases.includes("orders_units");
      return `SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k${dims},
  o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
  o.customer_order_number${units ? ", l.units AS units" : ""}
FROM co AS o${units ? " LEFT JOIN lines AS l ON l.order_id = o.order_id AND l.version = o.version" : ""}
WHERE o.created_at >= ${p.start} AND o.created_at < ${p.end} AND ${where}`;
    },
    bases: {
      orders_count: () => "toFloat64(count())",
      orders_total: (m) => m("total_price"),
      orders_subtotal: (m) => m("subtotal_price"),
      orders_discounts: (m) => m("total_discounts"),
      orders_shipping: (m) => m("total_shipping"),
      orders_tax: (m) => m("total_tax"),
      orders_units: () => "toFloat64(sum(r.units))",
      orders_first: () => "toFloat64(countIf(r.customer_order_number = 1))",
      customers_unique: () => "toFloat64(uniqExact(r.customer_key))",
      customers_new: () => "toFloat64(uniqExactIf(r.customer_key, r.customer_order_number = 1))",
      customers_returning: () => "toFloat64(uniqExactIf(r.customer_key, r.customer_order_number > 1))",
    },
  },
  refunds: {
    // Booked at the order's date, a refund counts when its order was created in the range; booked at
    // its own date, when the refund was created in the range (its order may be older).
    ctes: (ctx, p) =>
      counted(ctx, p, ctx.orderSettings.refundDateAttribution === "order_date" ? "created" : "refunded"),
    rows: (ctx, p, dims, where) => {
      const booked =
        ctx.orderSettings.refundDateAttribution === "order_date" ? "o.created_at" : "rf.created_at";
      return `SELECT ${booked} AS ts, rf.currency AS cur, toDate(rf.created_at) AS fx_day, toUInt8(1) AS fx_k${dims}, rf.amount
FROM (SELECT * FROM refunds FINAL WHERE pixel_id = ${p.pixel}) AS rf INNER JOIN co AS o ON o.order_id = rf.order_id
WHERE ${booked} >= ${p.start} AND ${booked} < ${p.end} AND ${where}`;
    },
    bases: {
      refunds_amount: (m) => m("amount"),
      refunds_count: () => "toFloat64(count())",
    },
  },
  order_costs: {
    ctes: (ctx, p) => counted(ctx, p, "created"),
    rows: (
      _ctx,
      p,
      dims,
      where,
    ) => `SELECT o.created_at AS ts, oc.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k${dims},
  oc.cogs, oc.handling, oc.shipping, oc.gateway, oc.order_level
FROM (SELECT * FROM order_costs FINAL WHERE pixel_id = ${p.pixel}) AS oc INNER JOIN co AS o ON o.order_id = oc.order_id
WHERE o.created_at >= ${p.start} AND o.created_at < ${p.end} AND ${where}`,
    bases: {
      cost_cogs: (m) => m("cogs"),
      cost_handling: (m) => m("handling"),
      cost_shipping: (m) => m("shipping"),
      cost_gateway: (m) => m("gateway"),
      cost_order_level: (m) => m("order_level"),
    },
  },
  ads: {
    ctes: () => [],
    // Each ad account is read at the deepest level it reports, so levels never double count.
    rows: (
      _ctx,
      p,
      dims,
      where,
    ) => `SELECT toDateTime64(toDateTime(c.date, ${p.tz}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k${dims},
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = ${p.pixel} AND date >= ${p.startDate} AND date <= ${p.endDate}
) AS c
WHERE c.level = c.deepest AND ${where}`,
    bases: {
      ads_spend: (m) => m("spend"),
      ads_impressions: () => "toFloat64(sum(r.impressions))",
      ads_clicks: () => "toFloat64(sum(r.clicks))",
      ads_conversions: () => "toFloat64(sum(r.conversions))",
      ads_conversion_value: (m) => m("conversion_value"),
    },
  },
  events: {
    ctes: (_ctx, p) => [hopsCte(p.pixel)],
    rows: (
      _ctx,
      p,
      dims,
      where,
    ) => `SELECT e.event_time AS ts, e.currency AS cur, toDate(e.event_time) AS fx_day, toUInt8(1) AS fx_k${dims},
  e.name AS name, e.value AS value, if(h.new != '', h.new, e.canonical_id) AS cid
FROM (SELECT * FROM events WHERE pixel_id = ${p.pixel} AND event_time >= ${p.start} AND event_time < ${p.end}) AS e
LEFT JOIN hops AS h ON h.old = e.canonical_id
WHERE ${where}`,
    bases: {
      events_count: () => "toFloat64(count())",
      events_identities: () => "toFloat64(uniqExact(r.cid))",
      events_page_views: () => "toFloat64(countIf(r.name = 'page_view'))",
      events_purchases: () => "toFloat64(countIf(r.name = 'purchase'))",
      events_purchasers: () => "toFloat64(uniqExactIf(r.cid, r.name = 'purchase'))",
      // A value without a currency cannot be converted and is left out (documented).
      events_value: (m) => `sumIf(toFloat64(r.value) * ${m("")}, r.value IS NOT NULL AND r.cur != '')`,
    },
  },
};

export type FactSourceName = keyof typeof FACTS;

/** Dimension columns `d0…` selected in a row subquery, from the catalog's column expressions. */
export function dimensionColumns(dimensions: readonly string[]): string {
  return dimensions.map((d, i) => `, toString(${FIELD_BY_NAME.get(d)!.column}) AS d${i}`).join("");
}

/** The statement of one fact source: per bucket (and dimension values), plus per-dimension totals. */
export function emitFactSource(
  source: FactSourceName,
  bases: readonly string[],
  ctx: EmitContext,
  where: string,
): string {
  const p = placeholders(ctx);
  const fact = FACTS[source];
  const fx = fxJoin("r", p.target);
  // A money base converts each row: `factor` alone when called with "" (events_value builds its own).
  let converts = false;
  const money = (col: string) => {
    converts = true;
    return col ? `sum(toFloat64(r.${col}) * ${fx.factor})` : fx.factor;
  };
  const dims = ctx.dimensions.map((_, i) => `r.d${i} AS d${i}`);
  const dimKeys = ctx.dimensions.map((_, i) => `d${i}`);
  const bucket = bucketKeySql("r.ts", ctx.granularity, p.tz);
  const measured = bases.map((name) => `${fact.bases[name]!(money)} AS ${name}`);
  // Counts need no rate: without an amount to convert there is no join and no missing rate to report.
  const ctes = [...(converts ? [fxCtes(p.target)] : []), ...fact.ctes(ctx, p, bases)];
  const select = [
    `${bucket} AS bucket`,
    ...dims,
    ...measured,
    `${converts ? fx.missing : "''"} AS fx_missing`,
    ...totalsColumn(ctx.granularity),
  ];
  return `${ctes.length ? `WITH ${ctes.join(",\n")}\n` : ""}SELECT ${select.join(",\n  ")}
FROM (${fact.rows(ctx, p, dimensionColumns(ctx.dimensions), where, bases)}) AS r
${converts ? `${fx.joins}\n` : ""}${groupBy(ctx.granularity, dimKeys)}`;
}

export function factBases(source: FactSourceName): string[] {
  return Object.keys(FACTS[source].bases);
}
