import { PollingLoop } from "../events/loop.js";
import type { Logger } from "../log.js";
import { consumerProcessed } from "../metrics.js";
import type { Params, WarehouseStore } from "../stores/warehouse/port.js";
import { PixelBackoff } from "./backoff.js";
import {
  COHORT_BUILDS_DUE_SQL,
  COHORT_MIN_INTERVAL_MS,
  COHORT_REBUILD_AGE_S,
  COHORT_REBUILD_ROWS,
  COHORT_STATE_SQL,
  type CohortTarget,
  cohortCellsBuildSql,
  cohortOrdersBuildSql,
  DEFAULT_COHORT_TARGET,
} from "./cohort-cells.js";
import { BEFORE_EVERYTHING, changeFeed, refreshSql, WATERMARK, watermarkSql } from "./conversion-touches.js";
import {
  CREDIT_MIN_INTERVAL_MS,
  CREDIT_REFRESH_HOURS_SQL,
  CREDIT_REFRESH_SQL,
  CREDIT_REFRESHES,
  CREDIT_REFRESHES_DUE_SQL,
  CREDIT_SHAPES,
  CREDIT_SHAPES_DUE_SQL,
  CREDIT_SHAPES_SQL,
  type CreditCellsSql,
  creditCellsRefreshSql,
  MAX_CREDIT_SHAPES,
  MAX_REFRESH_HOURS,
} from "./credit-cells.js";
import { customerHoursRefreshSql } from "./customer-hours.js";
import { orderFactsRefreshSql } from "./order-facts.js";
import { orderHoursRefreshSql } from "./order-hours.js";
import { refundFactsRefreshSql, refundHoursRefreshSql } from "./refund-facts.js";

export const DERIVED_CONSUMER = "derived-tables";

export interface DerivedWorkerOptions {
  log?: Logger;
  /**
   * How long an insert may take to become visible after the engine stamped its rows' `ingested_at`.
   * The watermark stays this far behind the engine's clock, and each refresh looks this far back.
   */
  marginMs: number;
  pollIntervalMs?: number;
  /** Serializes refreshes of one pixel across processes (SqlStore.exclusive). */
  exclusive: <T>(key: string, fn: () => Promise<T>) => Promise<T>;
  /** The timezones and counted kinds a pixel's cohort cells cover (absent: UTC, default settings). */
  cohortTarget?: (pixelId: string) => Promise<CohortTarget>;
  /** The least time between two cohort builds of a pixel (default COHORT_MIN_INTERVAL_MS; tests: 0). */
  cohortIntervalMs?: number;
  /** The crediting of a shape's cells (the query compiler's); absent: no credit cells are kept. */
  creditCells?: CreditCellsSql;
  /** The least time between two refreshes of a pixel's cells (default CREDIT_MIN_INTERVAL_MS; tests: 0). */
  creditIntervalMs?: number;
  /**
   * Orders per part of a first build of customer_hours and of each cohort snapshot (default
   * DEFAULT_CUSTOMER_SLICE_ORDERS).
   */
  customerSliceOrders?: number;
}

/** A first build of customer_hours, and a cohort snapshot, go in parts of about this many orders' customers. */
const DEFAULT_CUSTOMER_SLICE_ORDERS = 250_000;

export interface RefreshResult {
  pixelId: string;
  /** Rows ingested after the previous watermark were found (false: nothing to do). */
  refreshed: boolean;
  full: boolean;
  watermark: string | null;
  ms: number;
}

export interface DerivedLag {
  /** Pixels with rows ingested after their watermark. */
  pixels: number;
  /** Age of the oldest row past a watermark (0 when caught up). */
  seconds: number;
}

/** Refresh delays kept for the freshness figures. */
const DELAYS_KEPT = 10_000;

/**
 * Settings of every write of the worker. On a cluster an insert through a Distributed table returns
 * before the shards have the rows unless asked to wait: the rows must be stored before the watermark
 * that vouches for them. And an INSERT … SELECT gathers up to ~1M rows (256 MB) into one block before
 * it writes: the first build of a 1M-order pixel held ~220 MB for `order_hours` alone; in blocks of
 * 65,536 rows or 16 MiB it holds ~70 MB, in the same time, and writes a few more parts.
 */
