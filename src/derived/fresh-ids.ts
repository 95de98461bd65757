import { LRUCache } from "lru-cache";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { freshIdsSql, MAX_FRESH_IDS, watermarkSql } from "./conversion-touches.js";
import { freshHoursSql, MAX_FRESH_HOURS } from "./order-facts.js";

/** What a query must read raw; null: too much of it, read everything of that kind raw. */
export interface Fresh {
  /** Stored ids of identities with a row past the watermark (conversion_touches). */
  ids: string[] | null;
  /** UTC hours ('YYYY-MM-DD HH:00:00.000') with an order row past the watermark (order_facts_hourly). */
  hours: string[] | null;
}

/**
 * What a query must read raw (docs/derived-tables.md): the rows past the pixel's watermark. Kept per
 * pixel and data version: every write bumps the version, and while it stands the sets can only
 * shrink (the watermark moves on, the data does not), so a kept set is a superset of the current one
 * — more read raw, never less.
 */
export class FreshIds {
  private readonly kept = new LRUCache<string, Fresh>({ max: 2000 });

  constructor(private readonly warehouse: Pick<WarehouseStore, "query">) {}

  async of(pixelId: string, version: string): Promise<Fresh> {
    const key = `${pixelId}\u0000${version}`;
    const hit = this.kept.get(key);
    if (hit) return hit;
    const [row] = await this.warehouse.query<{ ids: string[]; hours: string[] }>(
      `SELECT ids, ${freshHoursSql(watermarkSql("{pixel:String}"))} AS hours FROM (${freshIdsSql()})`,
      { pixel: pixelId },
    );
    const ids = row?.ids ?? [];
    const hours = row?.hours ?? [];
    const out: Fresh = {
      ids: ids.length > MAX_FRESH_IDS ? null : ids,
      hours: hours.length > MAX_FRESH_HOURS ? null : hours.sort(),
    };
    this.kept.set(key, out);
    return out;
  }
}
