import { ORDER_FACT_AMOUNTS, ORDER_FACTS } from "../../derived/order-facts.js";
import { HOUR, hourOf } from "../../derived/order-hours.js";
import { REFUND_FACTS, refundGroupsSql } from "../../derived/refund-facts.js";
import { hopsCte } from "../../identity/links-sql.js";
import type { Binder } from "../binder.js";
import { FIELD_BY_NAME } from "../filters/fields.js";
import type { SourceName } from "../measures.js";
import { bucketKeySql, wholeHourOffsets } from "../time.js";
import {
  countedOrdersCte,
  countedPredicate,
  fxCtes,
  fxJoin,
  groupBy,
  ratesFrom,
  totalsColumn,
  withinSpans,
} from "./common.js";
import type { EmitContext } from "./context.js";

/**
 * Fact sources of the general query. Each has a row subquery (filtered to the range and the
 * request's filter, exposing `ts`, `cur`, `fx_day`, `fx_k`, the dimension columns `d0…` and the
 * amounts) and its base aggregates over those rows, as data: money in the target currency, counts
 * and sums, distinct counts.
 */
interface FactSource {
  /** `bases`: the aggregates the statement computes, so a source joins only what they read. */
  ctes(ctx: EmitContext, p: Placeholders, bases: readonly string[]): string[];
  rows(ctx: EmitContext, p: Placeholders, dims: string, where: string, bases: readonly string[]): string;
  bases: Record<string, Base>;
}

/**
 * A base aggregate over the rows `r`. `money`: Σ of an amount (where `when` holds) in the target
 * currency; `sum`: an additive aggregate (count(), countIf(…), sum(…)); `distinct`: the number of
 * distinct `key` values (where `when` holds).
 */
type Base =
  | { kind: "money"; amount: string; when?: string; exact?: true }
  | { kind: "sum"; agg: string }
  | { kind: "distinct"; key: string; when?: string };

const money = (amount: string, when?: string): Base => ({ kind: "money", amount, ...(when ? { when } : {}) });
/**
 * A Decimal amount summed exactly and converted to a float once per day and currency: the same value
 * whether the sum runs over orders or over the hourly rollup's exact sums.
 */
const exactMoney = (amount: string): Base => ({ kind: "money", amount, exact: true });
const additive = (agg: string): Base => ({ kind: "sum", agg });
const distinct = (key: string, when?: string): Base => ({ kind: "distinct", key, ...(when ? { when } : {}) });

/** A period's bounds as placeholders: instants [start, end), and its first and last local days. */
interface PeriodPlaceholders {
  start: string;
  end: string;
  startDate: string;
  endDate: string;
}

export interface Placeholders extends PeriodPlaceholders {
  pixel: string;
  tz: string;
  target: string;
  /** Every period the statement answers: the primary (the fields above), then the compare period. */
  periods: PeriodPlaceholders[];
}

export function placeholders(ctx: EmitContext): Placeholders {
  const b: Binder = ctx.binder;
  const period = (range: EmitContext["range"]): PeriodPlaceholders => ({
    start: b.bind(range.start, "DateTime64(3, 'UTC')"),
    end: b.bind(range.end, "DateTime64(3, 'UTC')"),
    startDate: b.bind(range.startDate, "Date"),
    endDate: b.bind(range.endDate, "Date"),
  });
  const pixel = b.bind(ctx.pixelId, "String");
  const tz = b.bind(ctx.timezone, "String");
  const target = b.bind(ctx.currency, "String");
  const primary = period(ctx.range);
  const periods = ctx.compareRange ? [primary, period(ctx.compareRange)] : [primary];
  return { pixel, tz, target, ...primary, periods };
}

/** `col`, an instant, in one of the statement's periods. */
const inPeriods = (col: string, p: Placeholders) => withinSpans(col, p.periods);

