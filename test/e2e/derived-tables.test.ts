/**
 * Derived tables answer exactly as raw data (docs/derived-tables.md). Generated stores — customers
 * with anonymous touches merged late, touches at the same instant, orders in three currencies (one
 * day without a EUR rate), pending orders, refunds — are queried over HTTP from the derived tables
 * and with `?derived=false`, in three states:
 *
 *   1. loaded, derived tables refreshed: the derived rows answer;
 *   2. late data past the watermark, not refreshed: touches dated before the orders, the identity
 *      merges, an order moved across a month boundary, an order voided, an order handed to another
 *      customer, a new order, a refund moved to another hour and a new refund — the identities (and
 *      customers, order hours and refund hours) with rows past the watermark are read raw, the rest
 *      from the derived tables;
 *   3. refreshed again.
 *
 * Each request is one of the attribution endpoint's models × windows × dimensions, with touch and
 * order filters, another currency, counting pending orders or an exclusion filter; the general query's
 * attribution measures; its time series of orders, customers and refunds (booked at the refund's or
 * the order's date); or channel details' attribution measures per campaign. Both answers must be
 * identical, status and body.
 *
 * Worked example (the fixed test below): a touch from google at 09-28 10:00 on `anon-a`, an order of
 * `cust-a` at 09-30 12:00 for 100.00. Before `anon-a` and `cust-a` merge, last_click credits
 * `(none)` with 1 order / 100; after the merge event (past the watermark), `google` — from the raw
 * branch, since the order's identity has a link ingested after the watermark; after a refresh, from
 * the derived row, which now holds the touch.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FreshIds } from "../../src/derived/fresh-ids.js";
import { ATTRIBUTION_MODELS } from "../../src/query/attribution-models.js";
import type { TestApp } from "../helpers/app.js";
import { sendOk } from "./ingest-helpers.js";
import {
  adEntity,
  detail,
  event,
  exclusion,
  fxRate,
  onlyResult,
  order,
  refund,
  storeCustomer,
  sums,
  touch,
} from "./query-fixtures.js";
import { type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
beforeAll(async () => {
  suite = await startQuerySuite({ env: { RATE_QUERY_PER_SEC: "10000", RATE_INGEST_PER_SEC: "10000" } });
  ({ app } = suite);
  // EUR has no rate on 09-30 (the 09-29 one is used); GBP none before 10-01 (a 400 naming it).
  await suite.load.fxRates([
    fxRate("2026-09-20", "EUR", 0.9),
    fxRate("2026-09-29", "EUR", 0.92),
    fxRate("2026-10-01", "EUR", 0.95),
    fxRate("2026-10-01", "GBP", 0.8),
  ]);
});
afterAll(() => app?.close());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The range crosses a month boundary, so a moved order changes partitions. */
const RANGE = { start: "2026-09-29", end: "2026-10-02" };
const RANGE_START = Date.parse("2026-09-29T00:00:00Z");
const RANGE_END = Date.parse("2026-10-03T00:00:00Z");
const SOURCES = ["google", "facebook", "klaviyo", "tiktok"] as const;
const iso = (ms: number) => new Date(ms).toISOString();
/** Campaigns the touches name by id, loaded as ad entities so channel details lists them. */
const CAMPAIGN_IDS: Record<string, string> = { spring: "camp-spring", summer: "camp-summer" };

interface Store {
  customers: { late: boolean }[];
  /** `early`: loaded before the first refresh; otherwise arrives late (state 2). */
  touches: { customer: number; at: number; source: string; campaign: string; early: boolean }[];
  orders: {
    customer: number;
    at: number;
    cents: number;
    currency: string;
    pending: boolean;
    /** No customer: the order is a customer of its own. */
    guest: boolean;
    refundCents: number;
  }[];
  /**
   * Index of an order moved by +2 days in state 2 (−1: none), of one voided, of one handed to the new
   * order's customer, and that customer.
   */
  moved: number;
  voided: number;
  recustomer: number;
  newOrderCustomer: number;
  /**
   * Index of an order whose refund moves by +5 hours in state 2 (−1: none), and of one refunded then
   * (modulo the number of orders).
   */
  refundMoved: number;
  lateRefund: number;
}

const hourIn = (min: number, max: number) =>
  fc.integer({ min: min / HOUR, max: max / HOUR - 1 }).map((h) => h * HOUR);

