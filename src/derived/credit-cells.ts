import { LRUCache } from "lru-cache";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { CONVERSION_TOUCHES } from "./conversion-touches.js";
import { changedHours, HOUR, ORDER_HOURS, seenByRefresh } from "./order-hours.js";

/**
 * Credit cells (docs/derived-tables.md, "credit_cells"): attribution credits summed per UTC hour for
 * the shapes queries ask for. The crediting itself is the query compiler's (the worker is handed it as
 * `CreditCellsSql`); here are the tables, what a refresh rebuilds and what a query reads raw.
 */

export const CREDIT_CELLS = "credit_cells";
export const CREDIT_SHAPES = "credit_shapes";
export const CREDIT_REFRESHES = "credit_refreshes";

/**
 * At most this many shapes are built per pixel: each costs a statement per refresh round. Shapes
 * asked for beyond it are answered conversion by conversion.
 */
export const MAX_CREDIT_SHAPES = 24;

/** More fresh hours than this: a query credits every conversion (cells unused). */
export const MAX_FRESH_CREDIT_HOURS = 2_000;

/**
 * The CTEs of one shape's new cells (ending with `new_cells`) over the worker's `{pixel:String}`, for
 * the conversions created in [start, end) and, with `hours`, in those hours only; null when the key
 * names no shape.
 */
export type CreditCellsSql = (
  shapeKey: string,
  span: { pixel: string; start: string; end: string; seen: string; hours?: string; materialized?: boolean },
) => { ctes: string[]; params: Record<string, unknown> } | null;

const PIXEL = "{pixel:String}";
const SINCE = "{since:DateTime64(3, 'UTC')}";

/** Orders with a refund row ingested after `since` (a subquery of their ids). */
const refundedIds = (since: string) =>
  `SELECT order_id FROM refunds WHERE pixel_id = ${PIXEL} AND ingested_at > ${since}`;

/**
 * Every hour whose cells rows since the pixel's last cells refresh can change: the hours of orders
 * changed after `{since}` (that refresh's watermark, for the worker less the margin; `changedHours`),
 * every hour of an order with a refund changed after it, and the hours of the conversions whose
 * `conversion_touches` row was built after `{touched}` (that refresh's touches version: new touches
 * and merges of their identity). The worker rebuilds them; a query credits them one by one.
 */
const CHANGED_SINCE_REFRESH = `${changedHours(SINCE)}
  UNION ALL
  SELECT ${HOUR} AS h FROM orders AS v WHERE v.pixel_id = ${PIXEL} AND v.order_id IN (${refundedIds(SINCE)})
  UNION ALL
  SELECT hour AS h FROM ${ORDER_HOURS} WHERE pixel_id = ${PIXEL} AND order_id IN (${refundedIds(SINCE)})
  UNION ALL
  SELECT ${HOUR} AS h FROM ${CONVERSION_TOUCHES} WHERE pixel_id = ${PIXEL} AND built_version > {touched:UInt64}`;

/**
 * The hours a cells refresh rebuilds (CHANGED_SINCE_REFRESH, at most `{max}`, as text). Read once per
 * refresh and bound into each shape's statement: a bound list prunes by the sort keys where a
 * subquery does not, and a refresh without one runs none.
 */
export const CREDIT_REFRESH_HOURS_SQL = `SELECT groupUniqArray({max:UInt32})(toString(h)) AS hours FROM (
  ${CHANGED_SINCE_REFRESH}
)`;

/** The pixel's last cells refresh (none: `has` 0), as text. */
export const CREDIT_REFRESH_SQL = `SELECT count() AS has, toString(any(watermark)) AS watermark,
  toString(any(touches_version)) AS touched
FROM (SELECT * FROM ${CREDIT_REFRESHES} WHERE pixel_id = ${PIXEL} ORDER BY written_at DESC LIMIT 1)`;

