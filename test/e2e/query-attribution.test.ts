/**
 * POST /db-mgmt/api/query-attribution (docs/query.md, "Attribution"): first_click / last_click / any_click,
 * windows 1 / 7 / 30 / −1, `(none)` for conversions without a touch in the window so totals
 * reconcile, `(not set)` for a touch without the dimension's value, valueSource events with
 * eventName, spend / ROAS / CPA for ad-entity dimensions, filters on touches and on conversions,
 * and identity merges on either side (touch on one identity, order on a merged one).
 *
 * Orders (USD, UTC), their net value and their touches (in the order's identity) by source:
 *
 *   order  customer  placed          net                touches (time before the order)
 *   OA     alice     Aug 10 10:00    100 − 20 = 80      a1 google cpc, campaign g1, Jul 31 10:00 (10 d)
 *                                                       a2 facebook fbclid, campaign f1, Aug 8 10:00 (2 d)
 *                                                       a3 klaviyo email, Aug 10 09:30 (30 min)
 *   OF     frank     Aug 10 12:00    40                 f1 google cpc Aug 10 13:00 — after the order: never
 *   OB     bob       Aug 11 12:00    50                 b1 tiktok paid_social Jul 1 12:00 (41 d)
 *   OC     carol     Aug 11 15:00    30                 none
 *   OE     erin      Aug 12 09:00    60                 e1 bing cpc Aug 11 20:00 (13 h), on an identity
 *                                                       merged into the order's after both arrived
 *   OD     dave      Aug 12 10:00    80                 d1 google cpc, campaign g1, Aug 9 08:00 (3 d 2 h),
 *                                                       on an identity merged with the order's email later
 *
 * 6 orders, 340 in all. Windows are whole days before the order (a touch exactly 48 h before is
 * outside a 1-day window).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  adEntity,
  adMetric,
  byValue,
  detail,
  event,
  expect400,
  type Json,
  order,
  type Response,
  refund,
  storeCustomer as store,
  sums,
  total,
  touch,
} from "./query-fixtures.js";
import { type Poster, type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
let post: Poster;

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, post } = suite);
  // Touches of alice, frank and bob carry their store customer id: their orders join them directly.
  await suite.load.events([
    touch(
      "anon-alice",
      "2026-07-31T10:00:00Z",
      "utm_source=google&utm_medium=cpc&utm_campaign=summer&campaign_id=g1",
      store("alice"),
    ),
    touch(
      "anon-alice",
      "2026-08-08T10:00:00Z",
      "fbclid=abc&campaign_id=f1&utm_campaign=retarget",
      store("alice"),
    ),
    touch("anon-alice", "2026-08-10T09:30:00Z", "utm_source=klaviyo&utm_medium=email", store("alice")),
    touch("anon-frank", "2026-08-10T13:00:00Z", "utm_source=google&utm_medium=cpc", store("frank")),
    touch("anon-bob", "2026-07-01T12:00:00Z", "utm_source=tiktok&utm_medium=paid_social", store("bob")),
    // dave's touch on an anonymous identity only
    touch("anon-dave", "2026-08-09T08:00:00Z", "utm_source=google&utm_medium=cpc&campaign_id=g1"),
  ]);
  await suite.load.orders([
    order("OA", "2026-08-10T10:00:00Z", "USD", 100, { customer: { id: "alice" } }),
    order("OF", "2026-08-10T12:00:00Z", "USD", 40, { customer: { id: "frank" } }),
    order("OB", "2026-08-11T12:00:00Z", "USD", 50, { customer: { id: "bob" } }),
    order("OC", "2026-08-11T15:00:00Z", "USD", 30, { customer: { id: "carol" } }),
    order("OE", "2026-08-12T09:00:00Z", "USD", 60, { customer: { id: "erin" } }),
    // dave's order knows only his email: a new identity, later merged with anon-dave
    order("OD", "2026-08-12T10:00:00Z", "USD", 80, { customer: { email: "dave@example.com" } }),
  ]);
  await suite.load.refunds([refund("RA", "OA", "2026-08-11T10:00:00Z", 20)]);
  // erin's touch arrives after her order, on a new anonymous identity
  await suite.load.events([touch("anon-erin", "2026-08-11T20:00:00Z", "utm_source=bing&utm_medium=cpc")]);
  // merges: anon-dave learns dave's email, anon-erin her store id (page views without campaign signals)
  await suite.load.events([
    event("page_view", "anon-dave", "2026-08-12T11:00:00Z", {
      userProperties: { emails: ["Dave@Example.com"] },
    }),
    event("page_view", "anon-erin", "2026-08-12T12:00:00Z", store("erin")),
  ]);
  // Spend (USD, campaign level): google g1 40 + 40, facebook f1 30, google g2 25 (no attributed order)
  const spend = (platform: string, entityId: string, accountId: string, date: string, amount: number) =>
    adMetric({ platform, entityId, accountId }, date, "USD", amount, { updatedAt: `${date}T23:00:00Z` });
  await suite.load.adMetrics([
    spend("google", "g1", "act-g", "2026-08-10", 40),
    spend("google", "g1", "act-g", "2026-08-11", 40),
    spend("facebook", "f1", "act-f", "2026-08-10", 30),
    spend("google", "g2", "act-g", "2026-08-12", 25),
    spend("google", "g1", "act-g", "2026-08-20", 999), // outside the range
  ]);
});
afterAll(() => app?.close());

const RANGE = { start: "2026-08-10", end: "2026-08-12" };
const PATH = "/db-mgmt/api/query-attribution";

function attribute(model: string, window: number, extra: Json = {}, p = post): Promise<Response> {
  return p(
    {
      dimension: "attribution.source",
      dateRange: RANGE,
      timezone: "UTC",
      attributionModel: model,
      attributionWindow: window,
      ...extra,
    },
    { path: PATH },
  );
}

/** [attributed orders, attributed revenue] per source value. */
async function credit(model: string, window: number, extra: Json = {}) {
  const res = await attribute(model, window, extra);
  const orders = sums(res, "attribution.orders");
  const revenue = sums(res, "attribution.revenue");
  return Object.fromEntries(Object.keys(orders).map((k) => [k, [orders[k], revenue[k]]]));
}

