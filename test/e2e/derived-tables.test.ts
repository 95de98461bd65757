/**
 * Derived tables answer exactly as raw data (docs/derived-tables.md). Generated stores — customers
 * with anonymous touches merged late, touches at the same instant, orders in three currencies (one
 * day without a EUR rate), pending orders, refunds — are queried over HTTP from the derived tables
 * and with `?derived=false`, in four states:
 *
 *   1. loaded, derived tables refreshed, every request asked once and the next round run: the
 *      credit-cell shapes those requests asked for are built, and the derived rows and the credit
 *      cells answer;
 *   2. late data past the watermark, not refreshed: touches dated before the orders, the identity
 *      merges, an order moved across a month boundary, an order voided, an order handed to another
 *      customer, a new order, a refund moved to another hour and a new refund — the identities (and
 *      customers, order hours, refund hours and credit hours) with rows past the watermark are read
 *      raw, the rest from the derived tables and the credit cells;
 *   3. refreshed, the credit cells not (their interval has not passed): the hours changed since the
 *      cells' last refresh are credited one by one beside the now current derived tables;
 *   4. refreshed again, a settle: the cells of the changed hours rebuilt.
 *
 * Each request is one of the attribution endpoint's models × windows × dimensions, with touch and
 * order filters, another currency, counting pending orders or an exclusion filter; the general query's
 * attribution measures; its time series of orders, customers and refunds (booked at the refund's or
 * the order's date); channel details' attribution measures per campaign; or a cohort analysis (week
 * or month cohorts in UTC, the account's timezone or New York, in USD, EUR or GBP, over 1–6 periods,
 * counting pending or voided orders, with an exclusion or an orders filter, from a period's first day
 * or not, to a day near the suite's now or long before it). Every store has one more cohort request
 * the cohort cells can answer: no filter, the stored order settings, UTC or the account's timezone
 * (UTC or New York, set per store), from a cohort's first day to a day at most a week before now.
 * And one the credit cells can answer (an attribution statement without filters: the attribution
 * endpoint by source, campaign or channel, or the general query's attribution measures alone), most
 * often over a range holding every order, so its cells count. A shape is only built once asked, so
 * without the asking round of state 1 the cells would first answer in state 3, never beside fresh
 * hours. Both answers must be identical, status and body.
 *
 * The suite's now is pinned (the query service's clock, as query-timezones.test.ts does): Tuesday
 * 2026-10-06 15:00 UTC, four days after the stores' range. A cohort range ending on 09-30 is then
 * recent enough for the cohort cells, and the orders of 10-01 on (a moved order) lie past its end.
 * State 2 also gives one customer an order on 08-28, before all of theirs: their cohort moves to an
 * earlier week and month, out of a range starting in September.
 *
 * Worked example (the fixed test below): a touch from google at 09-28 10:00 on `anon-a`, an order of
 * `cust-a` at 09-30 12:00 for 100.00. Before `anon-a` and `cust-a` merge, last_click credits
 * `(none)` with 1 order / 100; after the merge event (past the watermark), `google` — from the raw
 * branch, since the order's identity has a link ingested after the watermark; after a refresh, from
 * the derived row, which now holds the touch. Another (further below) follows one credit-cell shape
 * from its ask to its build, through late data credited beside its cells, to the rebuild.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FreshIds } from "../../src/derived/fresh-ids.js";
import { DerivedWorker } from "../../src/derived/worker.js";
import { queryStatements } from "../../src/metrics.js";
import { ATTRIBUTION_MODELS } from "../../src/query/attribution-models.js";
import { creditCellsSql } from "../../src/query/sources/credit-cells.js";
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
  // Cohort builds whenever due (settling again rebuilds them), none kept between queries.
  suite = await startQuerySuite({
    env: { RATE_QUERY_PER_SEC: "10000", RATE_INGEST_PER_SEC: "10000", DERIVED_COHORT_INTERVAL_MS: "0" },
  });
  ({ app } = suite);
  (app.services.queries as unknown as { deps: { now?: () => Date } }).deps.now = () => new Date(NOW);
  // EUR has no rate on 09-30 (the 09-29 one is used); GBP none before 10-01 (a 400 naming it). The
  // August rate converts the late 08-28 order of state 2 (cohorts read every order of a customer).
  await suite.load.fxRates([
    fxRate("2026-08-01", "EUR", 0.88),
    fxRate("2026-09-20", "EUR", 0.9),
    fxRate("2026-09-29", "EUR", 0.92),
    fxRate("2026-10-01", "EUR", 0.95),
    fxRate("2026-10-01", "GBP", 0.8),
  ]);
});
afterAll(() => app?.close());

/** The query service's clock for the whole file (see the header): a Tuesday, four days after RANGE. */
const NOW = "2026-10-06T15:00:00Z";
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
  /** The account's timezone (cohort requests without one use it; the cohort cells cover it). */
  accountTimezone: string;
  /** A customer given an order on 08-28 in state 2, before all of theirs (−1: none). */
  earlyOrderCustomer: number;
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
    accountTimezone: fc.constantFrom("UTC", "America/New_York"),
    earlyOrderCustomer: fc.integer({ min: -1, max: n - 1 }),
  }),
);

