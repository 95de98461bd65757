import { LRUCache } from "lru-cache";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import {
  COHORT_CHANGED_SQL,
  COHORT_MIN_INTERVAL_MS,
  COHORT_SNAPSHOT_CUSTOMERS_SQL,
  MAX_COHORT_CHANGED_ROWS,
} from "./cohort-cells.js";
import {
  BEFORE_EVERYTHING,
  freshIdsSql,
  freshSeenSql,
  MAX_FRESH_IDS,
  watermarkSql,
} from "./conversion-touches.js";
import { CREDIT_REFRESH_SQL, freshCreditHoursSql, MAX_FRESH_CREDIT_HOURS } from "./credit-cells.js";
import { freshCustomersSql, MAX_FRESH_CUSTOMERS } from "./customer-hours.js";
import { freshHoursSql, MAX_FRESH_HOURS } from "./order-facts.js";
import { freshRefundHoursSql, MAX_FRESH_REFUND_HOURS } from "./refund-facts.js";

/** What a query must read raw; null: too much of it, read everything of that kind raw. */
export interface Fresh {
  /** Stored ids of identities with a row past the watermark (conversion_touches). */
  ids: string[] | null;
  /**
   * UTC hours ('YYYY-MM-DD HH:00:00.000') an order with a row past the watermark is or was counted in
   * (order_facts_hourly, customer_hours).
   */
  hours: string[] | null;
  /**
   * Keys of the customers an order with a row past the watermark is or was counted for
   * (customer_hours); null with the hours null, or when there are too many. Read only when asked for
   * (`of`).
   */
  customers?: string[] | null;
  /**
   * UTC hours a refund is or was counted in whose row, or whose order's row, is past the watermark
   * (refund_facts_hourly).
   */
  refundHours: string[] | null;
  /**
   * UTC hours whose credit cells a row since their last refresh can change (credit_cells): the hours
   * of changed orders and of orders with changed refunds, of the conversions whose touches were
   * rebuilt since, and of the orders of the fresh identities; null with the ids null, with no refresh
   * recorded, or when there are too many. Read only when asked for (`of`).
   */
  creditHours?: string[] | null;
}

interface CohortBuildRow {
  slot: number;
  cutoff: string;
  timezones: string[];
  masks: number[];
}
interface CohortChanges {
  customers: string[] | null;
  orders: string[];
  ordersFrom: string;
}
interface KeptBuild {
  row: CohortBuildRow | null;
  changed?: CohortChanges;
}

/**
 * A pixel's current cohort build (docs/derived-tables.md, "cohort_cells") and the customers a query
 * corrects its cells for: those an order row past its cutoff is or was counted for (null: too many).
 * `cutoff` is the build's `fresh_after`: its snapshot's cutoff, or less for a build that read closer
 * to the clock than the margin.
 */
export interface CohortBuild {
  slot: number;
  cutoff: string;
  timezones: string[];
  masks: number[];
  customers: string[] | null;
  /** Orders with a row past the cutoff, and the first instant of the earliest month of those rows. */
  orders: string[];
  ordersFrom: string;
}

/**
 * What a query must read raw (docs/derived-tables.md): the rows past the pixel's watermark. Kept per
 * pixel and data version: every write bumps the version, and while it stands the sets can only
 * shrink (the watermark moves on, the data does not), so a kept set is a superset of the current one
 * — more read raw, never less.
 */
export class FreshIds {
  private readonly kept = new LRUCache<string, { fresh: Fresh; since: string; rows: boolean }>({ max: 2000 });

  private readonly builds: LRUCache<string, KeptBuild> | null;

  /** `cohortIntervalMs`: the least time between two cohort builds (a build is kept half of it). */
  constructor(
    private readonly warehouse: Pick<WarehouseStore, "query">,
    cohortIntervalMs = COHORT_MIN_INTERVAL_MS,
  ) {
    const ttl = Math.floor(cohortIntervalMs / 2);
    this.builds = ttl > 0 ? new LRUCache({ max: 2000, ttl }) : null;
  }