describe("models and windows by attribution.source", () => {
  // [model, window, expected {value: [orders, revenue]}]
  const TABLE: [string, number, Record<string, [number, number]>][] = [
    // last_click: OA ← a3 klaviyo everywhere; OE ← bing (13 h); OD ← google from 7 days; OB ← tiktok only unlimited
    ["last_click", 1, { klaviyo: [1, 80], bing: [1, 60], "(none)": [4, 200] }], // none: OF, OB, OC, OD
    ["last_click", 7, { klaviyo: [1, 80], google: [1, 80], bing: [1, 60], "(none)": [3, 120] }],
    ["last_click", 30, { klaviyo: [1, 80], google: [1, 80], bing: [1, 60], "(none)": [3, 120] }],
    [
      "last_click",
      -1,
      { klaviyo: [1, 80], google: [1, 80], bing: [1, 60], tiktok: [1, 50], "(none)": [2, 70] },
    ],
    // first_click: OA ← a3 (1 d: a2 is exactly 48 h back), a2 facebook (7 d), a1 google (30 d: 10 days back)
    ["first_click", 1, { klaviyo: [1, 80], bing: [1, 60], "(none)": [4, 200] }],
    ["first_click", 7, { facebook: [1, 80], google: [1, 80], bing: [1, 60], "(none)": [3, 120] }],
    ["first_click", 30, { google: [2, 160], bing: [1, 60], "(none)": [3, 120] }],
    ["first_click", -1, { google: [2, 160], bing: [1, 60], tiktok: [1, 50], "(none)": [2, 70] }],
    // any_click: every source touched in the window gets the whole order
    ["any_click", 1, { klaviyo: [1, 80], bing: [1, 60], "(none)": [4, 200] }],
    [
      "any_click",
      7,
      { facebook: [1, 80], klaviyo: [1, 80], google: [1, 80], bing: [1, 60], "(none)": [3, 120] },
    ],
    [
      "any_click",
      30,
      { google: [2, 160], facebook: [1, 80], klaviyo: [1, 80], bing: [1, 60], "(none)": [3, 120] },
    ],
    [
      "any_click",
      -1,
      {
        google: [2, 160],
        facebook: [1, 80],
        klaviyo: [1, 80],
        bing: [1, 60],
        tiktok: [1, 50],
        "(none)": [2, 70],
      },
    ],
  ];

  it.each(TABLE)("%s, window %i", async (model, window, expected) => {
    expect(await credit(model, window)).toEqual(expected);
  });

  it("last_click and first_click credit each order once: totals reconcile to 6 orders, 340", async () => {
    for (const [model, window, expected] of TABLE) {
      if (model === "any_click") continue;
      const values = Object.values(expected);
      expect(
        values.reduce((s, v) => s + v[0], 0),
        `${model} ${window}`,
      ).toBe(6);
      expect(
        values.reduce((s, v) => s + v[1], 0),
        `${model} ${window}`,
      ).toBe(340);
    }
  });

  it("a touch 10 days before its order counts at 30 days and unlimited, not at 7", async () => {
    // a1 (google, 10 days before OA) is OA's first touch only when the window reaches it
    expect((await credit("first_click", 7)).google).toEqual([1, 80]); // OD only
    expect((await credit("first_click", 30)).google).toEqual([2, 160]); // OD and OA
    expect((await credit("first_click", -1)).google).toEqual([2, 160]);
  });

  it("the response envelope: dateRange, dimension, rows and measureDetails per value", async () => {
    const res = byValue(await attribute("last_click", 7));
    const klaviyo = res.klaviyo!;
    expect(klaviyo.dateRange).toEqual(RANGE);
    expect(klaviyo.dimension).toBe("attribution.source");
    expect(klaviyo.data.primary).toEqual([
      {
        dt: "2026-08-10",
        start: "2026-08-10T00:00:00Z",
        end: "2026-08-13T00:00:00Z",
        "attribution.orders": 1,
        "attribution.revenue": 80,
      },
    ]);
    expect(klaviyo.measureDetails.map((d) => d.measure)).toEqual([
      "attribution.orders",
      "attribution.revenue",
    ]);
  });

  it("by day: each order in its own day's bucket", async () => {
    const res = byValue(await attribute("last_click", 7, { granularity: "day" }));
    const days = (v: string) => res[v]!.data.primary.map((r) => r["attribution.orders"]);
    expect(days("klaviyo")).toEqual([1, 0, 0]); // OA Aug 10
    expect(days("google")).toEqual([0, 0, 1]); // OD Aug 12
    expect(days("(none)")).toEqual([1, 2, 0]); // OF; OB, OC
  });

  it("the campaign dimension: a touch without the value is (not set), distinct from (none)", async () => {
    // last_click 7: OA ← a3 (no campaign id) and OE ← e1 (none either) are (not set); OD ← g1
    const res = await attribute("last_click", 7, {
      dimension: "attribution.campaign_id",
      measures: ["attribution.orders", "attribution.revenue"],
    });
    expect(sums(res, "attribution.orders")).toEqual({ "(not set)": 2, g1: 1, "(none)": 3 });
    expect(sums(res, "attribution.revenue")).toEqual({ "(not set)": 140, g1: 80, "(none)": 120 });
  });

  it("the channel dimension", async () => {
    // last_click 30: klaviyo = email, google cpc = paid_search, bing cpc = paid_search
    const res = await attribute("last_click", 30, { dimension: "attribution.channel" });
    expect(sums(res, "attribution.orders")).toEqual({ email: 1, paid_search: 2, "(none)": 3 });
  });
});

