/**
 * Weekly cohorts in America/New_York, in EUR, on a hand-computed store: a customer's cohort is the
 * local week of their first counted order ever, a customer who ordered before the range stays out
 * even with orders inside it, a pending order does not start a cohort, several orders of one
 * customer in one period count once as retained, and the week boundaries follow DST.
 *
 * EUR 0.8 per USD throughout: a USD amount × 0.8 in EUR. New York is UTC−5 until Sunday Mar 8 02:00,
 * UTC−4 after, so the week of Mon Mar 2 runs from 00:00−05:00 to Mon Mar 9 00:00−04:00 (answered in local offsets).
 *
 *   c1  a1 2026-03-02T03:00Z = Sun Mar 1 22:00 local → first order in the week of Feb 23: no cohort
 *       (a2 inside the range changes nothing; under UTC, a1 would open the week of Mar 2)
 *   c2  b1 Mar 2 01:00 local 100 USD, b2 Mar 4 50 USD (period 0); b3 Mar 16, b4 Mar 17, 25 USD each (period 2)
 *   c3  d1 2026-03-09T03:30Z = Sun Mar 8 23:30 local, 40 USD → week of Mar 2; d2 Mar 10 60 USD (period 1)
 *   c4  e1 Mar 10 80 EUR → week of Mar 9
 *   c5  p1 Mar 3 pending (not counted), p2 Mar 11 20 USD → week of Mar 9
 *
 * Week of Mar 2, size 2 (c2, c3): p0 retained 2, 3 orders, 190 USD = 152 EUR, LTV 76;
 *   p1 retained 1 (c3), 1 order, 48 EUR, LTV 100; p2 retained 1 (c2), 2 orders, 40 EUR, LTV 120.
 * Week of Mar 9, size 2 (c4, c5): p0 retained 2, 2 orders, 80 + 16 = 96 EUR, LTV 48; p1 and p2 empty.
 * Pooled: p0 retained 4 of 4, 5 orders, 248 EUR, LTV 62; p1 1 of 4, 48 EUR, LTV 74; p2 1 of 4,
 *   2 orders, 40 EUR, LTV 84.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
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
    order("a1", "2026-03-02T03:00:00Z", "USD", 10, c("c1")),
    order("a2", "2026-03-03T15:00:00Z", "USD", 10, c("c1")),
    order("b1", "2026-03-02T06:00:00Z", "USD", 100, c("c2")),
    order("b2", "2026-03-04T12:00:00Z", "USD", 50, c("c2")),
    order("b3", "2026-03-16T12:00:00Z", "USD", 25, c("c2")),
    order("b4", "2026-03-17T12:00:00Z", "USD", 25, c("c2")),
    order("d1", "2026-03-09T03:30:00Z", "USD", 40, c("c3")),
    order("d2", "2026-03-10T12:00:00Z", "USD", 60, c("c3")),
    order("e1", "2026-03-10T12:00:00Z", "EUR", 80, c("c4")),
    order("p1", "2026-03-03T12:00:00Z", "USD", 500, { ...c("c5"), financialStatus: "pending" }),
    order("p2", "2026-03-11T12:00:00Z", "USD", 20, c("c5")),
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

it("weekly cohorts in New York, in EUR: first counted order ever, retention counted once per period", async () => {
  const res = await post(
    {
      dateRange: { start: "2026-03-02", end: "2026-03-15" },
      cohortGranularity: "week",
      periods: 3,
      timezone: "America/New_York",
      currency: "EUR",
    },
    { path: "/db-mgmt/api/query-cohort-analysis" },
  );
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
      size: 2,
      periods: [period(0, 2, 100, 2, 96, 48), period(1, 0, 0, 0, 0, 48), period(2, 0, 0, 0, 0, 48)],
    },
  ]);
  expect(body.average.periods).toEqual([
    { ...period(0, 4, 100, 5, 248, 62), cohorts: 2 },
    { ...period(1, 1, 25, 1, 48, 74), cohorts: 2 },
    { ...period(2, 1, 25, 2, 40, 84), cohorts: 2 },
  ]);
});
