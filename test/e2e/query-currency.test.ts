/**
 * Currency conversion (docs/query.md, "Currency"): every amount converts at the rate of its own
 * UTC day, falling back to the latest earlier rate; an amount whose currency (or the target's) has no
 * rate on or before its day is a 400 naming the currency and the day — never a silent 1.0; the same
 * currency needs no rate; USD is the default; converting there and back returns the original within
 * rounding.
 *
 * Rates (units per USD): EUR 0.9 from Jun 1, 0.8 from Jun 3; GBP 0.75 from Jun 2 (none on Jun 1);
 * JPY 150 from Jun 1; CAD none at all.
 *
 * Orders of the main pixel (UTC):
 *   A  Jun 1 10:00  USD   100   → 100 USD
 *   B  Jun 1 12:00  EUR    90   → 90 / 0.9 = 100 USD
 *   C  Jun 2 10:00  EUR    45   → 45 / 0.9 (Jun 1's rate, the latest before Jun 2) = 50 USD
 *   D  Jun 3 10:00  EUR    40   → 40 / 0.8 = 50 USD
 *   E  Jun 3 11:00  GBP    30   → 30 / 0.75 = 40 USD
 *   G  Jun 3 01:00  EUR     8   → 8 / 0.8 = 10 USD (Jun 2 20:00 in New York, still Jun 3's rate)
 *   F  Jun 4 10:00  JPY  1234   → 1234 / 150 = 8.22666… USD
 *   refund R1 of B, Jun 3 09:00, EUR 18 → 18 / 0.8 = 22.5 USD (its own day's rate, not the order's)
 * Ad spend (campaign level, EUR): Jun 2 90 → 100 USD; Jun 3 40 → 50 USD.
 * A purchase event Jun 3 12:00 EUR 45 → 56.25 USD; a page view without value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  adMetric,
  event,
  expect400,
  fxRate,
  type Json,
  onlyResult,
  order,
  poster,
  type Response,
  refund,
  sums,
  total,
} from "./query-fixtures.js";
import { type Poster, type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
let post: Poster;

/** Campaign-level spend in EUR, as the platform reported it at the end of the day. */
const metric = (date: string, spend: number) =>
  adMetric({ platform: "facebook", entityId: "cmp1", accountId: "act1" }, date, "EUR", spend, {
    updatedAt: `${date}T23:00:00Z`,
  });

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, post } = suite);
  await suite.load.fxRates([
    fxRate("2026-06-01", "EUR", 0.9),
    fxRate("2026-06-03", "EUR", 0.8),
    fxRate("2026-06-02", "GBP", 0.75),
    fxRate("2026-06-01", "JPY", 150),
  ]);
  await suite.load.orders([
    order("A", "2026-06-01T10:00:00Z", "USD", 100),
    order("B", "2026-06-01T12:00:00Z", "EUR", 90),
    order("C", "2026-06-02T10:00:00Z", "EUR", 45),
    order("D", "2026-06-03T10:00:00Z", "EUR", 40),
    order("E", "2026-06-03T11:00:00Z", "GBP", 30),
    order("G", "2026-06-03T01:00:00Z", "EUR", 8),
    order("F", "2026-06-04T10:00:00Z", "JPY", 1234),
  ]);
  await suite.load.refunds([refund("R1", "B", "2026-06-03T09:00:00Z", 18, "EUR")]);
  await suite.load.adMetrics([metric("2026-06-02", 90), metric("2026-06-03", 40)]);
  await suite.load.events([
    event("purchase", "v1", "2026-06-03T12:00:00Z", { eventProperties: { value: 45, currency: "EUR" } }),
    event("page_view", "v1", "2026-06-03T11:00:00Z"),
  ]);
});
afterAll(() => app?.close());

const RANGE = { start: "2026-06-01", end: "2026-06-04" };
const MONEY = ["orders.total_revenue", "orders.refunds", "orders.net_revenue", "ads.spend", "events.value"];