type Body = Record<string, unknown>;
interface Request {
  path: string;
  body: Body;
  /** The credit-cell shape the request asks for (`model:window:field`), where the test relies on it. */
  shape?: string;
}

const COHORTS = "/db-mgmt/api/query-cohort-analysis";
/**
 * Cohort range starts, the first day of a cohort period (in any timezone: the dates are local) or
 * not: 08-01, 09-01 and 10-01 are the 1st of a month; 08-31, 09-21 and 09-28 Mondays; 09-15 and 09-29
 * Tuesdays.
 */
const COHORT_STARTS = {
  month: { aligned: ["2026-08-01", "2026-09-01", "2026-10-01"], unaligned: ["2026-08-31", "2026-09-15"] },
  week: { aligned: ["2026-08-31", "2026-09-21", "2026-09-28"], unaligned: ["2026-09-01", "2026-09-29"] },
} as const;
/**
 * Range ends at most a week before NOW (Tue 10-06 15:00 UTC), or after it: the cohort cells may
 * answer. 09-30 lies before the orders moved into October in state 2.
 */
const RECENT_ENDS = ["2026-09-30", "2026-10-02", "3daysAgo", "yesterday", "today", "2026-10-31"];
/** Range ends more than a week before NOW: answered raw. */
const OLD_ENDS = ["2026-09-27", "10daysAgo"];
/** The day a range end names, at NOW (the same day in UTC and New York at 15:00 UTC). */
const dayOf = (end: string) => {
  const ago = end === "today" ? 0 : end === "yesterday" ? 1 : /^(\d+)daysAgo$/.exec(end)?.[1];
  return ago === undefined ? end : iso(Date.parse(NOW) - Number(ago) * DAY).slice(0, 10);
};

/**
 * A cohort analysis request. `cellsCover`: only requests the cohort cells can answer (no filter, no
 * override of the stored order settings but an equal one, UTC or the account's timezone, a range from
 * a cohort period's first day to a recent day); otherwise any, the raw path's too.
 */
const cohortRequest = (cellsCover: boolean): fc.Arbitrary<Request> =>
  fc
    .record({
      granularity: fc.constantFrom("month" as const, "week" as const),
      aligned: cellsCover ? fc.constant(true) : fc.constantFrom(true, true, false),
      start: fc.nat({ max: 2 }),
      end: fc.constantFrom(...RECENT_ENDS, ...(cellsCover ? [] : OLD_ENDS)),
      // undefined: the account's timezone.
      timezone: fc.constantFrom("UTC", undefined, ...(cellsCover ? [] : ["America/New_York"])),
      currency: fc.constantFrom("USD", "USD", "EUR", ...(cellsCover ? [] : ["GBP"])),
      settings: cellsCover
        ? fc.constantFrom("stored", "pendingOff")
        : fc.constantFrom("stored", "stored", "pendingOff", "pending", "voided", "excludeEur"),
      filter: cellsCover ? fc.constant("none") : fc.constantFrom("none", "none", "usd", "big"),
      periods: fc.integer({ min: 1, max: 6 }),
      measures: fc.constantFrom(undefined, undefined, ["orders.total_revenue", "customers.ltv"]),
    })
    .map((r) => {
      const starts = COHORT_STARTS[r.granularity][r.aligned ? "aligned" : "unaligned"];
      // A start after the end would be a 400 on both paths: the earliest start of the kind instead.
      const start = starts[r.start % starts.length]!;
      return {
        path: COHORTS,
        body: {
          dateRange: { start: start > dayOf(r.end) ? starts[0] : start, end: r.end },
          cohortGranularity: r.granularity,
          periods: r.periods,
          ...(r.timezone ? { timezone: r.timezone } : {}),
          currency: r.currency,
          ...(r.measures ? { measures: r.measures } : {}),
          ...(r.settings === "stored"
            ? {}
            : {
                orderSettings:
                  r.settings === "pendingOff"
                    ? { countPendingOrders: false }
                    : r.settings === "pending"
                      ? { countPendingOrders: true }
                      : r.settings === "voided"
                        ? { countVoidedOrders: true }
                        : {
                            exclusionFilters: [
                              exclusion("no EUR", [
                                { logic: "and", conditions: [["currency", "equals", "EUR"]] },
                              ]),
                            ],
                          },
              }),
          ...(r.filter === "usd"
            ? { filters: { field: "orders.currency", op: "equals", value: "USD" } }
            : r.filter === "big"
              ? { filters: { field: "orders.total_price", op: "gte", value: 150 } }
              : {}),
        },
      };
    });

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
                  ...(r.orderFilter ? [{ field: "orders.currency", op: "equals", value: "USD" }] : []),
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
  cohortRequest(false),
);

