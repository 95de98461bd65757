/**
 * Cohorts over generated stores, against a reference computed here from the generated orders
 * (docs/query.md, "Cohorts"): each customer's first counted order ever decides their cohort (the
 * local week from Monday or month of the query's timezone), only customers whose first order falls in
 * the range have a cohort, period k is the k-th calendar week or month after the cohort's, and per
 * period `retained` counts the customers with an order in it, `orders` the orders, `total_revenue`
 * their totals in USD (EUR orders at 0.8 EUR per USD).
 *
 * Orders fall between mid-February and the end of May 2026, across both DST changes of New York and
 * Berlin, month edges and weeks; some are pending (never counted, never a first order), some
 * customers order twice at the same instant, and the range starts mid-week or mid-month.
 */
import { formatInTimeZone, fromZonedTime } from "date-fns-tz";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { fxRate, order } from "./query-fixtures.js";
import { type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
beforeAll(async () => {
  suite = await startQuerySuite({ env: { RATE_QUERY_PER_SEC: "10000" } });
  ({ app } = suite);
});
afterAll(() => app?.close());

const MINUTE = 60_000;
const FROM = Date.parse("2026-02-15T00:00:00Z") / MINUTE;
const TO = Date.parse("2026-06-01T00:00:00Z") / MINUTE;
const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata"] as const;

interface Order {
  customer: number;
  at: number;
  /** Multiples of 4, so an EUR amount is a whole number of USD cents (÷ 0.8). */
  cents: number;
  currency: "USD" | "EUR";
  pending: boolean;
}

const orderArb = (customers: number): fc.Arbitrary<Order> =>
  fc.record({
    customer: fc.integer({ min: 0, max: customers - 1 }),
    at: fc.integer({ min: FROM, max: TO - 1 }).map((m) => m * MINUTE),
    cents: fc.integer({ min: 1, max: 5000 }).map((c) => c * 4),
    currency: fc.constantFrom("USD", "EUR"),
    pending: fc.integer({ min: 0, max: 5 }).map((x) => x === 0),
  });

const storeArb = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc
    .array(orderArb(n), { minLength: 1, maxLength: 14 })
    // A customer's second order at the very instant of another of theirs.
    .chain((orders) =>
      fc
        .subarray(orders, { maxLength: Math.min(2, orders.length) })
        .map((twins) => [...orders, ...twins.map((o) => ({ ...o, cents: o.cents + 4 }))]),
    ),
);

const queryArb = fc
  .record({
    granularity: fc.constantFrom("week", "month"),
    timezone: fc.constantFrom(...ZONES),
    start: fc.constantFrom("2026-02-18", "2026-03-01", "2026-03-11", "2026-04-02"),
    end: fc.constantFrom("2026-03-31", "2026-04-15", "2026-05-20"),
    periods: fc.integer({ min: 1, max: 4 }),
  })
  .filter((q) => q.start <= q.end);

type Query = {
  granularity: "week" | "month";
  timezone: string;
  start: string;
  end: string;
  periods: number;
};

/** A calendar date "YYYY-MM-DD" as a UTC midnight, for date arithmetic without zones. */
const utcDate = (d: string) => Date.parse(`${d}T00:00:00Z`);
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DAY = 86_400_000;

/** The local bucket (its first calendar date) of an instant. */
function bucketOf(at: number, q: Query): string {
  const local = formatInTimeZone(at, q.timezone, "yyyy-MM-dd");
  if (q.granularity === "month") return `${local.slice(0, 8)}01`;
  const d = utcDate(local);
  return dateOf(d - ((new Date(d).getUTCDay() + 6) % 7) * DAY);
}

function periodsBetween(from: string, to: string, q: Query): number {
  if (q.granularity === "week") return Math.round((utcDate(to) - utcDate(from)) / (7 * DAY));
  const [fy, fm] = from.split("-").map(Number);
  const [ty, tm] = to.split("-").map(Number);
  return (ty! - fy!) * 12 + (tm! - fm!);
}

function nextBucket(b: string, q: Query): string {
  if (q.granularity === "week") return dateOf(utcDate(b) + 7 * DAY);
  const d = new Date(utcDate(b));
  return dateOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

interface Cell {
  retained: number;
  orders: number;
  revenue: number;
}

/** Every bucket the range touches → size and per-period cells, from the generated orders. */
function reference(orders: Order[], q: Query) {
  const start = fromZonedTime(`${q.start}T00:00:00`, q.timezone).getTime();
  const end = fromZonedTime(`${dateOf(utcDate(q.end) + DAY)}T00:00:00`, q.timezone).getTime();
  const counted = orders.filter((o) => !o.pending);
  const first = new Map<number, number>();
  for (const o of counted) first.set(o.customer, Math.min(first.get(o.customer) ?? Infinity, o.at));
  const out = new Map<string, { size: number; cells: Cell[] }>();
  for (let b = bucketOf(start, q); b <= bucketOf(end - 1, q); b = nextBucket(b, q)) {
    out.set(b, {
      size: 0,
      cells: Array.from({ length: q.periods }, () => ({ retained: 0, orders: 0, revenue: 0 })),
    });
  }
  for (const [customer, at] of first) {
    if (at < start || at >= end) continue;
    const cohort = out.get(bucketOf(at, q))!;
    cohort.size++;
    const seen = new Set<number>();
    for (const o of counted.filter((x) => x.customer === customer)) {
      const k = periodsBetween(bucketOf(at, q), bucketOf(o.at, q), q);
      if (k >= q.periods) continue;
      const cell = cohort.cells[k]!;
      if (!seen.has(k)) cell.retained++;
      seen.add(k);
      cell.orders++;
      cell.revenue += o.currency === "USD" ? o.cents : o.cents * 1.25;
    }
  }
  return [...out].map(([cohort, { size, cells }]) => ({
    cohort,
    size,
    periods: cells.map((c, k) => ({
      period: k,
      "customers.retained": c.retained,
      "orders.count": c.orders,
      "orders.total_revenue": Math.round(c.revenue) / 100,
    })),
  }));
}

it("cohorts equal a reference computed from the generated orders, in four zones, by week and month", async () => {
  await fc.assert(
    fc.asyncProperty(storeArb, queryArb, async (orders, q) => {
      const { post, load } = await suite.pixel(["analytics:read", "sync:write"]);
      await load.fxRates([fxRate("2026-01-01", "EUR", 0.8)]);
      await load.orders(
        orders.map((o, i) =>
          order(`o${i}`, new Date(o.at).toISOString(), o.currency, o.cents / 100, {
            customer: { id: `c${o.customer}` },
            ...(o.pending ? { financialStatus: "pending" } : {}),
          }),
        ),
      );
      const res = await post(
        {
          dateRange: { start: q.start, end: q.end },
          cohortGranularity: q.granularity,
          periods: q.periods,
          timezone: q.timezone,
          currency: "USD",
          measures: ["customers.retained", "orders.count", "orders.total_revenue"],
        },
        { path: "/db-mgmt/api/query-cohort-analysis" },
      );
      expect(res.status, res.text).toBe(200);
      const got = (res.body as { cohorts: { cohort: string; size: number; periods: unknown[] }[] }).cohorts;
      expect(got.map(({ cohort, size, periods }) => ({ cohort, size, periods }))).toEqual(
        reference(orders, q),
      );
    }),
    // Each run loads a pixel: no shrinking (the counterexample is printed as found).
    { numRuns: 12, endOnFailure: true },
  );
}, 240_000);
