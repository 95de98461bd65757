/**
 * `pixelhouse demo` at small scale (docs/demo.md): what it makes arrives through ingestion and sync (the
 * warehouse holds exactly what the summary reports), it has the cases the query engine needs (several
 * currencies and statuses, refunds, draft orders, three ad platforms, multi-touch journeys, browser and
 * server purchases sharing eventIds), and the same seed makes the same store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoSummary, loadDemo } from "../../src/demo/load.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

let app: TestApp;
const today = new Date();
const summaries: Record<string, DemoSummary> = {};

async function rows<T>(sql: string, pixel: string): Promise<T[]> {
  return app.stores.warehouse.query<T>(sql, { pixel });
}

/** What a store looks like from the warehouse, with the generated ids (ULIDs, request ids) left out. */
async function fingerprint(pixel: string): Promise<unknown> {
  return {
    events: await rows(
      "SELECT name, origin, count() AS n, round(sum(value), 2) AS value FROM events WHERE pixel_id = {pixel:String} GROUP BY name, origin ORDER BY name, origin",
      pixel,
    ),
    orders: await rows(
      "SELECT order_id, currency, total_price, financial_status, source_name, created_at FROM orders FINAL WHERE pixel_id = {pixel:String} ORDER BY order_id",
      pixel,
    ),
    spend: await rows(
      "SELECT platform, currency, round(sum(spend), 2) AS spend FROM ad_metrics_daily FINAL WHERE pixel_id = {pixel:String} GROUP BY platform, currency ORDER BY platform, currency",
      pixel,
    ),
  };
}

