/**
 * Query result caching (docs/query.md, "Caching"): `x-cache: miss` then `hit` for the same query;
 * `Cache-Control: no-cache` runs it again (`bypass`) and refreshes the entry; new data for the pixel
 * — an order or refund through sync (service or HTTP), an event — makes the next answer a miss with
 * the new figure; two pixels sending identical queries never share an entry. Run over the in-process
 * store and, when TEST_REDIS_URL is set, over Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { TEST_REDIS_URL } from "../helpers/env.js";
import { sendOk } from "./ingest-helpers.js";
import { type Json, order, type Pixel, poster, refund, total } from "./query-fixtures.js";
import { startQuerySuite } from "./query-setup.js";

const KVS = [
  ["memory", true],
  ["redis", Boolean(TEST_REDIS_URL)],
] as const;

describe.each(KVS)("query cache over the %s store", (kv, available) => {
  let app: TestApp;
  let a: Pixel;
  let b: Pixel;

  beforeAll(async () => {
    if (!available) return;
    const scopes = ["analytics:read", "events:write", "sync:write"];
    const suite = await startQuerySuite({ kv, scopes });
    const other = await suite.pixel(scopes);
    ({ app, px: a } = suite);
    b = other.px;
    // pixel a: 100 + 50 on Sep 1; pixel b: 7 on Sep 1
    await suite.load.orders([
      order("a1", "2026-09-01T10:00:00Z", "USD", 100),
      order("a2", "2026-09-01T11:00:00Z", "USD", 50),
    ]);
    await other.load.orders([order("b1", "2026-09-01T10:00:00Z", "USD", 7)]);
  });
  afterAll(() => app?.close());

  const QUERY: Json = {
    measures: ["orders.count", "orders.total_revenue", "orders.net_revenue", "events.count"],
    dateRange: { start: "2026-09-01", end: "2026-09-02" },
    granularity: "day",
    timezone: "UTC",
  };
  const ask = (px: Pixel, headers: Record<string, string> = {}) => poster(app, px)(QUERY, { headers });

  it.skipIf(!available)("miss, then hit with the same body", async () => {
    const first = await ask(a);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-cache")).toBe("miss");
    expect(total(first, "orders.total_revenue")).toBe(150);
    const second = await ask(a);
    expect(second.headers.get("x-cache")).toBe("hit");
    expect(second.body).toEqual(first.body);
  });

  it.skipIf(!available)("Cache-Control: no-cache runs the query again and refreshes the entry", async () => {
    const bypass = await ask(a, { "cache-control": "no-cache" });
    expect(bypass.headers.get("x-cache")).toBe("bypass");
    expect(total(bypass, "orders.total_revenue")).toBe(150);
    expect((await ask(a)).headers.get("x-cache")).toBe("hit");
  });

  it.skipIf(!available)("two pixels with identical queries never share an entry", async () => {
    await ask(a); // cached for a
    const other = await ask(b);
    expect(other.headers.get("x-cache")).toBe("miss");
    expect(total(other, "orders.total_revenue")).toBe(7);
    expect((await ask(b)).headers.get("x-cache")).toBe("hit");
    // and a's answer is still a's
    const again = await ask(a);
    expect(again.headers.get("x-cache")).toBe("hit");
    expect(total(again, "orders.total_revenue")).toBe(150);
  });

  it.skipIf(!available)("a new order through the sync service: miss with the new figure", async () => {
    expect((await ask(a)).headers.get("x-cache")).toBe("hit");
    await app.services.sync.upsert("orders", a.pixelId, [order("a3", "2026-09-02T10:00:00Z", "USD", 25)]);
    const after = await ask(a);
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(total(after, "orders.total_revenue")).toBe(175); // 150 + 25
    expect((await ask(a)).headers.get("x-cache")).toBe("hit");
    // b's data did not change: b's entry still answers
    expect((await ask(b)).headers.get("x-cache")).toBe("hit");
  });

  it.skipIf(!available)(
    "a new order and a refund through POST /accounts/api/sync/*: miss each time",
    async () => {
      expect((await ask(a)).headers.get("x-cache")).toBe("hit");
      const sync = (kind: string, records: unknown[]) =>
        app.call("POST", `/accounts/api/sync/${kind}`, { key: a.key, pixelId: a.pixelId, body: { records } });
      const res = await sync("orders", [order("a4", "2026-09-02T12:00:00Z", "USD", 5)]);
      expect(res.status, res.text).toBe(200);
      const afterOrder = await ask(a);
      expect(afterOrder.headers.get("x-cache")).toBe("miss");
      expect(total(afterOrder, "orders.total_revenue")).toBe(180); // 175 + 5
      expect((await sync("refunds", [refund("r1", "a1", "2026-09-02T13:00:00Z", 30)])).status).toBe(200);
      const afterRefund = await ask(a);
      expect(afterRefund.headers.get("x-cache")).toBe("miss");
      expect(total(afterRefund, "orders.net_revenue")).toBe(150); // 180 − 30
    },
  );

  it.skipIf(!available)("re-sending the same order version changes nothing and keeps the entry", async () => {
    expect((await ask(a)).headers.get("x-cache")).toBe("hit");
    const r = await app.services.sync.upsert("orders", a.pixelId, [
      order("a3", "2026-09-02T10:00:00Z", "USD", 25),
    ]);
    expect(r.unchanged).toBe(1);
    expect((await ask(a)).headers.get("x-cache")).toBe("hit");
  });

  it.skipIf(!available)("a new event: miss with the new figure", async () => {
    const before = await ask(a);
    expect(total(before, "events.count")).toBe(0);
    await sendOk(app, a, [{ name: "page_view", identityId: "v1", timestamp: "2026-09-01T09:00:00Z" }]);
    const after = await ask(a);
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(total(after, "events.count")).toBe(1);
  });

  it.skipIf(!available)("the attribution endpoint is cached the same way", async () => {
    const body = {
      dimension: "attribution.source",
      dateRange: { start: "2026-09-01", end: "2026-09-02" },
      timezone: "UTC",
      attributionModel: "last_click",
      attributionWindow: 7,
    };
    const post = poster(app, a);
    const path = "/db-mgmt/api/query-attribution";
    expect((await post(body, { path })).headers.get("x-cache")).toBe("miss");
    expect((await post(body, { path })).headers.get("x-cache")).toBe("hit");
    expect((await post({ ...body, attributionWindow: 30 }, { path })).headers.get("x-cache")).toBe("miss");
  });

  it.skipIf(!available)("?explain=true is never cached", async () => {
    const res = await app.call("POST", "/db-mgmt/api/query?explain=true", {
      key: a.key,
      pixelId: a.pixelId,
      body: { pixelId: a.pixelId, ...QUERY },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("x-cache")).toBeNull();
  });
});
