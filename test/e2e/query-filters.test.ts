/**
 * Canonical filters (docs/query.md) through POST /db-mgmt/api/query on a hand-computed fixture: every
 * operator on every field type, nesting several levels deep, how `not_*` and `not` treat absent
 * values (documented in src/query/filters/compile.ts: '' for text, [] for lists, NULL otherwise),
 * empty lists, and the 400s that name an unknown field, an unknown or ill-typed operator, or a field
 * of a family the measure cannot take.
 *
 * Six USD orders whose totals are distinct powers of two, so the revenue of a filtered query names
 * exactly which orders matched (13 = 1 + 4 + 8 = A, C, D):
 *
 *   id  total  created (UTC)        New York local    country  source_name    gateway          tags                  customer
 *   A       1  2026-04-01 10:00     Apr 1 06:00       US       web            stripe           [VIP, wholesale]      c1 (1st)
 *   B       2  2026-04-01 23:30     Apr 1 19:30       DE       pos            ''               [vip]                 c2 (1st)
 *   C       4  2026-04-02 00:30     Apr 1 20:30       ''       web            paypal           []                    c1 (2nd → returning)
 *   D       8  2026-04-03 12:00     Apr 3 08:00       FR       Web Store      stripe           [retail]              c3 (1st)
 *   E      16  2026-04-04 08:00     Apr 4 04:00       US       ''             Stripe Connect   [wholesale, eu]       c2 (2nd → returning)
 *   F      32  2026-04-05 20:00     Apr 5 16:00       GB       draft_orders   ''               [VIP-gold]            c4 (1st)
 *
 * All six: 63. Events (for the events family and a nullable number): page_view with a Google cpc
 * landing (no value), purchase 50 USD, purchase 20 USD, add_to_cart (no value).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  event,
  expect400,
  type Json,
  order,
  type Pixel,
  type Response,
  resultsOf,
  total,
} from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let px: Pixel;
let post: Poster;

const AMOUNT = { A: 1, B: 2, C: 4, D: 8, E: 16, F: 32 } as const;
type Id = keyof typeof AMOUNT;

beforeAll(async () => {
  const suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, px, post } = suite);
  await suite.load.orders([
    order("A", "2026-04-01T10:00:00Z", "USD", 1, {
      country: "US",
      sourceName: "web",
      gateway: "stripe",
      tags: ["VIP", "wholesale"],
      discountCodes: ["SPRING10"],
      customer: { id: "c1" },
    }),
    order("B", "2026-04-01T23:30:00Z", "USD", 2, {
      country: "DE",
      sourceName: "pos",
      tags: ["vip"],
      customer: { id: "c2" },
    }),
    order("C", "2026-04-02T00:30:00Z", "USD", 4, {
      sourceName: "web",
      gateway: "paypal",
      customer: { id: "c1" },
    }),
    order("D", "2026-04-03T12:00:00Z", "USD", 8, {
      country: "FR",
      sourceName: "Web Store",
      gateway: "stripe",
      tags: ["retail"],
      discountCodes: ["WELCOME"],
      customer: { id: "c3" },
    }),
    order("E", "2026-04-04T08:00:00Z", "USD", 16, {
      country: "US",
      gateway: "Stripe Connect",
      tags: ["wholesale", "eu"],
      customer: { id: "c2" },
    }),
    order("F", "2026-04-05T20:00:00Z", "USD", 32, {
      country: "GB",
      sourceName: "draft_orders",
      tags: ["VIP-gold"],
      customer: { id: "c4" },
    }),
  ]);
  await suite.load.events([
    event("page_view", "v1", "2026-04-02T10:00:00Z", {
      page: { url: "https://shop.example/a?utm_source=google&utm_medium=cpc" },
    }),
    event("purchase", "v1", "2026-04-02T11:00:00Z", { eventProperties: { value: 50, currency: "USD" } }),
    event("purchase", "v2", "2026-04-03T11:00:00Z", { eventProperties: { value: 20, currency: "USD" } }),
    event("add_to_cart", "v2", "2026-04-03T10:00:00Z"),
  ]);
});
afterAll(() => app?.close());

const RANGE = { start: "2026-03-31", end: "2026-04-06" };

function orders(filters: Json | undefined, timezone = "UTC"): Promise<Response> {
  return post({
    measures: ["orders.count", "orders.total_revenue"],
    dateRange: RANGE,
    granularity: "none",
    timezone,
    ...(filters ? { filters } : {}),
  });
}

const c = (field: string, op: string, value?: unknown): Json =>
  value === undefined ? { field, op } : { field, op, value };

/** [field, operator, value, matching orders, their revenue worked out by hand, timezone?] */
type Case = [string, string, unknown, Id[], number, string?];