function query(extra: Json, p = post): Promise<Response> {
  return p({
    measures: ["orders.total_revenue"],
    dateRange: RANGE,
    timezone: "UTC",
    granularity: "day",
    ...extra,
  });
}
const column = (res: Response, m = "orders.total_revenue") => onlyResult(res).data.primary.map((r) => r[m]);

describe("per-day conversion", () => {
  it("USD by default: each amount at its own day's rate, falling back to the latest earlier one", async () => {
    // Jun 1: A 100 + B 100 = 200; Jun 2: C 50; Jun 3: D 50 + E 40 + G 10 = 100; Jun 4: F 8.2267
    const res = await query({ measures: MONEY });
    expect(column(res)).toEqual([200, 50, 100, 8.23]);
    // 358.22666… in all
    expect(total(res, "orders.total_revenue")).toBe(358.23);
    // refund R1: 22.5 on Jun 3; net 358.2267 − 22.5 = 335.7267
    expect(column(res, "orders.refunds")).toEqual([0, 0, 22.5, 0]);
    expect(total(res, "orders.net_revenue")).toBe(335.73);
    // spend: Jun 2 90 / 0.9 = 100; Jun 3 40 / 0.8 = 50
    expect(column(res, "ads.spend")).toEqual([0, 100, 50, 0]);
    expect(total(res, "ads.spend")).toBe(150);
    // event value: 45 / 0.8 = 56.25 on Jun 3 (the page view has no value)
    expect(column(res, "events.value")).toEqual([0, 0, 56.25, 0]);
  });

  it("an explicit currency is the same as the default, in any letter case", async () => {
    const a = await query({ currency: "usd" });
    const b = await query({});
    expect(column(a)).toEqual(column(b));
  });

  it("EUR: USD amounts multiply by the day's EUR rate, other currencies cross through USD", async () => {
    // A 100 × 0.9 = 90; B 90 (same currency, no rate needed); C 45; D 40; E 30 / 0.75 × 0.8 = 32;
    // G 8; F 1234 / 150 (Jun 1's JPY) × 0.8 (Jun 3's EUR) = 6.58133…
    // Jun 1: 180; Jun 2: 45; Jun 3: 40 + 32 + 8 = 80; Jun 4: 6.58 → total 311.58133…
    const res = await query({ currency: "EUR", measures: MONEY });
    expect(column(res)).toEqual([180, 45, 80, 6.58]);
    expect(total(res, "orders.total_revenue")).toBe(311.58);
    expect(total(res, "orders.refunds")).toBe(18); // the refund is in EUR already
    expect(total(res, "ads.spend")).toBe(130); // 90 + 40, no conversion
    expect(total(res, "events.value")).toBe(45);
  });

  it("GBP from Jun 2 (GBP's first rate)", async () => {
    // C 45 / 0.9 × 0.75 = 37.5; D 40 / 0.8 × 0.75 = 37.5; E 30; G 8 / 0.8 × 0.75 = 7.5;
    // F 1234 / 150 × 0.75 = 6.17 → Jun 2: 37.5; Jun 3: 75; Jun 4: 6.17; total 118.67
    const res = await query({ currency: "GBP", dateRange: { start: "2026-06-02", end: "2026-06-04" } });
    expect(column(res)).toEqual([37.5, 75, 6.17]);
    expect(total(res, "orders.total_revenue")).toBe(118.67);
  });

  it("the rate is the amount's UTC day, whatever the query timezone", async () => {
    // New York: G (Jun 3 01:00 UTC) falls on Jun 2 but converts at Jun 3's 0.8 → 10, not 8.89.
    // Jun 2 (NY): C 50 + G 10 = 60; Jun 3 (NY): D 50 + E 40 = 90
    const res = await query({
      timezone: "America/New_York",
      dateRange: { start: "2026-06-02", end: "2026-06-03" },
    });
    expect(column(res)).toEqual([60, 90]);
  });
});

