/**
 * `?explain=true` (docs/query.md): the generated ClickHouse SQL and its parameters, without
 * running the query. Every value of the request reaches the SQL as a bound `{pN:Type}` placeholder:
 * none of the request's values (pixel id, dates, timezone, currency, filter strings and numbers,
 * exclusion values, event names, limits) appears in the SQL text, every placeholder has its
 * parameter, and the only quoted literals are the engine's own constants. The explained statements, run as returned, answer like the endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { exclusion, fxRate, type Json, order, type Pixel, total } from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let px: Pixel;
let post: Poster;

beforeAll(async () => {
  const suite = await startQuerySuite();
  ({ app, px, post } = suite);
  await suite.load.fxRates([fxRate("2026-01-01", "EUR", 0.5)]);
  await suite.load.orders([
    order("o1", "2026-10-02T12:00:00Z", "USD", 10, {
      country: "Mårker'; DROP TABLE orders; --",
      tags: ["zq-tag-77"],
    }),
  ]);
});
afterAll(() => app?.close());

interface Statement {
  source: string;
  period: string;
  sql: string;
  params: Record<string, unknown>;
}

async function explain(path: string, body: Json): Promise<Statement[]> {
  const res = await post(body, { path: `${path}?explain=true` });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("x-cache")).toBeNull();
  const statements = (res.body as { explain: { statements: Statement[] } }).explain.statements;
  expect(statements.length).toBeGreaterThan(0);
  return statements;
}

/** The constants the emitters write into SQL themselves (statuses, labels, key prefixes, …). */
const ENGINE_LITERALS = new Set([
  "",
  "pending",
  "voided",
  "USD",
  "(none)",
  "(not set)",
  "c:",
  "e:",
  "o:",
  " ",
  "canonical",
  "account",
  "campaign",
  "adset",
  "ad",
  "page_view",
  "purchase",
  "UTC",
  "month",
  "day",
]);

function expectBound(statements: Statement[], markers: readonly string[]) {
  for (const s of statements) {
    for (const m of s.sql.matchAll(/\{(p\d+):([^}]+)\}/g)) {
      expect(Object.keys(s.params), `${s.source}: ${m[0]}`).toContain(m[1]);
      expect([
        "String",
        "Int64",
        "UInt32",
        "Float64",
        "Date",
        "DateTime64(3, 'UTC')",
        "Array(String)",
        "Array(Float64)",
      ]).toContain(m[2]);
    }
    const lower = s.sql.toLowerCase();
    for (const marker of markers) {
      expect(lower.includes(marker.toLowerCase()), `${s.source} SQL holds "${marker}"`).toBe(false);
    }
    // Quoted literals outside the placeholders' types are the engine's constants only.
    const withoutTypes = s.sql.replace(/\{p\d+:[^}]+\}/g, "?");
    for (const m of withoutTypes.matchAll(/'((?:[^'\\]|\\.)*)'/g)) {
      expect(ENGINE_LITERALS.has(m[1]!), `${s.source} SQL literal '${m[1]}'`).toBe(true);
    }
  }
}

