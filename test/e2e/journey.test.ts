/**
 * GET /db-mgmt/api/orders/{orderId}/journey (docs/journeys.md): an order, its value in a currency,
 * the touches attribution joins to it with their credit under every model, and the identity links.
 *
 * Rates (units per USD): GBP 0.5 from Mar 1; EUR 0.8 from Mar 1, 0.9 from Mar 11.
 *
 * O1 — GBP 100, paid, Mar 10 12:00 UTC, store customer c1; refund R1 USD 25 on Mar 12.
 *   value USD: 100 / 0.5 = 200, refund 25 → net 175
 *   value EUR: 100 × 0.8 / 0.5 = 160 (Mar 10 rate), refund 25 × 0.9 = 22.50 (Mar 12 rate) → net 137.50
 *   value GBP: 100 (no rate needed), refund 25 × 0.5 = 12.50 → net 87.50
 *   value JPY: no rate → 400
 *   touches (identity of anon-1 = the order's, except t3):
 *     t1 Feb 1  12:00  google cpc, campaign winter / g1   36 d 23 h before the order's latest touch
 *     t2 Feb 20 12:00  facebook fbclid, campaign id f1     18 d before the order
 *     t3 Mar 8  12:00  bing cpc, on anon-2: a new identity, merged into the order's on Mar 11
 *                      (anon-2 then carried c1) — the touch's stored id has a canonical link
 *     t4 Mar 10 11:00  klaviyo email                       1 h before
 *     t5 Mar 10 13:00  google cpc                          after the order: never listed
 *   window 30 → t2, t3, t4 in, t1 listed with 0 and inWindow false.
 *   time_decay (h = 7) weights relative to t4: t2 2^(−17.9583/7) = 0.168933, t3 2^(−1.9583/7) =
 *   0.823727, t4 1 → shares 0.084778, 0.413381, 0.501842 → 0.0848, 0.4134, 0.5018; × 175 =
 *   14.836, 72.342, 87.822 → 14.84, 72.34, 87.82.
 *   linear 1/3 each: 0.3334, 0.3333, 0.3333 and 58.34, 58.33, 58.33 (rounded to add up, the
 *   leftover unit to the earlier touch). position_based 0.4, 0.2, 0.4 → 70, 35, 70.
 *   window 7 → t3, t4: linear ½ each; time_decay 0.4517, 0.5483 (79.04, 95.96); first t3, last t4.
 *   window −1 → t1…t4: linear 0.25; position_based 0.4, 0.1, 0.1, 0.4; time_decay 0.0128, 0.0837,
 *   0.4081, 0.4954. halfLifeDays 1 (window 30): time_decay 0, 0.2047, 0.7953.
 * O2 — USD 50, Mar 12 10:00, known by an email only (a new identity), merged into anon-3's on Mar 12
 *   11:00: the order's stored id has the canonical link. Touches u1 Mar 5 10:00 google cpc (exactly
 *   7 d before: outside window 7), u2 Mar 11 10:00 facebook fbclid. EUR: 50 × 0.9 = 45.
 * O3 — USD 30, Mar 12 15:00, customer c3, no touch. EUR 27.
 *
 * Cross-check: for O1–O3, Σ of each model's per-touch credit (and revenue) by channel equals what
 * POST /db-mgmt/api/query-attribution answers by attribution.channel over Mar 10–12, with the orders
 * without a touch in the window as (none).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Journey } from "../../src/journeys/schemas.js";
import type { TestApp } from "../helpers/app.js";
import {
  event,
  expect400,
  fxRate,
  order,
  type Pixel,
  type Response,
  refund,
  storeCustomer as store,
  sums,
  touch,
} from "./query-fixtures.js";
import { type QueryPixel, type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
let other: QueryPixel;

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app } = suite);
  await suite.load.fxRates([
    fxRate("2026-03-01", "GBP", 0.5),
    fxRate("2026-03-01", "EUR", 0.8),
    fxRate("2026-03-11", "EUR", 0.9),
  ]);
  const c1 = store("c1");
  await suite.load.events([
    touch(
      "anon-1",
      "2026-02-01T12:00:00Z",
      "utm_source=google&utm_medium=cpc&utm_campaign=winter&campaign_id=g1",
      { eventId: "t1", ...c1 },
    ),
    touch("anon-1", "2026-02-20T12:00:00Z", "fbclid=abc&campaign_id=f1", { eventId: "t2", ...c1 }),
    touch("anon-1", "2026-03-10T11:00:00Z", "utm_source=klaviyo&utm_medium=email", { eventId: "t4", ...c1 }),
    touch("anon-1", "2026-03-10T13:00:00Z", "utm_source=google&utm_medium=cpc", { eventId: "t5", ...c1 }),
  ]);
  // Separate requests, so each anonymous visitor gets an identity of its own, created later (a larger
  // id) than anon-1's: the merges below keep anon-1's and anon-3's.
  await suite.load.events([
    touch("anon-2", "2026-03-08T12:00:00Z", "utm_source=bing&utm_medium=cpc", { eventId: "t3" }),
  ]);
  await suite.load.events([
    touch("anon-3", "2026-03-05T10:00:00Z", "utm_source=google&utm_medium=cpc&campaign_id=g1", {
      eventId: "u1",
    }),
    touch("anon-3", "2026-03-11T10:00:00Z", "fbclid=def&campaign_id=f1", { eventId: "u2" }),
  ]);
  await suite.load.orders([
    order("O1", "2026-03-10T12:00:00Z", "GBP", 100, { customer: { id: "c1" } }),
    order("O2", "2026-03-12T10:00:00Z", "USD", 50, { customer: { email: "erin@example.com" } }),
    order("O3", "2026-03-12T15:00:00Z", "USD", 30, { customer: { id: "c3" } }),
  ]);
  await suite.load.refunds([refund("R1", "O1", "2026-03-12T09:00:00Z", 25, "USD")]);
  // The merges: page views without campaign signals, so no touch of their own.
  await suite.load.events([
    event("page_view", "anon-2", "2026-03-11T09:00:00Z", { eventId: "m1", ...c1 }),
    event("page_view", "anon-3", "2026-03-12T11:00:00Z", {
      eventId: "m2",
      userProperties: { emails: ["Erin@Example.com"] },
    }),
  ]);
  other = await suite.pixel();
  await other.load.orders([order("OX", "2026-03-10T12:00:00Z", "USD", 10, { customer: { id: "x1" } })]);
});
afterAll(() => app?.close());

function get(orderId: string, query = "", px: Pixel = suite.px): Promise<Response> {
  return app.call("GET", `/db-mgmt/api/orders/${encodeURIComponent(orderId)}/journey${query}`, {
    key: px.key,
    pixelId: px.pixelId,
  });
}

async function journey(orderId: string, query = ""): Promise<Journey> {
  const res = await get(orderId, query);
  expect(res.status, res.text).toBe(200);
  return res.body as Journey;
}

type Model = keyof Journey["touches"][number]["credit"];
/** [eventId, credit, revenue] of every listed touch under one model. */
const creditOf = (j: Journey, model: Model) =>
  j.touches.map((t) => [t.eventId, t.credit[model], t.revenue[model]] as const);