describe("spend, ROAS and CPA for ad-entity dimensions", () => {
  it("attribution.campaign_id joins spend over the range", async () => {
    // first_click 30: OA ← a1 g1 (80), OD ← d1 g1 (80) → g1 2 orders, 160; OE ← e1 (not set) 60;
    // spend Aug 10..12: g1 40 + 40 = 80 (Aug 20 is outside), f1 30, g2 25.
    // g1: ROAS 160 / 80 = 2, CPA 80 / 2 = 40. f1 and g2: no orders → ROAS 0, CPA null.
    // (not set) and (none): no spend → ROAS null, CPA 0 / n = 0.
    const res = byValue(await attribute("first_click", 30, { dimension: "attribution.campaign_id" }));
    const row = (v: string) =>
      ["attribution.orders", "attribution.revenue", "ads.spend", "attribution.roas", "attribution.cpa"].map(
        (m) => detail(res[v]!, m).primarySum,
      );
    expect(Object.keys(res).sort()).toEqual(["(none)", "(not set)", "f1", "g1", "g2"]);
    expect(row("g1")).toEqual([2, 160, 80, 2, 40]);
    expect(row("f1")).toEqual([0, 0, 30, 0, null]);
    expect(row("g2")).toEqual([0, 0, 25, 0, null]);
    expect(row("(not set)")).toEqual([1, 60, 0, null, 0]);
    expect(row("(none)")).toEqual([3, 120, 0, null, 0]);
  });

  it("channel details give each listed campaign the figures of the attribution.campaign_id rows", async () => {
    // Its rows are ad entities, so it reads only conversions credited to a touch: OC, OF and OB (no
    // touch in 30 days) and the (not set) ones never reach an entity. first_click 30 as above: g1 2
    // orders, 160, ROAS 2; f1 and g2 0. last_click 30: OA ← a3 (not set), OD ← d1 g1 → g1 1, 80.
    await suite.load.adEntities([
      adEntity("google", "campaign", "g1", "act-g", "Summer"),
      adEntity("facebook", "campaign", "f1", "act-f", "Retarget"),
      adEntity("google", "campaign", "g2", "act-g", "Other"),
    ]);
    for (const [model, expected] of [
      ["first_click", { g1: [2, 160, 2], f1: [0, 0, 0], g2: [0, 0, 0] }],
      ["last_click", { g1: [1, 80, 1], f1: [0, 0, 0], g2: [0, 0, 0] }],
    ] as const) {
      const res = await post(
        {
          level: "campaign",
          measures: ["attribution.orders", "attribution.revenue", "attribution.roas"],
          dateRange: RANGE,
          timezone: "UTC",
          attributionModel: model,
          attributionWindow: 30,
        },
        { path: "/db-mgmt/api/query-channel-details" },
      );
      expect(res.status, res.text).toBe(200);
      const rows = (
        res.body as {
          results: { basicDetails: { id: string }; data: { primary: Record<string, number>[] } }[];
        }
      ).results;
      const got = Object.fromEntries(
        rows.map((r) => [
          r.basicDetails.id,
          ["attribution.orders", "attribution.revenue", "attribution.roas"].map((m) => r.data.primary[0]![m]),
        ]),
      );
      expect(got, model).toEqual(expected);
    }
  });

  it("the default measures depend on the dimension", async () => {
    const bySource = byValue(await attribute("last_click", 7));
    expect(bySource.google!.measureDetails.map((d) => d.measure)).toEqual([
      "attribution.orders",
      "attribution.revenue",
    ]);
    const byCampaign = byValue(await attribute("last_click", 7, { dimension: "attribution.campaign_id" }));
    // last_click 7: g1 ← OD only: ROAS 80 / 80 = 1, CPA 80 / 1 = 80
    expect(byCampaign.g1!.measureDetails.map((d) => [d.measure, d.primarySum])).toEqual([
      ["attribution.orders", 1],
      ["attribution.revenue", 80],
      ["ads.spend", 80],
      ["attribution.roas", 1],
      ["attribution.cpa", 80],
    ]);
    // spend is not available by source
    expect400(await attribute("last_click", 7, { measures: ["ads.spend"] }), "ads.spend");
  });
});

