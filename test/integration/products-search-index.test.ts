/**
 * The catalog search query is served by the trigram indexes of migration 006 on every SQL adapter:
 * PGlite must have loaded pg_trgm, and the query's ILIKE must match the indexes' operator class. The
 * plan of the exact query the service runs reads the trigram indexes of all three searched columns
 * once no other path is left. (Unforced, on 100,000 variants, the planner picks them by itself:
 * docs/products.md, from `npm run bench:search`.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containsPattern, SEARCH_IDS_SQL } from "../../src/products/search.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { skipReason } from "../helpers/env.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

for (const adapter of sqlAdapters.filter((a) => a.available)) {
  describe(`catalog search indexes (${adapter.name})`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      for (const m of readMigrations(`${SQL_DIR}/postgres`)) await sql.transaction((tx) => tx.exec(m.sql));
      await sql.exec(`
        INSERT INTO accounts (id, name) VALUES ('a', 'A');
        INSERT INTO pixels (id, account_id, name) VALUES ('px', 'a', 'P');
        INSERT INTO products (pixel_id, product_id, title)
          SELECT 'px', 'prod-' || n, 'Linen Shirt ' || n FROM generate_series(1, 2000) AS n;
        INSERT INTO variants (pixel_id, product_id, variant_id, sku, title)
          SELECT 'px', 'prod-' || n, 'var-' || n || '-' || v, 'SKU-' || n || '-' || v, 'Navy / ' || v
          FROM generate_series(1, 2000) AS n, generate_series(1, 4) AS v;
        ANALYZE products; ANALYZE variants;`);
    });
    afterAll(() => opened?.close());

    it("pg_trgm is installed", async () => {
      const { rows } = await sql.query<{ extname: string }>(
        "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'",
      );
      expect(rows).toHaveLength(1);
    });

    it("the search query's plan reads the trigram indexes of product title, variant title and SKU", async () => {
      // Which index wins at a given size is the planner's call (on 100,000 variants it picks these by
      // itself). What must hold on every adapter is that they can serve the query, so the competing
      // paths — sequential scans and the btrees on pixel_id — are taken away in a rolled-back transaction.
      let lines: Record<string, string>[] = [];
      const rollback = new Error("rollback");
      await sql
        .transaction(async (tx) => {
          await tx.exec(`SET LOCAL enable_seqscan = off;
            ALTER TABLE products DROP CONSTRAINT products_pkey CASCADE;
            ALTER TABLE variants DROP CONSTRAINT variants_pkey CASCADE;
            DROP INDEX variants_pixel_variant_idx;`);
          lines = (
            await tx.query<Record<string, string>>(`EXPLAIN (COSTS OFF) ${SEARCH_IDS_SQL}`, [
              "px",
              "",
              containsPattern("sku-1242-3"),
              26,
            ])
          ).rows;
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
      const plan = lines.map((r) => Object.values(r)[0]).join("\n");
      expect(plan).toContain("Bitmap Index Scan on products_title_trgm_idx");
      expect(plan).toContain("Bitmap Index Scan on variants_title_trgm_idx");
      expect(plan).toContain("Bitmap Index Scan on variants_sku_trgm_idx");
      expect(plan).not.toContain("Seq Scan");
      // The rolled-back indexes are all back, and the query answers.
      const pk = await sql.query(
        "SELECT 1 FROM pg_indexes WHERE indexname IN ('products_pkey', 'variants_pkey')",
      );
      expect(pk.rows).toHaveLength(2);
      const { rows } = await sql.query<{ product_id: string }>(SEARCH_IDS_SQL, [
        "px",
        "",
        containsPattern("SKU-1242-3"),
        26,
      ]);
      expect(rows).toStrictEqual([{ product_id: "prod-1242" }]);
    });
  });
}

if (!sqlAdapters.find((a) => a.name === "postgres")?.available) {
  it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
}