describe("O1: the order, its value and its touches", () => {
  it("answers the order with its status and its net value in USD by default", async () => {
    const j = await journey("O1");
    expect(j.order).toMatchObject({
      orderId: "O1",
      createdAt: "2026-03-10T12:00:00.000Z",
      status: "paid",
      currency: "GBP",
      totalPrice: 100,
      value: { currency: "USD", total: 200, refunds: 25, net: 175 },
    });
    expect(j.attribution).toEqual({
      window: 30,
      halfLifeDays: 7,
      touchesInWindow: 3,
      olderTouchesOmitted: 0,
    });
  });

  it.each([
    ["EUR", { total: 160, refunds: 22.5, net: 137.5 }],
    ["eur", { total: 160, refunds: 22.5, net: 137.5 }],
    ["GBP", { total: 100, refunds: 12.5, net: 87.5 }],
  ])("converts the total at its day's rate and the refund at its own: %s", async (currency, value) => {
    const j = await journey("O1", `?currency=${currency}`);
    expect(j.order.value).toEqual({ currency: currency.toUpperCase(), ...value });
  });

  it("a currency without a rate is the query API's 400", async () => {
    const res = await get("O1", "?currency=JPY");
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({
      message: "no exchange rate for JPY on or before 2026-03-10; load rates with pixelhouse fx import",
    });
  });

  it("lists the touches at or before the order in time order, with their fields and landing page", async () => {
    const j = await journey("O1");
    expect(j.touches.map((t) => [t.eventId, t.time, t.inWindow])).toEqual([
      ["t1", "2026-02-01T12:00:00.000Z", false],
      ["t2", "2026-02-20T12:00:00.000Z", true],
      ["t3", "2026-03-08T12:00:00.000Z", true],
      ["t4", "2026-03-10T11:00:00.000Z", true],
    ]);
    expect(j.touches[0]).toMatchObject({
      channel: "paid_search",
      source: "google",
      medium: "cpc",
      campaign: "winter",
      campaignId: "g1",
      adsetId: null,
      adId: null,
      clickIdType: null,
      landingPage:
        "https://shop.example/landing?utm_source=google&utm_medium=cpc&utm_campaign=winter&campaign_id=g1",
    });
    expect(j.touches[1]).toMatchObject({
      channel: "paid_social",
      source: "facebook",
      campaignId: "f1",
      clickIdType: "fbclid",
      landingPage: "https://shop.example/landing?fbclid=abc&campaign_id=f1",
    });
    expect(j.touches[3]).toMatchObject({ channel: "email", source: "klaviyo", medium: "email" });
  });

  it("credits each touch in the window 30 under every model; the touch before it gets 0", async () => {
    const j = await journey("O1");
    const table: Record<Model, [string, number, number][]> = {
      first_click: [
        ["t1", 0, 0],
        ["t2", 1, 175],
        ["t3", 0, 0],
        ["t4", 0, 0],
      ],
      last_click: [
        ["t1", 0, 0],
        ["t2", 0, 0],
        ["t3", 0, 0],
        ["t4", 1, 175],
      ],
      any_click: [
        ["t1", 0, 0],
        ["t2", 1, 175],
        ["t3", 1, 175],
        ["t4", 1, 175],
      ],
      linear: [
        ["t1", 0, 0],
        ["t2", 0.3334, 58.34],
        ["t3", 0.3333, 58.33],
        ["t4", 0.3333, 58.33],
      ],
      time_decay: [
        ["t1", 0, 0],
        ["t2", 0.0848, 14.84],
        ["t3", 0.4134, 72.34],
        ["t4", 0.5018, 87.82],
      ],
      position_based: [
        ["t1", 0, 0],
        ["t2", 0.4, 70],
        ["t3", 0.2, 35],
        ["t4", 0.4, 70],
      ],
    };
    for (const [model, expected] of Object.entries(table)) {
      expect(creditOf(j, model as Model), model).toEqual(expected);
    }
  });

  it("revenue follows the requested currency (EUR: net 137.50)", async () => {
    const j = await journey("O1", "?currency=EUR");
    expect(creditOf(j, "time_decay").map(([, , r]) => r)).toEqual([0, 11.66, 56.84, 69]);
    expect(creditOf(j, "linear").map(([, , r]) => r)).toEqual([0, 45.84, 45.83, 45.83]);
  });

  it("window 7: t1 and t2 fall outside and the shares move to t3 and t4", async () => {
    const j = await journey("O1", "?window=7");
    expect(j.attribution).toMatchObject({ window: 7, touchesInWindow: 2 });
    expect(j.touches.map((t) => t.inWindow)).toEqual([false, false, true, true]);
    expect(creditOf(j, "first_click").map(([, c]) => c)).toEqual([0, 0, 1, 0]);
    expect(creditOf(j, "linear").map(([, c]) => c)).toEqual([0, 0, 0.5, 0.5]);
    expect(creditOf(j, "position_based").map(([, c]) => c)).toEqual([0, 0, 0.5, 0.5]);
    expect(creditOf(j, "time_decay")).toEqual([
      ["t1", 0, 0],
      ["t2", 0, 0],
      ["t3", 0.4517, 79.04],
      ["t4", 0.5483, 95.96],
    ]);
  });

  it("window 1: only t4 (t3 is 48 h back)", async () => {
    const j = await journey("O1", "?window=1");
    expect(creditOf(j, "first_click").map(([, c]) => c)).toEqual([0, 0, 0, 1]);
    expect(creditOf(j, "position_based").map(([, c]) => c)).toEqual([0, 0, 0, 1]);
  });

  it("window −1: every touch at or before the order", async () => {
    const j = await journey("O1", "?window=-1");
    expect(j.touches.every((t) => t.inWindow)).toBe(true);
    expect(creditOf(j, "first_click").map(([, c]) => c)).toEqual([1, 0, 0, 0]);
    expect(creditOf(j, "linear").map(([, c, r]) => [c, r])).toEqual([
      [0.25, 43.75],
      [0.25, 43.75],
      [0.25, 43.75],
      [0.25, 43.75],
    ]);
    expect(creditOf(j, "position_based").map(([, c, r]) => [c, r])).toEqual([
      [0.4, 70],
      [0.1, 17.5],
      [0.1, 17.5],
      [0.4, 70],
    ]);
    expect(creditOf(j, "time_decay").map(([, c, r]) => [c, r])).toEqual([
      [0.0128, 2.23],
      [0.0837, 14.65],
      [0.4081, 71.42],
      [0.4954, 86.7],
    ]);
  });

  it("halfLifeDays weighs time_decay only", async () => {
    const j = await journey("O1", "?halfLifeDays=1");
    expect(j.attribution.halfLifeDays).toBe(1);
    expect(creditOf(j, "time_decay").map(([, c]) => c)).toEqual([0, 0, 0.2047, 0.7953]);
    expect(creditOf(j, "linear").map(([, c]) => c)).toEqual([0, 0.3334, 0.3333, 0.3333]);
  });
});

