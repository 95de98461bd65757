/**
 * Order settings (docs/query.md, "Order settings"): which orders count (pending, voided), exclusion filters
 * (enabled ones only; condition groups with and/or logic) removing orders from revenue, refunds,
 * customer, attribution and cohort figures, refundDateAttribution moving refunds between days, and the
 * account's stored settings (accounts.order_settings) merged with a request's overrides.
 *
 * Fixture (USD, days in UTC):
 *
 *   order  status   total  created            source_name    country  tags        customer
 *   P1     paid       100  2026-05-01 10:00   web            US       []          k1
 *   P2     pending     40  2026-05-01 11:00   ''             ''       []          k2
 *   V1     voided      25  2026-05-02 09:00   ''             ''       []          k3
 *   X1     paid        60  2026-05-02 10:00   draft_orders   ''       [test]      k1
 *   X2     paid        35  2026-05-02 12:00   pos            CA       []          k4
 *   P3     paid       200  2026-05-03 08:00   web            US       [wholesale] k1
 *
 *   refund  order  created            amount
 *   R1      P1     2026-05-03 10:00   30
 *   R2      X1     2026-05-02 15:00   10
 *   R3      P2     2026-05-03 11:00    5
 *   R4      V1     2026-05-02 10:00   25
 *
 * Touches (page views whose identity carries the store customer id, so orders meet them):
 *   k1 klaviyo email 2026-04-30 08:00; k4 google cpc 2026-05-02 11:00; k3 facebook paid_social
 *   2026-05-02 08:00; k2 none.
 *
 * Defaults count P1, X1, X2, P3: 4 orders, 100 + 60 + 35 + 200 = 395; refunds R1 + R2 = 40 (R3 is
 * a pending order's, R4 a voided one's); net 355; customers k1, k4 (both new, k1 also returning).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  exclusion,
  expect400,
  type Json,
  onlyResult,
  order,
  type Pixel,
  type Response,
  refund,
  storeCustomer,
  sums,
  total,
  touch,
} from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let px: Pixel;
let post: Poster;

beforeAll(async () => {
  // The tests edit the account row directly: read it on every query.
  const suite = await startQuerySuite({
    env: { ACCOUNT_CACHE_MS: "0" },
    scopes: ["analytics:read", "events:write", "account:read"],
  });
  ({ app, px, post } = suite);
  await suite.load.orders([
    order("P1", "2026-05-01T10:00:00Z", "USD", 100, {
      sourceName: "web",
      country: "US",
      customer: { id: "k1" },
    }),
    order("P2", "2026-05-01T11:00:00Z", "USD", 40, { financialStatus: "pending", customer: { id: "k2" } }),
    order("V1", "2026-05-02T09:00:00Z", "USD", 25, { financialStatus: "voided", customer: { id: "k3" } }),
    order("X1", "2026-05-02T10:00:00Z", "USD", 60, {
      sourceName: "draft_orders",
      tags: ["test"],
      customer: { id: "k1" },
    }),
    order("X2", "2026-05-02T12:00:00Z", "USD", 35, {
      sourceName: "pos",
      country: "CA",
      customer: { id: "k4" },
    }),
    order("P3", "2026-05-03T08:00:00Z", "USD", 200, {
      sourceName: "web",
      country: "US",
      tags: ["wholesale"],
      customer: { id: "k1" },
    }),
  ]);
  await suite.load.refunds([
    refund("R1", "P1", "2026-05-03T10:00:00Z", 30),
    refund("R2", "X1", "2026-05-02T15:00:00Z", 10),
    refund("R3", "P2", "2026-05-03T11:00:00Z", 5),
    refund("R4", "V1", "2026-05-02T10:00:00Z", 25),
  ]);
  const customerTouch = (customer: string, at: string, query: string) =>
    touch(`anon-${customer}`, at, query, storeCustomer(customer));
  await suite.load.events([
    customerTouch("k1", "2026-04-30T08:00:00Z", "utm_source=klaviyo&utm_medium=email"),
    customerTouch("k4", "2026-05-02T11:00:00Z", "utm_source=google&utm_medium=cpc"),
    customerTouch("k3", "2026-05-02T08:00:00Z", "utm_source=facebook&utm_medium=paid_social"),
  ]);
});
afterAll(() => app?.close());

const RANGE = { start: "2026-05-01", end: "2026-05-03" };
const MEASURES = [
  "orders.count",
  "orders.total_revenue",
  "orders.refunds",
  "orders.net_revenue",
  "customers.count",
  "customers.new",
  "customers.returning",
  "customers.new_customer_orders",
];

function figures(orderSettings?: Json): Promise<Response> {
  return post({
    measures: MEASURES,
    dateRange: RANGE,
    granularity: "none",
    timezone: "UTC",
    ...(orderSettings ? { orderSettings } : {}),
  });
}

function totals(res: Response): Record<string, number | null> {
  return Object.fromEntries(onlyResult(res).measureDetails.map((d) => [d.measure, d.primarySum]));
}

function attribution(orderSettings?: Json): Promise<Response> {
  return post(
    {
      dimension: "attribution.source",
      dateRange: RANGE,
      timezone: "UTC",
      attributionModel: "last_click",
      attributionWindow: 30,
      ...(orderSettings ? { orderSettings } : {}),
    },
    { path: "/db-mgmt/api/query-attribution" },
  );
}

const DRAFTS = exclusion("Drafts and tests", [
  {
    logic: "or",
    conditions: [
      ["source_name", "equals", "draft_orders"],
      ["tags", "contains", "test"],
    ],
  },
]);
const POS_CANADA = exclusion("POS in Canada", [
  {
    logic: "and",
    conditions: [
      ["source_name", "equals", "pos"],
      ["country", "equals", "CA"],
    ],
  },
]);
const WEB_DISABLED = exclusion(
  "Web (disabled)",
  [{ logic: "and", conditions: [["source_name", "equals", "web"]] }],
  false,
);

describe("pending and voided orders", () => {
  it("defaults: neither counts, nor do their refunds or customers", async () => {
    expect(totals(await figures())).toEqual({
      "orders.count": 4,
      "orders.total_revenue": 395,
      "orders.refunds": 40,
      "orders.net_revenue": 355,
      "customers.count": 2,
      "customers.new": 2,
      "customers.returning": 1,
      "customers.new_customer_orders": 2,
    });
  });

  it("countPendingOrders adds P2 (40) and its refund R3 (5), and customer k2", async () => {
    expect(totals(await figures({ countPendingOrders: true }))).toEqual({
      "orders.count": 5,
      "orders.total_revenue": 435,
      "orders.refunds": 45,
      "orders.net_revenue": 390,
      "customers.count": 3,
      "customers.new": 3,
      "customers.returning": 1,
      "customers.new_customer_orders": 3,
    });
  });

  it("countVoidedOrders adds V1 (25) and its refund R4 (25), and customer k3", async () => {
    expect(totals(await figures({ countVoidedOrders: true }))).toEqual({
      "orders.count": 5,
      "orders.total_revenue": 420,
      "orders.refunds": 65,
      "orders.net_revenue": 355,
      "customers.count": 3,
      "customers.new": 3,
      "customers.returning": 1,
      "customers.new_customer_orders": 3,
    });
  });

  it("both: 6 orders, 460, refunds 70", async () => {
    const t = totals(await figures({ countPendingOrders: true, countVoidedOrders: true }));
    expect(t["orders.count"]).toBe(6);
    expect(t["orders.total_revenue"]).toBe(460);
    expect(t["orders.refunds"]).toBe(70);
    expect(t["orders.net_revenue"]).toBe(390);
  });

  it("attribution counts them only when the settings do", async () => {
    // Defaults: klaviyo ← P1 (100 − 30), X1 (60 − 10), P3 (200) = 3 orders, 320; google ← X2 = 35.
    const base = await attribution();
    expect(sums(base, "attribution.orders")).toEqual({ klaviyo: 3, google: 1 });
    expect(sums(base, "attribution.revenue")).toEqual({ klaviyo: 320, google: 35 });
    // Pending P2 has no touch: (none) 1 order, 40 − 5 = 35. Voided V1 came from facebook: 25 − 25 = 0.
    const all = await attribution({ countPendingOrders: true, countVoidedOrders: true });
    expect(sums(all, "attribution.orders")).toEqual({ klaviyo: 3, google: 1, "(none)": 1, facebook: 1 });
    expect(sums(all, "attribution.revenue")).toEqual({ klaviyo: 320, google: 35, "(none)": 35, facebook: 0 });
  });
});

describe("exclusion filters", () => {
  it("enabled filters remove their orders from revenue, refunds and customers; disabled ones do nothing", async () => {
    // DRAFTS removes X1 (source draft_orders OR tag test), POS_CANADA removes X2 (pos AND CA);
    // WEB_DISABLED would remove P1 and P3 but is off. Left: P1, P3 = 300; refund R1 30 (R2 was X1's).
    // k1 is the only customer: P1 new, P3 returning (X1 no longer counts as k1's second order).
    expect(totals(await figures({ exclusionFilters: [DRAFTS, POS_CANADA, WEB_DISABLED] }))).toEqual({
      "orders.count": 2,
      "orders.total_revenue": 300,
      "orders.refunds": 30,
      "orders.net_revenue": 270,
      "customers.count": 1,
      "customers.new": 1,
      "customers.returning": 1,
      "customers.new_customer_orders": 1,
    });
  });

  it("they remove orders from attribution too", async () => {
    // klaviyo ← P1 (70) and P3 (200); google lost X2.
    const res = await attribution({ exclusionFilters: [DRAFTS, POS_CANADA, WEB_DISABLED] });
    expect(sums(res, "attribution.orders")).toEqual({ klaviyo: 2 });
    expect(sums(res, "attribution.revenue")).toEqual({ klaviyo: 270 });
    // the general query's attribution measures agree: 2 attributed orders, 270
    const general = await post({
      measures: ["attribution.orders", "attribution.revenue"],
      dateRange: RANGE,
      granularity: "none",
      timezone: "UTC",
      orderSettings: { exclusionFilters: [DRAFTS, POS_CANADA] },
    });
    expect(total(general, "attribution.orders")).toBe(2);
    expect(total(general, "attribution.revenue")).toBe(270);
  });

  it("they remove orders and customers from cohorts", async () => {
    const cohort = async (orderSettings?: Json) => {
      const res = await post(
        {
          dateRange: { start: "2026-05-01", end: "2026-05-31" },
          cohortGranularity: "month",
          periods: 1,
          timezone: "UTC",
          measures: ["customers.retained", "orders.count", "orders.total_revenue"],
          ...(orderSettings ? { orderSettings } : {}),
        },
        { path: "/db-mgmt/api/query-cohort-analysis" },
      );
      expect(res.status, res.text).toBe(200);
      const [may] = (res.body as { cohorts: { cohort: string; size: number; periods: Json[] }[] }).cohorts;
      return [may!.cohort, may!.size, may!.periods[0]];
    };
    // defaults: k1 (P1) and k4 (X2) enter May; their May orders P1, X1, X2, P3 = 395
    expect(await cohort()).toEqual([
      "2026-05-01",
      2,
      { period: 0, "customers.retained": 2, "orders.count": 4, "orders.total_revenue": 395 },
    ]);
    // exclusions: k4 (only X2) leaves the cohort, k1 keeps P1 and P3 = 300
    expect(await cohort({ exclusionFilters: [DRAFTS, POS_CANADA, WEB_DISABLED] })).toEqual([
      "2026-05-01",
      1,
      { period: 0, "customers.retained": 1, "orders.count": 2, "orders.total_revenue": 300 },
    ]);
    // pending counted: k2 (P2, 40) joins
    expect(await cohort({ countPendingOrders: true })).toEqual([
      "2026-05-01",
      3,
      { period: 0, "customers.retained": 3, "orders.count": 5, "orders.total_revenue": 435 },
    ]);
  });

  it("an and group needs every condition: pos AND US matches no order", async () => {
    const posUs = exclusion("POS in US", [
      {
        logic: "and",
        conditions: [
          ["source_name", "equals", "pos"],
          ["country", "equals", "US"],
        ],
      },
    ]);
    expect(totals(await figures({ exclusionFilters: [posUs] }))["orders.count"]).toBe(4);
    // the same conditions with or: pos (X2) or US (P1, P3) → only X1 is left: 60
    const posOrUs = exclusion("POS or US", [
      {
        logic: "OR",
        conditions: [
          ["source_name", "equals", "pos"],
          ["country", "equals", "US"],
        ],
      },
    ]);
    const t = totals(await figures({ exclusionFilters: [posOrUs] }));
    expect(t["orders.count"]).toBe(1);
    expect(t["orders.total_revenue"]).toBe(60);
  });

  it("a filter excludes an order when any of its groups matches", async () => {
    // group 1 = X2; group 2 (draft_orders AND tag nomatch) = nothing → X2 only: 395 − 35 = 360
    const twoGroups = exclusion("Two groups", [
      {
        logic: "and",
        conditions: [
          ["source_name", "equals", "pos"],
          ["country", "equals", "CA"],
        ],
      },
      {
        logic: "and",
        conditions: [
          ["source_name", "equals", "draft_orders"],
          ["tags", "contains", "nomatch"],
        ],
      },
    ]);
    const t = totals(await figures({ exclusionFilters: [twoGroups] }));
    expect(t["orders.count"]).toBe(3);
    expect(t["orders.total_revenue"]).toBe(360);
  });

  it("takes the interface's camelCase field names (sourceName)", async () => {
    // `sourceName` is the documented example condition field: X1 excluded → 395 − 60 = 335
    const camel = exclusion("camel", [
      { logic: "and", conditions: [["sourceName", "equals", "draft_orders"]] },
    ]);
    const t = totals(await figures({ exclusionFilters: [camel] }));
    expect(t["orders.count"]).toBe(3);
    expect(t["orders.total_revenue"]).toBe(335);
  });

  it("compares number fields with the condition's text value as a number", async () => {
    // totalPrice > "150" → P3 (200) excluded: P1, X1, X2 = 195
    const big = exclusion("big", [{ logic: "and", conditions: [["totalPrice", "gt", "150"]] }]);
    const t = totals(await figures({ exclusionFilters: [big] }));
    expect(t["orders.count"]).toBe(3);
    expect(t["orders.total_revenue"]).toBe(195);
  });

  it("takes in / not_in as a comma-separated list and is_set with an empty value", async () => {
    // source_name in "pos, draft_orders" → X1, X2 excluded: P1, P3 = 300
    const list = exclusion("list", [
      { logic: "and", conditions: [["sourceName", "in", "pos, draft_orders"]] },
    ]);
    expect(totals(await figures({ exclusionFilters: [list] }))["orders.total_revenue"]).toBe(300);
    // country not_in "US,CA" → X1 (no country) excluded, and the empty country matches not_in: 395 − 60 = 335
    const notIn = exclusion("not in", [{ logic: "and", conditions: [["country", "not_in", "US,CA"]] }]);
    expect(totals(await figures({ exclusionFilters: [notIn] }))["orders.total_revenue"]).toBe(335);
    // tags is_set → X1 [test] and P3 [wholesale] excluded: P1, X2 = 135
    const tagged = exclusion("tagged", [{ logic: "and", conditions: [["tags", "is_set", ""]] }]);
    expect(totals(await figures({ exclusionFilters: [tagged] }))["orders.total_revenue"]).toBe(135);
  });

  it("an exclusion beats countPendingOrders", async () => {
    const pending = exclusion("pending", [
      { logic: "and", conditions: [["financial_status", "equals", "pending"]] },
    ]);
    const t = totals(await figures({ countPendingOrders: true, exclusionFilters: [pending] }));
    expect(t["orders.count"]).toBe(4);
    expect(t["orders.total_revenue"]).toBe(395);
  });

  it("bad group logic, unknown fields and operators are 400s naming them", async () => {
    const xor = exclusion("xor", [{ logic: "xor", conditions: [["source_name", "equals", "pos"]] }]);
    expect400(await figures({ exclusionFilters: [xor] }), "logic");
    const colour = exclusion("colour", [{ logic: "and", conditions: [["colour", "equals", "red"]] }]);
    expect400(await figures({ exclusionFilters: [colour] }), "colour");
    const op = exclusion("op", [{ logic: "and", conditions: [["source_name", "resembles", "pos"]] }]);
    expect400(await figures({ exclusionFilters: [op] }), "resembles");
  });
});

describe("refundDateAttribution", () => {
  const daily = (orderSettings: Json, range = RANGE) =>
    post({
      measures: ["orders.refunds", "orders.refund_count", "orders.net_revenue"],
      dateRange: range,
      granularity: "day",
      timezone: "UTC",
      orderSettings,
    });
  const column = (res: Response, m: string) => onlyResult(res).data.primary.map((r) => r[m]);

  it("refund_date books a refund on its own day", async () => {
    // R1 (P1's, 30) on May 3, R2 (X1's, 10) on May 2; revenue per day 100, 95, 200
    const res = await daily({ refundDateAttribution: "refund_date" });
    expect(column(res, "orders.refunds")).toEqual([0, 10, 30]);
    expect(column(res, "orders.refund_count")).toEqual([0, 1, 1]);
    expect(column(res, "orders.net_revenue")).toEqual([100, 85, 170]);
  });

  it("order_date books it on its order's day", async () => {
    // R1 → May 1 (P1), R2 → May 2 (X1)
    const res = await daily({ refundDateAttribution: "order_date" });
    expect(column(res, "orders.refunds")).toEqual([30, 10, 0]);
    expect(column(res, "orders.refund_count")).toEqual([1, 1, 0]);
    expect(column(res, "orders.net_revenue")).toEqual([70, 85, 200]);
  });

  it("moves refunds across the range edge", async () => {
    const may1 = { start: "2026-05-01", end: "2026-05-01" };
    const may3 = { start: "2026-05-03", end: "2026-05-03" };
    // May 1 alone: R1 was made May 3 for a May 1 order
    expect(column(await daily({ refundDateAttribution: "refund_date" }, may1), "orders.refunds")).toEqual([
      0,
    ]);
    expect(column(await daily({ refundDateAttribution: "order_date" }, may1), "orders.refunds")).toEqual([
      30,
    ]);
    // May 3 alone: the reverse
    expect(column(await daily({ refundDateAttribution: "refund_date" }, may3), "orders.refunds")).toEqual([
      30,
    ]);
    expect(column(await daily({ refundDateAttribution: "order_date" }, may3), "orders.refunds")).toEqual([0]);
  });
});

describe("stored settings and request overrides", () => {
  it("queries use the stored settings; a request overrides key by key", async () => {
    // Before anything is stored: defaults (and this answer is cached).
    expect(totals(await figures())["orders.total_revenue"]).toBe(395);
    await app.stores.sql.query("UPDATE accounts SET order_settings = $1::jsonb WHERE id = $2", [
      JSON.stringify({
        countPendingOrders: true,
        refundDateAttribution: "order_date",
        exclusionFilters: [DRAFTS],
      }),
      px.accountId,
    ]);
    const read = await app.call("GET", "/accounts/api/account/settings/order", {
      key: px.key,
      pixelId: px.pixelId,
    });
    expect(read.status, read.text).toBe(200);
    expect((read.body as { orderSettings: Json }).orderSettings).toMatchObject({
      countPendingOrders: true,
      countVoidedOrders: false,
      refundDateAttribution: "order_date",
    });

    // Stored: pending counts, X1 excluded → P1, P2, X2, P3 = 375; refunds R1 30 + R3 5 = 35 (R2 was X1's)
    const stored = totals(await figures());
    expect(stored["orders.count"]).toBe(4);
    expect(stored["orders.total_revenue"]).toBe(375);
    expect(stored["orders.refunds"]).toBe(35);
    // order_date: both refunds on May 1 (P1's and P2's day)
    const days = await post({
      measures: ["orders.refunds"],
      dateRange: RANGE,
      granularity: "day",
      timezone: "UTC",
    });
    expect(onlyResult(days).data.primary.map((r) => r["orders.refunds"])).toEqual([35, 0, 0]);

    // Override one key: pending off, the stored exclusion stays → P1, X2, P3 = 335, refunds 30
    const noPending = totals(await figures({ countPendingOrders: false }));
    expect(noPending["orders.count"]).toBe(3);
    expect(noPending["orders.total_revenue"]).toBe(335);
    expect(noPending["orders.refunds"]).toBe(30);
    // An override's exclusionFilters replace the stored list: X1 counts again → 435, refunds 45
    const noExclusions = totals(await figures({ exclusionFilters: [] }));
    expect(noExclusions["orders.count"]).toBe(5);
    expect(noExclusions["orders.total_revenue"]).toBe(435);
    expect(noExclusions["orders.refunds"]).toBe(45);
    // refund_date override: R1 and R3 both on May 3
    const refundDays = await post({
      measures: ["orders.refunds"],
      dateRange: RANGE,
      granularity: "day",
      timezone: "UTC",
      orderSettings: { refundDateAttribution: "refund_date" },
    });
    expect(onlyResult(refundDays).data.primary.map((r) => r["orders.refunds"])).toEqual([0, 0, 35]);
    // Attribution reads the stored settings too: P2 counts under (none) (40 − 5 = 35), X1 is excluded.
    const attr = await attribution();
    expect(sums(attr, "attribution.orders")).toEqual({ klaviyo: 2, google: 1, "(none)": 1 });
    expect(sums(attr, "attribution.revenue")).toEqual({ klaviyo: 270, google: 35, "(none)": 35 });

    await app.stores.sql.query("UPDATE accounts SET order_settings = NULL WHERE id = $1", [px.accountId]);
    expect(totals(await figures())["orders.total_revenue"]).toBe(395);
  });
});