/** `col`, a local day, in one of the statement's periods. */
function onPeriodDays(col: string, p: Placeholders): string {
  const one = (x: PeriodPlaceholders) => `${col} >= ${x.startDate} AND ${col} <= ${x.endDate}`;
  return p.periods.length === 1 ? one(p) : `(${p.periods.map((x) => `(${one(x)})`).join(" OR ")})`;
}

/** The `period` of a row of a two-period statement: 0 when `ts` is in the primary range, else 1. */
export const periodOf = (ts: string, p: Placeholders) => `if(${ts} >= ${p.start} AND ${ts} < ${p.end}, 0, 1)`;

/** `only`: the orders the source can use — created in the range, or refunded in it. */
const counted = (ctx: EmitContext, p: Placeholders, only: "created" | "refunded") => [
  countedOrdersCte(
    p.pixel,
    ctx.orderSettings,
    ctx.binder,
    ctx.timezone,
    ctx.needsCustomerNumbering,
    only === "created" ? { created: p.periods } : { refunded: p.periods },
  ),
];

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
WHERE ${inPeriods("o.created_at", p)} AND ${where}`;
    },
    bases: {
      orders_count: additive("count()"),
      orders_total: exactMoney("r.total_price"),
      orders_subtotal: exactMoney("r.subtotal_price"),
      orders_discounts: exactMoney("r.total_discounts"),
      orders_shipping: exactMoney("r.total_shipping"),
      orders_tax: exactMoney("r.total_tax"),
      orders_units: additive("sum(r.units)"),
      orders_first: additive("countIf(r.customer_order_number = 1)"),
      customers_unique: distinct("r.customer_key"),
      customers_new: distinct("r.customer_key", "r.customer_order_number = 1"),
      customers_returning: distinct("r.customer_key", "r.customer_order_number > 1"),
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
WHERE ${inPeriods(booked, p)} AND ${where}`;
    },
    bases: {
      refunds_amount: exactMoney("r.amount"),
      refunds_count: additive("count()"),
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
WHERE ${inPeriods("o.created_at", p)} AND ${where}`,
    bases: {
      cost_cogs: money("r.cogs"),
      cost_handling: money("r.handling"),
      cost_shipping: money("r.shipping"),
      cost_gateway: money("r.gateway"),
      cost_order_level: money("r.order_level"),
    },
  },
  ads: {
    ctes: () => [],
    // Each ad account is read at the deepest level it reports (in each period: two periods are two
    // windows), so levels never double count.
    rows: (
      _ctx,
      p,
      dims,
      where,
    ) => `SELECT toDateTime64(toDateTime(c.date, ${p.tz}), 3, 'UTC') AS ts, c.currency AS cur, c.date AS fx_day, toUInt8(1) AS fx_k${dims},
  c.spend, c.impressions, c.clicks, c.conversions, c.conversion_value
FROM (
  SELECT *, max(level) OVER (PARTITION BY platform, account_id${
    p.periods.length > 1 ? `, date >= ${p.startDate} AND date <= ${p.endDate}` : ""
  }) AS deepest
  FROM ad_metrics_daily FINAL WHERE pixel_id = ${p.pixel} AND ${onPeriodDays("date", p)}
) AS c
WHERE c.level = c.deepest AND ${where}`,
    bases: {
      ads_spend: money("r.spend"),
      ads_impressions: additive("sum(r.impressions)"),
      ads_clicks: additive("sum(r.clicks)"),
      ads_conversions: additive("sum(r.conversions)"),
      ads_conversion_value: money("r.conversion_value"),
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
FROM (SELECT * FROM events WHERE pixel_id = ${p.pixel} AND ${inPeriods("event_time", p)}) AS e
LEFT JOIN hops AS h ON h.old = e.canonical_id
WHERE ${where}`,
    bases: {
      events_count: additive("count()"),
      events_identities: distinct("r.cid"),
      events_page_views: additive("countIf(r.name = 'page_view')"),
      events_purchases: additive("countIf(r.name = 'purchase')"),
      events_purchasers: distinct("r.cid", "r.name = 'purchase'"),
      // A value without a currency cannot be converted and is left out (documented).
      events_value: money("r.value", "r.value IS NOT NULL AND r.cur != ''"),
    },
  },
};