describe("identity", () => {
  it("O1: t3 reached the order's identity through its own canonical link; the others carry the order's id", async () => {
    const j = await journey("O1");
    const id = j.order.identity.storedId;
    expect(j.order.identity).toEqual({ storedId: id, canonicalId: id, merge: null });
    const byEvent = Object.fromEntries(j.touches.map((t) => [t.eventId, t.identity]));
    for (const e of ["t1", "t2", "t4"]) {
      expect(byEvent[e], e).toEqual({ identityId: "anon-1", canonicalId: id, merges: [] });
    }
    const t3 = byEvent.t3!;
    expect(t3.identityId).toBe("anon-2");
    expect(t3.canonicalId).not.toBe(id);
    expect(t3.merges).toEqual([
      { aliasType: "canonical", aliasValue: t3.canonicalId, canonicalId: id, firstSeen: expect.any(String) },
    ]);
    // The identity's aliases: both cookies, the store customer, the order, and the id merged away.
    expect(j.identityLinks.map((l) => [l.aliasType, l.aliasValue, l.canonicalId]).sort()).toEqual(
      [
        ["canonical", t3.canonicalId, id],
        ["identity", "anon-1", id],
        ["identity", "anon-2", id],
        ["order", "O1", id],
        ["store", "c1", id],
      ].sort(),
    );
    expect(j.identityLinksOmitted).toBe(0);
    for (const l of j.identityLinks) expect(new Date(l.firstSeen).toISOString()).toBe(l.firstSeen);
  });

  it("O2: the order's own id was merged away; each touch names that merge", async () => {
    const j = await journey("O2");
    const { storedId, canonicalId, merge } = j.order.identity;
    expect(storedId).not.toBe(canonicalId);
    expect(merge).toEqual({
      aliasType: "canonical",
      aliasValue: storedId,
      canonicalId,
      firstSeen: expect.any(String),
    });
    expect(j.touches.map((t) => [t.eventId, t.identity])).toEqual([
      ["u1", { identityId: "anon-3", canonicalId, merges: [merge] }],
      ["u2", { identityId: "anon-3", canonicalId, merges: [merge] }],
    ]);
    const email = createHash("sha256").update("erin@example.com").digest("hex");
    expect(j.identityLinks.map((l) => [l.aliasType, l.aliasValue]).sort()).toEqual(
      [
        ["canonical", storedId],
        ["email", email],
        ["identity", "anon-3"],
        ["order", "O2"],
      ].sort(),
    );
  });

  it("O3: no touch, nothing credited", async () => {
    const j = await journey("O3");
    expect(j.touches).toEqual([]);
    expect(j.attribution.touchesInWindow).toBe(0);
    expect(j.order.value).toEqual({ currency: "USD", total: 30, refunds: 0, net: 30 });
  });
});