/**
 * A request the credit cells can answer once its shape is built: an attribution statement without
 * filters — no touch or order filter, no exclusion filter, at most one dimension, an attribution
 * field, a timezone of whole-hour offsets, time_decay at its default half-life — in any currency
 * (GBP, seldom: nearly always the same 400 on both paths, a rate missing before 10-01), counting
 * pending or voided orders or not; or, less often (it reports only conversions credited to a touch,
 * which the sparse touches seldom give), the general query's attribution measures without a dimension
 * (the "has a touch" shape). Mostly from 09-25, which holds every order of the store (RANGE only its
 * last two days of orders), so that most cells count.
 */
const CELLS_RANGES = [
  RANGE,
  { start: "2026-09-25", end: RANGE.end },
  { start: "2026-09-25", end: RANGE.end },
];
const cellsRequest: fc.Arbitrary<Request> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({
        model: fc.constantFrom(...ATTRIBUTION_MODELS),
        window: fc.constantFrom(1, 7, 30, -1),
        dimension: fc.constantFrom("attribution.source", "attribution.campaign", "attribution.channel"),
        currency: fc.constantFrom("USD", "USD", "EUR", "EUR", "GBP"),
        granularity: fc.constantFrom("none", "day"),
        timezone: fc.constantFrom("UTC", "America/New_York"),
        range: fc.constantFrom(...CELLS_RANGES),
        settings: fc.constantFrom("stored", "pending", "voided"),
      })
      .map((r) => ({
        path: "/db-mgmt/api/query-attribution",
        shape: `${r.model}:${r.window}:${r.dimension}`,
        body: {
          dimension: r.dimension,
          dateRange: r.range,
          timezone: r.timezone,
          attributionModel: r.model,
          attributionWindow: r.window,
          currency: r.currency,
          granularity: r.granularity,
          ...(r.settings === "pending"
            ? { orderSettings: { countPendingOrders: true } }
            : r.settings === "voided"
              ? { orderSettings: { countVoidedOrders: true } }
              : {}),
        },
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        model: fc.constantFrom(...ATTRIBUTION_MODELS),
        window: fc.constantFrom(1, 7, 30, -1),
        timezone: fc.constantFrom("UTC", "America/New_York"),
        range: fc.constantFrom(...CELLS_RANGES),
      })
      .map((r) => ({
        path: "/db-mgmt/api/query",
        // Without a credited field only "has a touch" counts, whatever the model.
        shape: `touched:${r.window}:`,
        body: {
          measures: ["attribution.orders", "attribution.revenue"],
          dateRange: r.range,
          timezone: r.timezone,
          granularity: "day",
          attributionModel: r.model,
          attributionWindow: r.window,
        },
      })),
  },
);

/**
 * A store's requests: 4–6 of any kind, one the credit cells can answer, then one cohort request the
 * cohort cells cover (last).
 */
const requestLists: fc.Arbitrary<Request[]> = fc
  .tuple(fc.array(request, { minLength: 4, maxLength: 6 }), cellsRequest, cohortRequest(true))
  .map(([mixed, cells, covered]) => [...mixed, cells, covered]);

/**
 * A worker that refreshes the derived tables but not the credit cells (an hour between two of their
 * refreshes, and a round that is not a settle: a margin of 1 ms, past by the time it runs).
 */
function lagging(): DerivedWorker {
  return new DerivedWorker(app.stores.warehouse, {
    marginMs: 1,
    creditIntervalMs: 3_600_000,
    exclusive: (key, fn) => app.stores.sql.exclusive(key, fn),
    creditCells: creditCellsSql,
  });
}

/** How many statements the query service has run in the credit cells' forms (its metrics). */
async function statementsInCells(): Promise<{ cells: number; current: number }> {
  const values = (await queryStatements.get()).values;
  const count = (form: string) =>
    values.filter((v) => v.labels.form === form).reduce((sum, v) => sum + v.value, 0);
  return { cells: count("cells"), current: count("cells_current") };
}

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

/**
 * What the derived-tables worker built for the pixel's cohorts: whether the cohort_cells table exists
 * and holds rows of the pixel, and its latest build in cohort_builds (0: none, or no such table).
 */
async function cohortBuild(
  pixelId: string,
): Promise<{ cellsTable: boolean; cellRows: boolean; latestBuild: number }> {
  const tables = (
    await app.stores.warehouse.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('cohort_cells', 'cohort_builds')",
    )
  ).map((t) => t.name);
  const count = async (sql: string) =>
    Number((await app.stores.warehouse.query<{ n: string }>(sql, { p: pixelId }))[0]?.n ?? 0);
  return {
    cellsTable: tables.includes("cohort_cells"),
    cellRows: tables.includes("cohort_cells")
      ? (await count("SELECT toString(count()) AS n FROM cohort_cells WHERE pixel_id = {p:String}")) > 0
      : false,
    latestBuild: tables.includes("cohort_builds")
      ? await count("SELECT toString(max(built_version)) AS n FROM cohort_builds WHERE pixel_id = {p:String}")
      : 0,
  };
}