/**
 * Pixels with a built shape whose cells are behind their derived tables' watermark (`{name}`), last
 * refreshed at least `{interval}` ms ago (0 when settling) — or refreshed closer to the clock than
 * `{margin}` (a settle) once the margin has passed: a row stamped before that watermark may have
 * become visible after the refresh read, and the next one looks that far back (as the derived tables'
 * own second look does).
 */
export const CREDIT_REFRESHES_DUE_SQL = `WITH cells AS (
  SELECT pixel_id, argMax(watermark, written_at) AS w, max(written_at) AS at FROM ${CREDIT_REFRESHES} GROUP BY pixel_id
), shapes AS (
  SELECT DISTINCT pixel_id FROM ${CREDIT_SHAPES} WHERE built_version > 0
), marks AS (
  SELECT pixel_id, max(watermark) AS w FROM derived_watermarks WHERE name = {name:String} GROUP BY pixel_id
)
SELECT m.pixel_id AS pixel_id FROM marks AS m
INNER JOIN shapes AS s ON s.pixel_id = m.pixel_id
LEFT JOIN cells AS c ON c.pixel_id = m.pixel_id
WHERE c.pixel_id = ''
  OR (c.w < m.w AND c.at <= now64(3, 'UTC') - toIntervalMillisecond({interval:UInt64}))
  OR (c.at < c.w + toIntervalMillisecond({margin:UInt32}) AND c.w <= now64(3, 'UTC') - toIntervalMillisecond({margin:UInt32}))
ORDER BY pixel_id`;

/**
 * The least time between two refreshes of a pixel's cells (DERIVED_CREDIT_INTERVAL_MS): each costs a
 * statement per built shape (~0.1 s at 100M events), and queries credit the hours changed meanwhile
 * one by one.
 */
export const CREDIT_MIN_INTERVAL_MS = 30_000;

/** More changed hours in a round than this: each shape is rebuilt month by month instead. */
export const MAX_REFRESH_HOURS = 5_000;

/**
 * The INSERT rebuilding one shape's cells: `hours` — the hours bound as `{hours}` (the round's
 * `CREDIT_REFRESH_HOURS_SQL`); `month` — every hour of `{month}` (YYYYMM), for a build. Each rebuilt
 * hour's rows are written again with `built_version` = `{version}`, and a row the hour had and has no
 * longer is written with rows = 0. Only the orders the refresh vouches for count (`seenByRefresh`), as
 * in the other rollups, so `order_hours` holds every hour the cells count an order in. Params besides
 * the build's own: pixel, shape, version, cutoff, and hours or month. `materialized`: the engine
 * computes a CTE read twice once (`enable_materialized_cte`, set by the caller).
 */
export function creditCellsRefreshSql(
  scope: "hours" | "month",
  cells: CreditCellsSql,
  shapeKey: string,
  materialized = false,
): { sql: string; params: Record<string, unknown> } | null {
  const month = "toDateTime64(makeDate(intDiv({month:UInt32}, 100), {month:UInt32} % 100, 1), 3, 'UTC')";
  const hours = "{hours:Array(DateTime64(3, 'UTC'))}";
  const span =
    scope === "month"
      ? { start: month, end: `addMonths(${month}, 1)` }
      : { start: `arrayMin(${hours})`, end: `arrayMax(${hours}) + toIntervalHour(1)`, hours };
  const build = cells(shapeKey, { pixel: PIXEL, seen: seenByRefresh("o"), materialized, ...span });
  if (!build) return null;
  const storedIn = scope === "month" ? "toYYYYMM(hour) = {month:UInt32}" : `hour IN ${hours}`;
  const columns = "hour, financial_status, value, touched, currency, fx_day, refund";
  const sql = `INSERT INTO ${CREDIT_CELLS} (pixel_id, shape, ${columns}, built_version, rows, attributed, amount, conversions)
WITH ${build.ctes.join(",\n")}
SELECT ${PIXEL}, {shape:String}, ${columns}, {version:UInt64},
  argMax(rows, built), argMax(attributed, built), argMax(amount, built), argMax(conversions, built)
FROM (
  SELECT ${columns}, rows, attributed, amount, conversions, 1 AS built FROM new_cells
  UNION ALL
  SELECT ${columns}, toUInt64(0), 0., 0., toUInt64(0), 0 AS built
  FROM ${CREDIT_CELLS} FINAL WHERE pixel_id = ${PIXEL} AND shape = {shape:String} AND ${storedIn} AND rows != 0
)
GROUP BY ${columns}`;
  return { sql, params: { ...build.params, shape: shapeKey } };
}