describe("filters", () => {
  it("attribution. fields restrict the touches that can be credited", async () => {
    // google touches only, first_click 30: OA ← a1, OD ← d1 → google 2 (160); the rest (none): 40+50+30+60
    expect(
      await credit("first_click", 30, {
        filters: { field: "attribution.source", op: "equals", value: "google" },
      }),
    ).toEqual({
      google: [2, 160],
      "(none)": [4, 180],
    });
  });

  it("orders. fields restrict the conversions", async () => {
    // total > 50: OA (80 net), OE (60), OD (80); last_click 7 → klaviyo, bing, google
    expect(
      await credit("last_click", 7, { filters: { field: "orders.total_price", op: "gt", value: 50 } }),
    ).toEqual({
      klaviyo: [1, 80],
      google: [1, 80],
      bing: [1, 60],
    });
  });
});

describe("valueSource events", () => {
  beforeAll(async () => {
    // alice signs up twice after her email touch (without a value, then with 25); bob signs up with a
    // value of 10, his only touch 41 days back; alice's purchase of OA as an event.
    await suite.load.events([
      event("signup", "anon-alice", "2026-08-10T11:00:00Z"),
      event("signup", "anon-alice", "2026-08-10T12:00:00Z", {
        eventProperties: { value: 25, currency: "USD" },
      }),
      event("signup", "anon-bob", "2026-08-11T13:00:00Z", {
        eventProperties: { value: 10, currency: "USD" },
      }),
      event("purchase", "anon-alice", "2026-08-10T10:05:00Z", {
        eventProperties: { orderId: "OA", value: 100, currency: "USD" },
      }),
    ]);
  });

  it("conversions are the named events; value is the event's value", async () => {
    // signup, last_click 7: alice's two ← klaviyo (a3), values none (0) and 25; bob → (none), 10
    expect(await credit("last_click", 7, { valueSource: "events", eventName: "signup" })).toEqual({
      klaviyo: [2, 25],
      "(none)": [1, 10],
    });
    // unlimited window: bob ← tiktok
    expect(await credit("last_click", -1, { valueSource: "events", eventName: "signup" })).toEqual({
      klaviyo: [2, 25],
      tiktok: [1, 10],
    });
    // purchase events: alice's only → klaviyo, 100 (the event's value, not the order's net)
    expect(await credit("last_click", 7, { valueSource: "events", eventName: "purchase" })).toEqual({
      klaviyo: [1, 100],
    });
  });

  it("events. filters apply to the conversions", async () => {
    const res = await credit("last_click", -1, {
      valueSource: "events",
      eventName: "signup",
      filters: { field: "events.value", op: "is_set" },
    });
    expect(res).toEqual({ klaviyo: [1, 25], tiktok: [1, 10] });
  });

  it("eventName is required with valueSource events", async () => {
    expect400(await attribute("last_click", 7, { valueSource: "events" }), "eventName");
  });
});

