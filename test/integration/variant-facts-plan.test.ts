/**
 * The variant cost facts a recalculation batch loads (src/products/facts.ts) are one index probe per
 * variant, whatever the catalog's size, on tables without statistics (embedded Postgres gathers none):
 * never a read of the pixel's whole catalog.
 *
 * Worked example: pixel px sells 20,000 variants v0…v19999 (product p<i/4>), each with one manual COG
 * line of 5 from 2025-01-01, and v7 a second line of 6 from 2026-01-01. A batch asks for 500 variants
 * (v0, v40, v80, …), one of them twice, v7, and one variant nobody sells. The answer holds the 500 known
 * variants once each and v7 with both its lines, the unknown one absent, and each plan node on variants or variant_cost_lines
 * touches at most the ~500 rows asked for — not the 20,000 of the catalog.
 */

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { variantKey } from "../../src/costs/resolve.js";
import { loadVariantCostFacts, VARIANT_FACTS_SQL, VARIANT_LINES_SQL } from "../../src/products/facts.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { explainNodes, rowsOn } from "../helpers/plans.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

const VARIANTS = 20_000;

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`variant cost facts: ${adapter.name}`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      for (const m of readMigrations(join(SQL_DIR, "postgres"))) await sql.exec(m.sql);
      await sql.exec(`
        INSERT INTO accounts (id, name) VALUES ('a', 'A');
        INSERT INTO pixels (id, account_id, name) VALUES ('px', 'a', 'P');
        INSERT INTO products (pixel_id, product_id, title)
          SELECT 'px', 'p' || i, 't' FROM generate_series(0, ${VARIANTS / 4 - 1}) AS i;
        INSERT INTO variants (pixel_id, product_id, variant_id, current_price, handling_fee)
          SELECT 'px', 'p' || (i / 4), 'v' || i, 40, 0.5 FROM generate_series(0, ${VARIANTS - 1}) AS i;
        INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start)
          SELECT 'L' || i, 'px', 'p' || (i / 4), 'v' || i, 'manual', 5, '2025-01-01'
          FROM generate_series(0, ${VARIANTS - 1}) AS i;
        INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start)
          VALUES ('L7b', 'px', 'p1', 'v7', 'manual', 6, '2026-01-01');`);
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
    });

    const asked = Array.from({ length: 500 }, (_, i) => ({
      productId: `p${i * 10}`,
      variantId: `v${i * 40}`,
    }));

    it("answers each variant asked for once, with its lines", async () => {
      const facts = await loadVariantCostFacts(sql, "px", [
        ...asked,
        asked[3]!,
        { productId: "p-none", variantId: "v-none" },
        { productId: "p1", variantId: "v7" },
      ]);
      expect(facts.size).toBe(501);
      const v7 = facts.get(variantKey({ productId: "p1", variantId: "v7" }));
      expect(v7?.manual.map((l) => l.cost)).toStrictEqual([5, 6]);
      expect(facts.has(variantKey({ productId: "p-none", variantId: "v-none" }))).toBe(false);
      const v40 = facts.get(variantKey({ productId: "p10", variantId: "v40" }))!;
      expect(v40.manual.map((l) => l.cost)).toStrictEqual([5]);
      expect(v40.currentPrice).toBe(40);
      expect(v40.handlingFee).toBe(0.5);
    });

    it("probes an index per variant instead of reading the catalog", async () => {
      const params = ["px", asked.map((k) => k.productId), asked.map((k) => k.variantId)];
      for (const text of [VARIANT_FACTS_SQL, VARIANT_LINES_SQL]) {
        const touched = rowsOn(await explainNodes(sql, text, params, true), "variants", "variant_cost_lines");
        expect(touched.length).toBeGreaterThan(0);
        expect(Math.max(...touched)).toBeLessThanOrEqual(600);
      }
    });
  });
}
