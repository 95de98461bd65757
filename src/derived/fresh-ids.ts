import { LRUCache } from "lru-cache";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { freshIdsSql, MAX_FRESH_IDS } from "./conversion-touches.js";

/**
 * The stored ids a query must read raw (docs/derived-tables.md): those of identities with a row past
 * the pixel's watermark. Kept per pixel and data version: every write bumps the version, and while it
 * stands the set can only shrink (the watermark moves on, the data does not), so a kept set is a
 * superset of the current one — more conversions read raw, never fewer.
 */
export class FreshIds {
  private readonly kept = new LRUCache<string, { ids: string[] | null }>({ max: 2000 });

  constructor(private readonly warehouse: Pick<WarehouseStore, "query">) {}

  /** null: more than MAX_FRESH_IDS; the caller reads everything raw. */
  async of(pixelId: string, version: string): Promise<string[] | null> {
    const key = `${pixelId}\u0000${version}`;
    const hit = this.kept.get(key);
    if (hit) return hit.ids;
    const [row] = await this.warehouse.query<{ ids: string[] }>(freshIdsSql(), { pixel: pixelId });
    const ids = row?.ids ?? [];
    const out = ids.length > MAX_FRESH_IDS ? null : ids;
    this.kept.set(key, { ids: out });
    return out;
  }
}