const store: fc.Arbitrary<Store> = fc.integer({ min: 1, max: 4 }).chain((n) =>
  fc.record({
    customers: fc.array(fc.record({ late: fc.boolean() }), { minLength: n, maxLength: n }),
    // Hours, not minutes: two touches of one customer at the same instant happen, and the credit of
    // both paths must break the tie the same way.
    touches: fc.array(
      fc.record({
        customer: fc.integer({ min: 0, max: n - 1 }),
        at: hourIn(RANGE_START - 40 * DAY, RANGE_END),
        source: fc.constantFrom(...SOURCES),
        campaign: fc.constantFrom("spring", "summer", ""),
        early: fc.boolean(),
      }),
      { maxLength: 10 },
    ),
    orders: fc.array(
      fc.record({
        customer: fc.integer({ min: 0, max: n - 1 }),
        // Some before the range: a customer's earlier order decides whether they count in a bucket.
        at: hourIn(RANGE_START - 3 * DAY, RANGE_END - 2 * DAY),
        cents: fc.integer({ min: 1, max: 50_000 }),
        currency: fc.constantFrom("USD", "USD", "EUR"),
        pending: fc.integer({ min: 0, max: 9 }).map((x) => x < 2),
        guest: fc.integer({ min: 0, max: 9 }).map((x) => x < 2),
        refundCents: fc.nat({ max: 1000 }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
    moved: fc.integer({ min: -1, max: 5 }),
    voided: fc.integer({ min: -1, max: 5 }),
    recustomer: fc.integer({ min: -1, max: 5 }),
    newOrderCustomer: fc.integer({ min: 0, max: n - 1 }),
    refundMoved: fc.integer({ min: -1, max: 5 }),
    lateRefund: fc.nat({ max: 5 }),
  }),
);

type Body = Record<string, unknown>;
interface Request {
  path: string;
  body: Body;
}

const request: fc.Arbitrary<Request> = fc.oneof(
  fc
    .record({
      model: fc.constantFrom(...ATTRIBUTION_MODELS),
      halfLife: fc.constantFrom(undefined, 1, 30),
      window: fc.constantFrom(1, 7, 30, -1),
      dimension: fc.constantFrom("attribution.source", "attribution.campaign", "attribution.channel"),
      touchFilter: fc.boolean(),
      orderFilter: fc.boolean(),
      currency: fc.constantFrom("USD", "EUR", "GBP"),
      pending: fc.boolean(),
      excludeEur: fc.boolean(),
      granularity: fc.constantFrom("none", "day"),
    })
    .map((r) => ({
      path: "/db-mgmt/api/query-attribution",
      body: {
        dimension: r.dimension,
        dateRange: RANGE,
        timezone: "UTC",
        attributionModel: r.model,
        attributionWindow: r.window,
        ...(r.halfLife !== undefined ? { attributionHalfLifeDays: r.halfLife } : {}),
        currency: r.currency,
        granularity: r.granularity,
        ...(r.pending || r.excludeEur
          ? {
              orderSettings: {
                ...(r.pending ? { countPendingOrders: true } : {}),
                ...(r.excludeEur
                  ? {
                      exclusionFilters: [
                        exclusion("no EUR", [{ logic: "and", conditions: [["currency", "equals", "EUR"]] }]),
                      ],
                    }
                  : {}),
              },
            }
          : {}),
        ...(r.touchFilter || r.orderFilter
          ? {
              filters: {
                and: [
                  ...(r.touchFilter
                    ? [{ field: "attribution.source", op: "in", value: ["google", "klaviyo"] }]
                    : []),
                  ...(r.orderFilter ? [{ field: "orders.currency", op: "eq", value: "USD" }] : []),
                ],
              },
            }
          : {}),
      },
    })),
  fc
    .record({
      model: fc.constantFrom("first_click", "last_click", "linear", "position_based"),
      window: fc.constantFrom(7, -1),
      dimension: fc.constantFrom("attribution.source", "orders.currency"),
    })
    .map((r) => ({
      path: "/db-mgmt/api/query",
      body: {
        measures: ["attribution.orders", "attribution.revenue", "orders.count"],
        dimensions: [r.dimension],
        dateRange: RANGE,
        compareDateRange: { start: "2026-09-20", end: "2026-09-28" },
        timezone: "UTC",
        granularity: "day",
        attributionModel: r.model,
        attributionWindow: r.window,
      },
    })),
  // The time series the hourly order rollup answers (and, with a half-hour timezone, does not).
  fc
    .record({
      granularity: fc.constantFrom("none", "hour", "day", "week"),
      timezone: fc.constantFrom("UTC", "America/New_York", "Asia/Kolkata"),
      currency: fc.constantFrom("USD", "EUR"),
      pending: fc.boolean(),
      byOrderDate: fc.boolean(),
      compare: fc.boolean(),
      // Counts alone convert nothing: the statement then joins no rate.
      measures: fc.constantFrom(
        [
          "orders.count",
          "orders.total_revenue",
          "orders.aov",
          "orders.gross_sales",
          "orders.net_revenue",
          "customers.count",
        ],
        ["orders.count", "customers.count"],
        ["orders.refunds", "orders.refund_count", "orders.net_revenue"],
      ),
    })
    .map((r) => ({
      path: "/db-mgmt/api/query",
      body: {
        measures: r.measures,
        dateRange: RANGE,
        ...(r.compare ? { compareDateRange: { start: "2026-09-26", end: "2026-09-28" } } : {}),
        timezone: r.timezone,
        granularity: r.granularity,
        currency: r.currency,
        ...(r.pending || r.byOrderDate
          ? {
              orderSettings: {
                ...(r.pending ? { countPendingOrders: true } : {}),
                ...(r.byOrderDate ? { refundDateAttribution: "order_date" } : {}),
              },
            }
          : {}),
      },
    })),
  fc
    .record({
      model: fc.constantFrom("first_click", "last_click", "time_decay"),
      window: fc.constantFrom(7, -1),
    })
    .map((r) => ({
      path: "/db-mgmt/api/query-channel-details",
      body: {
        level: "campaign",
        measures: ["attribution.orders", "attribution.revenue"],
        dateRange: RANGE,
        timezone: "UTC",
        attributionModel: r.model,
        attributionWindow: r.window,
      },
    })),
);

/** Loads records without refreshing the derived tables (identities are filed: merges are visible). */
async function loadRaw(
  app: TestApp,
  pixelId: string,
  px: Awaited<ReturnType<TestApp["pixelWithKey"]>>,
  part: { events?: unknown[]; orders?: unknown[]; refunds?: unknown[] },
) {
  if (part.events?.length) await sendOk(app, px, part.events);
  for (const kind of ["orders", "refunds"] as const) {
    const records = part[kind];
    if (!records?.length) continue;
    const r = await app.services.sync.upsert(kind, pixelId, records);
    expect(r.rejected, `${kind} refused`).toEqual([]);
  }
  expect((await app.services.settle(undefined, { derived: false })).messages).toBe(0);
}

async function answers(
  post: (b: Body, o: { path: string; derived: boolean }) => Promise<unknown>,
  r: Request,
) {
  const [derived, raw] = [
    await post(r.body, { path: r.path, derived: true }),
    await post(r.body, { path: r.path, derived: false }),
  ];
  return { derived, raw };
}

/** Rows of the pixel in each derived table. */
async function derivedRows(
  pixelId: string,
): Promise<{ touches: number; hours: number; customerHours: number }> {
  const [row] = await app.stores.warehouse.query<{ touches: string; hours: string; customer_hours: string }>(
    `SELECT toString((SELECT count() FROM conversion_touches WHERE pixel_id = {p:String})) AS touches,
       toString((SELECT count() FROM order_facts_hourly WHERE pixel_id = {p:String})) AS hours,
       toString((SELECT count() FROM customer_hours WHERE pixel_id = {p:String})) AS customer_hours`,
    { p: pixelId },
  );
  return {
    touches: Number(row?.touches ?? 0),
    hours: Number(row?.hours ?? 0),
    customerHours: Number(row?.customer_hours ?? 0),
  };
}

/** Last-click credit by source over RANGE (30-day window), from the derived tables or raw data. */
async function lastClickBySource(post: Awaited<ReturnType<typeof newPixel>>["post"], derived: boolean) {
  const body = {
    dimension: "attribution.source",
    dateRange: RANGE,
    timezone: "UTC",
    attributionModel: "last_click",
    attributionWindow: 30,
  };
  const res = (await post(body, { path: "/db-mgmt/api/query-attribution", derived })) as {
    status: number;
    body: unknown;
  };
  const r = { status: res.status, body: res.body, text: JSON.stringify(res.body), headers: new Headers() };
  return { orders: sums(r, "attribution.orders"), revenue: sums(r, "attribution.revenue") };
}

async function newPixel() {
  const px = await app.pixelWithKey(["analytics:read", "events:write"]);
  const post = async (body: Body, o: { path: string; derived: boolean }) => {
    const res = await app.call("POST", `${o.path}${o.derived ? "" : "?derived=false"}`, {
      key: px.key,
      pixelId: px.pixelId,
      body: { pixelId: px.pixelId, ...body },
      headers: { "cache-control": "no-cache" },
    });
    return { status: res.status, body: res.body };
  };
  return { px, post };
}

describe("derived tables answer as raw data", () => {
  it("over generated stores, before and after late data and refreshes", async () => {
    let derivedServed = 0;
    await fc.assert(
      fc.asyncProperty(store, fc.array(request, { minLength: 4, maxLength: 6 }), async (s, requests) => {
        const { px, post } = await newPixel();
        const ref = (c: number) => `cust-${c}`;
        const touchOf = (t: Store["touches"][number], i: number) =>
          touch(
            `anon-${t.customer}`,
            iso(t.at),
            `utm_source=${t.source}&utm_medium=cpc&utm_campaign=${t.campaign}`,
            {
              eventId: `t${i}`,
              ...(s.customers[t.customer]!.late ? {} : storeCustomer(ref(t.customer))),
            },
          );
        const orderOf = (o: Store["orders"][number], i: number, extra: Record<string, unknown> = {}) =>
          order(`o${i}`, iso(o.at), o.currency, o.cents / 100, {
            ...(o.guest ? {} : { customer: { id: ref(o.customer) } }),
            ...(o.pending ? { financialStatus: "pending" } : {}),
            ...extra,
          });
        const check = async (state: string) => {
          for (const r of requests) {
            const { derived, raw } = await answers(post, r);
            expect(
              derived,
              `${state}: ${JSON.stringify(r)} → raw ${JSON.stringify(raw).slice(0, 400)}`,
            ).toEqual(raw);
          }
        };

        // 1. loaded and refreshed
        const entities = await app.services.sync.upsert(
          "ad-entities",
          px.pixelId,
          Object.entries(CAMPAIGN_IDS).map(([name, id]) =>
            adEntity("facebook", "campaign", id, "acc1", name, { campaignId: id }),
          ),
        );
        expect(entities.rejected).toEqual([]);
        await loadRaw(app, px.pixelId, px, {
          events: s.touches.flatMap((t, i) => (t.early ? [touchOf(t, i)] : [])),
          orders: s.orders.map((o, i) => orderOf(o, i)),
          refunds: s.orders.flatMap((o, i) =>
            o.refundCents > 0 && o.refundCents < o.cents
              ? [refund(`r${i}`, `o${i}`, iso(o.at + HOUR), o.refundCents / 100, o.currency)]
              : [],
          ),
        });
        await app.services.derivedWorker.runOnce(0);
        // Built: every order has its hour and its customer's hour (an order without a touch has no
        // conversion_touches row).
        const built = await derivedRows(px.pixelId);
        expect(built.hours).toBeGreaterThan(0);
        expect(built.customerHours).toBeGreaterThan(0);
        derivedServed++;
        await check("refreshed");

        // 2. late data past the watermark
        const updated = (i: number) => {
          const o = s.orders[i]!;
          const later = {
            ...o,
            at: i === s.moved ? o.at + 2 * DAY : o.at,
            ...(i === s.recustomer ? { customer: s.newOrderCustomer, guest: false } : {}),
          };
          return orderOf(later, i, {
            updatedAt: iso(o.at + 3 * DAY),
            ...(i === s.voided ? { financialStatus: "voided" } : {}),
          });
        };
        await loadRaw(app, px.pixelId, px, {
          events: [
            ...s.touches.flatMap((t, i) => (t.early ? [] : [touchOf(t, i)])),
            ...s.customers.flatMap((c, i) =>
              c.late ? [event("page_view", `anon-${i}`, iso(RANGE_END + DAY), storeCustomer(ref(i)))] : [],
            ),
          ],
          refunds: s.orders.flatMap((o, i) => [
            ...(i === s.refundMoved && o.refundCents > 0 && o.refundCents < o.cents
              ? [
                  // A later creation time is a newer version (no updatedAt: the version is createdAt).
                  refund(`r${i}`, `o${i}`, iso(o.at + 6 * HOUR), o.refundCents / 100, o.currency),
                ]
              : []),
            ...(i === s.lateRefund % s.orders.length
              ? [refund(`late${i}`, `o${i}`, iso(o.at + 2 * HOUR), 0.5, o.currency)]
              : []),
          ]),
          orders: [
            ...s.orders.flatMap((_, i) =>
              i === s.moved || i === s.voided || i === s.recustomer ? [updated(i)] : [],
            ),
            order("o-new", iso(RANGE_START + 30 * HOUR), "USD", 42.5, {
              customer: { id: ref(s.newOrderCustomer) },
            }),
          ],
        });
        await check("late data, not refreshed");

        // 3. refreshed again
        await app.services.derivedWorker.runOnce(0);
        await check("refreshed after late data");
      }),
      // A failing run is reported as found: shrinking would reload a store per step.
      { numRuns: 10, endOnFailure: true },
    );
    expect(derivedServed).toBeGreaterThan(0);
  }, 300_000);

  it("a merge past the watermark moves credit at once; the refresh keeps it (worked example)", async () => {
    const { px, post } = await newPixel();
    await loadRaw(app, px.pixelId, px, {
      events: [
        touch("anon-a", "2026-09-28T10:00:00Z", "utm_source=google&utm_medium=cpc", { eventId: "t-a" }),
      ],
      orders: [order("o-a", "2026-09-30T12:00:00Z", "USD", 100, { customer: { id: "cust-a" } })],
    });
    await app.services.derivedWorker.runOnce(0);
    const credit = (derived: boolean) => lastClickBySource(post, derived);
    expect(await credit(true)).toEqual({ orders: { "(none)": 1 }, revenue: { "(none)": 100 } });

    await loadRaw(app, px.pixelId, px, {
      events: [event("page_view", "anon-a", "2026-10-05T00:00:00Z", storeCustomer("cust-a"))],
    });
    expect(await credit(true)).toEqual({ orders: { google: 1 }, revenue: { google: 100 } });
    expect(await credit(false)).toEqual({ orders: { google: 1 }, revenue: { google: 100 } });

    const refreshed = await app.services.derivedWorker.runOnce(0);
    expect(refreshed.map((r) => r.pixelId)).toContain(px.pixelId);
    expect(await credit(true)).toEqual({ orders: { google: 1 }, revenue: { google: 100 } });
    // Nothing new since: the next round has nothing to do for this pixel.
    expect((await app.services.derivedWorker.runOnce(0)).map((r) => r.pixelId)).not.toContain(px.pixelId);
  });

  it("an order whose time changed is credited once, at its new time (worked example)", async () => {
    // o-m is stored at 29 Sep 12:00 and built; then moved to 1 Oct 12:00 and built again. The derived
    // table now holds its touches under both times (the time is part of its sort key); only the row
    // of the order's current time may count, or the order would be credited twice.
    const { px, post } = await newPixel();
    const customer = { customer: { id: "cust-m" } };
    await loadRaw(app, px.pixelId, px, {
      events: [
        touch("anon-m", "2026-09-28T10:00:00Z", "utm_source=google&utm_medium=cpc", {
          eventId: "t-m",
          ...storeCustomer("cust-m"),
        }),
      ],
      orders: [order("o-m", "2026-09-29T12:00:00Z", "USD", 100, customer)],
    });
    await app.services.derivedWorker.runOnce(0);
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("o-m", "2026-10-01T12:00:00Z", "USD", 100, { ...customer, updatedAt: "2026-10-02T00:00:00Z" }),
      ],
    });
    const refreshed = await app.services.derivedWorker.runOnce(0);
    // Rebuilt, so the order is read from the derived table, where its touch now stands under both times.
    expect(refreshed.map((r) => r.pixelId)).toContain(px.pixelId);
    expect((await derivedRows(px.pixelId)).touches).toBe(2);
    for (const derived of [true, false]) {
      const { orders, revenue } = await lastClickBySource(post, derived);
      expect({ derived, orders }).toEqual({ derived, orders: { google: 1 } });
      expect(revenue).toEqual({ google: 100 });
    }
  });

  it("only orders with a touch have a row; a stored row of an order without touches now is emptied (worked example)", async () => {
    // o-c (cust-c, touched by google on 28 Sep) and o-n (cust-n, never touched): one row, o-c's. A row
    // with a touch is then left for o-n (as a build before its touches went away would leave it); the
    // next refresh of o-n's identity must write an empty row over it, not skip o-n for having none.
    const { px, post } = await newPixel();
    const orderN = (updatedAt: string) =>
      order("o-n", "2026-09-30T13:00:00Z", "USD", 50, { customer: { id: "cust-n" }, updatedAt });
    await loadRaw(app, px.pixelId, px, {
      events: [
        touch("anon-c", "2026-09-28T10:00:00Z", "utm_source=google&utm_medium=cpc", {
          eventId: "t-c",
          ...storeCustomer("cust-c"),
        }),
      ],
      orders: [
        order("o-c", "2026-09-30T12:00:00Z", "USD", 100, { customer: { id: "cust-c" } }),
        orderN("2026-09-30T13:00:00Z"),
      ],
    });
    await app.services.derivedWorker.runOnce(0);
    expect((await derivedRows(px.pixelId)).touches).toBe(1);
    const credit = async (derived: boolean) => (await lastClickBySource(post, derived)).revenue;
    expect(await credit(true)).toEqual({ google: 100, "(none)": 50 });

    await app.stores.warehouse.command(
      `INSERT INTO conversion_touches (pixel_id, order_id, created_at, built_version, touches)
       VALUES ({p:String}, 'o-n', '2026-09-30 13:00:00.000', 1,
         [(toDateTime64('2026-09-29 10:00:00', 3, 'UTC'), 't-x', 'paid_search', 'google', 'cpc', '', '', '', '', '', '')])`,
      { p: px.pixelId },
    );
    // A new version of o-n (nothing else changed) puts its identity past the watermark.
    await loadRaw(app, px.pixelId, px, { orders: [orderN("2026-10-02T00:00:00Z")] });
    expect(await credit(false)).toEqual({ google: 100, "(none)": 50 });
    await app.services.derivedWorker.runOnce(0);
    expect((await app.services.derivedWorker.lag()).pixels).toBe(0);
    expect(await credit(true)).toEqual({ google: 100, "(none)": 50 });
    const [n] = await app.stores.warehouse.query<{ touches: number }>(
      "SELECT length(touches) AS touches FROM conversion_touches FINAL WHERE pixel_id = {p:String} AND order_id = 'o-n'",
      { p: px.pixelId },
    );
    expect(Number(n?.touches)).toBe(0);
  });

  it("a customer counts once per bucket and per range, from customer_hours as from raw orders (worked example)", async () => {
    // cust-a orders on 27 Sep (before the range), 30 Sep 10:00 and 1 Oct 09:00; cust-b twice on 30 Sep
    // (11:00, 15:00); a guest on 1 Oct 12:00. Daily customers over 29 Sep – 2 Oct: 0, 2 (a, b),
    // 2 (a, the guest), 0; the range 3 — a once, though her first order lies before it.
    // Then, past the watermark, cust-c orders on 1 Oct 13:00, the guest's order becomes cust-b's, and
    // a's 30 Sep order moves to 29 Sep 10:00 (same month: the new version replaces the old one in
    // place, and once the engine merged it away only order_hours knows the hour and the customer the
    // rollups still count): customers 1 (a), 1 (b), 3 (a, b, c), 0, the range 3; orders 1, 2, 3, 0.
    const { px, post } = await newPixel();
    const of = (id: string) => ({ customer: { id } });
    const guest = (extra: Record<string, unknown> = {}) =>
      order("o-g", "2026-10-01T12:00:00Z", "USD", 5, extra);
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("o-a0", "2026-09-27T08:00:00Z", "USD", 10, of("cust-a")),
        order("o-a1", "2026-09-30T10:00:00Z", "USD", 10, of("cust-a")),
        order("o-a2", "2026-10-01T09:00:00Z", "USD", 10, of("cust-a")),
        order("o-b1", "2026-09-30T11:00:00Z", "USD", 20, of("cust-b")),
        order("o-b2", "2026-09-30T15:00:00Z", "USD", 20, of("cust-b")),
        guest(),
      ],
    });
    await app.services.derivedWorker.runOnce(0);
    expect((await derivedRows(px.pixelId)).customerHours).toBe(6);
    const series = async (derived: boolean) => {
      const res = (await post(
        {
          measures: ["orders.count", "customers.count"],
          dateRange: RANGE,
          timezone: "UTC",
          granularity: "day",
        },
        { path: "/db-mgmt/api/query", derived },
      )) as { status: number; body: unknown };
      const result = onlyResult({ ...res, text: JSON.stringify(res.body), headers: new Headers() });
      return {
        customers: result.data.primary.map((b) => b["customers.count"]),
        range: detail(result, "customers.count").primarySum,
        orders: result.data.primary.map((b) => b["orders.count"]),
      };
    };
    for (const derived of [true, false]) {
      expect({ derived, ...(await series(derived)) }).toEqual({
        derived,
        customers: [0, 2, 2, 0],
        range: 3,
        orders: [0, 3, 2, 0],
      });
    }
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("o-c", "2026-10-01T13:00:00Z", "USD", 30, of("cust-c")),
        guest({ ...of("cust-b"), updatedAt: "2026-10-02T00:00:00Z" }),
        order("o-a1", "2026-09-29T10:00:00Z", "USD", 10, {
          ...of("cust-a"),
          updatedAt: "2026-10-02T00:00:00Z",
        }),
      ],
    });
    await app.stores.warehouse.command("OPTIMIZE TABLE orders FINAL");
    // What the derived forms read raw: every hour and customer the changed orders are or were counted
    // under — a1's 30 Sep hour and the guest's own key only from order_hours, after the merge.
    const fresh = await new FreshIds(app.stores.warehouse).of(px.pixelId, "worked", { customers: true });
    expect(fresh.customers).toEqual(["c:cust-a", "c:cust-b", "c:cust-c", "o:o-g"]);
    expect(fresh.hours).toEqual([
      "2026-09-29 10:00:00.000",
      "2026-09-30 10:00:00.000",
      "2026-10-01 12:00:00.000",
      "2026-10-01 13:00:00.000",
    ]);
    const after = { customers: [1, 1, 3, 0], range: 3, orders: [1, 2, 3, 0] };
    for (const derived of [true, false]) {
      expect({ derived, ...(await series(derived)) }).toEqual({ derived, ...after });
    }
    await app.services.derivedWorker.runOnce(0);
    expect(await series(true)).toEqual(after);
  });

  it("a refund moved or added past the watermark is read raw at once, booked at either date (worked example)", async () => {
    // o-1 (USD 100, 29 Sep 12:00) has r-1 of 10.00 on 30 Sep 13:00. Daily refunds over 29 Sep – 2 Oct,
    // booked at the refund's date: 0, 10, 0, 0; at the order's: 10, 0, 0, 0. Then, past the watermark,
    // r-1 moves to 1 Oct 09:00 (a later creation time is a newer version; once the engine merged the
    // old one away only refund_hours knows the hour the rollup counts it in) and r-2 of 5.00 is added
    // on 30 Sep 15:00: by refund date 0, 5, 10, 0; by order date 15, 0, 0, 0 — from the derived forms
    // before the refresh as after it, as from raw data. Then o-1 alone changes (voided): every refund
    // of it is read raw at once, and none counts.
    const { px, post } = await newPixel();
    await loadRaw(app, px.pixelId, px, {
      orders: [order("o-1", "2026-09-29T12:00:00Z", "USD", 100)],
      refunds: [refund("r-1", "o-1", "2026-09-30T13:00:00Z", 10)],
    });
    await app.services.derivedWorker.runOnce(0);
    const series = async (derived: boolean, refundDateAttribution: string) => {
      const res = (await post(
        {
          measures: ["orders.refunds", "orders.refund_count"],
          dateRange: RANGE,
          timezone: "UTC",
          granularity: "day",
          orderSettings: { refundDateAttribution },
        },
        { path: "/db-mgmt/api/query", derived },
      )) as { status: number; body: unknown };
      const result = onlyResult({ ...res, text: JSON.stringify(res.body), headers: new Headers() });
      return result.data.primary.map((b) => b["orders.refunds"]);
    };
    const expectSeries = async (byRefund: number[], byOrder: number[]) => {
      for (const derived of [true, false]) {
        expect({ derived, byRefund: await series(derived, "refund_date") }).toEqual({ derived, byRefund });
        expect({ derived, byOrder: await series(derived, "order_date") }).toEqual({ derived, byOrder });
      }
    };
    await expectSeries([0, 10, 0, 0], [10, 0, 0, 0]);
    await loadRaw(app, px.pixelId, px, {
      refunds: [
        refund("r-1", "o-1", "2026-10-01T09:00:00Z", 10),
        refund("r-2", "o-1", "2026-09-30T15:00:00Z", 5),
      ],
    });
    await app.stores.warehouse.command("OPTIMIZE TABLE refunds FINAL");
    const fresh = await new FreshIds(app.stores.warehouse).of(px.pixelId, "worked-refunds");
    // No order row past the watermark: no order hour is read raw.
    expect(fresh.hours).toEqual([]);
    expect(fresh.refundHours).toEqual([
      "2026-09-30 13:00:00.000",
      "2026-09-30 15:00:00.000",
      "2026-10-01 09:00:00.000",
    ]);
    await expectSeries([0, 5, 10, 0], [15, 0, 0, 0]);
    // Net revenue: the order rollup's amounts and the refunds in one shared statement, whose derived
    // form reads the fresh refund hours raw while no order hour is fresh (the order set's [] and the
    // refund set's three hours bound together): 100 on 29 Sep, less the refunds on their days.
    for (const derived of [true, false]) {
      const res = (await post(
        { measures: ["orders.net_revenue"], dateRange: RANGE, timezone: "UTC", granularity: "day" },
        { path: "/db-mgmt/api/query", derived },
      )) as { status: number; body: unknown };
      const net = onlyResult({ ...res, text: JSON.stringify(res.body), headers: new Headers() });
      expect({ derived, net: net.data.primary.map((b) => b["orders.net_revenue"]) }).toEqual({
        derived,
        net: [100, -5, -10, 0],
      });
    }
    await app.services.derivedWorker.runOnce(0);
    await expectSeries([0, 5, 10, 0], [15, 0, 0, 0]);
    // Only the order changes: voided, its refunds no longer count. Their hours are read raw at once.
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("o-1", "2026-09-29T12:00:00Z", "USD", 100, {
          financialStatus: "voided",
          updatedAt: "2026-10-02T00:00:00Z",
        }),
      ],
    });
    const voided = await new FreshIds(app.stores.warehouse).of(px.pixelId, "worked-refunds-voided");
    // 13:00 too: places are only added, and refund_hours still holds r-1's first hour.
    expect(voided.refundHours).toEqual([
      "2026-09-30 13:00:00.000",
      "2026-09-30 15:00:00.000",
      "2026-10-01 09:00:00.000",
    ]);
    await expectSeries([0, 0, 0, 0], [0, 0, 0, 0]);
    await app.services.derivedWorker.runOnce(0);
    await expectSeries([0, 0, 0, 0], [0, 0, 0, 0]);
    // Caught up: nothing is read raw.
    expect(await new FreshIds(app.stores.warehouse).of(px.pixelId, "worked-refunds-caught-up")).toEqual({
      ids: [],
      hours: [],
      refundHours: [],
    });
  });

  it("GET /db-mgmt/api/derived/lag says how far the derived tables trail, and refuses a bad waitMs", async () => {
    const px = await app.pixelWithKey(["analytics:read"]);
    const lag = await app.call("GET", "/db-mgmt/api/derived/lag", { key: px.key, pixelId: px.pixelId });
    expect(lag.status, lag.text).toBe(200);
    expect(lag.body).toMatchObject({
      pixels: expect.any(Number),
      seconds: expect.any(Number),
      caughtUp: expect.any(Boolean),
      refreshes: expect.any(Number),
    });
    const bad = await app.call("GET", "/db-mgmt/api/derived/lag?waitMs=soon", {
      key: px.key,
      pixelId: px.pixelId,
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("waitMs");
  });
});