export type FactSourceName = keyof typeof FACTS;

/**
 * The orders source answered from `order_facts_hourly` (docs/derived-tables.md): the rollup's hours of
 * the range but the fresh ones (`fresh`: hours with an order row past the watermark), and those from
 * raw orders summed the same way. Which orders count is decided here, on the groups' status, as `co`
 * decides it on each order.
 */
function ordersRollup(fresh: string | null): FactSource {
  const amounts = ORDER_FACT_AMOUNTS.join(", ");
  const stored = (p: Placeholders) => `SELECT hour, currency, financial_status, orders, ${amounts}
  FROM ${ORDER_FACTS} FINAL
  WHERE pixel_id = ${p.pixel} AND ${inPeriods("hour", p)}${fresh === null ? "" : ` AND hour NOT IN ${fresh}`}`;
  // `fresh` null: no hour has an order row past the watermark, so the rollup alone answers (the raw
  // branch costs ~6 ms at 100M events even when it reads nothing).
  const raw = (p: Placeholders) => `
  UNION ALL
  SELECT ${HOUR} AS hour, currency, financial_status, count() AS orders,
    ${ORDER_FACT_AMOUNTS.map((a) => `sum(${a}) AS ${a}`).join(", ")}
  FROM (
    SELECT order_id, created_at, currency, financial_status, ${amounts}
    FROM orders FINAL
    WHERE pixel_id = ${p.pixel} AND ${
      p.periods.length === 1
        ? `created_at >= greatest(${p.start}, arrayMin(${fresh})) AND created_at < ${p.end}`
        : `${inPeriods("created_at", p)} AND created_at >= arrayMin(${fresh})`
    }
      AND created_at < arrayMax(${fresh}) + toIntervalHour(1)
  ) AS r
  WHERE ${HOUR} IN ${fresh}
  GROUP BY hour, currency, financial_status`;
  return {
    ctes: () => [],
    rows: (ctx, p) => `SELECT o.hour AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.orders AS n, ${ORDER_FACT_AMOUNTS.map((a) => `o.${a}`).join(", ")}
FROM (
  ${stored(p)}${fresh === null ? "" : raw(p)}
) AS o
WHERE o.orders > 0 AND ${countedPredicate(ctx.orderSettings, ctx.binder, ctx.timezone)}`,
    bases: {
      orders_count: additive("sum(r.n)"),
      orders_total: exactMoney("r.total_price"),
      orders_subtotal: exactMoney("r.subtotal_price"),
      orders_discounts: exactMoney("r.total_discounts"),
      orders_shipping: exactMoney("r.total_shipping"),
      orders_tax: exactMoney("r.total_tax"),
    },
  };
}

/**
 * The refunds source answered from `refund_facts_hourly` (docs/derived-tables.md): the rollup's refund
 * hours but the fresh ones (`fresh`: hours with a refund whose row, or whose order's row, is past the
 * watermark), and those from raw refunds and orders grouped the same way. Booked at the refund's hour
 * or its order's (`refundDateAttribution`), converted at the refund's day; which refunds count is
 * decided here, on their order's status, as `co` decides it on each order.
 */