/**
 * The pixel's credit cells: its shapes in credit_shapes with their latest build (0: asked for, not
 * built), and its rows in credit_cells, of `shape` only if given (rows != 0: those a query reads).
 */
async function creditCells(
  pixelId: string,
  shape = "",
): Promise<{ shapes: Record<string, number>; cellRows: number; liveRows: number }> {
  const shapes = await app.stores.warehouse.query<{ shape: string; built: string }>(
    "SELECT shape, toString(max(built_version)) AS built FROM credit_shapes WHERE pixel_id = {p:String} GROUP BY shape",
    { p: pixelId },
  );
  const [cells] = await app.stores.warehouse.query<{ n: string; live: string }>(
    `SELECT toString(count()) AS n, toString(countIf(rows != 0)) AS live
     FROM credit_cells FINAL WHERE pixel_id = {p:String} AND ({shape:String} = '' OR shape = {shape:String})`,
    { p: pixelId, shape },
  );
  return {
    shapes: Object.fromEntries(shapes.map((r) => [r.shape, Number(r.built)])),
    cellRows: Number(cells?.n ?? 0),
    liveRows: Number(cells?.live ?? 0),
  };
}

/**
 * Waits until the pixel's `shape` is asked for: a query records its ask beside answering (not
 * awaited), so the row may land just after the answer.
 */
