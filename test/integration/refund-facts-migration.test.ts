/**
 * sql/clickhouse/006_refund_facts_hourly.sql on a store whose derived tables were current at 005.
 * Worked example: o1 (03-02 10:20, paid) has r1 (03-04 09:30, USD 2.50), both stored before the
 * migration, and the pixel's watermark of the previous version is past every row. After it, r1 has
 * `ingested_at` = the epoch (older than any watermark), a refund written afterwards the time of its
 * insert, and the two tables exist; nothing is cleared. The worker's watermark is named after the
 * newest table, so its next round finds none for the pixel and builds every derived table:
 * refund_facts_hourly then holds r1 at 03-04 09:00 under o1's hour 03-02 10:00. A run interrupted
 * after any statement is finished by the next one, with the same result.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import { migrationStatements, migrationTestStores, runMigrationUntil } from "../helpers/schema-before.js";

const FILE = "006_refund_facts_hourly.sql";
const stores = migrationTestStores([
  "001_init.sql",
  "002_orders_by_month.sql",
  "003_derived_conversion_touches.sql",
  "004_order_facts_hourly.sql",
  "005_customer_hours.sql",
]);

const refund = (id: string, at: string) => ({
  pixel_id: "px",
  refund_id: id,
  order_id: "o1",
  created_at: at,
  amount: "2.50",
  currency: "USD",
  version: 1,
});

beforeEach(async () => {
  await stores.restart();
  await stores.wh.insert("orders", [
    {
      pixel_id: "px",
      order_id: "o1",
      created_at: "2026-03-02 10:20:00.000",
      currency: "USD",
      total_price: "20.00",
      financial_status: "paid",
      customer_id: "cust-1",
      version: 1,
    },
  ]);
  await stores.wh.insert("refunds", [refund("r1", "2026-03-04 09:30:00.000")]);
  // As the worker of 005 left it: the pixel's derived tables current up to now.
  await stores.wh.insert("derived_watermarks", [
    { pixel_id: "px", name: "customer_hours", watermark: "2100-01-01 00:00:00.000" },
  ]);
});

const EPOCH = "1970-01-01 00:00:00.000";
const stamps = async () =>
  (
    await stores.wh.query<{ s: string }>(
      "SELECT concat(refund_id, ' ', toString(ingested_at)) AS s FROM refunds ORDER BY refund_id",
    )
  ).map((r) => r.s);
const tables = async () =>
  (
    await stores.wh.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('refund_facts_hourly', 'refund_hours') ORDER BY name",
    )
  ).map((t) => t.name);
const watermarks = async () =>
  (
    await stores.wh.query<{ w: string }>(
      "SELECT concat(name, ':', toString(count())) AS w FROM derived_watermarks GROUP BY name ORDER BY name",
    )
  ).map((r) => r.w);

describe(FILE, () => {
  it("stamps earlier refunds with the epoch, clears nothing, and the next round builds the rollup", async () => {
    const report = await migrate(stores.sql, stores.wh);
    expect(report.warehouse).toEqual(["006_refund_facts_hourly", "007_cohort_cells", "008_credit_cells"]);
    expect(await stamps()).toEqual([`r1 ${EPOCH}`]);
    expect(await tables()).toEqual(["refund_facts_hourly", "refund_hours"]);
    expect(await watermarks()).toEqual(["customer_hours:1"]);
    const [now] = await stores.wh.query<{ t: string }>("SELECT toString(now64(3, 'UTC')) AS t");
    await stores.wh.insert("refunds", [refund("r2", "2026-03-05 09:30:00.000")]);
    const r2 = (await stamps())[1]!.slice(3);
    expect(r2 >= now!.t.slice(0, 19)).toBe(true);

    expect(await stores.worker.runOnce(0)).toMatchObject([{ pixelId: "px", full: true }]);
    const groups = await stores.wh.query<{ g: string }>(
      `SELECT concat(toString(hour), ' ', toString(order_hour), ' ', toString(refunds), ' ', toString(amount)) AS g
       FROM refund_facts_hourly FINAL WHERE pixel_id = 'px' ORDER BY hour`,
    );
    expect(groups.map((r) => r.g)).toEqual([
      "2026-03-04 09:00:00.000 2026-03-02 10:00:00.000 1 2.5",
      "2026-03-05 09:00:00.000 2026-03-02 10:00:00.000 1 2.5",
    ]);
    expect(await watermarks()).toEqual(["customer_hours:1", "refund_facts_hourly:1"]);
    expect(await stores.worker.runOnce(0)).toEqual([]);
    // Applied once.
    expect((await migrate(stores.sql, stores.wh)).warehouse).toEqual([]);
  });

  const statements = migrationStatements(FILE).length;
  it.each(Array.from({ length: statements - 1 }, (_, i) => i + 1))(
    "finishes a run interrupted after %i statement(s)",
    async (done) => {
      await runMigrationUntil(stores.wh, FILE, done);
      await migrate(stores.sql, stores.wh);
      expect(await stamps()).toEqual([`r1 ${EPOCH}`]);
      expect(await tables()).toEqual(["refund_facts_hourly", "refund_hours"]);
    },
  );
});
