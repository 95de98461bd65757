/**
 * Weekly cohorts in America/New_York, in EUR, on a hand-computed store: a customer's cohort is the
 * local week of their first counted order ever, a customer who ordered before the range stays out
 * even with orders inside it, a pending order does not start a cohort, several orders of one
 * customer in one period (two of them at the same instant) count once as retained, an order past the
 * last period is left out, and the week boundaries follow DST.
 *
 * EUR 0.8 per USD throughout: a USD amount × 0.8 in EUR. New York is UTC−5 until Sunday Mar 8 02:00,
 * UTC−4 after, so the week of Mon Mar 2 runs from 00:00−05:00 to Mon Mar 9 00:00−04:00 (answered in
 * local offsets).
 *
 *   c1  a1 2026-03-02T03:00Z = Sun Mar 1 22:00 local, 1 USD → first order in the week of Feb 23: no
 *       cohort (a2 Mar 3, 10 USD, inside the range changes nothing; under UTC, a1 would open Mar 2)
 *   c2  b1 Mar 2 01:00 local 100 USD, b2 Mar 4 50 USD (period 0); b3 Mar 16, b4 Mar 17, 25 USD each
 *       (period 2); b5 Mar 24, 30 USD (period 3: past the 3 periods asked, left out)
 *   c3  d1 2026-03-09T03:30Z = Sun Mar 8 23:30 local, 40 USD → week of Mar 2; d2 Mar 10 60 USD (period 1)
 *   c4  e1 and e2 both at Mar 10 12:00Z, 80 + 20 EUR → week of Mar 9 (retained once)
 *   c5  p1 Mar 3 pending (not counted), p2 Mar 11 20 USD → week of Mar 9
 *   c6  f1 2026-03-09T04:30Z = Mon Mar 9 00:30 EDT (Sun 23:30 at a fixed −05:00), 20 USD → week of Mar 9
 *
 * Week of Mar 2, size 2 (c2, c3): p0 retained 2, 3 orders, 190 USD = 152 EUR, LTV 76;
 *   p1 retained 1 (c3), 1 order, 48 EUR, LTV 100; p2 retained 1 (c2), 2 orders, 40 EUR, LTV 120.
 * Week of Mar 9, size 3 (c4, c5, c6): p0 retained 3, 4 orders, 100 + 16 + 16 = 132 EUR, LTV 44;
 *   p1 and p2 empty.
 * Pooled over 5 customers: p0 retained 5, 7 orders, 284 EUR, LTV 56.8; p1 retained 1 (20 %), 48 EUR,
 *   LTV 66.4; p2 retained 1, 2 orders, 40 EUR, LTV 74.4.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { fxRate, type Json, order } from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let post: Poster;

beforeAll(async () => {
  const suite = await startQuerySuite({ scopes: ["analytics:read", "sync:write"] });
  ({ app, post } = suite);
  await suite.load.fxRates([fxRate("2026-02-01", "EUR", 0.8)]);
  const c = (id: string) => ({ customer: { id } });
  await suite.load.orders([
    order("a1", "2026-03-02T03:00:00Z", "USD", 1, c("c1")),
    order("a2", "2026-03-03T15:00:00Z", "USD", 10, c("c1")),
    order("b1", "2026-03-02T06:00:00Z", "USD", 100, c("c2")),
    order("b2", "2026-03-04T12:00:00Z", "USD", 50, c("c2")),
    order("b3", "2026-03-16T12:00:00Z", "USD", 25, c("c2")),
    order("b4", "2026-03-17T12:00:00Z", "USD", 25, c("c2")),
    order("b5", "2026-03-24T12:00:00Z", "USD", 30, c("c2")),
    order("d1", "2026-03-09T03:30:00Z", "USD", 40, c("c3")),
    order("d2", "2026-03-10T12:00:00Z", "USD", 60, c("c3")),
    order("e1", "2026-03-10T12:00:00Z", "EUR", 80, c("c4")),
    order("e2", "2026-03-10T12:00:00Z", "EUR", 20, c("c4")),
    order("p1", "2026-03-03T12:00:00Z", "USD", 500, { ...c("c5"), financialStatus: "pending" }),
    order("p2", "2026-03-11T12:00:00Z", "USD", 20, c("c5")),
    order("f1", "2026-03-09T04:30:00Z", "USD", 20, c("c6")),
    // The first days the engine's dates can hold: a cohort there is sized like any other.
    order("z1", "1970-01-01T12:00:00Z", "USD", 10, c("c9")),
    order("z2", "1970-01-20T12:00:00Z", "USD", 5, c("c9")),
  ]);
});
afterAll(() => app?.close());

const period = (p: number, retained: number, rate: number, orders: number, revenue: number, ltv: number) => ({
  period: p,
  "customers.retained": retained,
  "customers.retention_rate": rate,
  "orders.count": orders,
  "orders.total_revenue": revenue,
  "customers.ltv": ltv,
});

const weekly = (extra: Json = {}) =>
  post(
    {
      dateRange: { start: "2026-03-02", end: "2026-03-15" },
      cohortGranularity: "week",
      periods: 3,
      timezone: "America/New_York",
      currency: "EUR",
      ...extra,
    },
    { path: "/db-mgmt/api/query-cohort-analysis" },
  );

describe("cohort analysis", () => {
  it("weekly cohorts in New York, in EUR: first counted order ever, retention counted once per period", async () => {
    const res = await weekly();
    expect(res.status, res.text).toBe(200);
    const body = res.body as { cohorts: Json[]; average: { periods: Json[] } };
    expect(body.cohorts).toEqual([
      {
        cohort: "2026-03-02",
        start: "2026-03-02T00:00:00-05:00",
        end: "2026-03-09T00:00:00-04:00",
        size: 2,
        periods: [period(0, 2, 100, 3, 152, 76), period(1, 1, 50, 1, 48, 100), period(2, 1, 50, 2, 40, 120)],
      },
      {
        cohort: "2026-03-09",
        start: "2026-03-09T00:00:00-04:00",
        end: "2026-03-16T00:00:00-04:00",
        size: 3,
        periods: [period(0, 3, 100, 4, 132, 44), period(1, 0, 0, 0, 0, 44), period(2, 0, 0, 0, 0, 44)],
      },
    ]);
    expect(body.average.periods).toEqual([
      { ...period(0, 5, 100, 7, 284, 56.8), cohorts: 2 },
      { ...period(1, 1, 20, 1, 48, 66.4), cohorts: 2 },
      { ...period(2, 1, 20, 2, 40, 74.4), cohorts: 2 },
    ]);
  });

  it("a filter decides the first order: without a1 (1 USD), c1 enters the week of Mar 2 with a2", async () => {
    // c1's first order is now a2 (Mar 3, 10 USD = 8 EUR): week of Mar 2 grows to c1, c2, c3.
    const res = await weekly({ filters: { field: "orders.total_price", op: "gte", value: 5 } });
    expect(res.status, res.text).toBe(200);
    const [mar2] = (res.body as { cohorts: { cohort: string; size: number; periods: Json[] }[] }).cohorts;
    expect([mar2!.cohort, mar2!.size, mar2!.periods[0]]).toEqual([
      "2026-03-02",
      3,
      period(0, 3, 100, 4, 160, 53.33),
    ]);
  });

  it("a cohort in the first month the engine's dates hold is sized by its first orders like any other", async () => {
    const res = await post(
      {
        dateRange: { start: "1970-01-01", end: "1970-01-31" },
        cohortGranularity: "month",
        periods: 1,
        timezone: "UTC",
        currency: "USD",
      },
      { path: "/db-mgmt/api/query-cohort-analysis" },
    );
    expect(res.status, res.text).toBe(200);
    const [jan] = (res.body as { cohorts: { cohort: string; size: number; periods: Json[] }[] }).cohorts;
    expect([jan!.cohort, jan!.size, jan!.periods]).toEqual(["1970-01-01", 1, [period(0, 1, 100, 2, 15, 15)]]);
  });
});