function refundsRollup(fresh: string | null): FactSource {
  const raw = (p: Placeholders) => `
  UNION ALL
  ${refundGroupsSql(
    p.pixel,
    (col) =>
      `${col} >= arrayMin(${fresh}) AND ${col} < arrayMax(${fresh}) + toIntervalHour(1) AND ${hourOf(col)} IN ${fresh}`,
    false,
  )}`;
  return {
    ctes: () => [],
    rows: (ctx, p) => {
      const booked = ctx.orderSettings.refundDateAttribution === "order_date" ? "order_hour" : "hour";
      return `SELECT o.${booked} AS ts, o.currency AS cur, toDate(o.hour) AS fx_day, toUInt8(1) AS fx_k,
  o.refunds AS n, o.amount AS amount
FROM (
  SELECT hour, order_hour, currency, financial_status, refunds, amount
  FROM ${REFUND_FACTS} FINAL
  WHERE pixel_id = ${p.pixel} AND ${inPeriods(booked, p)}${fresh === null ? "" : ` AND hour NOT IN ${fresh}`}${
    fresh === null ? "" : raw(p)
  }
) AS o
WHERE o.refunds > 0 AND ${inPeriods(`o.${booked}`, p)} AND ${countedPredicate(ctx.orderSettings, ctx.binder, ctx.timezone)}`;
    },
    bases: {
      refunds_amount: exactMoney("r.amount"),
      refunds_count: additive("sum(r.n)"),
    },
  };
}

/** Distinct customers: the base the derived tables answer from `customer_hours` (sources/customers.ts). */
export const CUSTOMERS_BASE = "customers_unique";

/** The sources the derived tables answer, and the bases they hold (orders: sums in the rollup, distinct customers in customer_hours). */
const ROLLUPS: Partial<
  Record<FactSourceName, { of: (fresh: string | null) => FactSource; bases: Set<string> }>
> = {
  orders: { of: ordersRollup, bases: new Set([...Object.keys(ordersRollup("").bases), CUSTOMERS_BASE]) },
  refunds: { of: refundsRollup, bases: new Set(Object.keys(refundsRollup("").bases)) },
};

/**
 * Whether an hourly rollup answers a statement exactly: a source and bases it holds, no filter or
 * dimension (the rollups keep neither), no exclusion filter in the order settings (they can test any
 * order field), and a timezone whose offset is whole hours over the range (every local bucket is then
 * a union of UTC hours).
 */
export function rollupServes(
  source: FactSourceName,
  bases: readonly string[],
  ctx: Omit<EmitContext, "binder">,
  filtered: boolean,
): boolean {
  const rollup = ROLLUPS[source];
  return (
    rollup !== undefined &&
    !filtered &&
    ctx.dimensions.length === 0 &&
    !ctx.needsCustomerNumbering &&
    bases.every((b) => rollup.bases.has(b)) &&
    !ctx.orderSettings.exclusionFilters.some((f) => f.enabled && f.conditionGroups.length > 0) &&
    wholeHourOffsets(ctx.timezone, ctx.range) &&
    (!ctx.compareRange || wholeHourOffsets(ctx.timezone, ctx.compareRange))
  );
}

/** Dimension columns `d0…` selected in a row subquery, from the catalog's column expressions. */
export function dimensionColumns(dimensions: readonly string[]): string {
  return dimensions.map((d, i) => `, toString(${FIELD_BY_NAME.get(d)!.column}) AS d${i}`).join("");
}

/**
 * The keys and columns every fact statement groups by: the bucket, `period` when it answers two
 * (each row says which, and `period` leads every grouping), the dimension values; the per-day keys
 * add the currency and day a rate applies to; `firstDay` is the first day its amounts can fall on.
 */
function statementShape(ctx: EmitContext, p: Placeholders) {
  const dimKeys = ctx.dimensions.map((_, i) => `d${i}`);
  const periodKeys = ctx.compareRange ? ["period"] : [];
  const groupKeys = [...periodKeys, ...dimKeys];
  const bucket = bucketKeySql("r.ts", ctx.granularity, p.tz);
  const period = ctx.compareRange ? [`${periodOf("r.ts", p)} AS period`] : [];
  return {
    dimKeys,
    groupKeys,
    bucket,
    period,
    /** The keys of a per-day row over the fact rows `r`, before its summed bases. */
    dayColumns: [
      `${bucket} AS bucket`,
      ...period,
      ...dimKeys.map((k) => `r.${k} AS ${k}`),
      "r.cur AS cur",
      "r.fx_day AS fx_day",
      "toUInt8(1) AS fx_k",
    ],
    perDayKeys: [...(ctx.granularity === "none" ? [] : ["bucket"]), ...groupKeys, "cur", "fx_day"],
    firstDay:
      ctx.compareRange && ctx.compareRange.start < ctx.range.start ? ctx.compareRange.start : ctx.range.start,
  };
}