const CASES: Case[] = [
  // string: orders.country (C has '' — absent)
  ["orders.country", "equals", "US", ["A", "E"], 17],
  ["orders.country", "not_equals", "US", ["B", "C", "D", "F"], 46], // 2+4+8+32, C's '' included
  ["orders.country", "in", ["US", "FR"], ["A", "D", "E"], 25],
  ["orders.country", "not_in", ["US", "FR"], ["B", "C", "F"], 38],
  ["orders.country", "in", [], [], 0], // empty in matches nothing
  ["orders.country", "not_in", [], ["A", "B", "C", "D", "E", "F"], 63], // empty not_in matches everything
  ["orders.country", "is_set", undefined, ["A", "B", "D", "E", "F"], 59],
  ["orders.country", "is_not_set", undefined, ["C"], 4],
  // string: orders.source_name (E has ''); contains / starts_with / ends_with ignore case, equals does not
  ["orders.source_name", "equals", "web", ["A", "C"], 5],
  ["orders.source_name", "contains", "WEB", ["A", "C", "D"], 13],
  ["orders.source_name", "not_contains", "web", ["B", "E", "F"], 50], // 2+16+32, E's '' included
  ["orders.source_name", "starts_with", "web", ["A", "C", "D"], 13],
  ["orders.source_name", "ends_with", "STORE", ["D"], 8],
  ["orders.source_name", "ends_with", "s", ["B", "F"], 34], // pos, draft_orders
  ["orders.gateway", "starts_with", "stripe", ["A", "D", "E"], 25],
  ["orders.gateway", "not_equals", "stripe", ["B", "C", "E", "F"], 54], // B and F have ''
  // string_array: orders.tags (C has []); equals = some element equals (case-sensitive)
  ["orders.tags", "equals", "VIP", ["A"], 1],
  ["orders.tags", "not_equals", "VIP", ["B", "C", "D", "E", "F"], 62],
  ["orders.tags", "in", ["wholesale", "retail"], ["A", "D", "E"], 25],
  ["orders.tags", "not_in", ["wholesale", "retail"], ["B", "C", "F"], 38],
  ["orders.tags", "in", [], [], 0],
  ["orders.tags", "not_in", [], ["A", "B", "C", "D", "E", "F"], 63],
  ["orders.tags", "contains", "vip", ["A", "B", "F"], 35], // VIP, vip, VIP-gold
  ["orders.tags", "not_contains", "vip", ["C", "D", "E"], 28], // C's [] included
  ["orders.tags", "starts_with", "WHOLE", ["A", "E"], 17],
  ["orders.tags", "ends_with", "gold", ["F"], 32],
  ["orders.tags", "is_set", undefined, ["A", "B", "D", "E", "F"], 59],
  ["orders.tags", "is_not_set", undefined, ["C"], 4],
  ["orders.discount_codes", "in", ["WELCOME", "NOPE"], ["D"], 8],
  ["orders.discount_codes", "is_not_set", undefined, ["B", "C", "E", "F"], 54],
  // number: orders.total_price
  ["orders.total_price", "equals", 8, ["D"], 8],
  ["orders.total_price", "not_equals", 8, ["A", "B", "C", "E", "F"], 55],
  ["orders.total_price", "in", [1, 16, 100], ["A", "E"], 17],
  ["orders.total_price", "not_in", [1, 16, 100], ["B", "C", "D", "F"], 46],
  ["orders.total_price", "in", [], [], 0],
  ["orders.total_price", "not_in", [], ["A", "B", "C", "D", "E", "F"], 63],
  ["orders.total_price", "gt", 8, ["E", "F"], 48],
  ["orders.total_price", "gte", 8, ["D", "E", "F"], 56],
  ["orders.total_price", "lt", 4, ["A", "B"], 3],
  ["orders.total_price", "lte", 4, ["A", "B", "C"], 7],
  ["orders.total_price", "between", [2, 16], ["B", "C", "D", "E"], 30], // both ends included
  ["orders.total_price", "is_set", undefined, ["A", "B", "C", "D", "E", "F"], 63],
  ["orders.total_price", "is_not_set", undefined, [], 0],
  // number: customers.order_number (1 for a customer's first counted order)
  ["customers.order_number", "equals", 2, ["C", "E"], 20],
  ["customers.order_number", "lt", 2, ["A", "B", "D", "F"], 43],
  // boolean: customers.is_returning (C and E are second orders of c1 and c2)
  ["customers.is_returning", "equals", true, ["C", "E"], 20],
  ["customers.is_returning", "equals", false, ["A", "B", "D", "F"], 43],
  ["customers.is_returning", "not_equals", true, ["A", "B", "D", "F"], 43],
  ["customers.is_returning", "is_set", undefined, ["A", "B", "C", "D", "E", "F"], 63],
  ["customers.is_returning", "is_not_set", undefined, [], 0],
  // datetime: YYYY-MM-DD is a local day of the query timezone. New York days: A, B, C on Apr 1.
  ["orders.created_at", "equals", "2026-04-01", ["A", "B", "C"], 7, "America/New_York"],
  ["orders.created_at", "equals", "2026-04-01", ["A", "B"], 3, "UTC"], // C is Apr 2 in UTC
  ["orders.created_at", "not_equals", "2026-04-01", ["D", "E", "F"], 56, "America/New_York"],
  ["orders.created_at", "gt", "2026-04-01", ["D", "E", "F"], 56, "America/New_York"], // after the whole day
  ["orders.created_at", "gt", "2026-04-01", ["C", "D", "E", "F"], 60, "UTC"],
  ["orders.created_at", "gte", "2026-04-04", ["E", "F"], 48, "America/New_York"],
  ["orders.created_at", "lt", "2026-04-03", ["A", "B", "C"], 7, "America/New_York"],
  ["orders.created_at", "lte", "2026-04-03", ["A", "B", "C", "D"], 15, "America/New_York"], // whole Apr 3
  ["orders.created_at", "between", ["2026-04-03", "2026-04-04"], ["D", "E"], 24, "America/New_York"],
  // E is 2026-04-04 04:00 in New York but Apr 4 08:00 UTC; in Asia/Tokyo (UTC+9) it is Apr 4 17:00
  // and F is Apr 6 05:00, so Apr 3..4 Tokyo holds D (Apr 3 21:00) and E.
  ["orders.created_at", "between", ["2026-04-03", "2026-04-04"], ["D", "E"], 24, "Asia/Tokyo"],
  ["orders.created_at", "equals", "2026-04-02", ["B", "C"], 6, "Asia/Tokyo"], // Apr 2 08:30 and 09:30 Tokyo
  // instants (offsets honoured)
  ["orders.created_at", "equals", "2026-04-03T12:00:00Z", ["D"], 8],
  ["orders.created_at", "equals", "2026-04-01T06:00:00-04:00", ["A"], 1],
  ["orders.created_at", "gt", "2026-04-03T12:00:00Z", ["E", "F"], 48],
  ["orders.created_at", "gte", "2026-04-03T12:00:00Z", ["D", "E", "F"], 56],
  ["orders.created_at", "lt", "2026-04-03T12:00:00Z", ["A", "B", "C"], 7],
  ["orders.created_at", "lte", "2026-04-03T12:00:00Z", ["A", "B", "C", "D"], 15],
  [
    "orders.created_at",
    "between",
    ["2026-04-01T23:30:00Z", "2026-04-04T08:00:00Z"],
    ["B", "C", "D", "E"],
    30,
  ],
  // an instant to a local day: from C's instant to the end of Apr 4 in New York (Apr 5 04:00 UTC)
  [
    "orders.created_at",
    "between",
    ["2026-04-02T00:30:00Z", "2026-04-04"],
    ["C", "D", "E"],
    28,
    "America/New_York",
  ],
  ["orders.created_at", "is_set", undefined, ["A", "B", "C", "D", "E", "F"], 63],
  ["orders.created_at", "is_not_set", undefined, [], 0],
];