describe("refusals", () => {
  it("another pixel's order and an unknown id answer the same 404", async () => {
    const theirs = await get("OX");
    const unknown = await get("no-such-order");
    const bound = await get("O1' OR 1=1 --");
    const fromThere = await get("O1", "", other.px);
    for (const res of [theirs, unknown, bound, fromThere]) {
      expect(res.status, res.text).toBe(404);
      expect(res.text).toBe(unknown.text);
    }
    expect(unknown.body).toEqual({ message: "Order not found" });
    // The other pixel does see its own order.
    expect((await get("OX", "", other.px)).status).toBe(200);
  });

  it.each([
    ["?window=5", "window"],
    ["?window=abc", "window"],
    ["?window=30.5", "window"],
    ["?halfLifeDays=0", "halfLifeDays"],
    ["?halfLifeDays=91", "halfLifeDays"],
    ["?halfLifeDays=x", "halfLifeDays"],
    ["?currency=EURO", "currency"],
    ["?windowDays=30", "windowDays"],
  ])("400 naming the parameter: %s", async (query, name) => {
    const res = await get("O1", query);
    expect400(res, name);
    expect((res.body as { errors: { key: string }[] }).errors.map((e) => e.key)).toContain(name);
  });

  it("needs analytics:read", async () => {
    const px = await app.pixelWithKey(["events:write"]);
    expect((await get("O1", "", px)).status).toBe(403);
  });
});

