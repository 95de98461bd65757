/**
 * Per-order cost snapshots end to end (docs/costs.md): the catalog and orders arrive through the sync
 * endpoints, which publish `orders.changed` on the bus (the relay moves `costs.changed` there), the recalculation worker
 * (driven with `runOnce`) writes `order_costs` versions, and the query engine's costs and profit
 * measures change for exactly the orders a COG change touches. Embedded stores (PGlite, chDB).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecalcService } from "../../src/costs/recalc.js";
import { loadVariantCostFacts } from "../../src/products/facts.js";
import { DataVersions } from "../../src/shared/data-version.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

type Json = Record<string, unknown>;
let app: TestApp;
let px: Awaited<ReturnType<TestApp["pixelWithKey"]>>;

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  app.call(method, path, {
    key: px.key,
    pixelId: px.pixelId,
    ...(body !== undefined ? { body } : {}),
    headers,
  });

const order = (id: string, day: string, lines: [string, number][]) => ({
  id,
  createdAt: `${day}T12:00:00Z`,
  currency: "USD",
  totalPrice: 100,
  subtotalPrice: 100,
  financialStatus: "paid",
  gateway: "stripe",
  country: "DE",
  lineItems: lines.map(([variantId, quantity]) => ({ productId: "p1", variantId, quantity, price: 40 })),
  updatedAt: `${day}T12:00:00Z`,
});

async function drain() {
  await app.services.relay.runOnce();
  return app.services.recalcWorker.runOnce();
}

async function perDay(measure: string, headers: Record<string, string> = { "Cache-Control": "no-cache" }) {
  const res = await call(
    "POST",
    "/db-mgmt/api/query",
    {
      pixelId: px.pixelId,
      measures: [measure],
      dateRange: { start: "2026-03-01", end: "2026-03-10" },
      timezone: "UTC",
    },
    headers,
  );
  expect(res.status, res.text).toBe(200);
  const rows = ((res.body as { results: Json[] }).results[0]!.data as { primary: Json[] }).primary;
  return Object.fromEntries(rows.filter((r) => r[measure] !== 0).map((r) => [r.dt, r[measure]]));
}

/** The current snapshot version of each order (rows may already be merged away). */
const currentVersions = async () =>
  Object.fromEntries(
    (
      await app.stores.warehouse.query<{ order_id: string; v: string }>(
        "SELECT order_id, toString(max(version)) AS v FROM order_costs WHERE pixel_id = {p:String} GROUP BY order_id ORDER BY order_id",
        { p: px.pixelId },
      )
    ).map((r) => [r.order_id, r.v]),
  );
let last: Record<string, string> = {};
/** Which orders got a new snapshot version since the previous call. */
async function rewritten(): Promise<string[]> {
  const now = await currentVersions();
  const changed = Object.keys(now).filter((o) => now[o] !== last[o]);
  last = now;
  return changed;
}

beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey(["costs:read", "costs:write", "sync:write", "analytics:read"]);
  const variants = ["v1", "v2"].map((id) => ({
    id,
    sku: id,
    title: id,
    currency: "USD",
    currentPrice: 40,
    inventory: 1,
  }));
  const sync = await call("POST", "/accounts/api/sync/products", {
    records: [{ id: "p1", title: "Shirt", variants, updatedAt: "2026-02-01T00:00:00Z" }],
  });
  expect(sync.status, sync.text).toBe(200);
  for (const [v, cost] of [
    ["v1", 10],
    ["v2", 5],
  ] as const) {
    const r = await call("POST", `/accounts/api/products/p1/${v}/cogs`, {
      cost,
      effectiveStartDate: "2026-03-01",
    });
    expect(r.status, r.text).toBeLessThan(300);
  }
}, 60_000);
afterAll(() => app?.close());