describe("?explain=true binds every request value", () => {
  it("general query with filters, compare range, timezone, currency and order settings", async () => {
    const body = {
      measures: [
        "orders.count",
        "orders.total_revenue",
        "orders.refunds",
        "events.count",
        "attribution.orders",
      ],
      dimensions: [],
      dateRange: { start: "2026-10-01", end: "2026-10-05" },
      compareDateRange: { start: "2026-09-01", end: "2026-09-05" },
      granularity: "day",
      timezone: "America/New_York",
      currency: "EUR",
      attributionModel: "first_click",
      attributionWindow: 14,
      filters: {
        and: [
          {
            or: [
              { field: "orders.country", op: "equals", value: "Mårker'; DROP TABLE orders; --" },
              { field: "orders.tags", op: "in", value: ["zq-tag-77", "zq-tag-78"] },
              { not: { field: "orders.total_price", op: "between", value: [123.456, 789.012] } },
            ],
          },
          { field: "orders.created_at", op: "gte", value: "2026-10-03" },
          { field: "orders.created_at", op: "lt", value: "2026-10-04T07:08:09Z" },
        ],
      },
      orderSettings: {
        countPendingOrders: true,
        exclusionFilters: [
          exclusion("x", [{ logic: "and", conditions: [["source_name", "equals", "xq-exclude-source"]] }]),
        ],
      },
    };
    // events.count cannot take orders. filters: ask it separately below
    const statements = await explain("/db-mgmt/api/query", {
      ...body,
      measures: body.measures.filter((m) => m !== "events.count"),
    });
    // The fact sources answer both (disjoint) periods in one statement; attribution one per period.
    expect(statements.map((s) => `${s.source}/${s.period}`).sort()).toEqual([
      "attribution/compare",
      "attribution/primary",
      "orders/both",
      "refunds/both",
    ]);
    expectBound(statements, [
      px.pixelId,
      "2026-10-01",
      "2026-10-05",
      "2026-09-01",
      "2026-09-05",
      "2026-10-03",
      "2026-10-04",
      "07:08:09",
      "America/New_York",
      "EUR",
      "Mårker",
      "DROP TABLE",
      "zq-tag-77",
      "zq-tag-78",
      "123.456",
      "789.012",
      "xq-exclude-source",
    ]);
    // the values are in the parameters
    const all = statements
      .flatMap((s) => Object.values(s.params))
      .flat()
      .map(String);
    for (const v of [
      px.pixelId,
      "America/New_York",
      "EUR",
      "Mårker'; DROP TABLE orders; --",
      "zq-tag-77",
      "123.456",
      "xq-exclude-source",
    ]) {
      expect(all, v).toContain(v);
    }
    // events measures with an events filter
    const events = await explain("/db-mgmt/api/query", {
      measures: ["events.count", "events.value"],
      dateRange: { start: "2026-10-01", end: "2026-10-05" },
      timezone: "Asia/Kathmandu",
      filters: { field: "events.page_path", op: "starts_with", value: "/zq-path-marker" },
    });
    expectBound(events, [px.pixelId, "2026-10-01", "Asia/Kathmandu", "zq-path-marker"]);
  });

  it("attribution query with touch and conversion filters, events value source", async () => {
    const statements = await explain("/db-mgmt/api/query-attribution", {
      dimension: "attribution.campaign_id",
      dateRange: { start: "2026-10-01", end: "2026-10-05" },
      timezone: "Europe/Berlin",
      currency: "EUR",
      attributionModel: "any_click",
      attributionWindow: 90,
      valueSource: "events",
      eventName: "signup_marker",
      filters: {
        and: [
          { field: "attribution.source", op: "not_in", value: ["google-marker", "bing-marker"] },
          { field: "events.utm_campaign", op: "contains", value: "camp-marker" },
        ],
      },
    });
    expect(statements.map((s) => s.source).sort()).toEqual(["ads", "attribution"]);
    expectBound(statements, [
      px.pixelId,
      "2026-10-01",
      "2026-10-05",
      "Europe/Berlin",
      "EUR",
      "signup_marker",
      "google-marker",
      "bing-marker",
      "camp-marker",
    ]);
    const windows = statements.flatMap((s) => Object.values(s.params));
    expect(windows).toContain(90);
  });

  it("channel details and cohorts", async () => {
    const channel = await explain("/db-mgmt/api/query-channel-details", {
      level: "campaign",
      measures: ["ads.spend"],
      dateRange: { start: "2026-10-01", end: "2026-10-05" },
      filters: { field: "channel.account_id", op: "equals", value: "act-marker-42" },
      limit: 37,
      offset: 11,
      timezone: "Australia/Lord_Howe",
    });
    expectBound(channel, [px.pixelId, "2026-10-01", "act-marker-42", "Lord_Howe", "LIMIT 37", "OFFSET 11"]);
    const cohorts = await explain("/db-mgmt/api/query-cohort-analysis", {
      dateRange: { start: "2026-07-01", end: "2026-09-30" },
      cohortGranularity: "month",
      periods: 3,
      timezone: "Pacific/Chatham",
      filters: { field: "orders.country", op: "equals", value: "cohort-marker" },
    });
    expectBound(cohorts, [px.pixelId, "2026-07-01", "2026-09-30", "Chatham", "cohort-marker"]);
  });
});

describe("the explained statements are what runs", () => {
  it("running them with their parameters as returned gives the endpoint's figure", async () => {
    const body = {
      measures: ["orders.total_revenue"],
      dateRange: { start: "2026-10-01", end: "2026-10-05" },
      granularity: "none",
      timezone: "UTC",
      currency: "EUR",
      filters: { field: "orders.tags", op: "equals", value: "zq-tag-77" },
    };
    // o1: 10 USD × 0.5 = 5 EUR
    expect(total(await post(body), "orders.total_revenue")).toBe(5);
    const [statement] = await explain("/db-mgmt/api/query", body);
    const run = (params: Json) =>
      app.stores.warehouse.query<{ orders_total: number; fx_missing: string }>(
        statement!.sql,
        params as never,
      );
    // The statement reads rates from 62 days before Oct 1 (Jul 31); EUR's only rate is Jan 1's, so it
    // reports the rate missing, and the service runs it again reading every rate (docs/query.md).
    const params = statement!.params as Json;
    expect(params.rates_from).toBe("2026-07-31");
    expect((await run(params)).map((r) => r.fx_missing)).toEqual(["2026-10-02 EUR"]);
    const rows = await run({ ...params, rates_from: "1970-01-01" });
    expect(rows.map((r) => [Number(r.orders_total), r.fx_missing])).toEqual([[5, ""]]);
  });
});