const FOREGROUND = {
  settings: {
    distributed_foreground_insert: 1,
    min_insert_block_size_rows: 65_536,
    min_insert_block_size_bytes: 16 * 1024 * 1024,
  },
};

/**
 * Each pixel's watermark, and how long after it the refresh that set it read (`settled_ms`): less
 * than the margin when `settle` set it.
 */
const WATERMARKS = `SELECT pixel_id, max(watermark) AS w,
    argMax(toUnixTimestamp64Milli(written_at) - toUnixTimestamp64Milli(watermark), (watermark, written_at)) AS settled_ms
  FROM derived_watermarks WHERE name = '${WATERMARK}' GROUP BY pixel_id`;

/**
 * Keeps the derived tables current (docs/derived-tables.md). Each round finds the pixels with rows
 * ingested after their watermark, and per pixel rebuilds the conversions, order hours and customers those
 * rows can change, then moves the watermark (one for every derived table). The change feed is the warehouse itself
 * (every row that can change a credit or an hour carries `ingested_at`), so nothing is lost when this
 * process is down: the next round picks up from the stored watermark. Queries never wait for it: they
 * read identities and hours past the watermark raw.
 */
export class DerivedWorker {
  private readonly loop: PollingLoop;
  private readonly delays: number[] = [];
  /** Pixels whose last cohort build failed or found nothing to build (an account may want none). */
  private readonly cohortWaits = new PixelBackoff(() => this.cohortInterval);
  /** Likewise for a pixel's credit-cell builds (a failed one, or nothing buildable asked)… */
  private readonly shapeWaits = new PixelBackoff(() => this.creditInterval);
  /** …and for the refreshes of its built shapes (a failed one). */
  private readonly creditWaits = new PixelBackoff(() => this.creditInterval);
  private rounds = 0;

  constructor(
    private readonly warehouse: WarehouseStore,
    private readonly options: DerivedWorkerOptions,
  ) {
    this.loop = new PollingLoop(
      async () => {
        await this.runOnce();
        return false;
      },
      options.pollIntervalMs ?? 2000,
      (err) => options.log?.warn({ err }, "derived tables not refreshed; retrying"),
    );
  }

