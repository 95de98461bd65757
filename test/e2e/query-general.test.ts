/**
 * POST /db-mgmt/api/query on a small hand-computed store: order settings (pending, voided,
 * exclusions), refunds by date, per-day currency conversion with fallback, new vs returning
 * customers, compare period, dimensions, caching and explain. Every expected figure is worked out
 * by hand in the comments.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";

let app: TestApp;
type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
let px: Pixel;
type Json = Record<string, unknown>;

const order = (id: string, createdAt: string, currency: string, totalPrice: number, extra: Json = {}) => ({
  id,
  createdAt,
  currency,
  totalPrice,
  subtotalPrice: totalPrice,
  financialStatus: "paid",
  updatedAt: createdAt,
  ...extra,
});

beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey(["analytics:read", "sync:write"]);
  // EUR: 0.9 per USD from Mar 1, 0.8 from Mar 3 (Mar 2 falls back to Mar 1). GBP only from Mar 10.
  await app.services.sync.upsert("fx-rates", null, [
    { date: "2026-03-01", currency: "EUR", unitsPerUsd: 0.9 },
    { date: "2026-03-03", currency: "EUR", unitsPerUsd: 0.8 },
    { date: "2026-03-10", currency: "GBP", unitsPerUsd: 0.75 },
  ]);
  const r = await app.services.sync.upsert("orders", px.pixelId, [
    order("o1", "2026-03-01T10:00:00Z", "USD", 100, { customer: { id: "c1" }, country: "US" }),
    order("o2", "2026-03-02T10:00:00Z", "EUR", 90, { customer: { id: "c2" }, country: "DE" }), // 90 / 0.9 = 100 USD
    order("o3", "2026-03-03T10:00:00Z", "EUR", 80, { customer: { id: "c1" }, country: "DE" }), // 80 / 0.8 = 100 USD
    order("o4", "2026-03-02T12:00:00Z", "USD", 50, { financialStatus: "pending", customer: { id: "c3" } }),
    order("o5", "2026-03-02T13:00:00Z", "USD", 70, { financialStatus: "voided", customer: { id: "c4" } }),
    order("o6", "2026-03-03T14:00:00Z", "USD", 30, { sourceName: "draft_orders", customer: { id: "c5" } }),
  ]);
  expect(r.rejected).toEqual([]);
  await app.services.sync.upsert("refunds", px.pixelId, [
    { id: "r1", orderId: "o1", createdAt: "2026-03-03T09:00:00Z", amount: 20, currency: "USD" },
  ]);
});
afterAll(() => app?.close());

const excludeDrafts = {
  exclusionFilters: [
    {
      id: "0b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
      name: "Drafts",
      enabled: true,
      conditionGroups: [
        {
          id: "1b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
          logic: "and",
          conditions: [
            {
              id: "2b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
              field: "source_name",
              operator: "equals",
              value: "draft_orders",
            },
          ],
        },
      ],
      createdAt: "2026-01-01T00:00:00Z",
      updatedAt: "2026-01-01T00:00:00Z",
    },
  ],
};

async function query(body: Json, headers: Record<string, string> = {}, path = "/db-mgmt/api/query") {
  const res = await app.call("POST", path, {
    key: px.key,
    pixelId: px.pixelId,
    body: { pixelId: px.pixelId, ...body },
    headers,
  });
  return res;
}

describe("general query", () => {
  it("daily orders, revenue, refunds and customers in USD with order settings applied", async () => {
    const res = await query({
      measures: [
        "orders.count",
        "orders.total_revenue",
        "orders.refunds",
        "orders.net_revenue",
        "orders.aov",
        "customers.new",
        "customers.returning",
      ],
      dateRange: { start: "2026-03-01", end: "2026-03-03" },
      timezone: "UTC",
      orderSettings: excludeDrafts,
    });
    expect(res.status, res.text).toBe(200);
    const [result] = (res.body as { results: Json[] }).results;
    const rows = (result!.data as { primary: Json[] }).primary;
    expect(rows).toEqual([
      {
        dt: "2026-03-01",
        start: "2026-03-01T00:00:00Z",
        end: "2026-03-02T00:00:00Z",
        "orders.count": 1,
        "orders.total_revenue": 100,
        "orders.refunds": 0,
        "orders.net_revenue": 100,
        "orders.aov": 100,
        "customers.new": 1,
        "customers.returning": 0,
      },
      {
        dt: "2026-03-02",
        start: "2026-03-02T00:00:00Z",
        end: "2026-03-03T00:00:00Z",
        "orders.count": 1,
        "orders.total_revenue": 100,
        "orders.refunds": 0,
        "orders.net_revenue": 100,
        "orders.aov": 100,
        "customers.new": 1,
        "customers.returning": 0,
      },
      {
        dt: "2026-03-03",
        start: "2026-03-03T00:00:00Z",
        end: "2026-03-04T00:00:00Z",
        "orders.count": 1,
        "orders.total_revenue": 100,
        "orders.refunds": 20,
        "orders.net_revenue": 80,
        "orders.aov": 100,
        "customers.new": 0,
        "customers.returning": 1,
      },
    ]);
    const details = result!.measureDetails as Json[];
    expect(details.find((d) => d.measure === "orders.net_revenue")).toMatchObject({
      primarySum: 280,
      primaryAvg: 93.33,
      isAverage: false,
    });
    expect(details.find((d) => d.measure === "orders.aov")).toMatchObject({
      primarySum: 100,
      primaryAvg: 100,
      isAverage: true,
      calculatedAverage: true,
    });
  });
});
