/**
 * Orders live in monthly partitions of their creation time and FINAL resolves versions inside each
 * month (docs/data-formats.md, "An order's creation time changes"). Worked example: order "m-1" is
 * synced created 2026-03-10 (version 1), then created 2026-05-20 (version 2): March keeps a
 * tombstone just below version 2, so a March range counts 0 orders and a May range 1; a version 3 back in
 * March hides May the same way. Whatever the order of concurrent syncs, one live row remains, and a
 * live row left behind by a lost tombstone is hidden by the order's next sync. On embedded stores
 * and on Postgres (where the per-pixel lock is a Postgres advisory lock).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SyncResult } from "../../src/sync/schemas.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";

type Json = Record<string, unknown>;

const SETUPS = [
  { name: "embedded stores", sql: "pglite" as const, available: true },
  { name: "Postgres", sql: "postgres" as const, available: Boolean(TEST_DATABASE_URL) },
];
if (!TEST_DATABASE_URL) skipReason("orders by month (Postgres)", "TEST_DATABASE_URL");

const order = (id: string, createdAt: string, version: number): Json => ({
  id,
  createdAt,
  currency: "USD",
  totalPrice: 100,
  financialStatus: "paid",
  updatedAt: new Date(Date.parse("2026-06-01T00:00:00Z") + version * 1000).toISOString(),
});

describe.each(SETUPS)("orders move between creation months ($name)", ({ sql, available }) => {
  let app: TestApp;
  let px: Awaited<ReturnType<TestApp["pixelWithKey"]>>;
  beforeAll(async () => {
    if (!available) return;
    app = await startTestApp({ sql });
    px = await app.pixelWithKey(["sync:write", "analytics:read"]);
  });
  afterAll(() => app?.close());

  async function sync(records: Json[]): Promise<SyncResult> {
    const res = await app.call("POST", "/accounts/api/sync/orders", {
      key: px.key,
      pixelId: px.pixelId,
      body: { records },
    });
    expect(res.status, res.text).toBe(200);
    return res.body as SyncResult;
  }

  /** orders.count per month of 2026 over the query API (no cache), January..June. */
  async function countsByMonth(): Promise<number[]> {
    const res = await app.call("POST", "/db-mgmt/api/query", {
      key: px.key,
      pixelId: px.pixelId,
      headers: { "cache-control": "no-cache" },
      body: {
        pixelId: px.pixelId,
        measures: ["orders.count"],
        dateRange: { start: "2026-01-01", end: "2026-06-30" },
        granularity: "month",
        timezone: "UTC",
      },
    });
    expect(res.status, res.text).toBe(200);
    const rows = ((res.body as { results: Json[] }).results[0]!.data as { primary: Json[] }).primary;
    return rows.map((r) => Number(r["orders.count"]));
  }

  /** Rows of one order across months as the engine resolves them (FINAL per month). */
  const live = (id: string) =>
    app.stores.warehouse.query<{ month: number; version: number }>(
      "SELECT toYYYYMM(created_at) AS month, version FROM orders FINAL WHERE pixel_id = {p:String} AND order_id = {id:String} ORDER BY month",
      { p: px.pixelId, id },
    );

  const mergedMonths = async (id: string) =>
    (
      await app.stores.warehouse.query<{ month: number }>(
        "SELECT toYYYYMM(created_at) AS month FROM orders FINAL WHERE pixel_id = {p:String} AND order_id = {id:String} SETTINGS do_not_merge_across_partitions_select_final = 0",
        { p: px.pixelId, id },
      )
    ).map((r) => Number(r.month));

  it.skipIf(!available)("a move leaves a tombstone in the old month; counts follow the order", async () => {
    expect(await sync([order("m-1", "2026-03-10T12:00:00Z", 1)])).toMatchObject({ accepted: 1 });
    expect(await countsByMonth()).toEqual([0, 0, 1, 0, 0, 0]);

    expect(await sync([order("m-1", "2026-05-20T08:00:00Z", 2)])).toMatchObject({ updated: 1 });
    expect(await countsByMonth()).toEqual([0, 0, 0, 0, 1, 0]);
    expect((await live("m-1")).map((r) => [Number(r.month), Number(r.version)])).toEqual([
      [202605, Date.parse("2026-06-01T00:00:02Z")],
    ]);
    const tombstones = await app.stores.warehouse.query<{ month: number; version: number }>(
      "SELECT toYYYYMM(created_at) AS month, version FROM orders WHERE pixel_id = {p:String} AND order_id = 'm-1' AND is_deleted = 1",
      { p: px.pixelId },
    );
    expect(tombstones.map((t) => [Number(t.month), Number(t.version)])).toEqual([
      [202603, Date.parse("2026-06-01T00:00:02Z") - 1],
    ]);
    // A reader whose FINAL merges across months sees the same single live row.
    expect(await mergedMonths("m-1")).toEqual([202605]);

    // Back to March: May is hidden now, and March's newer live row beats its tombstone.
    expect(await sync([order("m-1", "2026-03-01T00:00:00Z", 3)])).toMatchObject({ updated: 1 });
    expect(await countsByMonth()).toEqual([0, 0, 1, 0, 0, 0]);
    expect(await mergedMonths("m-1")).toEqual([202603]);
    // An older version elsewhere is unchanged and writes nothing.
    expect(await sync([order("m-1", "2026-01-15T00:00:00Z", 2)])).toMatchObject({ unchanged: 1 });
    expect(await countsByMonth()).toEqual([0, 0, 1, 0, 0, 0]);
    // The console's orders table sees the order once, without the storage column.
    const res = await app.call("POST", "/db-mgmt/api/sql", {
      key: px.key,
      pixelId: px.pixelId,
      body: { pixelId: px.pixelId, sql: "SELECT * FROM orders WHERE order_id = 'm-1'" },
    });
    expect(res.status, res.text).toBe(200);
    const body = res.body as { columns: { name: string }[]; rows: unknown[][] };
    expect(body.rows).toHaveLength(1);
    expect(body.columns.map((c) => c.name)).toContain("created_at");
    expect(body.columns.map((c) => c.name)).not.toContain("is_deleted");
  });

  it.skipIf(!available)("concurrent syncs of one order to different months leave one live row", async () => {
    const months = ["01", "02", "03", "04", "05", "06"];
    await Promise.all(months.map((m, i) => sync([order("m-2", `2026-${m}-11T00:00:00Z`, 10 + i)])));
    const rows = await live("m-2");
    expect(rows.map((r) => [Number(r.month), Number(r.version)])).toEqual([
      [202606, Date.parse("2026-06-01T00:00:15Z")],
    ]);
  });

  it.skipIf(!available)("a live row left behind by a lost tombstone is hidden by the next sync", async () => {
    await sync([order("m-3", "2026-04-02T00:00:00Z", 5)]);
    // What a crash between the rows and the tombstone leaves: an older live row in another month.
    await app.stores.warehouse.insert("orders", [
      {
        pixel_id: px.pixelId,
        order_id: "m-3",
        created_at: "2026-02-02 00:00:00.000",
        currency: "USD",
        total_price: "100",
        financial_status: "paid",
        version: Date.parse("2026-06-01T00:00:04Z"),
      },
    ]);
    expect((await live("m-3")).length).toBe(2);
    expect(await sync([order("m-3", "2026-04-02T00:00:00Z", 5)])).toMatchObject({ unchanged: 1 });
    expect((await live("m-3")).map((r) => Number(r.month))).toEqual([202604]);
  });
});