// The table's revenue column agrees with its order column (a typo in the table fails here, not later).
for (const [field, op, value, ids, revenue] of CASES) {
  const sum = ids.reduce((a, id) => a + AMOUNT[id], 0);
  if (sum !== revenue)
    throw new Error(`fixture table: ${field} ${op} ${JSON.stringify(value)}: ${sum} ≠ ${revenue}`);
}

describe("canonical filters: every operator on every order field type", () => {
  it.each(CASES.map((k) => [`${k[0]} ${k[1]} ${JSON.stringify(k[2]) ?? ""} ${k[5] ?? ""}`, k] as const))(
    "%s",
    async (_name, [field, op, value, ids, revenue, tz]) => {
      const res = await orders(c(field, op, value), tz);
      expect(total(res, "orders.count"), res.text).toBe(ids.length);
      expect(total(res, "orders.total_revenue"), res.text).toBe(revenue);
    },
  );

  it("the cases cover every operator GET /db-mgmt/api/filters lists for each field type", async () => {
    const res = await app.call("GET", "/db-mgmt/api/filters", { key: px.key, pixelId: px.pixelId });
    expect(res.status, res.text).toBe(200);
    const fields = (res.body as { filters: { field: string; type: string; operators: string[] }[] }).filters;
    const typeOf = new Map(fields.map((f) => [f.field, f.type]));
    const listed = new Map(fields.map((f) => [f.type, new Set(f.operators)]));
    const used = new Map<string, Set<string>>();
    for (const [field, op] of [...CASES, ...EVENT_CASES.map(([f, o]) => [f, o] as const)]) {
      const type = typeOf.get(field)!;
      if (!used.has(type)) used.set(type, new Set());
      used.get(type)!.add(op);
    }
    expect([...listed.keys()].sort()).toEqual(["boolean", "datetime", "number", "string", "string_array"]);
    for (const [type, ops] of listed)
      expect([...(used.get(type) ?? [])].sort(), type).toEqual([...ops].sort());
  });
});