  /**
   * The pixel's cohort build at a data version, when it covers the query's timezone and counting
   * (null: none yet, or it does not). Kept like the sets above (a newer build at the same data version
   * only has fewer customers to correct), but for half the least interval between builds at most (see
   * COHORT_MIN_INTERVAL_MS). What to correct for is read only for a build that covers the query, and
   * gives up past MAX_COHORT_CHANGED_ROWS rows.
   */
  async cohorts(
    pixelId: string,
    version: string,
    wanted: { timezone: string; mask: number },
  ): Promise<CohortBuild | null> {
    const key = `${pixelId}\u0000${version}`;
    let kept = this.builds?.get(key);
    if (!kept) {
      kept = { row: await this.cohortBuildRow(pixelId) };
      this.builds?.set(key, kept);
    }
    const row = kept.row;
    if (!row?.timezones.includes(wanted.timezone) || !row.masks.includes(wanted.mask)) return null;
    kept.changed ??= await this.cohortChanges(pixelId, row);
    return { ...row, ...kept.changed };
  }

  private async cohortBuildRow(pixelId: string): Promise<CohortBuildRow | null> {
    const [row] = await this.warehouse.query<{
      builds: number | string;
      slot: number | string;
      cutoff: string;
      timezones: string[];
      masks: (number | string)[];
    }>(
      `SELECT count() AS builds, any(slot) AS slot, toString(any(fresh_after)) AS cutoff, any(timezones) AS timezones,
  any(masks) AS masks
FROM (SELECT * FROM cohort_builds WHERE pixel_id = {pixel:String} ORDER BY built_version DESC LIMIT 1)`,
      { pixel: pixelId },
    );
    if (!row || Number(row.builds) === 0) return null;
    return {
      slot: Number(row.slot),
      cutoff: row.cutoff,
      timezones: row.timezones,
      masks: row.masks.map(Number),
    };
  }

  /** The orders with a row past the build's `fresh_after` and every customer they are or were counted for. */
  private async cohortChanges(pixelId: string, row: CohortBuildRow): Promise<CohortChanges> {
    const [changed] = await this.warehouse.query<{
      n: number | string;
      orders: string[];
      customers: string[];
      orders_from: string;
    }>(COHORT_CHANGED_SQL, { pixel: pixelId, cutoff: row.cutoff });
    const orders = changed?.orders ?? [];
    const now = changed?.customers ?? [];
    const tooMany = { customers: null, orders: [], ordersFrom: BEFORE_EVERYTHING };
    if (Number(changed?.n ?? 0) > MAX_COHORT_CHANGED_ROWS || orders.length > MAX_FRESH_CUSTOMERS)
      return tooMany;
    if (orders.length === 0) return { customers: [], orders: [], ordersFrom: BEFORE_EVERYTHING };
    const [then] = await this.warehouse.query<{ customers: string[] }>(COHORT_SNAPSHOT_CUSTOMERS_SQL, {
      pixel: pixelId,
      slot: row.slot,
      orders,
    });
    const customers = [...new Set([...now, ...(then?.customers ?? [])])];
    if (customers.length > MAX_FRESH_CUSTOMERS) return tooMany;
    return { customers: customers.sort(), orders: orders.sort(), ordersFrom: changed!.orders_from };
  }

  /**
   * `customers`, `creditHours`: those are wanted too (read past the same watermark as the hours).
   */
  async of(
    pixelId: string,
    version: string,
    options: { customers?: boolean; creditHours?: boolean } = {},
  ): Promise<Fresh> {
    const key = `${pixelId}\u0000${version}`;
    let entry = this.kept.get(key);
    if (!entry) {
      entry = await this.read(pixelId);
      this.kept.set(key, entry);
    }
    if (options.customers && entry.fresh.customers === undefined) {
      entry.fresh = {
        ...entry.fresh,
        customers: await this.customers(pixelId, entry.since, entry.fresh.hours),
      };
    }
    if (options.creditHours && entry.fresh.creditHours === undefined) {
      // Not knowing them costs the cells, not the query: the statements keep their derived forms.
      const creditHours = await this.creditHours(pixelId, entry).catch(() => null);
      entry.fresh = { ...entry.fresh, creditHours };
    }
    return entry.fresh;
  }