describe("attribution reconciles with revenue to the cent", () => {
  // Order B (EUR 90, Jun 1, EUR 0.9/USD) has a refund R1 (EUR 18, Jun 3, EUR 0.8/USD): in USD its net
  // revenue is 90 / 0.9 − 18 / 0.8 = 77.50, each amount at its own day's rate. Converting the refund
  // at the order's day gave 80.00 in attribution while orders.net_revenue said 77.50.
  it("Σ attributed revenue and orders of first and last click equal orders.net_revenue and orders.count, every window and currency", async () => {
    const settings = { refundDateAttribution: "order_date" };
    for (const currency of ["USD", "EUR"]) {
      const general = await query({
        measures: ["orders.count", "orders.net_revenue"],
        granularity: "none",
        currency,
        orderSettings: settings,
      });
      const count = total(general, "orders.count");
      const net = total(general, "orders.net_revenue");
      for (const model of ["first_click", "last_click"]) {
        for (const window of [1, 7, 30, -1]) {
          const res = await post(
            {
              dimension: "attribution.channel",
              dateRange: RANGE,
              timezone: "UTC",
              currency,
              attributionModel: model,
              attributionWindow: window,
              orderSettings: settings,
            },
            { path: "/db-mgmt/api/query-attribution" },
          );
          const revenue = Object.values(sums(res, "attribution.revenue")).reduce((a, b) => a! + (b ?? 0), 0)!;
          const orders = Object.values(sums(res, "attribution.orders")).reduce((a, b) => a! + (b ?? 0), 0);
          const at = `${currency} ${model} ${window}`;
          expect(Math.round(revenue * 100), at).toBe(Math.round(net! * 100));
          expect(orders, at).toBe(count);
        }
      }
    }
  });
});

describe("a latest earlier rate long before the range", () => {
  // A statement reads the rates from 62 days before its range (RATES_LOOKBACK_DAYS) and runs again
  // reading every rate when one is missing there: the answer is the same as reading every rate.
  // Rates: CHF 0.5 on 2025-01-10 only; SEK 10 on 2025-01-10 and 8 on 2026-05-20; EUR 0.8 from Jun 3.
  // Orders of a pixel of their own (UTC), each its own customer:
  //   M  Jun 5 10:00  CHF 100 → 100 / 0.5 (the 2025 rate, 511 days back) = 200 USD
  //   N  Jun 5 11:00  EUR  80 → 80 / 0.8 = 100 USD
  //   O  Jun 6 10:00  SEK  16 → 16 / 8 (May 20, inside the 62 days) = 2 USD
  //   refund of M, Jun 6 09:00, CHF 10 → 20 USD
  const range = { start: "2026-06-05", end: "2026-06-06" };
  let postOld: Poster;
  beforeAll(async () => {
    await suite.load.fxRates([
      fxRate("2025-01-10", "CHF", 0.5),
      fxRate("2025-01-10", "SEK", 10),
      fxRate("2026-05-20", "SEK", 8),
    ]);
    const { post: p, load } = await suite.pixel();
    postOld = p;
    await load.orders([
      order("M", "2026-06-05T10:00:00Z", "CHF", 100),
      order("N", "2026-06-05T11:00:00Z", "EUR", 80),
      order("O", "2026-06-06T10:00:00Z", "SEK", 16),
    ]);
    await load.refunds([refund("RM", "M", "2026-06-06T09:00:00Z", 10, "CHF")]);
  });

  it("converts at it, in the series, with the amount's currency or the target far back", async () => {
    const usd = await query(
      { dateRange: range, measures: ["orders.total_revenue", "orders.refunds"] },
      postOld,
    );
    expect(column(usd)).toEqual([300, 2]);
    expect(column(usd, "orders.refunds")).toEqual([0, 20]);
    // Into CHF (its only rate is the 2025 one): N 100 USD × 0.5 = 50; M 100; O 2 USD × 0.5 = 1; the
    // refund is in CHF already.
    const chf = await query(
      { dateRange: range, currency: "CHF", measures: ["orders.total_revenue", "orders.refunds"] },
      postOld,
    );
    expect(column(chf)).toEqual([150, 1]);
    expect(total(chf, "orders.refunds")).toBe(10);
  });

  it("reads the rates from 62 days before the range's first day, a parameter of its own", async () => {
    const res = await post(
      { dateRange: range, measures: ["orders.total_revenue"], timezone: "UTC" },
      { path: "/db-mgmt/api/query?explain=true" },
    );
    expect(res.status, res.text).toBe(200);
    const [first] = (res.body as { explain: { statements: { sql: string; params: Json }[] } }).explain
      .statements;
    expect(first!.sql).toContain("FROM fx_rates WHERE date >= {rates_from:Date}");
    expect(first!.params.rates_from).toBe("2026-04-04");
  });

  it("attribution and cohorts convert at it too, and reconcile with the series", async () => {
    // Net revenue 302 − 20 = 282 USD; in CHF 151 − 10 = 141.
    for (const [currency, net] of [
      ["USD", 282],
      ["CHF", 141],
    ] as const) {
      const res = await postOld(
        {
          dimension: "attribution.channel",
          dateRange: range,
          timezone: "UTC",
          currency,
          attributionModel: "last_click",
          attributionWindow: 30,
        },
        { path: "/db-mgmt/api/query-attribution" },
      );
      expect(res.status, res.text).toBe(200);
      const revenue = Object.values(sums(res, "attribution.revenue")).reduce((a, b) => a! + (b ?? 0), 0)!;
      expect(Math.round(revenue * 100), currency).toBe(net * 100);
    }
    const cohorts = await postOld(
      { dateRange: range, cohortGranularity: "month", periods: 1, timezone: "UTC", currency: "CHF" },
      { path: "/db-mgmt/api/query-cohort-analysis" },
    );
    expect(cohorts.status, cohorts.text).toBe(200);
    const [june] = (cohorts.body as { cohorts: { size: number; periods: Json[] }[] }).cohorts;
    expect(june!.size).toBe(3);
    expect(june!.periods[0]!["orders.total_revenue"]).toBe(151);
  });
});