  start(): this {
    this.loop.start();
    return this;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  wake(): void {
    this.loop.wake();
  }

  private get margin(): number {
    return Math.max(0, Math.round(this.options.marginMs));
  }

  /** Refreshes every pixel with rows past its watermark. `marginMs` 0: the caller knows writes are done. */
  async runOnce(marginMs = this.options.marginMs): Promise<RefreshResult[]> {
    const out: RefreshResult[] = [];
    for (const pixelId of await this.pending()) {
      out.push(await this.refresh(pixelId, marginMs));
    }
    this.rounds++;
    // A pixel with nothing new is refreshed by nobody: its first cohort build happens here (a store
    // upgraded to cohort cells, or one whose last build failed), and so does the one replacing a
    // build that read too close to the clock to vouch for its last rows. Its failure is logged, not
    // the round's.
    try {
      for (const pixelId of await this.cohortBuildsDue()) {
        if (this.cohortWaits.waiting(pixelId)) continue;
        await this.options.exclusive(`derived:${pixelId}`, async () => {
          const [at] = await this.warehouse.query<{ version: string; cutoff: string }>(
            `SELECT toString(toUnixTimestamp64Milli(now64(3, 'UTC'))) AS version, toString(${watermarkSql("{pixel:String}")}) AS cutoff`,
            { pixel: pixelId },
          );
          if (at) await this.buildCohorts(pixelId, at, marginMs === 0);
        });
      }
    } catch (err) {
      this.options.log?.warn({ err }, "cohort builds not looked for; next round");
    }
    await this.buildAskedShapes();
    await this.refreshCreditsDue(marginMs === 0);
    return out;
  }

  /**
   * Builds the credit-cell shapes queries asked for (docs/derived-tables.md, "credit_cells"), for
   * pixels whose derived tables are built: month by month from the current `conversion_touches`,
   * counting the orders the watermark vouches for, then records each shape built (the record last:
   * queries use a shape only once it is whole). Later refreshes keep it current. A failure is logged
   * and the pixel's shapes tried again after the interval, as a pixel whose asked keys name no shape.
   */
  private async buildAskedShapes(): Promise<void> {
    if (!this.options.creditCells) return;
    let pixels: { pixel_id: string }[];
    try {
      pixels = await this.warehouse.query<{ pixel_id: string }>(CREDIT_SHAPES_DUE_SQL);
    } catch (err) {
      this.options.log?.warn({ err }, "credit shapes not looked for; next round");
      return;
    }
    for (const { pixel_id: pixelId } of pixels) {
      if (this.shapeWaits.waiting(pixelId)) continue;
      try {
        const shapes = await this.creditShapes(pixelId);
        // A key naming no shape (written by another version, or by hand) is never built.
        const known = shapes.asked.filter((shape) =>
          creditCellsRefreshSql("month", this.options.creditCells!, shape),
        );
        const wanted = known.slice(0, Math.max(0, MAX_CREDIT_SHAPES - shapes.built.length));
        if (wanted.length === 0) {
          this.shapeWaits.hold(pixelId);
          continue;
        }
        // One shape per hold of the pixel's lock: its other derived tables are not kept waiting.
        for (const shape of wanted) {
          await this.options.exclusive(`derived:${pixelId}`, () => this.buildShape(pixelId, shape));
        }
        this.shapeWaits.clear(pixelId);
      } catch (err) {
        this.shapeWaits.hold(pixelId);
        this.options.log?.warn({ err, pixelId }, "credit cells not built; tried again after the interval");
      }
    }
  }

  /**
   * Builds one asked shape as of the pixel's current watermark, then records it built. A pixel's
   * first shape also writes its first cells record; shapes built without one (a crash between the two)
   * are first all brought to the watermark by a refresh, which records it.
   */
  private async buildShape(pixelId: string, shape: string): Promise<void> {
    const [at] = await this.warehouse.query<{ version: string; cutoff: string; has: number | string }>(
      `SELECT toString(toUnixTimestamp64Milli(now64(3, 'UTC'))) AS version, toString(${watermarkSql("{pixel:String}")}) AS cutoff,
  (SELECT count() FROM derived_watermarks WHERE pixel_id = {pixel:String} AND name = '${WATERMARK}') AS has`,
      { pixel: pixelId },
    );
    if (!at || Number(at.has) === 0) return;
    const [last] = await this.warehouse.query<{ has: number | string }>(CREDIT_REFRESH_SQL, {
      pixel: pixelId,
    });
    const recorded = Number(last?.has ?? 0) > 0;
    if (!recorded && (await this.creditShapes(pixelId)).built.length > 0) await this.refreshCredits(pixelId);
    await this.creditMonths(pixelId, [shape], at);
    await this.warehouse.insert(
      CREDIT_SHAPES,
      [{ pixel_id: pixelId, shape, built_version: at.version }],
      FOREGROUND,
    );
    if (!recorded) await this.recordCredits(pixelId, at);
  }

  /** How long a pixel whose credit cells step failed (or had nothing to build) is held back. */
  private get creditInterval(): number {
    return this.options.creditIntervalMs ?? CREDIT_MIN_INTERVAL_MS;
  }

  /** The pixel's shapes: built (kept current by each refresh) and asked for, oldest ask first. */
  private async creditShapes(pixelId: string): Promise<{ built: string[]; asked: string[] }> {
    if (!this.options.creditCells) return { built: [], asked: [] };
    const rows = await this.warehouse.query<{ shape: string; built: string | number }>(CREDIT_SHAPES_SQL, {
      pixel: pixelId,
    });
    return {
      built: rows.filter((r) => Number(r.built) > 0).map((r) => r.shape),
      asked: rows.filter((r) => Number(r.built) === 0).map((r) => r.shape),
    };
  }

  /**
   * Brings the cells of every pixel due (CREDIT_REFRESHES_DUE_SQL: behind its derived tables, and last
   * refreshed at least the interval ago; any when settling) up to its derived tables' watermark.
   * A failure is logged: queries keep crediting the hours changed since the last refresh one by one.
   */
  private async refreshCreditsDue(settling: boolean): Promise<void> {
    if (!this.options.creditCells) return;
    let pixels: { pixel_id: string }[];
    try {
      pixels = await this.warehouse.query<{ pixel_id: string }>(CREDIT_REFRESHES_DUE_SQL, {
        name: WATERMARK,
        interval: settling ? 0 : this.creditInterval,
        margin: this.margin,
      });
    } catch (err) {
      this.options.log?.warn({ err }, "credit cells due not looked for; next round");
      return;
    }
    for (const { pixel_id: pixelId } of pixels) {
      if (!settling && this.creditWaits.waiting(pixelId)) continue;
      try {
        await this.options.exclusive(`derived:${pixelId}`, () => this.refreshCredits(pixelId));
        this.creditWaits.clear(pixelId);
      } catch (err) {
        this.creditWaits.hold(pixelId);
        this.options.log?.warn(
          { err, pixelId },
          "credit cells not refreshed; tried again after the interval",
        );
      }
    }
  }

  /**
   * Rebuilds, in every built shape of the pixel, the hours rows since its last cells refresh can
   * change (CREDIT_REFRESH_HOURS_SQL: order and refund rows since that refresh's watermark less the
   * margin, `conversion_touches` rows built after it), found once for all shapes; then records the
   * refresh (the derived tables' watermark and the touches version it covers) — last, so a crash only
   * repeats it. None changed: only the record. More than MAX_REFRESH_HOURS: month by month.
   */
  private async refreshCredits(pixelId: string): Promise<void> {
    const shapes = (await this.creditShapes(pixelId)).built;
    if (shapes.length === 0) return;
    const [at] = await this.warehouse.query<{ version: string; cutoff: string }>(
      `SELECT toString(toUnixTimestamp64Milli(now64(3, 'UTC'))) AS version, toString(${watermarkSql("{pixel:String}")}) AS cutoff`,
      { pixel: pixelId },
    );
    const [last] = await this.warehouse.query<{ has: number | string; watermark: string; touched: string }>(
      CREDIT_REFRESH_SQL,
      { pixel: pixelId },
    );
    if (!at) return;
    if (last && Number(last.has) > 0) {
      const [since] = await this.warehouse.query<{ s: string }>(
        "SELECT toString(toDateTime64({w:String}, 3, 'UTC') - toIntervalMillisecond({margin:UInt32})) AS s",
        { w: last.watermark, margin: this.margin },
      );
      const [found] = await this.warehouse.query<{ hours: string[] }>(CREDIT_REFRESH_HOURS_SQL, {
        pixel: pixelId,
        since: since?.s ?? BEFORE_EVERYTHING,
        touched: last.touched,
        max: MAX_REFRESH_HOURS + 1,
      });
      const hours = found?.hours ?? [];
      const once = this.warehouse.materializedCte;
      const options = once
        ? { settings: { ...FOREGROUND.settings, enable_materialized_cte: 1 } }
        : FOREGROUND;
      if (hours.length > MAX_REFRESH_HOURS) await this.creditMonths(pixelId, shapes, at);
      else if (hours.length > 0) {
        for (const shape of shapes) {
          const built = creditCellsRefreshSql("hours", this.options.creditCells!, shape, once);
          if (!built) continue;
          const params = { ...built.params, pixel: pixelId, version: at.version, cutoff: at.cutoff, hours };
          await this.warehouse.command(built.sql, params, options);
        }
      }
    } else {
      // Shapes built before any record (a crash between a build and its record): built again whole.
      await this.creditMonths(pixelId, shapes, at);
    }
    await this.recordCredits(pixelId, at);
  }

  /** Every built shape of the pixel is current to `at` (its watermark, and the touches built before it). */
  private recordCredits(pixelId: string, at: { version: string; cutoff: string }): Promise<void> {
    return this.warehouse.insert(
      CREDIT_REFRESHES,
      [{ pixel_id: pixelId, watermark: at.cutoff, touches_version: at.version }],
      FOREGROUND,
    );
  }

  /** Every month of the pixel's orders, rebuilt in each of `shapes`' cells. */
  private async creditMonths(
    pixelId: string,
    shapes: readonly string[],
    at: { version: string; cutoff: string },
  ): Promise<void> {
    if (shapes.length === 0) return;
    const months = await this.warehouse.query<{ m: number }>(
      "SELECT DISTINCT toYYYYMM(created_at) AS m FROM orders WHERE pixel_id = {pixel:String} ORDER BY m",
      { pixel: pixelId },
    );
    for (const shape of shapes) {
      for (const { m } of months) {
        const once = this.warehouse.materializedCte;
        const built = creditCellsRefreshSql("month", this.options.creditCells!, shape, once);
        if (!built) continue;
        await this.warehouse.command(
          built.sql,
          { ...built.params, pixel: pixelId, version: at.version, cutoff: at.cutoff, month: m },
          once ? { settings: { ...FOREGROUND.settings, enable_materialized_cte: 1 } } : FOREGROUND,
        );
      }
    }
  }

  /**
   * Pixels with a row ingested after their watermark (never built: any row), and pixels whose
   * watermark was set with less than the margin (`settle`) once the margin has passed: a row stamped
   * before it may have become visible after that refresh read, so its window is looked at once more.
   * After a first full round, only rows newer than the oldest watermark are looked at (parts older than
   * it are skipped by the `ingested_at` min-max index): a pixel first seen later has only new rows.
   */
  async pending(options: { rechecks?: boolean } = {}): Promise<string[]> {
    const rechecks = options.rechecks ?? true;
    const floor =
      this.rounds > 0
        ? "(SELECT min(w) - toIntervalMillisecond({margin:UInt32}) FROM wm)"
        : `toDateTime64('${BEFORE_EVERYTHING}', 3, 'UTC')`;
    const rows = await this.warehouse.query<{ pixel_id: string }>(
      `WITH wm AS (${WATERMARKS})
SELECT DISTINCT x.pixel_id AS pixel_id FROM (
  SELECT pixel_id, max(ingested_at) AS last FROM (
  ${changeFeed("pixel_id, ingested_at", `ingested_at > ${floor}`)}
  ) GROUP BY pixel_id
) AS x LEFT JOIN wm ON wm.pixel_id = x.pixel_id
WHERE wm.pixel_id = '' OR x.last > wm.w${
        rechecks
          ? `
UNION DISTINCT
SELECT pixel_id FROM wm
WHERE wm.settled_ms < {margin:UInt32} AND wm.w <= now64(3, 'UTC') - toIntervalMillisecond({margin:UInt32})`
          : ""
      }
ORDER BY pixel_id`,
      { margin: this.margin },
    );
    return rows.map((r) => r.pixel_id);
  }

  /**
   * Runs a statement over the pixel's customers in parts of whole customers, ~customerSliceOrders
   * orders' worth each (one part, unsliced, below that): `sql(sliced)` with `{slices}` and `{slice}`.
   */
  private async inCustomerParts(
    pixelId: string,
    sql: (sliced: boolean) => string,
    params: Params,
  ): Promise<void> {
    const [row] = await this.warehouse.query<{ n: string }>(
      "SELECT toString(count()) AS n FROM orders WHERE pixel_id = {pixel:String}",
      { pixel: pixelId },
    );
    const perSlice = Math.max(1, this.options.customerSliceOrders ?? DEFAULT_CUSTOMER_SLICE_ORDERS);
    const slices = Math.max(1, Math.ceil(Number(row?.n ?? 0) / perSlice));
    for (let slice = 0; slice < slices; slice++) {
      await this.warehouse.command(sql(slices > 1), { ...params, slices, slice }, FOREGROUND);
    }
  }

  /**
   * Rebuilds the conversions of one pixel that rows ingested since its watermark (less the margin)
   * can change, then moves the watermark to the engine's clock less `marginMs`. Serialized per pixel.
   */
  async refresh(pixelId: string, marginMs = this.options.marginMs): Promise<RefreshResult> {
    return this.options.exclusive(`derived:${pixelId}`, async () => {
      const started = performance.now();
      const [state] = await this.warehouse.query<{
        has: number;
        since: string;
        next: string;
        oldest: string | null;
        version: string;
        recheck: number;
        orders: number;
        refunds: number;
        read_at: string;
      }>(
        `WITH (SELECT count() FROM derived_watermarks WHERE pixel_id = {pixel:String} AND name = '${WATERMARK}') AS has,
  ${watermarkSql("{pixel:String}")} AS w,
  (SELECT any(settled_ms) FROM (${WATERMARKS}) WHERE pixel_id = {pixel:String}) AS settled
SELECT has, toString(w - toIntervalMillisecond({lookback:UInt32})) AS since,
  toString(greatest(now64(3, 'UTC') - toIntervalMillisecond({margin:UInt32}), w)) AS next,
  has > 0 AND settled < {lookback:UInt32} AND w <= now64(3, 'UTC') - toIntervalMillisecond({lookback:UInt32}) AS recheck,
  toString(toUnixTimestamp64Milli(now64(3, 'UTC'))) AS version,
  toString(now64(3, 'UTC')) AS read_at,
  (SELECT count() > 0 FROM orders WHERE pixel_id = {pixel:String} AND ingested_at > w - toIntervalMillisecond({lookback:UInt32})) AS orders,
  (SELECT count() > 0 FROM refunds WHERE pixel_id = {pixel:String} AND ingested_at > w - toIntervalMillisecond({lookback:UInt32})) AS refunds,
  (SELECT toString(minOrNull(ingested_at)) FROM (
  ${changeFeed("ingested_at", "pixel_id = {pixel:String} AND ingested_at > w")})) AS oldest`,
        { pixel: pixelId, margin: Math.max(0, Math.round(marginMs)), lookback: this.margin },
      );
      if (!state || (Number(state.has) > 0 && state.oldest === null && !Number(state.recheck))) {
        return { pixelId, refreshed: false, full: false, watermark: null, ms: performance.now() - started };
      }
      const full = Number(state.has) === 0;
      // Where the engine can, the statements' repeated CTEs are computed once (refreshSql).
      const once = this.warehouse.materializedCte;
      const options = once
        ? { settings: { ...FOREGROUND.settings, enable_materialized_cte: 1 } }
        : FOREGROUND;
      if (full) {
        await this.warehouse.command(
          orderHoursRefreshSql("all"),
          { pixel: pixelId, version: state.version, cutoff: state.next },
          FOREGROUND,
        );
        const months = await this.warehouse.query<{ m: number }>(
          "SELECT DISTINCT toYYYYMM(created_at) AS m FROM orders WHERE pixel_id = {pixel:String} ORDER BY m",
          { pixel: pixelId },
        );
        for (const { m } of months) {
          const params = { pixel: pixelId, version: state.version, month: m, cutoff: state.next };
          await this.warehouse.command(refreshSql("month", once), params, options);
          await this.warehouse.command(orderFactsRefreshSql("month"), params, FOREGROUND);
        }
        // Whole customers, not months: a customer's rows chain across months. A large pixel's are
        // built in parts of whole customers, each part holding ~customerSliceOrders orders' hours.
        const params = { pixel: pixelId, version: state.version, cutoff: state.next };
        await this.inCustomerParts(
          pixelId,
          (sliced) => customerHoursRefreshSql("all", false, sliced),
          params,
        );
        await this.warehouse.command(refundHoursRefreshSql("all"), params, FOREGROUND);
        const refundMonths = await this.warehouse.query<{ m: number }>(
          "SELECT DISTINCT toYYYYMM(created_at) AS m FROM refunds WHERE pixel_id = {pixel:String} ORDER BY m",
          { pixel: pixelId },
        );
        for (const { m } of refundMonths) {
          await this.warehouse.command(refundFactsRefreshSql("month"), { ...params, month: m }, FOREGROUND);
        }
      } else {
        // `cutoff`: the orders every statement reads are those the new watermark vouches for — visible
        // before the first statement read (the margin), while later rows are past the new watermark.
        const params = { pixel: pixelId, version: state.version, since: state.since, cutoff: state.next };
        await this.warehouse.command(refreshSql("since", once), params, options);
        // No order row since: no hour of the rollup can have changed.
        if (Number(state.orders)) {
          // The places first: the rollups then rebuild every place the changed orders had and have.
          await this.warehouse.command(orderHoursRefreshSql("since"), params, FOREGROUND);
          await this.warehouse.command(orderFactsRefreshSql("since", once), params, options);
          await this.warehouse.command(customerHoursRefreshSql("since", once), params, options);
        }
        // A refund's group holds its order's status and hour: order rows change refund hours too.
        if (Number(state.orders) || Number(state.refunds)) {
          await this.warehouse.command(refundHoursRefreshSql("since"), params, FOREGROUND);
          await this.warehouse.command(refundFactsRefreshSql("since", once), params, options);
        }
      }
      // Written after the rows: a crash in between leaves the old watermark, and the next round
      // rebuilds the same conversions again.
      // `written_at` is when this refresh began to read, not when the row lands: a rebuild that took
      // longer than the margin still read right after a watermark set without one (`settle`), so
      // that watermark must still get its second look.
      await this.warehouse.insert(
        "derived_watermarks",
        [{ pixel_id: pixelId, name: WATERMARK, watermark: state.next, written_at: state.read_at }],
        FOREGROUND,
      );
      await this.buildCohorts(pixelId, { version: state.version, cutoff: state.next }, marginMs === 0);
      if (state.oldest) this.record(Date.now() - Date.parse(`${state.oldest.replace(" ", "T")}Z`));
      consumerProcessed.inc({ consumer: DERIVED_CONSUMER }, 1);
      return { pixelId, refreshed: true, full, watermark: state.next, ms: performance.now() - started };
    });
  }

  /** Pixels due a cohort build with nothing new to refresh (COHORT_BUILDS_DUE_SQL). */
  private async cohortBuildsDue(): Promise<string[]> {
    const rows = await this.warehouse.query<{ pixel_id: string }>(COHORT_BUILDS_DUE_SQL, {
      name: WATERMARK,
      margin: this.margin,
      interval: this.cohortInterval,
    });
    return rows.map((r) => r.pixel_id);
  }

  private get cohortInterval(): number {
    return this.options.cohortIntervalMs ?? COHORT_MIN_INTERVAL_MS;
  }

  /**
   * Builds the pixel's cohort cells when they are due (docs/derived-tables.md, "cohort_cells"): none
   * yet, not covering what the pixel's queries ask for, or order rows past the build's cutoff — as
   * many as COHORT_REBUILD_ROWS, or any once the build is COHORT_REBUILD_AGE_S old or when settling —
   * and never sooner than COHORT_MIN_INTERVAL_MS after the previous build.
   * Queries correct the cells for those rows meanwhile, so a late build costs speed, not exactness.
   * A failure leaves the previous build in use (its record is written last), and is not the other
   * derived tables' failure.
   */
  private async buildCohorts(
    pixelId: string,
    at: { version: string; cutoff: string },
    settling: boolean,
  ): Promise<void> {
    if (this.cohortWaits.waiting(pixelId)) return;
    try {
      const target = (await this.options.cohortTarget?.(pixelId)) ?? DEFAULT_COHORT_TARGET;
      if (target.masks.length === 0 || target.timezones.length === 0) {
        this.cohortWaits.hold(pixelId);
        return;
      }
      const [state] = await this.warehouse.query<{
        builds: number | string;
        slot: number | string;
        timezones: string[];
        masks: (number | string)[];
        age_s: number | string;
        rows_after: number | string;
        unsure: number | string;
        safe: string;
      }>(COHORT_STATE_SQL, { pixel: pixelId, margin: this.margin });
      const built = Number(state?.builds ?? 0) > 0;
      const covers =
        built &&
        target.timezones.every((tz) => state!.timezones.includes(tz)) &&
        target.masks.every((m) => state!.masks.map(Number).includes(m));
      const rows = Number(state?.rows_after ?? 0);
      const age = Number(state?.age_s ?? 0);
      const due =
        !covers ||
        Number(state!.unsure) === 1 ||
        (rows > 0 && (settling || rows >= COHORT_REBUILD_ROWS || age >= COHORT_REBUILD_AGE_S));
      // Settling too: a query may still read the slot the build after next overwrites.
      if (!due || (built && age * 1000 < this.cohortInterval)) return;
      const slot = built ? 1 - Number(state!.slot) : 0;
      const params = { pixel: pixelId, slot, version: at.version, cutoff: at.cutoff };
      // In parts of whole customers for a large pixel, as customer_hours' first build.
      await this.inCustomerParts(pixelId, cohortOrdersBuildSql, params);
      for (const granularity of ["month", "week"] as const) {
        for (const tz of target.timezones) {
          for (const mask of target.masks) {
            await this.warehouse.command(
              cohortCellsBuildSql(granularity),
              { ...params, tz, mask },
              FOREGROUND,
            );
          }
        }
      }
      await this.warehouse.insert(
        "cohort_builds",
        [
          {
            pixel_id: pixelId,
            built_version: at.version,
            slot,
            cutoff: at.cutoff,
            // A row stamped after `safe` may have become visible only after the snapshot read (a
            // settling build reads up to the clock): queries treat such rows as new, and a build
            // after the margin replaces this one (`unsure`).
            fresh_after: at.cutoff < state!.safe ? at.cutoff : state!.safe,
            timezones: target.timezones,
            masks: target.masks,
          },
        ],
        FOREGROUND,
      );
      this.cohortWaits.clear(pixelId);
    } catch (err) {
      this.cohortWaits.hold(pixelId);
      this.options.log?.warn(
        { err, pixelId },
        "cohort cells not built; cohort queries use the previous build",
      );
    }
  }

  /**
   * How far behind the derived tables are, across every pixel: pixels with a row past their
   * watermark. A pixel due only for its second look after a settle holds no such row and is not
   * behind (that look is the worker's own caution, taken on its next round).
   */
  async lag(): Promise<DerivedLag> {
    const pixels = await this.pending({ rechecks: false });
    if (pixels.length === 0) return { pixels: 0, seconds: 0 };
    const [row] = await this.warehouse.query<{ oldest: string | null }>(
      `WITH wm AS (${WATERMARKS})
SELECT toString(minOrNull(x.ingested_at)) AS oldest FROM (
  ${changeFeed("pixel_id, ingested_at", "pixel_id IN {pixels:Array(String)}")}
) AS x LEFT JOIN wm ON wm.pixel_id = x.pixel_id
WHERE x.ingested_at > if(wm.pixel_id = '', toDateTime64('${BEFORE_EVERYTHING}', 3, 'UTC'), wm.w)`,
      { pixels },
    );
    const oldest = row?.oldest ? Date.parse(`${row.oldest.replace(" ", "T")}Z`) : Date.now();
    return { pixels: pixels.length, seconds: Math.max(0, (Date.now() - oldest) / 1000) };
  }

  private record(ms: number): void {
    if (this.delays.length >= DELAYS_KEPT) this.delays.shift();
    this.delays.push(Math.max(0, ms));
  }

  /**
   * Per refresh, how long the oldest row it covered had waited since it was ingested (ms): an upper
   * bound of ingested → answered from the derived table for every row of that refresh.
   */
  freshness(): { refreshes: number; rounds: number; p50: number | null; p99: number | null } {
    const sorted = [...this.delays].sort((a, b) => a - b);
    const at = (q: number) =>
      sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null;
    return { refreshes: this.delays.length, rounds: this.rounds, p50: at(0.5), p99: at(0.99) };
  }
}