/** Events family; events.value is NULL on page_view and add_to_cart (absent number). */
const EVENT_CASES: [string, string, unknown, number][] = [
  ["events.value", "gt", 30, 1], // 50
  ["events.value", "lte", 20, 1], // 20
  ["events.value", "between", [10, 50], 2],
  ["events.value", "not_equals", 50, 3], // 20, and the two NULLs
  ["events.value", "not_in", [20], 3], // 50, and the two NULLs
  ["events.value", "in", [], 0],
  ["events.value", "is_set", undefined, 2],
  ["events.value", "is_not_set", undefined, 2],
  ["events.utm_source", "equals", "google", 1],
  ["events.utm_source", "not_contains", "goo", 3], // '' of the other three included
  ["events.name", "in", ["purchase", "add_to_cart"], 3],
];

describe("canonical filters: events family and absent numbers", () => {
  it.each(EVENT_CASES.map((k) => [`${k[0]} ${k[1]} ${JSON.stringify(k[2]) ?? ""}`, k] as const))(
    "%s",
    async (_name, [field, op, value, count]) => {
      const res = await post({
        measures: ["events.count"],
        dateRange: RANGE,
        granularity: "none",
        timezone: "UTC",
        filters: c(field, op, value),
      });
      expect(total(res, "events.count"), res.text).toBe(count);
    },
  );

  it("not over a nullable number matches the NULLs: not (value > 30) = 3 of 4 events", async () => {
    const res = await post({
      measures: ["events.count"],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      filters: { not: c("events.value", "gt", 30) },
    });
    expect(total(res, "events.count")).toBe(3);
  });
});