describe("missing rates", () => {
  it("a target currency without a rate on or before an amount's day is a 400 naming both", async () => {
    // A (USD, Jun 1) → GBP needs a GBP rate on or before Jun 1: there is none
    expect400(await query({ currency: "GBP" }), "GBP", "2026-06-01");
    // a currency with no rate at all
    expect400(await query({ currency: "CAD" }), "CAD", "2026-06-01");
  });

  it("counts need no rate: orders.count over amounts without a rate answers, revenue still refuses", async () => {
    // CAD has no rate at all, and the target (GBP) has none before Jun 2: a count converts nothing.
    const { post: post3, load } = await suite.pixel();
    await load.orders([
      order("K", "2026-06-01T10:00:00Z", "CAD", 70),
      order("L", "2026-06-02T10:00:00Z", "CAD", 30),
    ]);
    const count = await query({ measures: ["orders.count"], currency: "GBP" }, post3);
    expect(count.status, count.text).toBe(200);
    expect(total(count, "orders.count")).toBe(2);
    expect400(
      await query({ measures: ["orders.count", "orders.total_revenue"], currency: "GBP" }, post3),
      "2026-06-01",
    );
  });

  it("an amount's own currency without a rate is a 400 naming it and its day; the same currency needs none", async () => {
    const { post: post2, load } = await suite.pixel();
    await load.orders([
      order("H", "2026-06-01T10:00:00Z", "GBP", 10), // before GBP's first rate
      order("I", "2026-06-05T10:00:00Z", "CAD", 50), // CAD has no rate at all
    ]);
    expect400(
      await query({ dateRange: { start: "2026-06-01", end: "2026-06-01" } }, post2),
      "GBP",
      "2026-06-01",
    );
    expect400(
      await query({ dateRange: { start: "2026-06-05", end: "2026-06-05" } }, post2),
      "CAD",
      "2026-06-05",
    );
    // the earliest day without a rate is named when there are several
    expect400(await query({ dateRange: { start: "2026-06-01", end: "2026-06-05" } }, post2), "2026-06-01");
    // in their own currencies no rate is needed
    expect(
      column(await query({ currency: "GBP", dateRange: { start: "2026-06-01", end: "2026-06-01" } }, post2)),
    ).toEqual([10]);
    expect(
      column(await query({ currency: "CAD", dateRange: { start: "2026-06-05", end: "2026-06-05" } }, post2)),
    ).toEqual([50]);
    // a range holding no amount needs no rate either
    expect(
      column(await query({ currency: "CAD", dateRange: { start: "2026-06-02", end: "2026-06-02" } }, post2)),
    ).toEqual([0]);
  });

  it("a missing rate for an ad spend is a 400 too", async () => {
    const { px: other, load } = await suite.pixel();
    await load.adMetrics([{ ...metric("2026-06-02", 10), currency: "CAD" }]);
    expect400(await query({ measures: ["ads.spend"] }, poster(app, other)), "CAD", "2026-06-02");
  });
});