  /**
   * The fresh credit hours: those rows since the pixel's last cells refresh can change, and those of
   * the orders of the fresh identities (null: no refresh recorded, or too many). Nothing is looked up
   * when the cells are as current as the derived tables and nothing is past their watermark.
   */
  private async creditHours(
    pixelId: string,
    entry: { fresh: Fresh; since: string; rows: boolean },
  ): Promise<string[] | null> {
    const { ids } = entry.fresh;
    if (ids === null) return null;
    const [cells] = await this.warehouse.query<{ has: number | string; watermark: string; touched: string }>(
      CREDIT_REFRESH_SQL,
      { pixel: pixelId },
    );
    if (!cells || Number(cells.has) === 0) return null;
    if (cells.watermark >= entry.since && !entry.rows && ids.length === 0) return [];
    const [found] = await this.warehouse.query<{ hours: string[] }>(
      `SELECT ${freshCreditHoursSql(ids.length > 0)} AS hours`,
      { pixel: pixelId, since: cells.watermark, touched: cells.touched, ids },
    );
    const hours = found?.hours ?? [];
    return hours.length > MAX_FRESH_CREDIT_HOURS ? null : hours.sort();
  }

  /** The fresh customers: only when there are fresh hours (no order row past the watermark: none). */
  private async customers(pixelId: string, since: string, hours: string[] | null): Promise<string[] | null> {
    if (hours === null) return null;
    if (hours.length === 0) return [];
    const [found] = await this.warehouse.query<{ customers: string[] }>(
      `SELECT ${freshCustomersSql("{since:DateTime64(3, 'UTC')}")} AS customers`,
      { pixel: pixelId, since },
    );
    const customers = found?.customers ?? [];
    return customers.length > MAX_FRESH_CUSTOMERS ? null : customers.sort();
  }

  /**
   * In steps, each value bound for the next: the watermark; the ids on rows past it (one scan of
   * `ingested_at` per table) and whether an order or a refund row is past it; only when one is, the
   * hours and refund hours they are or were counted in; and, only when there are such ids, every id
   * resolving to the same identities. A worker that has caught up costs the first two only (the hours'
   * look-ups cost ~20–25 ms each at 100M events even when they find nothing).
   */
  private async read(pixelId: string): Promise<{ fresh: Fresh; since: string; rows: boolean }> {
    const [mark] = await this.warehouse.query<{ w: string }>(
      `SELECT toString(${watermarkSql("{pixel:String}")}) AS w`,
      { pixel: pixelId },
    );
    const since = mark?.w ?? BEFORE_EVERYTHING;
    const params = { pixel: pixelId, since };
    const past = (table: string) =>
      `(SELECT count() > 0 FROM ${table} WHERE pixel_id = {pixel:String} AND ingested_at > {since:DateTime64(3, 'UTC')})`;
    const [row] = await this.warehouse.query<{ seen: string[]; orders: number; refunds: number }>(
      `SELECT (${freshSeenSql()}) AS seen, ${past("orders")} AS orders, ${past("refunds")} AS refunds`,
      params,
    );
    const seen = row?.seen ?? [];
    const orders = Number(row?.orders ?? 0) > 0;
    const refunds = Number(row?.refunds ?? 0) > 0;
    let hours: string[] = [];
    let refundHours: string[] = [];
    // A refund's hour changes with its order's rows too; an order's hour only with its own.
    if (orders || refunds) {
      const [found] = await this.warehouse.query<{ hours: string[]; refund_hours: string[] }>(
        `SELECT ${orders ? freshHoursSql("{since:DateTime64(3, 'UTC')}") : "CAST([], 'Array(String)')"} AS hours,
  ${freshRefundHoursSql("{since:DateTime64(3, 'UTC')}")} AS refund_hours`,
        params,
      );
      hours = found?.hours ?? [];
      refundHours = found?.refund_hours ?? [];
    }
    let ids: string[] | null = seen.length > MAX_FRESH_IDS ? null : [];
    if (ids && seen.length > 0) {
      const [resolved] = await this.warehouse.query<{ ids: string[] }>(freshIdsSql(), {
        pixel: pixelId,
        seen,
      });
      ids = resolved?.ids ?? [];
      if (ids.length > MAX_FRESH_IDS) ids = null;
    }
    return {
      fresh: {
        ids,
        hours: hours.length > MAX_FRESH_HOURS ? null : hours.sort(),
        refundHours: refundHours.length > MAX_FRESH_REFUND_HOURS ? null : refundHours.sort(),
      },
      since,
      rows: orders || refunds,
    };
  }
}
