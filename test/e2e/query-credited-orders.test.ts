/**
 * POST /db-mgmt/api/query-attribution/orders (docs/query.md, "Credited orders"): the orders behind one
 * row of an attribution answer — which orders each value lists under a model and window, the share
 * credited, the net value in the reporting currency, paging, `(none)` and `(not set)`, filters on
 * either side, and the 400s. The listing must agree with the attribution answer it drills into.
 *
 * Orders (USD, UTC; range Aug 10–12, 2026) and their touches by source (window 30 days):
 *
 *   order  customer  placed           net            touches (in time order)
 *   OA     alice     Aug 10 10:00     100 − 20 = 80  google g1 Jul 31 10:00, facebook Aug 8 10:00,
 *                                                    klaviyo Aug 10 09:30
 *   OB     bob       Aug 10 12:00     50             google Aug 5 12:00, google Aug 9 12:00,
 *                                                    facebook Aug 10 11:00
 *   OC     carol     Aug 11 15:00     30             none
 *   OD     dave      Aug 11 18:00     10.01          tiktok Jun 1 12:00 (71 days back: outside 30),
 *                                                    google Aug 11 17:00
 *   OE     erin      Aug 12 09:00     60             facebook Aug 12 08:00
 *   OF     frank     Aug 12 10:00     40             none
 *   OG     gina      Aug 12 11:00     25             google g1 Aug 12 10:30
 *   OH     hank      Aug 12 11:00     5              none
 *   OI     ivy       Aug 12 11:00     5              none
 *   OZ     alice     Aug 13 10:00     70             (after the range: never listed)
 *
 * first_click: google OA OB OD OG · facebook OE · (none) OC OF OH OI; tiktok only without a window.
 * linear: google OA 1/3, OB 2/3, OD 1, OG 1 · facebook OA 1/3, OB 1/3, OE 1 · klaviyo OA 1/3.
 * EUR at 0.85 per USD: OA 68.00, OB 42.50, OD 8.5085 → 8.51, OG 21.25.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { touchShares } from "../../src/query/attribution-models.js";
import type { TestApp } from "../helpers/app.js";
import {
  expect400,
  fxRate,
  type Json,
  order,
  type Response,
  refund,
  storeCustomer as store,
  sums,
  touch,
} from "./query-fixtures.js";
import { type Poster, type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
let post: Poster;

const PATH = "/db-mgmt/api/query-attribution/orders";
const RANGE = { start: "2026-08-10", end: "2026-08-12" };

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, post } = suite);
  const at = (who: string, time: string, query: string) => touch(`anon-${who}`, time, query, store(who));
  await suite.load.events([
    at("alice", "2026-07-31T10:00:00Z", "utm_source=google&utm_medium=cpc&campaign_id=g1"),
    at("alice", "2026-08-08T10:00:00Z", "utm_source=facebook&utm_medium=paid_social"),
    at("alice", "2026-08-10T09:30:00Z", "utm_source=klaviyo&utm_medium=email"),
    at("bob", "2026-08-05T12:00:00Z", "utm_source=google&utm_medium=cpc"),
    at("bob", "2026-08-09T12:00:00Z", "utm_source=google&utm_medium=cpc"),
    at("bob", "2026-08-10T11:00:00Z", "utm_source=facebook&utm_medium=paid_social"),
    at("dave", "2026-06-01T12:00:00Z", "utm_source=tiktok&utm_medium=paid_social"),
    at("dave", "2026-08-11T17:00:00Z", "utm_source=google&utm_medium=cpc"),
    at("erin", "2026-08-12T08:00:00Z", "utm_source=facebook&utm_medium=paid_social"),
    at("gina", "2026-08-12T10:30:00Z", "utm_source=google&utm_medium=cpc&campaign_id=g1"),
  ]);
  const placed = (id: string, time: string, total: number, customer: string) =>
    order(id, time, "USD", total, { customer: { id: customer } });
  await suite.load.orders([
    placed("OA", "2026-08-10T10:00:00Z", 100, "alice"),
    placed("OB", "2026-08-10T12:00:00Z", 50, "bob"),
    placed("OC", "2026-08-11T15:00:00Z", 30, "carol"),
    placed("OD", "2026-08-11T18:00:00Z", 10.01, "dave"),
    placed("OE", "2026-08-12T09:00:00Z", 60, "erin"),
    placed("OF", "2026-08-12T10:00:00Z", 40, "frank"),
    placed("OG", "2026-08-12T11:00:00Z", 25, "gina"),
    placed("OH", "2026-08-12T11:00:00Z", 5, "hank"),
    placed("OI", "2026-08-12T11:00:00Z", 5, "ivy"),
    placed("OZ", "2026-08-13T10:00:00Z", 70, "alice"),
  ]);
  await suite.load.refunds([refund("RA", "OA", "2026-08-11T10:00:00Z", 20)]);
  await suite.load.fxRates([fxRate("2026-07-01", "EUR", 0.85)]);
});
afterAll(() => app?.close());

interface Listed {
  orderId: string;
  createdAt: string;
  value: number;
  credit: number;
}
interface Listing {
  orders: Listed[];
  currency: string;
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

function list(value: string, model: string, extra: Json = {}): Promise<Response> {
  return post(
    {
      dimension: "attribution.source",
      dimensionValue: value,
      dateRange: RANGE,
      timezone: "UTC",
      attributionModel: model,
      attributionWindow: 30,
      ...extra,
    },
    { path: PATH },
  );
}

async function listing(value: string, model: string, extra: Json = {}): Promise<Listing> {
  const res = await list(value, model, extra);
  expect(res.status, res.text).toBe(200);
  return res.body as Listing;
}

/** [order id, credit] of a whole listing. */
async function credits(value: string, model: string, extra: Json = {}) {
  return (await listing(value, model, { limit: 100, ...extra })).orders.map((o) => [o.orderId, o.credit]);
}

