/**
 * sql/clickhouse/004_order_facts_hourly.sql on a store whose derived tables were current at 003.
 * Worked example: order o1 (USD 12.50, 03-02 10:20) is stored and conversion_touches is current (a
 * watermark past every row). The migration creates the rollup and clears the watermarks, so the worker's next round
 * is a full build of both tables: the rollup then holds hour 03-02 10:00 with one order of 12.50. A run
 * interrupted after the first statement is finished by the next one.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import { migrationTestStores } from "../helpers/schema-before.js";

const stores = migrationTestStores([
  "001_init.sql",
  "002_orders_by_month.sql",
  "003_derived_conversion_touches.sql",
]);

beforeEach(async () => {
  await stores.restart();
  await stores.wh.insert("orders", [
    {
      pixel_id: "px",
      order_id: "o1",
      created_at: "2026-03-02 10:20:00.000",
      currency: "USD",
      total_price: "12.50",
      financial_status: "paid",
      version: 1,
    },
  ]);
  // As the worker of 003 left it: the pixel's conversion_touches current up to now.
  await stores.wh.insert("derived_watermarks", [
    { pixel_id: "px", name: "conversion_touches", watermark: "2100-01-01 00:00:00.000" },
  ]);
});

const watermarks = async () =>
  (await stores.wh.query<{ n: string }>("SELECT toString(count()) AS n FROM derived_watermarks"))[0]!.n;
const hours = () =>
  stores.wh.query<{ hour: string; n: string; total: string }>(
    `SELECT toString(f.hour) AS hour, toString(f.orders) AS n, toString(f.total_price) AS total
     FROM order_facts_hourly AS f FINAL WHERE f.pixel_id = 'px' AND f.orders > 0`,
  );

describe("004_order_facts_hourly.sql", () => {
  it("creates the rollup and clears the watermarks, so the next round builds it", async () => {
    expect(await watermarks()).toBe("1");
    const report = await migrate(stores.sql, stores.wh);
    expect(report.warehouse).toEqual([
      "004_order_facts_hourly",
      "005_customer_hours",
      "006_refund_facts_hourly",
      "007_cohort_cells",
      "008_credit_cells",
    ]);
    expect(await watermarks()).toBe("0");
    expect(await stores.worker.runOnce(0)).toMatchObject([{ pixelId: "px", full: true }]);
    expect(await hours()).toEqual([{ hour: "2026-03-02 10:00:00.000", n: "1", total: "12.5" }]);
    // Applied once: a later start keeps the watermark.
    expect((await migrate(stores.sql, stores.wh)).warehouse).toEqual([]);
    expect(await watermarks()).toBe("1");
  });

  it("finishes a run interrupted after the watermarks were cleared", async () => {
    await stores.wh.command("TRUNCATE TABLE IF EXISTS derived_watermarks");
    await migrate(stores.sql, stores.wh);
    expect(await stores.worker.runOnce(0)).toMatchObject([{ pixelId: "px", full: true }]);
    expect(await hours()).toEqual([{ hour: "2026-03-02 10:00:00.000", n: "1", total: "12.5" }]);
  });
});