beforeAll(async () => {
  app = await startTestApp();
  for (const id of ["demo-a", "demo-b"]) {
    await app.services.pixels.create({ id, name: "Demo Store", accountName: `Demo ${id}` });
    summaries[id] = await loadDemo(app.services, app.stores, {
      pixelId: id,
      scale: "small",
      seed: 7,
      days: 14,
      today,
    });
  }
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe("pixelhouse demo (small)", () => {
  it("the warehouse holds exactly what the summary reports", async () => {
    const s = summaries["demo-a"]!;
    expect(s.eventsIngested).toBeGreaterThan(5_000);
    const [events] = await rows<{ n: number }>(
      "SELECT count() AS n FROM events WHERE pixel_id = {pixel:String}",
      "demo-a",
    );
    expect(Number(events!.n)).toBe(s.eventsIngested);
    const [orders] = await rows<{ n: number }>(
      "SELECT count() AS n FROM orders FINAL WHERE pixel_id = {pixel:String}",
      "demo-a",
    );
    expect(Number(orders!.n)).toBe(s.orders);
    const [refunds] = await rows<{ n: number }>(
      "SELECT count() AS n FROM refunds FINAL WHERE pixel_id = {pixel:String}",
      "demo-a",
    );
    expect(Number(refunds!.n)).toBe(s.refunds);
    const { rows: variants } = await app.stores.sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM variants WHERE pixel_id = $1",
      ["demo-a"],
    );
    expect(Number(variants[0]!.n)).toBe(s.variants);
    expect(s.costLines).toBe(6);
  });

  it("browser and server purchases share eventIds and count once", async () => {
    const s = summaries["demo-a"]!;
    // Every order's purchase is fired by the browser and by the store's server with one eventId:
    // exactly one copy per order is skipped as a duplicate.
    expect(s.eventsSent - s.eventsIngested).toBe(s.orders);
    const [p] = await rows<{ n: number; ids: number; orders: number }>(
      `SELECT count() AS n, uniqExact(event_id) AS ids, uniqExact(order_id) AS orders
       FROM events WHERE pixel_id = {pixel:String} AND name = 'purchase'`,
      "demo-a",
    );
    expect(Number(p!.n)).toBe(s.orders);
    expect(Number(p!.ids)).toBe(s.orders);
    expect(Number(p!.orders)).toBe(s.orders);
  });

  it("orders cover the cases order settings act on", async () => {
    const statuses = await rows<{ financial_status: string; n: number }>(
      "SELECT financial_status, count() AS n FROM orders FINAL WHERE pixel_id = {pixel:String} GROUP BY financial_status",
      "demo-a",
    );
    const seen = statuses.map((r) => r.financial_status);
    for (const status of ["paid", "pending", "voided", "refunded", "partially_refunded"])
      expect(seen).toContain(status);
    const [o] = await rows<{ currencies: number; drafts: number; linked: number; n: number }>(
      `SELECT uniqExact(currency) AS currencies, countIf(source_name = 'draft_orders') AS drafts,
              countIf(canonical_id != '') AS linked, count() AS n
       FROM orders FINAL WHERE pixel_id = {pixel:String}`,
      "demo-a",
    );
    expect(Number(o!.currencies)).toBeGreaterThan(1);
    expect(Number(o!.drafts)).toBeGreaterThan(0);
    // Orders reach the identity graph through the customer's email and the purchase event's orderId.
    expect(Number(o!.linked)).toBe(Number(o!.n));
  });

  it("ads come from three platforms at four levels, with spend in more than one currency", async () => {
    const [a] = await rows<{ platforms: number; levels: number }>(
      "SELECT uniqExact(platform) AS platforms, uniqExact(level) AS levels FROM ad_entities FINAL WHERE pixel_id = {pixel:String}",
      "demo-a",
    );
    expect(Number(a!.platforms)).toBe(3);
    expect(Number(a!.levels)).toBe(4);
    const [m] = await rows<{ currencies: number; spend: number }>(
      "SELECT uniqExact(currency) AS currencies, sum(spend) AS spend FROM ad_metrics_daily FINAL WHERE pixel_id = {pixel:String}",
      "demo-a",
    );
    expect(Number(m!.currencies)).toBeGreaterThan(1);
    expect(Number(m!.spend)).toBeGreaterThan(0);
  });

  it("visitors make multi-touch journeys over several days through every kind of channel", async () => {
    const channels = await rows<{ channel: string }>(
      "SELECT DISTINCT channel FROM events WHERE pixel_id = {pixel:String} AND name = 'page_view'",
      "demo-a",
    );
    const seen = channels.map((c) => c.channel.toLowerCase()).join(" ");
    for (const kind of ["paid", "organic", "email", "direct"]) expect(seen).toContain(kind);
    const [j] = await rows<{ multi: number; clicks: number; utm: number }>(
      `SELECT
         (SELECT count() FROM (SELECT canonical_id FROM events WHERE pixel_id = {pixel:String} AND is_touch
            GROUP BY canonical_id HAVING uniqExact(toDate(event_time)) > 1)) AS multi,
         (SELECT count() FROM events WHERE pixel_id = {pixel:String} AND notEmpty(click_ids)) AS clicks,
         (SELECT count() FROM events WHERE pixel_id = {pixel:String} AND utm_source != '') AS utm`,
      "demo-a",
    );
    expect(Number(j!.multi)).toBeGreaterThan(0);
    expect(Number(j!.clicks)).toBeGreaterThan(0);
    expect(Number(j!.utm)).toBeGreaterThan(0);
  });

  it("has an Overview dashboard view whose sparklines and attribution table answer", async () => {
    const { key } = await app.services.keys.create({
      pixelId: "demo-a",
      scopes: ["dashboards:read", "analytics:read"],
      expiresAt: null,
    });
    const list = await app.call("GET", "/accounts/api/dashboard/views", { key, pixelId: "demo-a" });
    expect(list.status, list.text).toBe(200);
    const views = (
      list.body as { dashboardViews: { name: string; configuration: Record<string, unknown> }[] }
    ).dashboardViews;
    const overview = views.find((v) => v.name === "Overview");
    expect(overview, list.text).toBeDefined();
    const widgets = overview!.configuration.widgets as {
      chartType: string;
      dataConfig: { measures: string[]; dimensions: string[] };
    }[];
    expect(widgets.filter((w) => w.chartType === "sparkline").map((w) => w.dataConfig.measures[0])).toEqual([
      "orders.total_revenue",
      "orders.count",
      "orders.aov",
      "ads.spend",
      "profit.mer",
      "profit.net_profit",
      "customers.new",
      "attribution.roas",
    ]);
    const table = widgets.find((w) => w.chartType === "table")!;
    expect(table.dataConfig.dimensions).toEqual(["attribution.channel"]);
    const range = overview!.configuration.dateRange as { start: string; end: string };
    // As the page asks for a table widget: the general query, split by the widget's dimension.
    const res = await app.call("POST", "/db-mgmt/api/query", {
      key,
      pixelId: "demo-a",
      body: {
        pixelId: "demo-a",
        measures: table.dataConfig.measures,
        dimensions: table.dataConfig.dimensions,
        dateRange: range,
        granularity: "none",
        attributionModel: "last_click",
        attributionWindow: 30,
      },
    });
    expect(res.status, res.text).toBe(200);
    expect((res.body as { results: unknown[] }).results.length).toBeGreaterThan(1);
    // And the sparklines' measures answer over the view's range.
    const series = await app.call("POST", "/db-mgmt/api/query", {
      key,
      pixelId: "demo-a",
      body: {
        pixelId: "demo-a",
        measures: widgets.filter((w) => w.chartType === "sparkline").map((w) => w.dataConfig.measures[0]),
        dateRange: range,
        granularity: "day",
      },
    });
    expect(series.status, series.text).toBe(200);
  });

  it("the same seed makes the same store", async () => {
    const { pixelId: _a, ...a } = summaries["demo-a"]!;
    const { pixelId: _b, ...b } = summaries["demo-b"]!;
    expect(b).toEqual(a);
    expect(await fingerprint("demo-b")).toEqual(await fingerprint("demo-a"));
  });
});