describe("canonical filters: and / or / not", () => {
  it("nested four levels deep", async () => {
    // or: country US (A, E) | tags contains vip and not source pos (A, F; B is pos) | total in [4, 8] (C, D)
    //   → A, C, D, E, F
    // not(tags set and (total ≥ 16 or country DE)): tags set and … = B (DE), E (16), F (32) → A, C, D
    // and of both → A, C, D = 1 + 4 + 8 = 13
    const filter = {
      and: [
        {
          or: [
            c("orders.country", "equals", "US"),
            { and: [c("orders.tags", "contains", "vip"), { not: c("orders.source_name", "equals", "pos") }] },
            c("orders.total_price", "between", [4, 8]),
          ],
        },
        {
          not: {
            and: [
              c("orders.tags", "is_set"),
              { or: [c("orders.total_price", "gte", 16), c("orders.country", "equals", "DE")] },
            ],
          },
        },
      ],
    };
    const res = await orders(filter);
    expect(total(res, "orders.count")).toBe(3);
    expect(total(res, "orders.total_revenue")).toBe(13);
  });

  it("double negation and De Morgan agree", async () => {
    // not(not(country = US)) = A, E = 17
    const res1 = await orders({ not: { not: c("orders.country", "equals", "US") } });
    expect(total(res1, "orders.total_revenue")).toBe(17);
    // not(US or returning) = not(A, E, C) = B, D, F = 42; and(not US, not returning) is the same set
    const res2 = await orders({
      not: { or: [c("orders.country", "equals", "US"), c("customers.is_returning", "equals", true)] },
    });
    const res3 = await orders({
      and: [
        { not: c("orders.country", "equals", "US") },
        { not: c("customers.is_returning", "equals", true) },
      ],
    });
    expect(total(res2, "orders.total_revenue")).toBe(42);
    expect(total(res3, "orders.total_revenue")).toBe(42);
  });

  it("not over an absent value matches it: not(country = US) includes C's empty country", async () => {
    // B, C, D, F = 2 + 4 + 8 + 32 = 46
    expect(total(await orders({ not: c("orders.country", "equals", "US") }), "orders.total_revenue")).toBe(
      46,
    );
    // not(tags contains vip) includes C's empty tags: C, D, E = 28
    expect(total(await orders({ not: c("orders.tags", "contains", "vip") }), "orders.total_revenue")).toBe(
      28,
    );
  });

  it("an empty and matches everything, an empty or nothing", async () => {
    expect(total(await orders({ and: [] }), "orders.count")).toBe(6);
    expect(total(await orders({ or: [] }), "orders.count")).toBe(0);
    expect(total(await orders({ not: { or: [] } }), "orders.count")).toBe(6);
  });

  it("filters apply to every measure of the query alike (units, customers, refunds)", async () => {
    // Returning-customer orders C and E: 2 orders, 2 customers, 0 new.
    const res = await post({
      measures: ["orders.count", "customers.count", "customers.new", "customers.returning"],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      filters: c("customers.is_returning", "equals", true),
    });
    expect(total(res, "orders.count")).toBe(2);
    expect(total(res, "customers.count")).toBe(2);
    expect(total(res, "customers.new")).toBe(0);
    expect(total(res, "customers.returning")).toBe(2);
  });
});

