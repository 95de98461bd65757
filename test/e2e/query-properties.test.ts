/**
 * Property tests of attribution (docs/query.md, "Attribution"),
 * each run on a fresh pixel loaded through the public paths (events over HTTP, orders through sync):
 *
 * - last_click and first_click: attributed orders over all dimension values, `(none)` included,
 *   equal the counted orders, and attributed revenue their net revenue;
 * - any_click ≥ last_click for every dimension value;
 * - a wider window never attributes fewer orders;
 * - and, with distinct touch times, the credit of last_click and first_click equals a reference
 *   computed here from the generated journeys;
 * - converting to a currency and back returns the original within rounding.
 *
 * Customers touch the shop with UTM landings over ~50 days before a 3-day range and order inside
 * it; some touches are on an anonymous identity that is merged with the customer's only after the
 * orders arrived.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { event, fxRate, order, poster, refund, storeCustomer, sums, touch } from "./query-fixtures.js";
import { type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
beforeAll(async () => {
  suite = await startQuerySuite({ env: { RATE_QUERY_PER_SEC: "10000", RATE_INGEST_PER_SEC: "10000" } });
  ({ app } = suite);
});
afterAll(() => app?.close());

const RANGE_START = Date.parse("2026-10-10T00:00:00Z");
const RANGE_END = Date.parse("2026-10-13T00:00:00Z");
const MINUTE = 60_000;
const DAY = 86_400_000;
const SOURCES = ["google", "facebook", "klaviyo", "tiktok"] as const;
const MEDIUM: Record<(typeof SOURCES)[number], string> = {
  google: "cpc",
  facebook: "paid_social",
  klaviyo: "email",
  tiktok: "paid_social",
};
const WINDOWS = [1, 7, 30, -1] as const;

interface Journey {
  customers: { late: boolean }[];
  touches: { customer: number; at: number; source: (typeof SOURCES)[number] }[];
  orders: { customer: number; at: number; cents: number; pending: boolean; refundCents: number }[];
}

/** Minutes from 50 days before the range to its end; distinct so no two touches tie. */
const journey: fc.Arbitrary<Journey> = fc.integer({ min: 1, max: 4 }).chain((n) =>
  fc.record({
    customers: fc.array(fc.record({ late: fc.boolean() }), { minLength: n, maxLength: n }),
    touches: fc.uniqueArray(
      fc.record({
        customer: fc.integer({ min: 0, max: n - 1 }),
        at: fc
          .integer({ min: (RANGE_START - 50 * DAY) / MINUTE, max: RANGE_END / MINUTE - 1 })
          .map((m) => m * MINUTE),
        source: fc.constantFrom(...SOURCES),
      }),
      { maxLength: 8, selector: (t) => t.at },
    ),
    orders: fc.uniqueArray(
      fc.record({
        customer: fc.integer({ min: 0, max: n - 1 }),
        at: fc.integer({ min: RANGE_START / MINUTE, max: RANGE_END / MINUTE - 1 }).map((m) => m * MINUTE),
        cents: fc.integer({ min: 1, max: 50_000 }),
        pending: fc.integer({ min: 0, max: 9 }).map((x) => x < 2), // about one order in five
        refundCents: fc.nat({ max: 1000 }),
      }),
      { minLength: 1, maxLength: 6, selector: (o) => o.at },
    ),
  }),
);

const iso = (ms: number) => new Date(ms).toISOString();