describe("round trip", () => {
  it("USD → EUR → USD returns the original amounts within rounding", async () => {
    // Amounts with awkward cents on days of both EUR rates and of the fallback between them.
    const amounts: [string, number][] = [
      ["2026-06-01", 123.46],
      ["2026-06-02", 0.07],
      ["2026-06-03", 9999.99],
      ["2026-06-04", 1.01],
      ["2026-06-05", 333.31],
    ];
    const { px: usd, load: loadUsd } = await suite.pixel();
    await loadUsd.orders(amounts.map(([day, v], i) => order(`u${i}`, `${day}T12:00:00Z`, "USD", v)));
    const range = { start: "2026-06-01", end: "2026-06-05" };
    const inEur = column(await query({ currency: "EUR", dateRange: range }, poster(app, usd))) as number[];
    // 123.46 × 0.9 = 111.114 → 111.11; 0.07 × 0.9 (fallback) = 0.063 → 0.06; 9999.99 × 0.8 = 7999.992
    // → 7999.99; 1.01 × 0.8 = 0.808 → 0.81; 333.31 × 0.8 = 266.648 → 266.65
    expect(inEur).toEqual([111.11, 0.06, 7999.99, 0.81, 266.65]);
    const { px: eur, load: loadEur } = await suite.pixel();
    await loadEur.orders(inEur.map((v, i) => order(`e${i}`, `${amounts[i]![0]}T12:00:00Z`, "EUR", v)));
    const back = column(await query({ currency: "USD", dateRange: range }, poster(app, eur))) as number[];
    // back within one cent of the rate's precision: |x − original| ≤ 0.005 / rate + 0.005 ≤ 0.0113
    for (const [i, v] of back.entries())
      expect(Math.abs(v - amounts[i]![1]), `day ${i}`).toBeLessThanOrEqual(0.0113);
    // 111.11 / 0.9 = 123.4556 → 123.46; 0.06 / 0.9 = 0.0667 → 0.07; 7999.99 / 0.8 = 9999.9875 → 9999.99;
    // 0.81 / 0.8 = 1.0125 → 1.01; 266.65 / 0.8 = 333.3125 → 333.31
    expect(back).toEqual([123.46, 0.07, 9999.99, 1.01, 333.31]);
  });
});

describe("a new rate", () => {
  it("a re-imported rate changes the figure at once (no stale cached answer)", async () => {
    const before = await query({ currency: "EUR", dateRange: { start: "2026-06-01", end: "2026-06-01" } });
    expect(column(before)).toEqual([180]); // 100 × 0.9 + 90
    await app.services.sync.upsert("fx-rates", null, [
      { date: "2026-06-01", currency: "EUR", unitsPerUsd: 0.95 },
    ]);
    const after = await query({ currency: "EUR", dateRange: { start: "2026-06-01", end: "2026-06-01" } });
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(column(after)).toEqual([185]); // 100 × 0.95 + 90
  });
});