describe("cross-check with POST /db-mgmt/api/query-attribution by attribution.channel", () => {
  const ORDERS = ["O1", "O2", "O3"];
  const journeys = new Map<number, Journey[]>();
  const journeysAt = async (window: number) => {
    if (!journeys.has(window)) {
      journeys.set(
        window,
        await Promise.all(ORDERS.map((o) => journey(o, `?currency=EUR&window=${window}`))),
      );
    }
    return journeys.get(window)!;
  };

  /** [orders, revenue] per channel: Σ of the touches' credit, an order without a touch as (none). */
  async function fromJourneys(model: Model, window: number): Promise<Record<string, [number, number]>> {
    const out: Record<string, [number, number]> = {};
    const add = (key: string, orders: number, revenue: number) => {
      const [o, r] = out[key] ?? [0, 0];
      out[key] = [o + orders, r + revenue];
    };
    for (const j of await journeysAt(window)) {
      const inWindow = j.touches.filter((t) => t.inWindow);
      if (inWindow.length === 0) add("(none)", 1, j.order.value.net);
      for (const t of inWindow) {
        if (t.credit[model] !== 0) add(t.channel ?? "(not set)", t.credit[model], t.revenue[model]);
      }
    }
    return out;
  }

  async function fromEndpoint(model: Model, window: number): Promise<Record<string, [number, number]>> {
    const res = await suite.post(
      {
        dimension: "attribution.channel",
        dateRange: { start: "2026-03-10", end: "2026-03-12" },
        timezone: "UTC",
        currency: "EUR",
        attributionModel: model,
        attributionWindow: window,
      },
      { path: "/db-mgmt/api/query-attribution" },
    );
    const orders = sums(res, "attribution.orders");
    const revenue = sums(res, "attribution.revenue");
    return Object.fromEntries(Object.keys(orders).map((k) => [k, [orders[k]!, revenue[k]!]]));
  }

  it.each([
    ["first_click", 7],
    ["first_click", 30],
    ["first_click", -1],
    ["last_click", 7],
    ["last_click", 30],
    ["last_click", -1],
  ] as const)("%s, window %i: equal to the cent", async (model, window) => {
    const mine = await fromJourneys(model, window);
    const rounded = Object.fromEntries(
      Object.entries(mine).map(([k, [o, r]]) => [k, [o, Math.round(r * 100) / 100]]),
    );
    expect(await fromEndpoint(model, window)).toEqual(rounded);
  });

  // Each side rounds once: the journey per touch, the endpoint per channel over the orders, so the
  // two may differ by a rounding unit per order credited.
  it.each([
    ["linear", 7],
    ["linear", 30],
    ["linear", -1],
    ["time_decay", 30],
    ["time_decay", -1],
    ["position_based", 30],
    ["position_based", -1],
  ] as const)("%s, window %i: equal within a rounding unit per order", async (model, window) => {
    const mine = await fromJourneys(model, window);
    const theirs = await fromEndpoint(model, window);
    expect(Object.keys(theirs).sort()).toEqual(Object.keys(mine).sort());
    for (const [k, [o, r]] of Object.entries(mine)) {
      expect(Math.abs(theirs[k]![0] - o), `${k} orders`).toBeLessThanOrEqual(0.0001 * ORDERS.length + 1e-9);
      expect(Math.abs(theirs[k]![1] - r), `${k} revenue`).toBeLessThanOrEqual(0.01 * ORDERS.length + 1e-9);
    }
  });
});