describe("which orders each value lists", () => {
  it("first_click: the orders whose first touch in the window has the value, newest first, credit 1", async () => {
    expect(await credits("google", "first_click")).toEqual([
      ["OG", 1],
      ["OD", 1],
      ["OB", 1],
      ["OA", 1],
    ]);
    expect(await credits("facebook", "first_click")).toEqual([["OE", 1]]);
    expect(await credits("klaviyo", "first_click")).toEqual([]);
    // OD's tiktok touch is 71 days back: only an unlimited window reaches it.
    expect(await credits("tiktok", "first_click")).toEqual([]);
    expect(await credits("tiktok", "first_click", { attributionWindow: -1 })).toEqual([["OD", 1]]);
  });

  it("linear: every order with a touch of the value, credited its share of the touches", async () => {
    expect(await credits("google", "linear")).toEqual([
      ["OG", 1],
      ["OD", 1],
      ["OB", 0.6667],
      ["OA", 0.3333],
    ]);
    expect(await credits("facebook", "linear")).toEqual([
      ["OE", 1],
      ["OB", 0.3333],
      ["OA", 0.3333],
    ]);
    expect(await credits("klaviyo", "linear")).toEqual([["OA", 0.3333]]);
  });

  it("position_based and time_decay: the shares of src/query/attribution-models.ts", async () => {
    // OA's three touches: 40 % first (google), 20 % the middle one (facebook), 40 % last (klaviyo).
    expect(await credits("klaviyo", "position_based")).toEqual([["OA", 0.4]]);
    expect(await credits("facebook", "position_based")).toEqual([
      ["OE", 1],
      ["OB", 0.4],
      ["OA", 0.2],
    ]);
    const oa = touchShares(
      "time_decay",
      [
        { time: Date.parse("2026-07-31T10:00:00Z"), eventId: "a" },
        { time: Date.parse("2026-08-08T10:00:00Z"), eventId: "b" },
        { time: Date.parse("2026-08-10T09:30:00Z"), eventId: "c" },
      ],
      3,
    );
    const four = (x: number) => Math.round(x * 10_000) / 10_000;
    expect(await credits("klaviyo", "time_decay", { attributionHalfLifeDays: 3 })).toEqual([
      ["OA", four(oa[2]!)],
    ]);
    expect(await credits("google", "time_decay", { attributionHalfLifeDays: 3 })).toContainEqual([
      "OA",
      four(oa[0]!),
    ]);
  });

  it("(none) lists the orders without a touch in the window; ties on the instant by order id, descending", async () => {
    expect(await credits("(none)", "first_click")).toEqual([
      ["OI", 1],
      ["OH", 1],
      ["OF", 1],
      ["OC", 1],
    ]);
    expect(await credits("(none)", "linear")).toEqual(await credits("(none)", "first_click"));
    // With a 1-day window OA keeps only its klaviyo touch (30 min), OB its facebook touch, OD google.
    expect((await credits("(none)", "first_click", { attributionWindow: 1 })).map((c) => c[0])).toEqual([
      "OI",
      "OH",
      "OF",
      "OC",
    ]);
    expect((await credits("(none)", "first_click", { attributionWindow: 7 })).map((c) => c[0])).toEqual([
      "OI",
      "OH",
      "OF",
      "OC",
    ]);
  });

  it("(not set): orders credited to a touch without the dimension's value", async () => {
    // By campaign id: only OA's google touch and OG's carry g1.
    const byCampaign = { dimension: "attribution.campaign_id" };
    expect(await credits("g1", "first_click", byCampaign)).toEqual([
      ["OG", 1],
      ["OA", 1],
    ]);
    expect(await credits("(not set)", "first_click", byCampaign)).toEqual([
      ["OE", 1],
      ["OD", 1],
      ["OB", 1],
    ]);
    expect(await credits("(not set)", "linear", byCampaign)).toEqual([
      ["OE", 1],
      ["OD", 1],
      ["OB", 1],
      ["OA", 0.6667],
    ]);
  });

  it("values are the order's net value (total − refunds) in the reporting currency, to the cent", async () => {
    const usd = await listing("google", "first_click");
    expect(usd.currency).toBe("USD");
    expect(usd.orders).toEqual([
      { orderId: "OG", createdAt: "2026-08-12T11:00:00.000Z", value: 25, credit: 1 },
      { orderId: "OD", createdAt: "2026-08-11T18:00:00.000Z", value: 10.01, credit: 1 },
      { orderId: "OB", createdAt: "2026-08-10T12:00:00.000Z", value: 50, credit: 1 },
      { orderId: "OA", createdAt: "2026-08-10T10:00:00.000Z", value: 80, credit: 1 },
    ]);
    const eur = await listing("google", "linear", { currency: "eur" });
    expect(eur.currency).toBe("EUR");
    // The whole order's value whatever the share: 80 × 0.85, 50 × 0.85, 10.01 × 0.85 = 8.5085, 25 × 0.85.
    expect(eur.orders.map((o) => [o.orderId, o.value, o.credit])).toEqual([
      ["OG", 21.25, 1],
      ["OD", 8.51, 1],
      ["OB", 42.5, 0.6667],
      ["OA", 68, 0.3333],
    ]);
  });

  it("a currency without rates is a 400 naming it", async () => {
    expect400(await list("google", "first_click", { currency: "JPY" }), "no exchange rate for JPY");
  });
});