/** Loads a journey into a new pixel through the public paths; returns a poster for it. */
async function load(j: Journey) {
  const { post, load: store } = await suite.pixel(["analytics:read", "events:write"]);
  const ref = (c: number) => `cust-${c}`;
  const touches = j.touches.map((t, i) =>
    touch(`anon-${t.customer}`, iso(t.at), `utm_source=${t.source}&utm_medium=${MEDIUM[t.source]}`, {
      eventId: `t${i}`,
      // early-linked customers' touches carry the store id; late ones only their anonymous id
      ...(j.customers[t.customer]!.late ? {} : storeCustomer(ref(t.customer))),
    }),
  );
  if (touches.length) await store.events(touches);
  await store.orders(
    j.orders.map((o, i) =>
      order(`o${i}`, iso(o.at), "USD", o.cents / 100, {
        customer: { id: ref(o.customer) },
        ...(o.pending ? { financialStatus: "pending" } : {}),
      }),
    ),
  );
  const refunds = j.orders.flatMap((o, i) =>
    o.refundCents > 0 && o.refundCents < o.cents
      ? [refund(`r${i}`, `o${i}`, iso(o.at + MINUTE), o.refundCents / 100)]
      : [],
  );
  if (refunds.length) await store.refunds(refunds);
  // late customers' anonymous identities merge with their store id only now
  const merges = j.customers.flatMap((c, i) =>
    c.late ? [event("page_view", `anon-${i}`, iso(RANGE_END + DAY), storeCustomer(ref(i)))] : [],
  );
  if (merges.length) await store.events(merges);
  return post;
}

/** What the models credit, computed from the journey: source (or `(none)`) → [orders, cents]. */
function reference(j: Journey, model: "first_click" | "last_click", window: number) {
  const out: Record<string, [number, number]> = {};
  j.orders.forEach((o) => {
    if (o.pending) return;
    const net = o.cents - (o.refundCents > 0 && o.refundCents < o.cents ? o.refundCents : 0);
    const inWindow = j.touches
      .filter((t) => t.customer === o.customer && t.at <= o.at && (window < 0 || t.at > o.at - window * DAY))
      .sort((a, b) => a.at - b.at);
    const pick = model === "first_click" ? inWindow[0] : inWindow.at(-1);
    const key = pick ? pick.source : "(none)";
    const cur = out[key] ?? [0, 0];
    out[key] = [cur[0] + 1, cur[1] + net];
  });
  return Object.fromEntries(Object.entries(out).map(([k, [n, c]]) => [k, [n, c / 100]]));
}

describe("attribution invariants over generated journeys", () => {
  it("reconcile, any ≥ last, wider windows credit no fewer, and match the reference", async () => {
    let creditedRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        journey,
        fc.constantFrom(0, 1, 2),
        fc.constantFrom(1, 2, 3),
        async (j, narrowAt, widerBy) => {
          const post = await load(j);
          const narrow = WINDOWS[narrowAt]!;
          const wide = WINDOWS[Math.min(narrowAt + widerBy, WINDOWS.length - 1)]!;
          const run = async (model: string, window: number) => {
            const res = await post(
              {
                dimension: "attribution.source",
                dateRange: { start: "2026-10-10", end: "2026-10-12" },
                timezone: "UTC",
                attributionModel: model,
                attributionWindow: window,
              },
              { path: "/db-mgmt/api/query-attribution" },
            );
            return { orders: sums(res, "attribution.orders"), revenue: sums(res, "attribution.revenue") };
          };
          const counted = j.orders.filter((o) => !o.pending);
          const netCents = counted.reduce(
            (s, o) => s + o.cents - (o.refundCents > 0 && o.refundCents < o.cents ? o.refundCents : 0),
            0,
          );
          const sum = (r: Record<string, number | null>) =>
            Object.values(r).reduce<number>((s, v) => s + (v ?? 0), 0);

          const last = await run("last_click", narrow);
          const first = await run("first_click", narrow);
          const any = await run("any_click", narrow);
          const lastWide = await run("last_click", wide);
          for (const [name, r] of [
            ["last_click", last],
            ["first_click", first],
            ["last_click wide", lastWide],
          ] as const) {
            expect(sum(r.orders), `${name}: orders reconcile`).toBe(counted.length);
            expect(Math.round(sum(r.revenue) * 100), `${name}: revenue reconciles`).toBe(netCents);
          }
          for (const [value, n] of Object.entries(last.orders)) {
            expect(any.orders[value] ?? 0, `any_click ≥ last_click for ${value}`).toBeGreaterThanOrEqual(
              n ?? 0,
            );
          }
          const attributed = (r: Record<string, number | null>) => sum(r) - (r["(none)"] ?? 0);
          expect(attributed(lastWide.orders), `window ${wide} ≥ window ${narrow}`).toBeGreaterThanOrEqual(
            attributed(last.orders),
          );
          const pairs = (r: {
            orders: Record<string, number | null>;
            revenue: Record<string, number | null>;
          }) => Object.fromEntries(Object.keys(r.orders).map((k) => [k, [r.orders[k], r.revenue[k]]]));
          expect(pairs(last), "last_click reference").toEqual(reference(j, "last_click", narrow));
          expect(pairs(first), "first_click reference").toEqual(reference(j, "first_click", narrow));
          if (attributed(lastWide.orders) > 0) creditedRuns++;
        },
      ),
      { numRuns: 20 },
    );
    // the generator makes journeys where touches do get credit (not only (none))
    expect(creditedRuns).toBeGreaterThan(0);
  });
});

