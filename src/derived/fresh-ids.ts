import { LRUCache } from "lru-cache";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { COHORT_MIN_INTERVAL_MS, cohortFreshCustomersSql, cohortFreshOrdersSql } from "./cohort-cells.js";
import {
  BEFORE_EVERYTHING,
  freshIdsSql,
  freshSeenSql,
  MAX_FRESH_IDS,
  watermarkSql,
} from "./conversion-touches.js";
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
}

/**
 * A pixel's current cohort build (docs/derived-tables.md, "cohort_cells") and the customers a query
 * corrects its cells for: those an order row past its cutoff is or was counted for (null: too many).
 * `cutoff` is the build's `fresh_after`: its snapshot's cutoff less the margin.
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
  private readonly kept = new LRUCache<string, { fresh: Fresh; since: string }>({ max: 2000 });

  private readonly builds: LRUCache<string, { build: CohortBuild | null }> | null;

  /** `cohortIntervalMs`: the least time between two cohort builds (a build is kept half of it). */
  constructor(
    private readonly warehouse: Pick<WarehouseStore, "query">,
    cohortIntervalMs = COHORT_MIN_INTERVAL_MS,
  ) {
    const ttl = Math.floor(cohortIntervalMs / 2);
    this.builds = ttl > 0 ? new LRUCache({ max: 2000, ttl }) : null;
  }

  /**
   * The pixel's cohort build at a data version (null: none yet). Kept like the sets above (a newer
   * build at the same data version only has fewer customers to correct), but for half the least
   * interval between builds at most: its slot is overwritten by the build after next, never sooner
   * than that interval after the next one.
   */
  async cohorts(pixelId: string, version: string): Promise<CohortBuild | null> {
    const key = `${pixelId}\u0000${version}`;
    const kept = this.builds?.get(key);
    if (kept) return kept.build;
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
    let build: CohortBuild | null = null;
    if (row && Number(row.builds) > 0) {
      const slot = Number(row.slot);
      const [fresh] = await this.warehouse.query<{
        customers: string[];
        orders: string[];
        orders_from: string;
      }>(
        `SELECT ${cohortFreshCustomersSql()} AS customers, o.orders AS orders, o.orders_from AS orders_from
FROM ${cohortFreshOrdersSql()} AS o`,
        { pixel: pixelId, slot, cutoff: row.cutoff },
      );
      const customers = fresh?.customers ?? [];
      const orders = fresh?.orders ?? [];
      const many = customers.length > MAX_FRESH_CUSTOMERS || orders.length > MAX_FRESH_CUSTOMERS;
      build = {
        slot,
        cutoff: row.cutoff,
        timezones: row.timezones,
        masks: row.masks.map(Number),
        customers: many ? null : customers.sort(),
        orders: orders.sort(),
        ordersFrom: fresh?.orders_from ?? BEFORE_EVERYTHING,
      };
    }
    this.builds?.set(key, { build });
    return build;
  }

  /** `customers`: the fresh customers are wanted too (read past the same watermark as the hours). */
  async of(pixelId: string, version: string, options: { customers?: boolean } = {}): Promise<Fresh> {
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
    return entry.fresh;
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
  private async read(pixelId: string): Promise<{ fresh: Fresh; since: string }> {
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
    };
  }
}