describe("paging", () => {
  it("limit and offset page through the list; total and hasMore say where the page is", async () => {
    const ids = (l: Listing) => l.orders.map((o) => o.orderId);
    const first = await listing("google", "first_click", { limit: 3 });
    expect(ids(first)).toEqual(["OG", "OD", "OB"]);
    expect(first.pagination).toEqual({ limit: 3, offset: 0, total: 4, hasMore: true });
    const second = await listing("google", "first_click", { limit: 3, offset: 3 });
    expect(ids(second)).toEqual(["OA"]);
    expect(second.pagination).toEqual({ limit: 3, offset: 3, total: 4, hasMore: false });
    const exact = await listing("google", "first_click", { limit: 2, offset: 2 });
    expect(ids(exact)).toEqual(["OB", "OA"]);
    expect(exact.pagination).toEqual({ limit: 2, offset: 2, total: 4, hasMore: false });
  });

  it("a page past the end is empty and still tells the total", async () => {
    // 2^32 would wrap to 0 in a 32-bit offset and answer the first page again.
    for (const offset of [4, 50, 2 ** 32]) {
      const past = await listing("google", "first_click", { limit: 3, offset });
      expect(past.orders).toEqual([]);
      expect(past.pagination).toEqual({ limit: 3, offset, total: 4, hasMore: false });
    }
    const none = await listing("klaviyo", "first_click");
    expect(none).toEqual({
      orders: [],
      currency: "USD",
      pagination: { limit: 20, offset: 0, total: 0, hasMore: false },
    });
  });
});

