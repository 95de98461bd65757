/**
 * Compare period and measureDetails (docs/query.md, "Compare period and measureDetails"): data.compare rows
 * aligned bucket by bucket with data.primary; primarySum / compareSum; primaryAvg / compareAvg as
 * the per-bucket average of additive measures and the ratio of sums for ratio measures (never an
 * average of per-bucket ratios); percentDiff, null when the compare figure is 0; the flags.
 *
 * USD orders (UTC):
 *   primary Jul 1..3   O1 Jul 1 10:00 100 US p1 · O2 Jul 1 11:00 50 DE p2 · O3 Jul 3 09:00 30 US p1
 *                      refund of O1 on Jul 2: 10
 *   compare Jun 24..26 C1 Jun 24 10:00 40 US q1 · C2 Jun 25 10:00 20 FR q2
 *
 *   primary by day: orders 2, 0, 1 = 3   revenue 150, 0, 30 = 180   AOV 75, null, 30 → 180 / 3 = 60
 *                   refunds 0, 10, 0 = 10   net 150, −10, 30 = 170
 *                   customers p1, p2 = 2; returning p1 (O3 is its 2nd order) → repeat rate 50 %
 *   compare by day: orders 1, 1, 0 = 2   revenue 40, 20, 0 = 60   AOV 40, 20, null → 60 / 2 = 30
 *                   refunds 0; net 60; customers 2, returning 0 → repeat rate 0 %
 *
 * Ad spend (USD): account acc1, campaign camp1: Jul 2 25 · Jun 25 5. Account acc2 reports its ad ad9
 * on Jul 3 (7) and only its campaign camp9 on Jun 24 (3): each account is read at the deepest level it
 * reports in each period, so both count. Page views: Jul 1 08:00 and 09:00 · Jun 26 09:00.
 *   primary by day: spend 0, 25, 7 = 32   page views 2, 0, 0
 *   compare by day: spend 3, 5, 0 = 8     page views 0, 0, 1
 *
 * Non-overlapping periods are answered by one statement per source (docs/query.md); a compare range
 * that overlaps the range is answered apart, so a shared day counts in both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  adMetric,
  byValue,
  type Detail,
  detail,
  event,
  type Json,
  onlyResult,
  order,
  refund,
} from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let post: Poster;

beforeAll(async () => {
  const suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, post } = suite);
  await suite.load.orders([
    order("O1", "2026-07-01T10:00:00Z", "USD", 100, { country: "US", customer: { id: "p1" } }),
    order("O2", "2026-07-01T11:00:00Z", "USD", 50, { country: "DE", customer: { id: "p2" } }),
    order("O3", "2026-07-03T09:00:00Z", "USD", 30, { country: "US", customer: { id: "p1" } }),
    order("C1", "2026-06-24T10:00:00Z", "USD", 40, { country: "US", customer: { id: "q1" } }),
    order("C2", "2026-06-25T10:00:00Z", "USD", 20, { country: "FR", customer: { id: "q2" } }),
  ]);
  await suite.load.refunds([refund("RP", "O1", "2026-07-02T10:00:00Z", 10)]);
  const camp1 = { platform: "facebook", entityId: "camp1", accountId: "acc1" };
  await suite.load.adMetrics([
    adMetric(camp1, "2026-07-02", "USD", 25, { campaignId: "camp1" }),
    adMetric(camp1, "2026-06-25", "USD", 5, { campaignId: "camp1" }),
    adMetric(
      { platform: "facebook", entityId: "ad9", accountId: "acc2", level: "ad" },
      "2026-07-03",
      "USD",
      7,
      {
        campaignId: "camp9",
        adsetId: "set9",
      },
    ),
    adMetric({ platform: "facebook", entityId: "camp9", accountId: "acc2" }, "2026-06-24", "USD", 3, {
      campaignId: "camp9",
    }),
  ]);
  await suite.load.events([
    event("page_view", "v1", "2026-07-01T08:00:00Z"),
    event("page_view", "v2", "2026-07-01T09:00:00Z"),
    event("page_view", "v3", "2026-06-26T09:00:00Z"),
  ]);
});
afterAll(() => app?.close());

const MEASURES = [
  "orders.count",
  "orders.total_revenue",
  "orders.aov",
  "orders.refunds",
  "orders.net_revenue",
  "customers.repeat_rate",
];
const PRIMARY = { start: "2026-07-01", end: "2026-07-03" };
const COMPARE = { start: "2026-06-24", end: "2026-06-26" };

function compareQuery(extra: Json = {}) {
  return post({
    measures: MEASURES,
    dateRange: PRIMARY,
    compareDateRange: COMPARE,
    granularity: "day",
    timezone: "UTC",
    ...extra,
  });
}

const figures = (d: Detail) => [d.primarySum, d.compareSum, d.primaryAvg, d.compareAvg, d.percentDiff];

describe("compare period", () => {
  it("compare rows are aligned bucket by bucket with the primary ones", async () => {
    const res = onlyResult(await compareQuery());
    expect(res.dateRange).toEqual(PRIMARY);
    expect(res.compareDateRange).toEqual(COMPARE);
    const pick = (rows: Record<string, unknown>[]) =>
      rows.map((r) => [r.dt, r.start, r.end, r["orders.count"], r["orders.total_revenue"], r["orders.aov"]]);
    expect(pick(res.data.primary)).toEqual([
      ["2026-07-01", "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z", 2, 150, 75],
      ["2026-07-02", "2026-07-02T00:00:00Z", "2026-07-03T00:00:00Z", 0, 0, null],
      ["2026-07-03", "2026-07-03T00:00:00Z", "2026-07-04T00:00:00Z", 1, 30, 30],
    ]);
    expect(pick(res.data.compare)).toEqual([
      ["2026-06-24", "2026-06-24T00:00:00Z", "2026-06-25T00:00:00Z", 1, 40, 40],
      ["2026-06-25", "2026-06-25T00:00:00Z", "2026-06-26T00:00:00Z", 1, 20, 20],
      ["2026-06-26", "2026-06-26T00:00:00Z", "2026-06-27T00:00:00Z", 0, 0, null],
    ]);
    // every measure has a key in every row of both periods
    for (const row of [...res.data.primary, ...res.data.compare])
      expect(Object.keys(row).sort()).toEqual(["dt", "end", "start", ...MEASURES].sort());
  });

  it("measureDetails: sums, averages (ratio of sums for ratios), percentDiff", async () => {
    const res = onlyResult(await compareQuery());
    expect(res.measureDetails.map((d) => d.measure)).toEqual(MEASURES);
    // [primarySum, compareSum, primaryAvg, compareAvg, percentDiff]
    // orders: 3 vs 2; per day 3 / 3 = 1 and 2 / 3 = 0.67; +50 %
    expect(figures(detail(res, "orders.count"))).toEqual([3, 2, 1, 0.67, 50]);
    // revenue: 180 vs 60; per day 60 and 20; +200 %
    expect(figures(detail(res, "orders.total_revenue"))).toEqual([180, 60, 60, 20, 200]);
    // AOV: 180 / 3 = 60 vs 60 / 2 = 30 — not the mean of the daily AOVs (75, 30 → 52.5); +100 %
    expect(figures(detail(res, "orders.aov"))).toEqual([60, 30, 60, 30, 100]);
    // refunds: 10 vs 0 → percentDiff null
    expect(figures(detail(res, "orders.refunds"))).toEqual([10, 0, 3.33, 0, null]);
    // net: 170 vs 60; 170 / 3 = 56.67; (170 − 60) / 60 = 183.33 %
    expect(figures(detail(res, "orders.net_revenue"))).toEqual([170, 60, 56.67, 20, 183.33]);
    // repeat rate: 1 / 2 = 50 % vs 0 / 2 = 0 % → percentDiff null
    expect(figures(detail(res, "customers.repeat_rate"))).toEqual([50, 0, 50, 0, null]);
  });

  it("measureDetails flags come from the catalog", async () => {
    const res = onlyResult(await compareQuery());
    const flags = (d: Detail) => ({
      isAverage: d.isAverage,
      isPercentage: d.isPercentage,
      calculatedAverage: d.calculatedAverage,
      hasPacing: d.hasPacing,
      success: d.success,
      preferredTrendDirection: d.preferredTrendDirection,
    });
    expect(flags(detail(res, "orders.count"))).toEqual({
      isAverage: false,
      isPercentage: false,
      calculatedAverage: false,
      hasPacing: true,
      success: true,
      preferredTrendDirection: "up",
    });
    expect(flags(detail(res, "orders.aov"))).toEqual({
      isAverage: true,
      isPercentage: false,
      calculatedAverage: true,
      hasPacing: false,
      success: true,
      preferredTrendDirection: "up",
    });
    expect(flags(detail(res, "orders.refunds"))).toMatchObject({
      isAverage: false,
      preferredTrendDirection: "down",
    });
    expect(flags(detail(res, "customers.repeat_rate"))).toMatchObject({
      isAverage: true,
      isPercentage: true,
    });
  });

  it("a falling figure has a negative percentDiff; no compare figure at all is null", async () => {
    // swap the periods: revenue 60 vs 180 → −66.67 %
    const swapped = onlyResult(
      await post({
        measures: ["orders.total_revenue", "orders.aov"],
        dateRange: COMPARE,
        compareDateRange: PRIMARY,
        granularity: "day",
        timezone: "UTC",
      }),
    );
    expect(detail(swapped, "orders.total_revenue").percentDiff).toBe(-66.67);
    expect(detail(swapped, "orders.aov").percentDiff).toBe(-50);
    // an empty compare period: AOV has no value (null), revenue is 0 → both percentDiff null
    const empty = onlyResult(
      await post({
        measures: ["orders.total_revenue", "orders.aov"],
        dateRange: PRIMARY,
        compareDateRange: { start: "2026-05-01", end: "2026-05-03" },
        granularity: "day",
        timezone: "UTC",
      }),
    );
    expect(figures(detail(empty, "orders.total_revenue"))).toEqual([180, 0, 60, 0, null]);
    expect(figures(detail(empty, "orders.aov"))).toEqual([60, null, 60, null, null]);
  });

  it("without a compare range: compare rows empty, compare figures null", async () => {
    const res = onlyResult(
      await post({ measures: ["orders.count"], dateRange: PRIMARY, granularity: "day", timezone: "UTC" }),
    );
    expect(res.data.compare).toEqual([]);
    expect(res.compareDateRange).toBeUndefined();
    expect(figures(detail(res, "orders.count"))).toEqual([3, null, 1, null, null]);
  });

  it("with granularity none each period is one row", async () => {
    const res = onlyResult(await compareQuery({ granularity: "none" }));
    expect(res.data.primary.map((r) => [r.dt, r["orders.total_revenue"], r["orders.aov"]])).toEqual([
      ["2026-07-01", 180, 60],
    ]);
    expect(res.data.compare.map((r) => [r.dt, r["orders.total_revenue"], r["orders.aov"]])).toEqual([
      ["2026-06-24", 60, 30],
    ]);
    // one bucket: the average is the sum
    expect(figures(detail(res, "orders.count"))).toEqual([3, 2, 3, 2, 50]);
  });

  it("per dimension value, including values seen in only one period", async () => {
    // US: O1 + O3 = 2 orders, 130 vs C1 40; DE: O2 50 vs nothing; FR: nothing vs C2 20
    const res = byValue(
      await post({
        measures: ["orders.count", "orders.total_revenue"],
        dimensions: ["orders.country"],
        dateRange: PRIMARY,
        compareDateRange: COMPARE,
        granularity: "day",
        timezone: "UTC",
      }),
    );
    expect(Object.keys(res)).toEqual(["US", "DE", "FR"]); // by primary revenue, descending
    expect(figures(detail(res.US!, "orders.total_revenue"))).toEqual([130, 40, 43.33, 13.33, 225]);
    expect(figures(detail(res.DE!, "orders.total_revenue"))).toEqual([50, 0, 16.67, 0, null]);
    expect(figures(detail(res.FR!, "orders.total_revenue"))).toEqual([0, 20, 0, 6.67, -100]);
    expect(res.FR!.data.primary.map((r) => r["orders.count"])).toEqual([0, 0, 0]);
    expect(res.FR!.data.compare.map((r) => r["orders.count"])).toEqual([0, 1, 0]);
  });

  it("a shorter compare range has its own buckets and averages over them", async () => {
    // Jun 25..26: C2 only → 2 rows; compareAvg of revenue 20 / 2 = 10
    const res = onlyResult(
      await compareQuery({ compareDateRange: { start: "2026-06-25", end: "2026-06-26" } }),
    );
    expect(res.data.compare.map((r) => [r.dt, r["orders.total_revenue"]])).toEqual([
      ["2026-06-25", 20],
      ["2026-06-26", 0],
    ]);
    expect(figures(detail(res, "orders.total_revenue"))).toEqual([180, 20, 60, 10, 800]);
  });

  it("orders, refunds, ad spend and events: each source per period, by day and in one row", async () => {
    const measures = ["orders.count", "orders.refunds", "ads.spend", "events.count"];
    const pick = (rows: Record<string, unknown>[]) => rows.map((r) => measures.map((m) => r[m]));
    const byDay = onlyResult(await compareQuery({ measures }));
    expect(pick(byDay.data.primary)).toEqual([
      [2, 0, 0, 2],
      [0, 10, 25, 0],
      [1, 0, 7, 0],
    ]);
    expect(pick(byDay.data.compare)).toEqual([
      [1, 0, 3, 0],
      [1, 0, 5, 0],
      [0, 0, 0, 1],
    ]);
    const whole = onlyResult(await compareQuery({ measures, granularity: "none" }));
    expect(pick(whole.data.primary)).toEqual([[3, 10, 32, 2]]);
    expect(pick(whole.data.compare)).toEqual([[2, 0, 8, 1]]);
  });

  it("a compare range overlapping the range counts the shared days in both periods", async () => {
    // compare Jun 30..Jul 2: nothing on Jun 30; Jul 1 O1 + O2 (150) and 2 page views; Jul 2 the
    // refund of O1 (10) and 25 of spend — the same days the primary period counts (which adds Jul 3:
    // O3 and acc2's 7)
    const measures = [
      "orders.count",
      "orders.total_revenue",
      "orders.net_revenue",
      "ads.spend",
      "events.count",
    ];
    const res = onlyResult(
      await compareQuery({ measures, compareDateRange: { start: "2026-06-30", end: "2026-07-02" } }),
    );
    const pick = (rows: Record<string, unknown>[]) => rows.map((r) => [r.dt, ...measures.map((m) => r[m])]);
    expect(pick(res.data.compare)).toEqual([
      ["2026-06-30", 0, 0, 0, 0, 0],
      ["2026-07-01", 2, 150, 150, 0, 2],
      ["2026-07-02", 0, 0, -10, 25, 0],
    ]);
    expect(figures(detail(res, "orders.net_revenue"))).toEqual([170, 140, 56.67, 46.67, 21.43]);
    expect(figures(detail(res, "ads.spend"))).toEqual([32, 25, 10.67, 8.33, 28]);
  });

  it("the attribution endpoint takes a compare range too", async () => {
    // no touches: every order is (none); primary 3 orders, revenue net of refunds 170; compare 2, 60
    const res = byValue(
      await post(
        {
          dimension: "attribution.channel",
          dateRange: PRIMARY,
          compareDateRange: COMPARE,
          attributionModel: "last_click",
          attributionWindow: 7,
          timezone: "UTC",
        },
        { path: "/db-mgmt/api/query-attribution" },
      ),
    );
    expect(figures(detail(res["(none)"]!, "attribution.orders"))).toEqual([3, 2, 3, 2, 50]);
    expect(figures(detail(res["(none)"]!, "attribution.revenue"))).toEqual([170, 60, 170, 60, 183.33]);
  });
});