describe("the general query's attribution measures", () => {
  it("without an attribution dimension: orders that have a touch in the window", async () => {
    // last_click 30: OA, OE, OD → 3 orders, 80 + 60 + 80 = 220
    const res = await post({
      measures: ["attribution.orders", "attribution.revenue", "attribution.aov"],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      attributionModel: "last_click",
      attributionWindow: 30,
    });
    expect(total(res, "attribution.orders")).toBe(3);
    expect(total(res, "attribution.revenue")).toBe(220);
    expect(total(res, "attribution.aov")).toBe(73.33); // 220 / 3
  });

  it("with one: the same credit as the attribution endpoint", async () => {
    const res = await post({
      measures: ["attribution.orders", "attribution.revenue"],
      dimensions: ["attribution.source"],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      attributionModel: "first_click",
      attributionWindow: 7,
    });
    expect(sums(res, "attribution.orders")).toEqual({ facebook: 1, google: 1, bing: 1, "(none)": 3 });
  });
});

describe("identity merges", () => {
  it("a touch reaches an order through merges in either direction and through a chain of two", async () => {
    // In the main fixture OD (email identity, merged into anon-dave's) and OE (anon-erin merged into
    // the order's) are credited above. Here a chain: the touch is on Q, Q merges into P, P into R
    // (the order's identity): one hop from Q must reach R.
    const { post: post2, load } = await suite.pixel(["analytics:read", "events:write"]);
    await load.orders([
      order("OH", "2026-08-11T10:00:00Z", "USD", 70, { customer: { id: "hank" } }), // R (oldest)
    ]);
    await load.events([
      event("page_view", "anon-p", "2026-08-09T10:00:00Z", { userProperties: { userIds: ["uid-p"] } }),
    ]); // P
    await load.events([touch("anon-q", "2026-08-10T10:00:00Z", "utm_source=google&utm_medium=cpc")]); // Q
    const credited = async () => sums(await attribute("last_click", 7, {}, post2), "attribution.orders");
    expect(await credited()).toEqual({ "(none)": 1 }); // nothing links the touch to hank yet
    await load.events([
      event("page_view", "anon-q", "2026-08-12T10:00:00Z", { userProperties: { userIds: ["uid-p"] } }),
    ]); // Q → P
    expect(await credited()).toEqual({ "(none)": 1 });
    await load.events([
      event("page_view", "anon-p", "2026-08-12T11:00:00Z", { userProperties: { storeYIds: ["hank"] } }),
    ]); // P → R
    expect(await credited()).toEqual({ google: 1 });
  });
});

describe("validation", () => {
  it("a dimension outside the attribution family, a bad model or window are 400s", async () => {
    expect400(await attribute("last_click", 7, { dimension: "orders.country" }), "orders.country");
    expect((await attribute("shapley", 7)).status).toBe(400);
    expect((await attribute("last_click", 3)).status).toBe(400);
  });
});