describe("agrees with the attribution answer it drills into", () => {
  it.each(["first_click", "last_click", "any_click", "linear", "position_based", "time_decay"])(
    "%s: per value, Σ credit = attributed orders and Σ credit × value = attributed revenue",
    async (model) => {
      const res = await post(
        {
          dimension: "attribution.source",
          dateRange: RANGE,
          timezone: "UTC",
          attributionModel: model,
          attributionWindow: 30,
        },
        { path: "/db-mgmt/api/query-attribution" },
      );
      const orders = sums(res, "attribution.orders");
      const revenue = sums(res, "attribution.revenue");
      expect(Object.keys(orders).length).toBeGreaterThan(2);
      for (const value of Object.keys(orders)) {
        const listed = (await listing(value, model, { limit: 100 })).orders;
        const credit = listed.reduce((s, o) => s + o.credit, 0);
        const money = listed.reduce((s, o) => s + o.credit * o.value, 0);
        // Each listed share and value is rounded on its own (4 places, cents); the answer's row once.
        expect(Math.abs(credit - orders[value]!), `${value} orders`).toBeLessThanOrEqual(
          0.00005 * listed.length + 0.0001 + 1e-9,
        );
        const slack = listed.reduce((s, o) => s + 0.00005 * Math.abs(o.value) + 0.005, 0.01);
        expect(Math.abs(money - revenue[value]!), `${value} revenue`).toBeLessThanOrEqual(slack + 1e-9);
      }
    },
  );
});

describe("the derived tables", () => {
  it("list the same orders, values and credits as raw touches, for every model and value", async () => {
    await app.services.derivedWorker.runOnce(0);
    const fresh = { "cache-control": "no-cache" };
    for (const model of [
      "first_click",
      "last_click",
      "any_click",
      "linear",
      "position_based",
      "time_decay",
    ]) {
      for (const value of ["google", "facebook", "tiktok", "(none)", "(not set)"]) {
        for (const attributionWindow of [7, 30, -1]) {
          const body = {
            dimension: "attribution.source",
            dimensionValue: value,
            dateRange: RANGE,
            timezone: "UTC",
            currency: "EUR",
            attributionModel: model,
            attributionWindow,
            limit: 100,
          };
          const derived = await post(body, { path: PATH, headers: fresh });
          const raw = await post(body, { path: `${PATH}?derived=false`, headers: fresh });
          expect(derived.status, derived.text).toBe(200);
          expect(derived.body, `${model} ${value} ${attributionWindow}`).toEqual(raw.body);
        }
      }
    }
    // Something is listed at all, so equality means something.
    expect((await listing("google", "linear", { limit: 100 })).orders.length).toBeGreaterThan(0);
  });

  it("?explain=true shows the statement reading conversion_touches", async () => {
    const res = await post(
      {
        dimension: "attribution.source",
        dimensionValue: "google",
        dateRange: RANGE,
        timezone: "UTC",
        attributionModel: "linear",
        attributionWindow: 30,
      },
      { path: `${PATH}?explain=true` },
    );
    expect(res.status, res.text).toBe(200);
    expect(JSON.stringify(res.body)).toContain("conversion_touches");
  });
});

describe("filters", () => {
  it("orders. fields restrict the orders listed", async () => {
    const filters = { field: "orders.order_id", op: "not_in", value: ["OB"] };
    expect((await credits("google", "first_click", { filters })).map((c) => c[0])).toEqual([
      "OG",
      "OD",
      "OA",
    ]);
  });

  it("attribution. fields restrict the touches that can be credited", async () => {
    // Without google touches: OA and OB start with facebook; OD and OG have no touch left.
    const filters = { field: "attribution.source", op: "not_equals", value: "google" };
    expect(await credits("facebook", "first_click", { filters })).toEqual([
      ["OE", 1],
      ["OB", 1],
      ["OA", 1],
    ]);
    expect((await credits("(none)", "first_click", { filters })).map((c) => c[0])).toEqual([
      "OI",
      "OH",
      "OG",
      "OF",
      "OD",
      "OC",
    ]);
  });
});