describe("currency round trip over generated amounts and rates", () => {
  let run = 0;
  it("USD → X → USD returns each day's amount within the rounding of the X figure", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.integer({ min: 20, max: 20_000 }).map((r) => r / 100),
          { minLength: 3, maxLength: 3 },
        ),
        fc.array(
          fc.record({ day: fc.integer({ min: 0, max: 3 }), cents: fc.integer({ min: 1, max: 10_000_000 }) }),
          { minLength: 1, maxLength: 6 },
        ),
        async (rates, amounts) => {
          // a currency of this run only (rates are global): QAA, QAB, …
          const code = `Q${String.fromCharCode(65 + Math.floor(run / 26))}${String.fromCharCode(65 + (run % 26))}`;
          run++;
          const day = (d: number) => `2026-10-0${d + 1}`;
          // rates on days 0..2; day 3 falls back to day 2's
          await suite.load.fxRates(rates.map((unitsPerUsd, d) => fxRate(day(d), code, unitsPerUsd)));
          const rateOf = (d: number) => rates[Math.min(d, 2)]!;
          const { px: usd, load: loadUsd } = await suite.pixel();
          await loadUsd.orders(
            amounts.map((a, i) => order(`u${i}`, `${day(a.day)}T12:00:00Z`, "USD", a.cents / 100)),
          );
          const range = { start: day(0), end: day(3) };
          const daily = async (p: ReturnType<typeof poster>, currency: string) => {
            const res = await p({
              measures: ["orders.total_revenue"],
              dateRange: range,
              granularity: "day",
              timezone: "UTC",
              currency,
            });
            expect(res.status, res.text).toBe(200);
            return (
              res.body as { results: { data: { primary: Record<string, number>[] } }[] }
            ).results[0]!.data.primary.map((r) => r["orders.total_revenue"]!);
          };
          const inX = await daily(poster(app, usd), code);
          const { px: other, load: loadOther } = await suite.pixel();
          await loadOther.orders(
            inX.flatMap((v, d) => (v > 0 ? [order(`x${d}`, `${day(d)}T12:00:00Z`, code, v)] : [])),
          );
          const back = await daily(poster(app, other), "USD");
          for (let d = 0; d < 4; d++) {
            const original = amounts.filter((a) => a.day === d).reduce((s, a) => s + a.cents, 0) / 100;
            const tolerance = 0.005 / rateOf(d) + 0.005 + 1e-9;
            expect(
              Math.abs(back[d]! - original),
              `day ${d}: ${original} → ${inX[d]} ${code} → ${back[d]}`,
            ).toBeLessThanOrEqual(tolerance);
          }
        },
      ),
      { numRuns: 15 },
    );
  });
});
