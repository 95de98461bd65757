/**
 * sql/clickhouse/005_customer_hours.sql on a store whose derived tables were current at 004.
 * Worked example: cust-1 ordered on 03-02 10:20 (USD 12.50) and 03-05 08:00 (USD 4.00), and the
 * rollup is current (a watermark of the previous version past every row). The migration creates
 * customer_hours and order_hours and clears nothing; the worker's watermark is named after the newest
 * table, so its next round finds none for the pixel and builds every derived table: customer_hours
 * then holds cust-1 at 03-02 10:00 with no earlier counted hour and at 03-05 08:00 with 03-02 10:00
 * before it; order_hours each order's hour. The previous version's watermark stays, untouched.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import { migrationTestStores } from "../helpers/schema-before.js";

const stores = migrationTestStores([
  "001_init.sql",
  "002_orders_by_month.sql",
  "003_derived_conversion_touches.sql",
  "004_order_facts_hourly.sql",
]);

const order = (id: string, at: string, total: string) => ({
  pixel_id: "px",
  order_id: id,
  created_at: at,
  currency: "USD",
  total_price: total,
  financial_status: "paid",
  customer_id: "cust-1",
  version: 1,
});

beforeEach(async () => {
  await stores.restart();
  await stores.wh.insert("orders", [
    order("o1", "2026-03-02 10:20:00.000", "12.50"),
    order("o2", "2026-03-05 08:00:00.000", "4.00"),
  ]);
  // As the worker of 004 left it: the pixel's derived tables current up to now.
  await stores.wh.insert("derived_watermarks", [
    { pixel_id: "px", name: "conversion_touches", watermark: "2100-01-01 00:00:00.000" },
  ]);
});

/** Watermarks per name, "name:count". */
const watermarks = async () =>
  (
    await stores.wh.query<{ w: string }>(
      "SELECT concat(name, ':', toString(count())) AS w FROM derived_watermarks GROUP BY name ORDER BY name",
    )
  ).map((r) => r.w);
const customerHours = async () =>
  (
    await stores.wh.query<{ row: string }>(
      `SELECT concat(toString(hour), ' ', customer_key, ' ', toString(kinds), ' ', toString(prev)) AS row
       FROM customer_hours FINAL WHERE pixel_id = 'px' ORDER BY hour`,
    )
  ).map((r) => r.row);
const orderHours = async () =>
  (
    await stores.wh.query<{ row: string }>(
      "SELECT concat(order_id, ' ', toString(hour), ' ', customer_key) AS row FROM order_hours FINAL WHERE pixel_id = 'px' ORDER BY order_id",
    )
  ).map((r) => r.row);
const rollupColumns = async () =>
  (
    await stores.wh.query<{ name: string }>(
      "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'order_facts_hourly' ORDER BY position",
    )
  ).map((c) => c.name);

describe("005_customer_hours.sql", () => {
  it("creates the tables and clears nothing; the next round, finding no watermark of its own, builds them", async () => {
    expect(await watermarks()).toEqual(["conversion_touches:1"]);
    const report = await migrate(stores.sql, stores.wh);
    expect(report.warehouse).toEqual([
      "005_customer_hours",
      "006_refund_facts_hourly",
      "007_cohort_cells",
      "008_credit_cells",
    ]);
    expect(await watermarks()).toEqual(["conversion_touches:1"]);
    // The rollup's former customer states stay for a process of the previous version.
    expect(await rollupColumns()).toContain("customers");
    expect(await stores.worker.runOnce(0)).toMatchObject([{ pixelId: "px", full: true }]);
    expect(await customerHours()).toEqual([
      "2026-03-02 10:00:00.000 c:cust-1 1 1900-01-01 00:00:00.000",
      "2026-03-05 08:00:00.000 c:cust-1 1 2026-03-02 10:00:00.000",
    ]);
    expect(await orderHours()).toEqual([
      "o1 2026-03-02 10:00:00.000 c:cust-1",
      "o2 2026-03-05 08:00:00.000 c:cust-1",
    ]);
    expect(await watermarks()).toEqual(["conversion_touches:1", "refund_facts_hourly:1"]);
    expect(await stores.worker.runOnce(0)).toEqual([]);
    // Applied once.
    expect((await migrate(stores.sql, stores.wh)).warehouse).toEqual([]);
  });
});