describe("the request", () => {
  const key = (res: Response) => (res.body as { errors?: { key: string }[] }).errors?.map((e) => e.key);

  it("a missing dimensionValue is a 400 naming it", async () => {
    const res = await post(
      {
        dimension: "attribution.source",
        dateRange: RANGE,
        attributionModel: "first_click",
        attributionWindow: 30,
      },
      { path: PATH },
    );
    expect400(res, "dimensionValue");
    expect(key(res)).toEqual(["dimensionValue"]);
  });

  it("valueSource events is a 400 naming valueSource; orders is accepted", async () => {
    const res = await list("google", "first_click", { valueSource: "events", eventName: "signup" });
    expect400(res, "valueSource");
    expect(key(res)).toContain("valueSource");
    expect((await list("google", "first_click", { valueSource: "orders" })).status).toBe(200);
  });

  it.each([
    [{ limit: 0 }, "limit"],
    [{ limit: 101 }, "limit"],
    [{ offset: -1 }, "offset"],
    [{ attributionWindow: 3 }, "attributionWindow"],
    [{ attributionModel: "u_shaped" }, "attributionModel"],
    [{ attributionHalfLifeDays: 0.5 }, "attributionHalfLifeDays"],
    [{ dimension: "orders.country" }, "dimension"],
    [{ compareDateRange: RANGE }, "compareDateRange"],
    [{ filters: { field: "events.name", op: "equals", value: "x" } }, "filters", "events.name"],
  ])("%o is a 400 naming %s", async (extra, name, word = name) => {
    const res = await list("google", "first_click", extra);
    expect400(res, word);
    expect(key(res)?.[0]).toBe(name);
  });

  it("is in the OpenAPI document with its body and answer", async () => {
    const doc = (await app.call("GET", "/openapi.json")).body as {
      paths: Record<string, { post?: { requestBody?: unknown; responses?: unknown } }>;
    };
    const op = doc.paths[PATH]?.post;
    expect(op).toBeDefined();
    expect(JSON.stringify(op!.requestBody)).toContain("dimensionValue");
    expect(JSON.stringify(op!.responses)).toContain("hasMore");
  });

  it("another pixel's id in the body is refused", async () => {
    expect((await list("google", "first_click", { pixelId: "someone-else" })).status).toBe(403);
  });

  it("answers are cached per data version; ?explain=true shows the statement with bound values", async () => {
    const body = {
      dimension: "attribution.source",
      dimensionValue: "facebook",
      dateRange: RANGE,
      attributionModel: "linear",
      attributionWindow: 30,
      timezone: "UTC",
    };
    await post(body, { path: PATH, headers: { "cache-control": "no-cache" } });
    const hit = await post(body, { path: PATH });
    expect(hit.status, hit.text).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("hit");
    const explained = await post(body, { path: `${PATH}?explain=true` });
    const statements = (explained.body as { explain: { statements: { sql: string; params: Json }[] } })
      .explain.statements;
    expect(statements).toHaveLength(1);
    expect(Object.values(statements[0]!.params)).toContain("facebook");
    expect(statements[0]!.sql).not.toContain("facebook");
  });

  it("?format=rows answers one row per order", async () => {
    const rows = await post(
      {
        dimension: "attribution.source",
        dimensionValue: "google",
        dateRange: RANGE,
        timezone: "UTC",
        attributionModel: "first_click",
        attributionWindow: 30,
        limit: 2,
      },
      { path: `${PATH}?format=rows` },
    );
    expect(rows.body).toEqual({
      columns: ["orderId", "createdAt", "value", "credit", "currency"],
      rows: [
        { orderId: "OG", createdAt: "2026-08-12T11:00:00.000Z", value: 25, credit: 1, currency: "USD" },
        { orderId: "OD", createdAt: "2026-08-11T18:00:00.000Z", value: 10.01, credit: 1, currency: "USD" },
      ],
    });
  });
});
