/**
 * sql/clickhouse/002_orders_by_month.sql on a store that holds orders in the old layout (one
 * partition, versions of an order possibly in different months, not merged yet). Worked example:
 * "a" at version 1 created in January and version 2 created in March, "b" at version 1 in February.
 * After the migration FINAL shows "a" once (March, version 2) and "b" once; the scratch table is gone.
 * A run interrupted after any statement is finished by the next run, and a write that reached the
 * old table between the copy and the swap — even one that moved an order — is carried over.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import { migrationTestStores, runMigrationUntil } from "../helpers/schema-before.js";

const stores = migrationTestStores(["001_init.sql"]);

const row = (id: string, createdAt: string, version: number, total = "10") => ({
  pixel_id: "px",
  order_id: id,
  created_at: `${createdAt} 00:00:00.000`,
  currency: "USD",
  total_price: total,
  financial_status: "paid",
  version,
});

/** A warehouse at 001 only (orders in the old layout) with the worked example's rows. */
beforeEach(async () => {
  await stores.restart();
  await stores.wh.insert("orders", [row("a", "2026-01-05", 1), row("b", "2026-02-07", 1)]);
  await stores.wh.insert("orders", [row("a", "2026-03-09", 2, "12")]);
});

const liveOrders = () =>
  stores.wh.query<{ id: string; month: number; version: number; total: string }>(
    "SELECT order_id AS id, toYYYYMM(created_at) AS month, version, toString(total_price) AS total FROM orders FINAL ORDER BY id",
  );
const tableNames = async () =>
  (
    await stores.wh.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase()",
    )
  )
    .map((t) => t.name)
    .sort();

const expected = [
  { id: "a", month: 202603, version: 2, total: "12" },
  { id: "b", month: 202602, version: 1, total: "10" },
];
const asNumbers = (rows: Awaited<ReturnType<typeof liveOrders>>) =>
  rows.map((r) => ({ ...r, month: Number(r.month), version: Number(r.version) }));

describe("002_orders_by_month", () => {
  it("keeps the latest version of every order, once, in its creation month", async () => {
    const report = await migrate(stores.sql, stores.wh);
    expect(report.warehouse).toEqual([
      "002_orders_by_month",
      "003_derived_conversion_touches",
      "004_order_facts_hourly",
      "005_customer_hours",
      "006_refund_facts_hourly",
      "007_cohort_cells",
      "008_credit_cells",
    ]);
    expect(asNumbers(await liveOrders())).toEqual(expected);
    expect(await tableNames()).not.toContain("orders_by_month");
    const [engine] = await stores.wh.query<{ partition_key: string; engine_full: string }>(
      "SELECT partition_key, engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'orders'",
    );
    expect(engine!.partition_key).toBe("toYYYYMM(created_at)");
    expect(engine!.engine_full).toMatch(/ReplacingMergeTree\(version, is_deleted\)/);
  });

  it.each([1, 2, 3, 4, 5])("finishes a run interrupted after %i statement(s)", async (done) => {
    await runMigrationUntil(stores.wh, "002_orders_by_month.sql", done);
    await migrate(stores.sql, stores.wh);
    expect(asNumbers(await liveOrders())).toEqual(expected);
    expect(await tableNames()).not.toContain("orders_by_month");
  });

  it("carries over a write that reached the old table between the copy and the swap", async () => {
    await runMigrationUntil(stores.wh, "002_orders_by_month.sql", 2); // scratch table created and filled
    // A writer still on the old table moves "b" to April and adds "c".
    await stores.wh.insert("orders", [row("b", "2026-04-01", 3, "30"), row("c", "2026-04-02", 1, "5")]);
    await migrate(stores.sql, stores.wh);
    expect(asNumbers(await liveOrders())).toEqual([
      expected[0],
      { id: "b", month: 202604, version: 3, total: "30" },
      { id: "c", month: 202604, version: 1, total: "5" },
    ]);
  });
});