/** Each shape of `{pixel}` asked for, and the version of its build (0: not built). */
export const CREDIT_SHAPES_SQL = `SELECT shape, max(built_version) AS built FROM ${CREDIT_SHAPES}
WHERE pixel_id = ${PIXEL} GROUP BY shape ORDER BY min(asked_at), shape`;

/**
 * Pixels with a shape asked for and not built, and room for it (the worker builds those on its next
 * round).
 */
export const CREDIT_SHAPES_DUE_SQL = `SELECT pixel_id FROM (
  SELECT pixel_id, shape, max(built_version) AS built FROM ${CREDIT_SHAPES} GROUP BY pixel_id, shape
) GROUP BY pixel_id HAVING countIf(built = 0) > 0 AND countIf(built > 0) < ${MAX_CREDIT_SHAPES} ORDER BY pixel_id`;

/**
 * The UTC hours a query of a built shape credits conversion by conversion: CHANGED_SINCE_REFRESH, and
 * those of the orders of the identities past the derived tables' watermark (`{ids}`, the stored ids
 * FreshIds found). At most MAX_FRESH_CREDIT_HOURS + 1.
 */
export function freshCreditHoursSql(ids: boolean): string {
  const identities = ids
    ? `
  UNION ALL
  SELECT ${HOUR} AS h FROM orders WHERE pixel_id = ${PIXEL} AND canonical_id IN {ids:Array(String)}`
    : "";
  return `(SELECT groupUniqArray(${MAX_FRESH_CREDIT_HOURS + 1})(toString(h)) FROM (
  ${CHANGED_SINCE_REFRESH}${identities}
  ))`;
}

/**
 * Which shapes of a pixel are built, as the query path sees them, and the asking for new ones. A built
 * shape stays built, so once seen built it is never read again; a shape not seen built yet is read on
 * each query that wants it (a look-up in a table of a few rows per pixel) until the worker has built
 * it. Asking is remembered per process, so a dashboard's repeated query writes its shape once.
 */
export class CreditShapes {
  private readonly built = new LRUCache<string, true>({ max: 50_000 });
  private readonly asked = new LRUCache<string, true>({ max: 10_000 });

  constructor(private readonly warehouse: Pick<WarehouseStore, "query" | "insert">) {}

  /** Which of `shapes` (keys) are built for the pixel. */
  async of(pixelId: string, shapes: readonly string[]): Promise<Set<string>> {
    const key = (shape: string) => `${pixelId}\u0000${shape}`;
    if (shapes.some((s) => !this.built.has(key(s)))) {
      const rows = await this.warehouse.query<{ shape: string; built: string | number }>(CREDIT_SHAPES_SQL, {
        pixel: pixelId,
      });
      for (const r of rows) {
        this.asked.set(key(r.shape), true);
        if (Number(r.built) > 0) this.built.set(key(r.shape), true);
      }
    }
    return new Set(shapes.filter((s) => this.built.has(key(s))));
  }

  /** Records that a query asked for `shapeKey` (once per process and shape). */
  async ask(pixelId: string, shapeKey: string): Promise<void> {
    const key = `${pixelId}\u0000${shapeKey}`;
    if (this.asked.has(key)) return;
    this.asked.set(key, true);
    try {
      await this.warehouse.insert(CREDIT_SHAPES, [{ pixel_id: pixelId, shape: shapeKey, built_version: 0 }]);
    } catch (err) {
      this.asked.delete(key);
      throw err;
    }
  }
}