describe("canonical filters: 400 naming what is wrong", () => {
  const issuePaths = (res: Response) =>
    ((res.body as { errors?: { path: string[] }[] }).errors ?? []).map((e) => e.path.join("."));

  it("unknown field, even deep in the tree", async () => {
    const res = await orders({
      and: [c("orders.country", "equals", "US"), { or: [{ not: c("orders.colour", "equals", "red") }] }],
    });
    expect400(res, "orders.colour");
    expect(issuePaths(res)).toContain("filters.and.1.or.0.not.field");
  });

  it("unknown operator", async () => {
    const res = await orders(c("orders.country", "resembles", "US"));
    expect400(res, "resembles", "orders.country");
  });

  it.each([
    ["orders.country", "gt", "US"],
    ["orders.total_price", "contains", "1"],
    ["orders.created_at", "in", ["2026-04-01"]],
    ["customers.is_returning", "between", [0, 1]],
    ["orders.tags", "lt", "b"],
  ])("operator not valid for the field's type: %s %s", async (field, op, value) => {
    expect400(await orders(c(field, op, value)), op, field);
  });

  it.each([
    ["orders.total_price", "equals", "eight"],
    ["orders.country", "in", "US"],
    ["customers.is_returning", "equals", "yes"],
    ["orders.created_at", "gt", "April 1st"],
    ["orders.created_at", "equals", "2026-02-30"],
    ["orders.total_price", "between", [1]],
  ])("value of the wrong shape: %s %s %j", async (field, op, value) => {
    expect400(await orders(c(field, op, value)), field);
  });

  it.each([
    ["events.name", "orders.count"],
    ["channel.resource_source", "orders.total_revenue"],
    ["attribution.source", "orders.count"],
    ["orders.country", "events.count"],
    ["customers.is_returning", "ads.spend"],
  ])("a %s filter on %s names the field", async (field, measure) => {
    const res = await post({
      measures: [measure],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      filters: c(field, "equals", field === "customers.is_returning" ? true : "x"),
    });
    expect400(res, field);
  });

  it("attribution endpoint: fields of families it cannot take are refused by name", async () => {
    const base = {
      dimension: "attribution.source",
      dateRange: RANGE,
      attributionModel: "last_click",
      attributionWindow: 30,
    };
    const path = "/db-mgmt/api/query-attribution";
    expect400(await post({ ...base, filters: c("events.name", "equals", "x") }, { path }), "events.name");
    expect400(
      await post({ ...base, filters: c("channel.level", "equals", "ad") }, { path }),
      "channel.level",
    );
    // valueSource events takes events. fields for conversions, not orders. ones
    expect400(
      await post(
        {
          ...base,
          valueSource: "events",
          eventName: "purchase",
          filters: c("orders.country", "equals", "US"),
        },
        { path },
      ),
      "orders.country",
    );
    // a branch mixing touch and conversion fields cannot be split
    expect400(
      await post(
        {
          ...base,
          filters: { or: [c("attribution.source", "equals", "google"), c("orders.country", "equals", "US")] },
        },
        { path },
      ),
      "attribution.",
    );
    // and the same filters are fine where they belong
    const ok = await post(
      {
        ...base,
        filters: { and: [c("attribution.source", "equals", "google"), c("orders.country", "equals", "US")] },
      },
      { path },
    );
    expect(resultsOf(ok)).toBeDefined();
  });

  it("an unknown dimension names it", async () => {
    const res = await post({
      measures: ["orders.count"],
      dimensions: ["orders.colour"],
      dateRange: RANGE,
      timezone: "UTC",
    });
    expect400(res, "orders.colour");
  });
});
