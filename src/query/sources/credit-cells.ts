import type { OrderSettings } from "../../accounts/schemas.js";
import { CREDIT_CELLS, type CreditCellsSql } from "../../derived/credit-cells.js";
import { hourOf } from "../../derived/order-hours.js";
import { ATTRIBUTION_MODELS, type AttributionModel, DEFAULT_HALF_LIFE_DAYS } from "../attribution-models.js";
import { Binder } from "../binder.js";
import { FIELD_BY_NAME } from "../filters/fields.js";
import { ATTRIBUTION_WINDOWS } from "../schemas.js";
import { bucketKeySql, wholeHourOffsets } from "../time.js";
import {
  type AttributionPlaceholders,
  type AttributionSpec,
  attributionCtes,
  creditRowsWithShare,
} from "./attribution.js";
import { countedPredicate } from "./common.js";
import type { EmitContext } from "./context.js";

/**
 * Credit cells (docs/derived-tables.md, "credit_cells"): an attribution shape — model, window and the
 * credited touch field — summed per UTC hour of the conversions, order status, credited value,
 * currency and day. The worker builds a shape's cells with `creditCellsBuild` (the same crediting as
 * the per-conversion statement, over `conversion_touches`), and an attribution statement of that shape
 * reads them (`cellRows`) for every hour but those with rows past the watermark, which it credits
 * conversion by conversion.
 */

/** What a shape key names: the model (`touched` without a credited field), the window, the field. */
export interface CreditShape {
  model: AttributionModel | "touched";
  window: number;
  field: string;
}

const ALL_COUNTED: OrderSettings = {
  countPendingOrders: true,
  countVoidedOrders: true,
  exclusionFilters: [],
} as unknown as OrderSettings;

/** `model:window:field`; without a credited field only "has a touch" counts, whatever the model. */
export function creditShapeKey(s: CreditShape): string {
  return `${s.model}:${s.window}:${s.field}`;
}

/** The shape a key names, or null when it names none (an unknown model, window or field). */
export function parseCreditShape(key: string): CreditShape | null {
  const [model, window, field, ...rest] = key.split(":");
  if (rest.length > 0 || model === undefined || window === undefined || field === undefined) return null;
  const w = Number(window);
  if (!(ATTRIBUTION_WINDOWS as readonly number[]).includes(w)) return null;
  if (field === "") return model === "touched" ? { model, window: w, field } : null;
  if (!(ATTRIBUTION_MODELS as readonly string[]).includes(model)) return null;
  if (!field.startsWith("attribution.") || !FIELD_BY_NAME.has(field)) return null;
  return { model: model as AttributionModel, window: w, field };
}

/**
 * The shape whose cells can answer an attribution statement, or null: orders as conversions, no
 * filter on conversions or touches, no dimension but (at most) one attribution field, no customer
 * numbering, no enabled exclusion filter (cells keep the status, not what such a filter reads), a
 * timezone whose offsets are whole hours over the range, and time_decay only at its default half-life.
 */
export function creditShapeOf(ctx: Omit<EmitContext, "binder">, spec: AttributionSpec): CreditShape | null {
  if (spec.valueSource !== "orders" || spec.convWhere !== "1" || spec.touchWhere !== "1") return null;
  if (ctx.needsCustomerNumbering || ctx.dimensions.length > 1) return null;
  const field = ctx.dimensions[0] ?? "";
  if (field !== "" && !field.startsWith("attribution.")) return null;
  if (ctx.orderSettings.exclusionFilters.some((f) => f.enabled && f.conditionGroups.length > 0)) return null;
  if (!wholeHourOffsets(ctx.timezone, ctx.range)) return null;
  const { model, window, halfLifeDays } = ctx.attribution;
  if (field !== "" && model === "time_decay" && halfLifeDays !== DEFAULT_HALF_LIFE_DAYS) return null;
  return { model: field === "" ? "touched" : model, window, field };
}

/** The SQL a build of a shape's cells needs, before the worker's INSERT: its CTEs and their params. */
export interface CreditCellsBuild {
  /** CTEs ending with `new_cells` (hour, financial_status, value, touched, currency, fx_day, refund, rows, attributed, amount, conversions). */
  ctes: string[];
  params: Record<string, unknown>;
}

/**
 * A shape's cells for the conversions created in [start, end) (SQL instants over the worker's own
 * parameters) and, with `hours`, in those UTC hours only: every conversion of every status credited
 * as the per-conversion statement credits it (from `conversion_touches`), summed per hour, status,
 * credited value, currency and day; its refunds summed per refund currency and day beside (refund = 1:
 * attributed amounts only, but every credited conversion's refunds have a row, so a query reports a
 * refund day without a rate as the per-conversion statement does). `pixel` is the worker's placeholder,
 * `seen` its condition on the orders (alias `o`) a build counts; `materialized`: the engine takes
 * `MATERIALIZED` CTEs.
 */