describe("per-order cost snapshots", () => {
  it("orders synced → snapshots; a COG change moves gross profit for exactly the affected orders", async () => {
    const res = await call("POST", "/accounts/api/sync/orders", {
      records: [
        order("o1", "2026-03-02", [["v1", 2]]),
        order("o2", "2026-03-03", [["v2", 1]]),
        order("o3", "2026-03-10", [["v1", 1]]),
        order("o4", "2026-03-10", [["v2", 2]]),
      ],
    });
    expect(res.status, res.text).toBe(200);
    const first = await drain();
    expect(first.failed).toBe(0);
    expect(await rewritten()).toEqual(["o1", "o2", "o3", "o4"]);
    expect(await perDay("costs.cogs")).toEqual({ "2026-03-02": 20, "2026-03-03": 5, "2026-03-10": 20 });
    const profitBefore = await perDay("profit.gross_profit", {});

    // v1 costs 12 from 2026-03-05: the open-ended line is closed on 03-04, o3 changes, o1 does not.
    const cog = await call("POST", "/accounts/api/products/p1/v1/cogs", {
      cost: 12,
      effectiveStartDate: "2026-03-05",
    });
    expect(cog.status, cog.text).toBeLessThan(300);
    const second = await drain();
    expect(second.failed).toBe(0);
    expect(second.delivered).toBeGreaterThan(0);
    expect(await rewritten()).toEqual(["o3"]);
    expect(await perDay("costs.cogs")).toEqual({ "2026-03-02": 20, "2026-03-03": 5, "2026-03-10": 22 });
    // Without no-cache too: the snapshot write bumped the pixel's data version.
    const profitAfter = await perDay("profit.gross_profit", {});
    expect(profitAfter["2026-03-02"]).toBe(profitBefore["2026-03-02"]);
    expect(profitAfter["2026-03-03"]).toBe(profitBefore["2026-03-03"]);
    expect(profitAfter["2026-03-10"]).toBeCloseTo((profitBefore["2026-03-10"] as number) - 2, 6);
  });

  it("is idempotent: running again writes nothing", async () => {
    expect((await drain()).delivered).toBe(0);
    const all = await app.services.recalc.recalc({ pixelId: px.pixelId, mode: "all" });
    expect(all).toMatchObject({ total: 4, scanned: 4, written: 0, unchanged: 4 });
    const missing = await app.services.recalc.recalc({ pixelId: px.pixelId, mode: "missing" });
    expect(missing).toMatchObject({ total: 0, written: 0 });
    expect(await rewritten()).toEqual([]);
  });

  it("rewrites a snapshot whose details changed while every amount stayed the same", async () => {
    // The stored snapshot is compared by its amounts and a hash of its details: a new v2 line at the
    // same cost from 03-05 changes only the line id in o4's details.
    const cog = await call("POST", "/accounts/api/products/p1/v2/cogs", {
      cost: 5,
      effectiveStartDate: "2026-03-05",
    });
    expect(cog.status, cog.text).toBeLessThan(300);
    const history = (
      cog.body as { variant: { manualCostHistory: { id: string; effectiveStartDate: string }[] } }
    ).variant.manualCostHistory;
    const lineId = history.find((l) => l.effectiveStartDate === "2026-03-05")?.id;
    expect(lineId).toBeTruthy();
    expect((await drain()).failed).toBe(0);
    expect(await rewritten()).toEqual(["o4"]);
    const [o4] = await app.stores.warehouse.query<{ cogs: string; details: string }>(
      "SELECT toString(cogs) AS cogs, details FROM order_costs FINAL WHERE pixel_id = {p:String} AND order_id = 'o4'",
      { p: px.pixelId },
    );
    expect(o4?.cogs).toBe("10");
    expect(JSON.parse(o4?.details ?? "{}").lines).toEqual([["v2", "variant_cog", lineId, 5]]);
  });

  it("resumes after the last committed batch", async () => {
    // An order-level line touches every order from 03-03: a run of batches of 1 stopped after its
    // first batch leaves its checkpoint; the next run with the same key starts after it.
    const line = await call("POST", "/accounts/api/costs/lines", {
      costType: "order",
      line: { name: "Packaging", currency: "USD", amount: 1.5, effectiveStartDate: "2026-03-03" },
    });
    expect(line.status, line.text).toBeLessThan(300);
    const key = "recalc:test-resume";
    const scope = { pixelId: px.pixelId, from: "2026-03-03" };
    let batches = 0;
    await expect(
      app.services.recalc.recalc(scope, {
        checkpointKey: key,
        batchSize: 1,
        onProgress: (p) => {
          if (p.scanned > 0 && ++batches === 1) throw new Error("crash after the first batch");
        },
      }),
    ).rejects.toThrow("crash");
    expect(await app.stores.kv.get(key)).toBe("o2");
    const rest = await app.services.recalc.recalc(scope, { checkpointKey: key, batchSize: 1 });
    expect(rest).toMatchObject({ total: 3, scanned: 2, written: 2 });
    expect(await app.stores.kv.get(key)).toBeNull();
    expect(await rewritten()).toEqual(["o2", "o3", "o4"]);
    expect(await perDay("costs.order_level")).toEqual({ "2026-03-03": 1.5, "2026-03-10": 3 });
    // The worker's own pass over the same change finds everything already written.
    expect((await drain()).failed).toBe(0);
    expect(await rewritten()).toEqual([]);
  });

  it("reports progress once, with its total, for a scope with no orders", async () => {
    const seen: unknown[] = [];
    const r = await app.services.recalc.recalc(
      { pixelId: px.pixelId, from: "2030-01-01" },
      { onProgress: (p) => seen.push({ ...p }) },
    );
    expect(r).toMatchObject({ total: 0, scanned: 0, written: 0 });
    expect(seen).toEqual([{ pixelId: px.pixelId, total: 0, scanned: 0, written: 0, unchanged: 0 }]);
  });

  it("stops at the last written batch when a write fails, though the next one was already read", async () => {
    // The run reads and computes one batch while the previous one is written. Worked example: an
    // insert card of 0.5 from 03-03 touches o2, o3, o4; batches of 1; the second INSERT (o3) fails.
    // Written: o2 and its checkpoint. Not written: o3 (failed), o4 (read ahead, never written).
    const line = await call("POST", "/accounts/api/costs/lines", {
      costType: "order",
      line: { name: "Insert card", currency: "USD", amount: 0.5, effectiveStartDate: "2026-03-03" },
    });
    expect(line.status, line.text).toBeLessThan(300);
    let inserts = 0;
    const wh = app.stores.warehouse;
    const failing: WarehouseStore = Object.create(wh, {
      insert: {
        value: (table: string, rows: readonly Record<string, unknown>[]) => {
          if (++inserts === 2) return Promise.reject(new Error("warehouse went away"));
          return wh.insert(table, rows);
        },
      },
    });
    const service = new RecalcService(
      app.stores.sql,
      failing,
      app.stores.kv,
      new DataVersions(app.stores.kv),
      (pixelId, keys) => loadVariantCostFacts(app.stores.sql, pixelId, keys),
    );
    const key = "recalc:test-failed-write";
    const scope = { pixelId: px.pixelId, from: "2026-03-03" };
    const seen: number[] = [];
    await expect(
      service.recalc(scope, { checkpointKey: key, batchSize: 1, onProgress: (p) => seen.push(p.written) }),
    ).rejects.toThrow("warehouse went away");
    expect(seen).toEqual([0, 1]);
    expect(await app.stores.kv.get(key)).toBe("o2");
    expect(await rewritten()).toEqual(["o2"]);
    const rest = await app.services.recalc.recalc(scope, { checkpointKey: key, batchSize: 1 });
    expect(rest).toMatchObject({ total: 3, scanned: 2, written: 2 });
    expect(await rewritten()).toEqual(["o3", "o4"]);
    expect(await perDay("costs.order_level")).toEqual({ "2026-03-03": 2, "2026-03-10": 4 });
    expect((await drain()).failed).toBe(0);
    expect(await rewritten()).toEqual([]);
  });
});