/** The columns of a converting statement over its per-day rows `q`: each base merged, amounts converted. */
function convertedSelect(
  ctx: EmitContext,
  groupKeys: readonly string[],
  bases: readonly (readonly [string, Base])[],
  fx: { factor: string; missing: string },
): string[] {
  return [
    // With granularity none the bucket is a constant, not a grouping key (see groupBy).
    ctx.granularity === "none" ? "any(q.bucket) AS bucket" : "q.bucket AS bucket",
    ...groupKeys.map((k) => `q.${k} AS ${k}`),
    ...bases.map(([name, b]) => `${merged(b, `q.${name}`, fx.factor)} AS ${name}`),
    `${fx.missing} AS fx_missing`,
    ...totalsColumn(ctx.granularity),
  ];
}

/**
 * The statement of one fact source: per bucket (and dimension values), plus per-dimension totals.
 * With money to convert, the rows are first summed per bucket, dimension values, currency and day —
 * a rate applies to a whole day of one currency — and each sum is converted once: a few thousand
 * rows meet the rates instead of every order. Distinct counts travel as mergeable states.
 */
export function emitFactSource(
  source: FactSourceName,
  bases: readonly string[],
  ctx: EmitContext,
  where: string,
  rollup?: { freshHours: string | null },
): string {
  const p = placeholders(ctx);
  const fact = rollup ? ROLLUPS[source]!.of(rollup.freshHours) : FACTS[source];
  const chosen = bases.map((name) => [name, fact.bases[name]!] as const);
  const converts = chosen.some(([, b]) => b.kind === "money");
  const { dimKeys, groupKeys, bucket, period, perDayKeys, firstDay, dayColumns } = statementShape(ctx, p);
  const rows = fact.rows(ctx, p, dimensionColumns(ctx.dimensions), where, bases);
  const ctes = [
    ...(converts ? [fxCtes(p.target, ratesFrom(ctx.binder, firstDay))] : []),
    ...fact.ctes(ctx, p, bases),
  ];
  const withCtes = ctes.length ? `WITH ${ctes.join(",\n")}\n` : "";
  if (!converts) {
    // Counts need no rate: without an amount to convert there is no join and no missing rate to report.
    const select = [
      `${bucket} AS bucket`,
      ...period,
      ...dimKeys.map((k) => `r.${k} AS ${k}`),
      ...chosen.map(([name, b]) => `${whole(b)} AS ${name}`),
      "'' AS fx_missing",
      ...totalsColumn(ctx.granularity),
    ];
    return `${withCtes}SELECT ${select.join(",\n  ")}
FROM (${rows}) AS r
${groupBy(ctx.granularity, groupKeys)}`;
  }
  const fx = fxJoin("q", p.target);
  const perDay = [...dayColumns, ...chosen.map(([name, b]) => `${partial(b)} AS ${name}`)];
  return `${withCtes}SELECT ${convertedSelect(ctx, groupKeys, chosen, fx).join(",\n  ")}
FROM (
  SELECT ${perDay.join(", ")}
  FROM (${rows}) AS r
  GROUP BY ${perDayKeys.join(", ")}
) AS q
${fx.joins}
${groupBy(ctx.granularity, groupKeys)}`;
}

/** One fact source's share of a statement that answers several (`emitFactSources`). */
export interface FactPart {
  source: FactSourceName;
  bases: readonly string[];
  /** The request's filter on the source's rows, printed. */
  where: string;
  /** Answered from the source's hourly rollup, with these fresh hours read raw (see `emitFactSource`). */
  rollup?: { freshHours: string | null };
}

/** Whether a source's bases include an amount to convert (its statement joins the rates). */
export function convertsMoney(source: FactSourceName, bases: readonly string[]): boolean {
  return bases.some((n) => FACTS[source].bases[n]?.kind === "money");
}

