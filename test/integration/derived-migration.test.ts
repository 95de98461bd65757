/**
 * sql/clickhouse/003_derived_conversion_touches.sql on a store with rows from before it. Worked
 * example: a touch, a canonical link and an order stored at 002; after the migration each has
 * `ingested_at` = the epoch (older than any watermark, so the first refresh covers it), a row written
 * afterwards gets the time of its insert, and the derived tables exist. A run interrupted after any
 * statement is finished by the next one, with the same result.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import { migrationStatements, migrationTestStores, runMigrationUntil } from "../helpers/schema-before.js";

const FILE = "003_derived_conversion_touches.sql";
const stores = migrationTestStores(["001_init.sql", "002_orders_by_month.sql"]);

beforeEach(async () => {
  await stores.restart();
  await stores.wh.insert("touchpoints", [
    {
      pixel_id: "px",
      canonical_id: "v1",
      event_id: "e1",
      touch_time: "2026-03-01 10:00:00.000",
      source: "google",
    },
  ]);
  await stores.wh.insert("identity_links", [
    { pixel_id: "px", alias_type: "canonical", alias_value: "v2", canonical_id: "v1", version: 1 },
  ]);
  await stores.wh.insert("orders", [
    { pixel_id: "px", order_id: "o1", created_at: "2026-03-02 00:00:00.000", currency: "USD", version: 1 },
  ]);
});

/** `ingested_at` of every row of the three tables, as text. */
async function stamps(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of ["touchpoints", "identity_links", "orders"]) {
    const rows = await stores.wh.query<{ at: string }>(`SELECT toString(ingested_at) AS at FROM ${table}`);
    out[table] = rows.map((r) => r.at);
  }
  return out;
}

const EPOCH = "1970-01-01 00:00:00.000";
const migrated = { touchpoints: [EPOCH], identity_links: [EPOCH], orders: [EPOCH] };

describe(FILE, () => {
  it("stamps earlier rows with the epoch and later ones with their insert time", async () => {
    const report = await migrate(stores.sql, stores.wh);
    expect(report.warehouse).toEqual([
      "003_derived_conversion_touches",
      "004_order_facts_hourly",
      "005_customer_hours",
      "006_refund_facts_hourly",
      "007_cohort_cells",
      "008_credit_cells",
    ]);
    expect(await stamps()).toEqual(migrated);
    const [now] = await stores.wh.query<{ t: string }>("SELECT toString(now64(3, 'UTC')) AS t");
    await stores.wh.insert("orders", [
      { pixel_id: "px", order_id: "o2", created_at: "2026-03-03 00:00:00.000", currency: "USD", version: 1 },
    ]);
    const [o2] = await stores.wh.query<{ at: string }>(
      "SELECT toString(ingested_at) AS at FROM orders WHERE order_id = 'o2'",
    );
    expect(o2!.at >= now!.t.slice(0, 19)).toBe(true);
    const tables = await stores.wh.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('conversion_touches', 'derived_watermarks') ORDER BY name",
    );
    expect(tables.map((t) => t.name)).toEqual(["conversion_touches", "derived_watermarks"]);
  });

  const statements = migrationStatements(FILE).length;
  it.each(Array.from({ length: statements - 1 }, (_, i) => i + 1))(
    "finishes a run interrupted after %i statement(s)",
    async (done) => {
      await runMigrationUntil(stores.wh, FILE, done);
      await migrate(stores.sql, stores.wh);
      expect(await stamps()).toEqual(migrated);
    },
  );
});
