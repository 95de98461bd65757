/**
 * POST /db-mgmt/api/query on a small hand-computed store: order settings (pending, voided,
 * exclusions), refunds by date, per-day currency conversion with fallback, new vs returning
 * customers, compare period, dimensions, caching and explain. Every expected figure is worked out
 * by hand in the comments.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  adEntity,
  adMetric,
  exclusion,
  fxRate,
  type Json,
  line,
  order,
  type Pixel,
  refund,
} from "./query-fixtures.js";
import { type Loader, type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let px: Pixel;
let post: Poster;
let load: Loader;

beforeAll(async () => {
  const suite = await startQuerySuite({ scopes: ["analytics:read", "sync:write"] });
  ({ app, px, post, load } = suite);
  // EUR: 0.9 per USD from Mar 1, 0.8 from Mar 3 (Mar 2 falls back to Mar 1). GBP only from Mar 10.
  await load.fxRates([
    fxRate("2026-03-01", "EUR", 0.9),
    fxRate("2026-03-03", "EUR", 0.8),
    fxRate("2026-03-10", "GBP", 0.75),
  ]);
  await load.orders([
    order("o1", "2026-03-01T10:00:00Z", "USD", 100, { customer: { id: "c1" }, country: "US" }),
    order("o2", "2026-03-02T10:00:00Z", "EUR", 90, { customer: { id: "c2" }, country: "DE" }), // 90 / 0.9 = 100 USD
    order("o3", "2026-03-03T10:00:00Z", "EUR", 80, { customer: { id: "c1" }, country: "DE" }), // 80 / 0.8 = 100 USD
    order("o4", "2026-03-02T12:00:00Z", "USD", 50, { financialStatus: "pending", customer: { id: "c3" } }),
    order("o5", "2026-03-02T13:00:00Z", "USD", 70, { financialStatus: "voided", customer: { id: "c4" } }),
    order("o6", "2026-03-03T14:00:00Z", "USD", 30, { sourceName: "draft_orders", customer: { id: "c5" } }),
  ]);
  await load.refunds([refund("r1", "o1", "2026-03-03T09:00:00Z", 20)]);
});
afterAll(() => app?.close());

const excludeDrafts = {
  exclusionFilters: [
    exclusion("Drafts", [{ logic: "and", conditions: [["source_name", "equals", "draft_orders"]] }]),
  ],
};

function query(body: Json, headers: Record<string, string> = {}, path = "/db-mgmt/api/query") {
  return post(body, { path, headers });
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

describe("channel details and cohorts", () => {
  beforeAll(async () => {
    const ent = (level: string, id: string, name: string, extra: Json = {}) =>
      adEntity("facebook", level, id, "acc1", name, { currency: "EUR", ...extra });
    await load.adEntities([
      ent("account", "acc1", "Main account", { sourceUpdatedAt: "2026-02-03T00:00:00Z" }),
      ent("campaign", "camp1", "Spring", {
        campaignId: "camp1",
        dailyBudget: 50,
        sourceUpdatedAt: "2026-02-02T00:00:00Z",
      }),
      ent("campaign", "camp2", "Summer", {
        campaignId: "camp2",
        dailyBudget: 20,
        sourceUpdatedAt: "2026-02-01T00:00:00Z",
      }),
    ]);
    const metric = (entityId: string, date: string, spend: number, clicks: number, impressions: number) =>
      adMetric({ platform: "facebook", entityId, accountId: "acc1" }, date, "EUR", spend, {
        campaignId: entityId,
        clicks,
        impressions,
      });
    await load.adMetrics([
      metric("camp1", "2026-03-01", 9, 5, 100), // 9 / 0.9 = 10 USD
      metric("camp1", "2026-03-03", 16, 5, 300), // 16 / 0.8 = 20 USD
      metric("camp2", "2026-03-01", 6.75, 0, 0), // 7.50 USD
    ]);
  });

  it("lists campaigns with converted measures; budgets stay in the platform currency", async () => {
    const res = await query(
      {
        level: "campaign",
        measures: ["ads.spend", "ads.clicks", "ads.ctr"],
        dateRange: { start: "2026-03-01", end: "2026-03-03" },
        timezone: "UTC",
        sortBy: "sourceUpdatedAt",
        sortDirection: "desc",
      },
      {},
      "/db-mgmt/api/query-channel-details",
    );
    expect(res.status, res.text).toBe(200);
    const body = res.body as { results: Json[]; pagination: Json };
    expect(body.pagination).toEqual({ limit: 50, offset: 0, total: 2, hasMore: false });
    const [first, second] = body.results as { basicDetails: Json; data: { primary: Json[] } }[];
    expect(first!.basicDetails).toMatchObject({
      id: "camp1",
      resourceName: "Spring",
      currency: "EUR",
      dailyBudget: 50,
    });
    expect(first!.data.primary).toEqual([
      {
        dt: "2026-03-01",
        start: "2026-03-01T00:00:00Z",
        end: "2026-03-04T00:00:00Z",
        "ads.spend": 30,
        "ads.clicks": 10,
        "ads.ctr": 2.5,
      },
    ]);
    expect(second!.basicDetails).toMatchObject({ id: "camp2", dailyBudget: 20 });
    expect(second!.data.primary[0]).toMatchObject({ "ads.spend": 7.5, "ads.clicks": 0, "ads.ctr": null });
  });

  it("units: item quantities of the current version of each counted order, and only when asked", async () => {
    const own = await app.pixelWithKey(["analytics:read"]);
    const r = await app.services.sync.upsert("orders", own.pixelId, [
      // u1 is re-synced with fewer items: only the newer version's lines count (2 + 1 = 3).
      order("u1", "2026-03-01T10:00:00Z", "USD", 40, { lineItems: [line("a", 3), line("b", 1)] }),
      order("u2", "2026-03-01T11:00:00Z", "USD", 20, { lineItems: [line("a", 2)] }),
      order("u3", "2026-03-01T12:00:00Z", "USD", 50, {
        financialStatus: "voided",
        lineItems: [line("a", 5)],
      }),
    ]);
    expect(r.rejected).toEqual([]);
    const newer = await app.services.sync.upsert("orders", own.pixelId, [
      order("u1", "2026-03-01T10:00:00Z", "USD", 30, {
        lineItems: [line("a", 2)],
        updatedAt: "2026-03-02T08:00:00Z",
      }),
    ]);
    expect(newer.updated).toBe(1);
    const ask = async (measures: string[]) => {
      const res = await app.call("POST", "/db-mgmt/api/query", {
        key: own.key,
        pixelId: own.pixelId,
        body: {
          pixelId: own.pixelId,
          measures,
          dateRange: { start: "2026-03-01", end: "2026-03-01" },
          timezone: "UTC",
        },
      });
      expect(res.status, res.text).toBe(200);
      return ((res.body as { results: Json[] }).results[0]!.data as { primary: Json[] }).primary[0]!;
    };
    // u1 (2, current version) + u2 (2); u3 is voided and not counted.
    expect(await ask(["orders.units", "orders.count"])).toMatchObject({
      "orders.units": 4,
      "orders.count": 2,
    });
    expect(await ask(["orders.count"])).toMatchObject({ "orders.count": 2 });
    const explained = await app.call("POST", "/db-mgmt/api/query?explain=true", {
      key: own.key,
      pixelId: own.pixelId,
      body: {
        pixelId: own.pixelId,
        measures: ["orders.count"],
        dateRange: { start: "2026-03-01", end: "2026-03-01" },
      },
    });
    expect(JSON.stringify(explained.body)).not.toContain("order_lines");
  });

  it("compare without measures is refused", async () => {
    const res = await query(
      { compareDateRange: { start: "2026-03-01", end: "2026-03-02" } },
      {},
      "/db-mgmt/api/query-channel-details",
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain("compareDateRange");
  });

  it("monthly cohorts: size, retention, orders, revenue and cumulative LTV", async () => {
    const res = await query(
      {
        dateRange: { start: "2026-03-01", end: "2026-03-31" },
        cohortGranularity: "month",
        periods: 2,
        timezone: "UTC",
      },
      {},
      "/db-mgmt/api/query-cohort-analysis",
    );
    expect(res.status, res.text).toBe(200);
    const body = res.body as { cohorts: Json[]; average: { periods: Json[] } };
    // Counted with stored settings: o1, o2, o3, o6 (c1, c2, c1, c5) → 3 customers, 330 USD.
    expect(body.cohorts).toEqual([
      {
        cohort: "2026-03-01",
        start: "2026-03-01T00:00:00Z",
        end: "2026-04-01T00:00:00Z",
        size: 3,
        periods: [
          {
            period: 0,
            "customers.retained": 3,
            "customers.retention_rate": 100,
            "orders.count": 4,
            "orders.total_revenue": 330,
            "customers.ltv": 110,
          },
          {
            period: 1,
            "customers.retained": 0,
            "customers.retention_rate": 0,
            "orders.count": 0,
            "orders.total_revenue": 0,
            "customers.ltv": 110,
          },
        ],
      },
    ]);
    expect(body.average.periods).toHaveLength(2);
  });
});

describe("cache and the account's cost configuration", () => {
  it("a new fixed cost line changes the cached figure at once", async () => {
    const body = {
      measures: ["costs.fixed"],
      dateRange: { start: "2026-03-01", end: "2026-03-07" },
      granularity: "none",
      timezone: "UTC",
    };
    const first = await query(body, {});
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-cache")).toBe("miss");
    const again = await query(body, {});
    expect(again.headers.get("x-cache")).toBe("hit");
    expect(again.body).toEqual(first.body);
    const { key } = await app.services.keys.create({ pixelId: px.pixelId, scopes: ["costs:write"] });
    const added = await app.call("POST", "/accounts/api/costs/lines", {
      key,
      pixelId: px.pixelId,
      body: {
        costType: "fixed",
        line: { name: "Rent", amount: 70, frequency: "weekly", category: "office", currency: "USD" },
      },
    });
    expect(added.status, added.text).toBe(200);
    const after = await query(body, {});
    expect(after.headers.get("x-cache")).toBe("miss");
    // 70 per week = 10 per day, 7 days.
    const [result] = (after.body as { results: { data: { primary: Json[] } }[] }).results;
    expect(result!.data.primary[0]!["costs.fixed"]).toBe(70);
  });
});