async function askedFor(pixelId: string, shape: string): Promise<void> {
  for (let i = 0; i < 500 && !(shape in (await creditCells(pixelId)).shapes); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(Object.keys((await creditCells(pixelId)).shapes), "shapes in credit_shapes").toContain(shape);
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
    /** Stores whose credit cells were built before the first check (so they answered in every state). */
    let cellsServed = 0;
    const cellsRan = await statementsInCells();
    /** Answers with a customer to requests the cohort cells cover, in every state. */
    let coveredCohorts = 0;
    await fc.assert(
      fc.asyncProperty(store, requestLists, async (s, requests) => {
        const covered = requests[requests.length - 1];
        const { px, post } = await newPixel();
        // Before anything is built or asked: the cohort cells cover UTC and this timezone.
        await app.stores.sql.query("UPDATE accounts SET timezone = $1 WHERE id = $2", [
          s.accountTimezone,
          px.accountId,
        ]);
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
            if (r === covered) {
              const body = (raw as { body: { cohorts?: { size: number }[] } }).body;
              if (body.cohorts?.some((c) => c.size > 0)) coveredCohorts++;
            }
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
        // Each request once, which asks for its credit-cell shape if it has one; the next round builds
        // the shapes asked for, so every state below reads the cells. The cells request (next to
        // last, see requestLists) always has one.
        for (const r of requests) await post(r.body, { path: r.path, derived: true });
        const shape = requests[requests.length - 2]!.shape!;
        await askedFor(px.pixelId, shape);
        await app.services.derivedWorker.runOnce(0);
        const cells = await creditCells(px.pixelId, shape);
        expect(cells.shapes[shape], `${shape} built by the round after its ask`).toBeGreaterThan(0);
        if (cells.liveRows > 0) cellsServed++;
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
            // Before every order of this customer: their cohort moves to an earlier week and month.
            ...(s.earlyOrderCustomer >= 0
              ? [
                  order("o-early", iso(RANGE_START - 32 * DAY + 10 * HOUR), "USD", 12.5, {
                    customer: { id: ref(s.earlyOrderCustomer) },
                  }),
                ]
              : []),
          ],
        });
        await check("late data, not refreshed");

        // 3. refreshed, the credit cells not yet (their interval has not passed): the hours changed
        // since their last refresh are credited one by one beside the derived tables, now current.
        await lagging().runOnce();
        await check("refreshed, credit cells behind");

        // 4. refreshed again, the credit cells too (a settle)
        await app.services.derivedWorker.runOnce(0);
        await check("refreshed after late data");
      }),
      // A failing run is reported as found: shrinking would reload a store per step.
      { numRuns: 10, endOnFailure: true },
    );
    expect(derivedServed).toBeGreaterThan(0);
    // The credit cells answered (built, holding rows) in every state of some stores.
    expect(cellsServed).toBeGreaterThan(0);
    // And statements did run in the cells' forms: beside fresh hours (states 2 and 3) and alone.
    const ran = await statementsInCells();
    expect(ran.cells - cellsRan.cells, "statements run from the cells beside fresh hours").toBeGreaterThan(0);
    expect(ran.current - cellsRan.current, "statements run from the cells alone").toBeGreaterThan(0);
    // The cohort requests the cells cover did meet cohorts (a store whose orders are all pending has none).
    expect(coveredCohorts).toBeGreaterThan(0);
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

  it("credit cells answer a shape once asked and built, fresh hours credited beside them, as raw data (worked example)", async () => {
    // last_click, 30-day window, by source, over 29 Sep – 2 Oct in UTC, in USD (EUR 0.95 per USD on
    // 10-01). Touches: google on anon-a 28 Sep 10:00 (not yet cust-a's), facebook on cust-b 30 Sep
    // 08:00, klaviyo on cust-c 29 Sep 09:00. Orders: o-a cust-a 30 Sep 12:00 USD 100; o-b cust-b
    // 1 Oct 10:00 EUR 95 (USD 100), refunded EUR 19 (USD 20) at 16:00; o-b2 cust-b 1 Oct 14:00 USD 30;
    // o-c cust-c 29 Sep 15:00 USD 40. Credit (revenue net of refunds):
    //   (none) 1 order, 100 (o-a); facebook 2 orders, 100 − 20 + 30 = 110; klaviyo 1 order, 40.
    // The first query asks for the shape (`last_click:30:attribution.source`); the next round builds
    // its cells, which then answer. Then, past the watermark: anon-a merges into cust-a (o-a moves to
    // google), o-a is refunded USD 25 on 2 Oct 09:00, o-b2 is voided:
    //   google 1 order, 100 − 25 = 75; facebook 1 order, 100 − 20 = 80; klaviyo 1 order, 40.
    // Before the refresh, o-a's and cust-b's hours are credited one by one beside the cells, which
    // still answer klaviyo's; after it, the cells alone, rebuilt for the changed hours.
    const { px, post } = await newPixel();
    const shape = "last_click:30:attribution.source";
    const of = (id: string) => ({ customer: { id } });
    await loadRaw(app, px.pixelId, px, {
      events: [
        touch("anon-a", "2026-09-28T10:00:00Z", "utm_source=google&utm_medium=cpc", { eventId: "t-g" }),
        touch("anon-b", "2026-09-30T08:00:00Z", "utm_source=facebook&utm_medium=cpc", {
          eventId: "t-f",
          ...storeCustomer("cust-b"),
        }),
        touch("anon-c", "2026-09-29T09:00:00Z", "utm_source=klaviyo&utm_medium=email", {
          eventId: "t-k",
          ...storeCustomer("cust-c"),
        }),
      ],
      orders: [
        order("o-a", "2026-09-30T12:00:00Z", "USD", 100, of("cust-a")),
        order("o-b", "2026-10-01T10:00:00Z", "EUR", 95, of("cust-b")),
        order("o-b2", "2026-10-01T14:00:00Z", "USD", 30, of("cust-b")),
        order("o-c", "2026-09-29T15:00:00Z", "USD", 40, of("cust-c")),
      ],
      refunds: [refund("r-b", "o-b", "2026-10-01T16:00:00Z", 19, "EUR")],
    });
    await app.services.derivedWorker.runOnce(0);
    // Nothing asked yet: nothing built (the derived tables alone do not build a shape).
    expect(await creditCells(px.pixelId)).toEqual({ shapes: {}, cellRows: 0, liveRows: 0 });

    const expectCredit = async (state: string, expected: Awaited<ReturnType<typeof lastClickBySource>>) => {
      for (const derived of [true, false]) {
        expect({ state, derived, ...(await lastClickBySource(post, derived)) }).toEqual({
          state,
          derived,
          ...expected,
        });
      }
    };
    /** The pixel's live cells (rows != 0) of the shape, per credited value, status, currency, refund. */
    const liveCells = async () =>
      (
        await app.stores.warehouse.query<Record<string, unknown>>(
          `SELECT value, financial_status AS status, currency, refund, toString(sum(conversions)) AS conversions,
             toString(round(sum(amount), 2)) AS amount
           FROM credit_cells FINAL WHERE pixel_id = {p:String} AND shape = {shape:String} AND rows != 0
           GROUP BY value, status, currency, refund ORDER BY value, status, currency, refund`,
          { p: px.pixelId, shape },
        )
      ).map((r) => ({
        ...r,
        refund: Number(r.refund),
        conversions: Number(r.conversions),
        amount: Number(r.amount),
      }));
    const creditHours = async (name: string) =>
      (await new FreshIds(app.stores.warehouse).of(px.pixelId, name, { creditHours: true })).creditHours;

    const built = {
      orders: { "(none)": 1, facebook: 2, klaviyo: 1 },
      revenue: { "(none)": 100, facebook: 110, klaviyo: 40 },
    };
    // Asked: credited conversion by conversion, the shape recorded as asked (built_version 0).
    await expectCredit("asked", built);
    await askedFor(px.pixelId, shape);
    expect(await creditCells(px.pixelId)).toEqual({ shapes: { [shape]: 0 }, cellRows: 0, liveRows: 0 });

    await app.services.derivedWorker.runOnce(0);
    const cells = await creditCells(px.pixelId);
    expect(cells.shapes[shape], "the round after the ask builds the shape").toBeGreaterThan(0);
    // Cells hold amounts in the order's (or refund's) own currency, converted when read.
    expect(await liveCells()).toEqual([
      { value: "(none)", status: "paid", currency: "USD", refund: 0, conversions: 1, amount: 100 },
      { value: "facebook", status: "paid", currency: "EUR", refund: 0, conversions: 1, amount: 95 },
      { value: "facebook", status: "paid", currency: "EUR", refund: 1, conversions: 0, amount: 19 },
      { value: "facebook", status: "paid", currency: "USD", refund: 0, conversions: 1, amount: 30 },
      { value: "klaviyo", status: "paid", currency: "USD", refund: 0, conversions: 1, amount: 40 },
    ]);
    // Nothing past the watermark: the cells alone answer.
    expect(await creditHours("credit-built")).toEqual([]);
    await expectCredit("built", built);

    await loadRaw(app, px.pixelId, px, {
      events: [event("page_view", "anon-a", "2026-10-05T00:00:00Z", storeCustomer("cust-a"))],
      orders: [
        order("o-b2", "2026-10-01T14:00:00Z", "USD", 30, {
          ...of("cust-b"),
          financialStatus: "voided",
          updatedAt: "2026-10-03T00:00:00Z",
        }),
      ],
      refunds: [refund("r-a", "o-a", "2026-10-02T09:00:00Z", 25)],
    });
    const late = {
      orders: { google: 1, facebook: 1, klaviyo: 1 },
      revenue: { google: 75, facebook: 80, klaviyo: 40 },
    };
    // Credited one by one: o-a's hour (its identity merged, a new refund) and both of cust-b's (o-b2
    // changed, so cust-b's identity has a row past the watermark); not o-c's, so klaviyo's credit
    // still comes from the cells.
    expect(await creditHours("credit-late")).toEqual([
      "2026-09-30 12:00:00.000",
      "2026-10-01 10:00:00.000",
      "2026-10-01 14:00:00.000",
    ]);
    await expectCredit("late data, not refreshed", late);

    await app.services.derivedWorker.runOnce(0);
    expect(await creditHours("credit-refreshed")).toEqual([]);
    await expectCredit("refreshed", late);
    // The rebuilt hours: o-a credited to google (with its refund), none left on (none); o-b2 kept
    // under its new status, which queries not counting voided orders skip.
    expect(await liveCells()).toEqual([
      { value: "facebook", status: "paid", currency: "EUR", refund: 0, conversions: 1, amount: 95 },
      { value: "facebook", status: "paid", currency: "EUR", refund: 1, conversions: 0, amount: 19 },
      { value: "facebook", status: "voided", currency: "USD", refund: 0, conversions: 1, amount: 30 },
      { value: "google", status: "paid", currency: "USD", refund: 0, conversions: 1, amount: 100 },
      { value: "google", status: "paid", currency: "USD", refund: 1, conversions: 0, amount: 25 },
      { value: "klaviyo", status: "paid", currency: "USD", refund: 0, conversions: 1, amount: 40 },
    ]);
  });

  it("month cohorts answer from the cells, corrected for customers with late orders, as from raw orders (worked example)", async () => {
    // Month cohorts in UTC, in USD, over 2026-08-01 – 2026-10-04 (two days before the suite's now,
    // Tue 10-06 15:00: the cohort cells may answer), 3 periods; a period starting after now (November)
    // is not reported. Orders (USD, paid unless said):
    //   cust-a  a1 08-14 100, a2 10-02 50, a3 10-03 30
    //   cust-b  b0 08-20 500 pending (not counted: B's first counted order is b1), b1 09-18 40, b2 10-04 60
    //   cust-d  d1 08-05 10, d2 09-09 15, d3 10-05 5 (after the range's end: still period 2 of August,
    //           and cust-d is read from raw orders even before any late data)
    //   guest   g1 09-21 7 (no customer: a customer of its own)
    // August, size 2 (A, D): p0 A+D 2 orders 110, LTV 55; p1 D 1 order 15, 50 %, LTV 62.5;
    //   p2 A+D 3 orders 85, LTV 105.
    // September, size 2 (B, guest): p0 2 orders 47, LTV 23.5; p1 B 1 order 60, 50 %, LTV 53.5.
    // October, size 0: p0 empty (rate and LTV null).
    // Pooled: p0 3 cohorts, size 4, retained 4, 4 orders, 157, LTV 157/4 = 39.25; p1 2 cohorts, size
    //   4, retained 2 (50 %), 2 orders, 75, LTV (125 + 107)/4 = 58; p2 1 cohort, size 2, 3 orders, 85, LTV 105.
    //
    // Then, not refreshed: B orders b-early 08-25 (20) — B moves into August; a3 moves to 09-12
    // (updatedAt 10-05: October keeps a tombstone); cust-c orders c1 10-03 (25).
    // August, size 3 (A, B, D): p0 a1 + b-early + d1 = 130, LTV 43.33; p1 a3 + b1 + d2 = 85, LTV
    //   215/3 = 71.67; p2 a2 + b2 + d3 = 115, LTV 110 — 3 retained, 3 orders in each.
    // September, size 1 (guest): p0 1 order 7, LTV 7; p1 empty, 0 %, LTV 7.
    // October, size 1 (C): p0 1 order 25, LTV 25.
    // Pooled: p0 3 cohorts, size 5, 5 retained, 5 orders, 162, LTV 32.4; p1 2 cohorts, size 4, 3
    //   retained (75 %), 3 orders, 85, LTV (215 + 7)/4 = 55.5; p2 1 cohort, size 3, 3 orders, 115, LTV 110.
    // The same after the refresh. In each state, other requests answer alike on both paths: weeks from
    // Mon 08-03 to today (from the cells too) and, answered raw, pending orders counted, New York, a filter.
    const { px, post } = await newPixel();
    const of = (id: string) => ({ customer: { id } });
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("a1", "2026-08-14T12:00:00Z", "USD", 100, of("cust-a")),
        order("a2", "2026-10-02T12:00:00Z", "USD", 50, of("cust-a")),
        order("a3", "2026-10-03T09:00:00Z", "USD", 30, of("cust-a")),
        order("b0", "2026-08-20T10:00:00Z", "USD", 500, { ...of("cust-b"), financialStatus: "pending" }),
        order("b1", "2026-09-18T10:00:00Z", "USD", 40, of("cust-b")),
        order("b2", "2026-10-04T10:00:00Z", "USD", 60, of("cust-b")),
        order("d1", "2026-08-05T09:00:00Z", "USD", 10, of("cust-d")),
        order("d2", "2026-09-09T09:00:00Z", "USD", 15, of("cust-d")),
        order("d3", "2026-10-05T09:00:00Z", "USD", 5, of("cust-d")),
        order("g1", "2026-09-21T12:00:00Z", "USD", 7),
      ],
    });
    await app.services.derivedWorker.runOnce(0);
    const built = await cohortBuild(px.pixelId);
    // Soft: the answers below are checked even before the feature builds the cells.
    expect
      .soft(built, "the first runOnce(0) builds the pixel's cohort cells (cohort_cells, cohort_builds)")
      .toMatchObject({ cellsTable: true, cellRows: true });
    expect.soft(built.latestBuild, "the pixel's build in cohort_builds").toBeGreaterThan(0);

    const base = {
      dateRange: { start: "2026-08-01", end: "2026-10-04" },
      cohortGranularity: "month",
      periods: 3,
      timezone: "UTC",
      currency: "USD",
    };
    const ask = async (derived: boolean, extra: Body = {}) =>
      (await post({ ...base, ...extra }, { path: COHORTS, derived })) as { status: number; body: unknown };
    const cohorts = async (derived: boolean) => {
      const res = await ask(derived);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const body = res.body as {
        cohorts: { cohort: string; size: number; periods: Body[] }[];
        average: { periods: Body[] };
      };
      return {
        cohorts: body.cohorts.map((c) => ({ cohort: c.cohort, size: c.size, periods: c.periods })),
        average: body.average.periods,
      };
    };
    const p = (
      k: number,
      retained: number,
      rate: number | null,
      orders: number,
      revenue: number,
      ltv: number | null,
    ) => ({
      period: k,
      "customers.retained": retained,
      "customers.retention_rate": rate,
      "orders.count": orders,
      "orders.total_revenue": revenue,
      "customers.ltv": ltv,
    });
    const expectAnswer = async (state: string, expected: Awaited<ReturnType<typeof cohorts>>) => {
      for (const derived of [true, false]) {
        const got = await cohorts(derived);
        expect({ state, derived, ...got }).toEqual({ state, derived, ...expected });
      }
      for (const extra of [
        { orderSettings: { countPendingOrders: true } },
        { timezone: "America/New_York" },
        { cohortGranularity: "week", dateRange: { start: "2026-08-03", end: "today" } },
        { filters: { field: "orders.total_price", op: "gte", value: 20 } },
      ]) {
        expect({ state, extra, ...(await ask(true, extra)) }).toEqual({
          state,
          extra,
          ...(await ask(false, extra)),
        });
      }
    };

    await expectAnswer("built", {
      cohorts: [
        {
          cohort: "2026-08-01",
          size: 2,
          periods: [p(0, 2, 100, 2, 110, 55), p(1, 1, 50, 1, 15, 62.5), p(2, 2, 100, 3, 85, 105)],
        },
        { cohort: "2026-09-01", size: 2, periods: [p(0, 2, 100, 2, 47, 23.5), p(1, 1, 50, 1, 60, 53.5)] },
        { cohort: "2026-10-01", size: 0, periods: [p(0, 0, null, 0, 0, null)] },
      ],
      average: [
        { ...p(0, 4, 100, 4, 157, 39.25), cohorts: 3 },
        { ...p(1, 2, 50, 2, 75, 58), cohorts: 2 },
        { ...p(2, 2, 100, 3, 85, 105), cohorts: 1 },
      ],
    });

    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("b-early", "2026-08-25T10:00:00Z", "USD", 20, of("cust-b")),
        order("a3", "2026-09-12T09:00:00Z", "USD", 30, {
          ...of("cust-a"),
          updatedAt: "2026-10-05T00:00:00Z",
        }),
        order("c1", "2026-10-03T08:00:00Z", "USD", 25, of("cust-c")),
      ],
    });
    const late = {
      cohorts: [
        {
          cohort: "2026-08-01",
          size: 3,
          periods: [p(0, 3, 100, 3, 130, 43.33), p(1, 3, 100, 3, 85, 71.67), p(2, 3, 100, 3, 115, 110)],
        },
        { cohort: "2026-09-01", size: 1, periods: [p(0, 1, 100, 1, 7, 7), p(1, 0, 0, 0, 0, 7)] },
        { cohort: "2026-10-01", size: 1, periods: [p(0, 1, 100, 1, 25, 25)] },
      ],
      average: [
        { ...p(0, 5, 100, 5, 162, 32.4), cohorts: 3 },
        { ...p(1, 3, 75, 3, 85, 55.5), cohorts: 2 },
        { ...p(2, 3, 100, 3, 115, 110), cohorts: 1 },
      ],
    };
    await expectAnswer("late data, not refreshed", late);

    await app.services.derivedWorker.runOnce(0);
    const rebuilt = await cohortBuild(px.pixelId);
    expect
      .soft(rebuilt, "the refresh keeps the pixel's cohort cells")
      .toMatchObject({ cellsTable: true, cellRows: true });
    // Order rows arrived after the first build's cutoff: runOnce(0) (settling) builds again.
    expect
      .soft(
        rebuilt.latestBuild,
        "runOnce(0) after order rows past the cutoff: a newer build in cohort_builds",
      )
      .toBeGreaterThan(built.latestBuild);
    await expectAnswer("refreshed", late);
  });

  it("a cohort emptied by late data converts nothing: no rate is missing (worked example)", async () => {
    // Week cohorts in UTC, in GBP (a rate from 10-01 only: 0.8 per USD), from Mon 09-28 to 10-04,
    // 2 periods. cust-e orders e1 on Tue 09-29 (USD 10), cust-f f1 on 10-02 (USD 20 = GBP 16). Built:
    // e1 needs a GBP rate on 09-29 — a 400 naming GBP, on both paths. Then, not refreshed, cust-e
    // orders e0 on 09-10 (USD 5): their cohort is the week of 09-07, out of the range, and no order
    // left in the range needs a rate before 10-01. The week of 09-28, size 1 (cust-f): p0 1 retained,
    // 1 order, GBP 16, LTV 16; p1 (the week of 10-05, begun by now) empty, LTV 16. The cells' form
    // takes cust-e's 09-29 contribution back out; the cell it leaves empty must not ask for a rate.
    const { px, post } = await newPixel();
    const of = (id: string) => ({ customer: { id } });
    await loadRaw(app, px.pixelId, px, {
      orders: [
        order("e1", "2026-09-29T12:00:00Z", "USD", 10, of("cust-e")),
        order("f1", "2026-10-02T12:00:00Z", "USD", 20, of("cust-f")),
      ],
    });
    await app.services.derivedWorker.runOnce(0);
    const body = {
      dateRange: { start: "2026-09-28", end: "2026-10-04" },
      cohortGranularity: "week",
      periods: 2,
      timezone: "UTC",
      currency: "GBP",
      measures: ["customers.retained", "orders.count", "orders.total_revenue", "customers.ltv"],
    };
    const both = async () => {
      const { derived, raw } = await answers(post, { path: COHORTS, body });
      expect(derived, `raw: ${JSON.stringify(raw)}`).toEqual(raw);
      return raw as { status: number; body: { message?: string; cohorts?: Body[] } };
    };
    const built = await both();
    expect(built.status).toBe(400);
    expect(JSON.stringify(built.body)).toContain("GBP");

    await loadRaw(app, px.pixelId, px, {
      orders: [order("e0", "2026-09-10T12:00:00Z", "USD", 5, of("cust-e"))],
    });
    const answer = [
      {
        cohort: "2026-09-28",
        start: "2026-09-28T00:00:00Z",
        end: "2026-10-05T00:00:00Z",
        size: 1,
        periods: [
          {
            period: 0,
            "customers.retained": 1,
            "orders.count": 1,
            "orders.total_revenue": 16,
            "customers.ltv": 16,
          },
          {
            period: 1,
            "customers.retained": 0,
            "orders.count": 0,
            "orders.total_revenue": 0,
            "customers.ltv": 16,
          },
        ],
      },
    ];
    const late = await both();
    expect({ status: late.status, cohorts: late.body.cohorts }).toEqual({ status: 200, cohorts: answer });
    await app.services.derivedWorker.runOnce(0);
    const refreshed = await both();
    expect({ status: refreshed.status, cohorts: refreshed.body.cohorts }).toEqual({
      status: 200,
      cohorts: answer,
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