export function creditCellsBuild(
  shape: CreditShape,
  span: { pixel: string; start: string; end: string; seen: string; hours?: string; materialized?: boolean },
): CreditCellsBuild {
  const b = new Binder();
  const model = shape.model === "touched" ? "last_click" : shape.model;
  const ctx: EmitContext = {
    binder: b,
    pixelId: "",
    timezone: "UTC",
    currency: "USD",
    granularity: "hour",
    // Only read through the placeholders below, which the worker's SQL gives.
    range: { start: new Date(0), end: new Date(0), startDate: "1970-01-01", endDate: "1970-01-01" } as never,
    orderSettings: ALL_COUNTED,
    dimensions: shape.field === "" ? [] : [shape.field],
    attribution: { model, window: shape.window, halfLifeDays: DEFAULT_HALF_LIFE_DAYS },
    needsCustomerNumbering: false,
  };
  const p: AttributionPlaceholders = {
    pixel: span.pixel,
    start: span.start,
    end: span.end,
    target: "'USD'",
    tz: "'UTC'",
  };
  const spec: AttributionSpec = {
    valueSource: "orders",
    eventName: "purchase",
    convWhere: span.seen,
    touchWhere: "1",
  };
  const derived = { fresh: null, ...(span.hours ? { hours: span.hours } : {}) };
  const { ctes, credits } = attributionCtes(ctx, p, spec, { derived, build: true });
  const attributed = shape.field === "" ? "r.touches > 0" : "1";
  const hour = hourOf("r.ts");
  return {
    ctes: [
      ...ctes,
      // Read by both kinds of cells: computed once where the engine can.
      `cr AS ${span.materialized ? "MATERIALIZED " : ""}(${creditRowsWithShare(credits)})`,
      `new_cells AS (
  SELECT ${hour} AS hour, r.status AS financial_status, r.credit AS value, toUInt8(r.touches > 0) AS touched,
    r.cur AS currency, r.fx_day AS fx_day, toUInt8(0) AS refund, count() AS rows, toFloat64(sumIf(r.share, ${attributed})) AS attributed,
    sumIf(r.value * r.share, ${attributed}) AS amount, count() AS conversions
  FROM cr AS r
  GROUP BY hour, financial_status, value, touched, currency, fx_day
  UNION ALL
  SELECT ${hour} AS hour, r.status AS financial_status, r.credit AS value, toUInt8(r.touches > 0) AS touched,
    f.cur AS currency, f.fx_day AS fx_day, toUInt8(1) AS refund, count() AS rows, 0. AS attributed, sumIf(f.amount * r.share, ${attributed}) AS amount,
    toUInt64(0) AS conversions
  FROM cr AS r
  INNER JOIN (
    SELECT order_id, currency AS cur, toDate(created_at) AS fx_day, sum(toFloat64(amount)) AS amount
    FROM refunds FINAL WHERE pixel_id = ${span.pixel} AND order_id IN (SELECT conv_id FROM cr)
    GROUP BY order_id, cur, fx_day
  ) AS f ON f.order_id = r.conv_id
  GROUP BY hour, financial_status, value, touched, currency, fx_day
)`,
    ],
    params: b.params,
  };
}

/** The crediting the derived-tables worker is handed (`CreditCellsSql`): a shape key's build, or null. */
export const creditCellsSql: CreditCellsSql = (key, span) => {
  const shape = parseCreditShape(key);
  return shape ? creditCellsBuild(shape, span) : null;
};

/**
 * The per-day rows (bucket, dimension, cur, fx_day, fx_k, attributed, value, refunded, conversions,
 * refund_missing — as the per-conversion statement's) of a shape's cells in the range, but those of
 * `hours` (a placeholder; null: every hour). A refund row's amount counts against the value on its own
 * day and currency. `touchedOnly`: conversions credited to no touch are left out, as the statement does.
 */
export function cellRows(
  ctx: EmitContext,
  p: AttributionPlaceholders,
  shape: string,
  hours: string | null,
  touchedOnly: boolean,
): string {
  const dims = ctx.dimensions.map((_, i) => `, o.value AS d${i}`).join("");
  const keys = [
    ...(ctx.granularity === "none" ? [] : ["bucket"]),
    ...ctx.dimensions.map((_, i) => `d${i}`),
    "cur",
    "fx_day",
  ];
  const notFresh = hours === null ? "" : ` AND hour NOT IN ${hours}`;
  return `SELECT ${bucketKeySql("o.hour", ctx.granularity, p.tz)} AS bucket${dims}, o.currency AS cur, o.fx_day AS fx_day, toUInt8(1) AS fx_k,
    sum(o.attributed) AS attributed, sum(if(o.refund = 1, -o.amount, o.amount)) AS value, 0. AS refunded,
    sum(o.conversions) AS conversions, '' AS refund_missing
  FROM (SELECT * FROM ${CREDIT_CELLS} FINAL WHERE pixel_id = ${p.pixel} AND shape = ${shape}
    AND hour >= ${p.start} AND hour < ${p.end}${notFresh}) AS o
  WHERE o.rows != 0 AND ${countedPredicate(ctx.orderSettings, ctx.binder, ctx.timezone)}${touchedOnly ? " AND o.touched = 1" : ""}
  GROUP BY ${keys.join(", ")}`;
}