/**
 * Several fact sources in one statement, each of whose bases is an amount or a sum (no distinct
 * count): each source's rows summed per bucket, currency and day in a branch of its own (its CTEs
 * scoped to it), the branches put together with `UNION ALL` — a branch carries 0 for the other
 * sources' bases — and converted once. What it saves is each statement's fixed cost: a statement
 * over the hourly rollups spends most of its time being planned, the rate joins a third of that.
 */
export function emitFactSources(parts: readonly FactPart[], ctx: EmitContext): string {
  const p = placeholders(ctx);
  const { groupKeys, perDayKeys, firstDay, dayColumns } = statementShape(ctx, p);
  const chosen = parts.map((part) => {
    const fact = part.rollup ? ROLLUPS[part.source]!.of(part.rollup.freshHours) : FACTS[part.source];
    return { part, fact, bases: part.bases.map((name) => [name, fact.bases[name]!] as const) };
  });
  const all = chosen.flatMap((c) => c.bases);
  for (const [name, b] of all)
    if (b.kind === "distinct") throw new Error(`${name}: a distinct count cannot share a statement`);
  const branches = chosen.map(({ part, fact, bases }) => {
    const own = new Set(bases.map(([name]) => name));
    const ctes = fact.ctes(ctx, p, part.bases);
    const columns = [
      ...dayColumns,
      // Sums as Float64 in every branch, so that the branches' columns share one type.
      ...all.map(([name, b]) =>
        !own.has(name)
          ? `0. AS ${name}`
          : b.kind === "sum"
            ? `toFloat64(${b.agg}) AS ${name}`
            : `${partial(b)} AS ${name}`,
      ),
    ];
    return `SELECT * FROM (${ctes.length ? `WITH ${ctes.join(",\n")}\n` : ""}SELECT ${columns.join(", ")}
  FROM (${fact.rows(ctx, p, dimensionColumns(ctx.dimensions), part.where, part.bases)}) AS r
  GROUP BY ${perDayKeys.join(", ")})`;
  });
  const fx = fxJoin("q", p.target);
  return `WITH ${fxCtes(p.target, ratesFrom(ctx.binder, firstDay))}
SELECT ${convertedSelect(ctx, groupKeys, all, fx).join(",\n  ")}
FROM (
  ${branches.join("\n  UNION ALL\n  ")}
) AS q
${fx.joins}
${groupBy(ctx.granularity, groupKeys)}`;
}

/** A base over the rows in one pass (no money to convert). */
function whole(b: Base): string {
  if (b.kind === "sum") return `toFloat64(${b.agg})`;
  if (b.kind === "distinct")
    return `toFloat64(${b.when ? `uniqExactIf(${b.key}, ${b.when})` : `uniqExact(${b.key})`})`;
  throw new Error("money is converted per day and currency");
}

/** A base summed per bucket, dimension values, currency and day. */
function partial(b: Base): string {
  if (b.kind === "money" && b.exact) return `toFloat64(sum(${b.amount}))`;
  if (b.kind === "money")
    return b.when ? `sumIf(toFloat64(${b.amount}), ${b.when})` : `sum(toFloat64(${b.amount}))`;
  if (b.kind === "sum") return b.agg;
  return b.when ? `uniqExactStateIf(${b.key}, ${b.when})` : `uniqExactState(${b.key})`;
}

/**
 * The per-day partials of a base combined: money converted at its day's rate. A group with nothing
 * to convert adds 0 even without a rate (an event value without a currency: 0 × inf is NaN).
 */
function merged(b: Base, col: string, factor: string): string {
  if (b.kind === "money") return `sum(if(${col} = 0, 0., ${col} * ${factor}))`;
  if (b.kind === "sum") return `toFloat64(sum(${col}))`;
  return `toFloat64(uniqExactMerge(${col}))`;
}

export function factBases(source: FactSourceName): string[] {
  return Object.keys(FACTS[source].bases);
}
