/**
 * Tabular output of the query endpoints (docs/query.md, "Tabular output"): `format=rows` and
 * `format=csv` / `Accept: text/csv` give one flat row per bucket × dimension value with a column per
 * measure and `compare.` columns, and carry the same numbers as the nested JSON answer.
 *
 * Worked example: orders A (web, 100 USD, Jun 1), B (pos, 90 EUR at 0.9 → 100 USD, Jun 1), C (pos,
 * 45 EUR at 0.9 → 50 USD, Jun 2); the compare range holds order Z (web, 20 USD, May 31). By source
 * and day, Jun 1–2 against May 30–31: pos has 100 on Jun 1 and 50 on Jun 2; web has 100 on Jun 1
 * and 20 in the compare columns of the Jun 2 row (May 31).
 */
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fxRate, order, resultsOf } from "./query-fixtures.js";
import { type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read"] });
  await suite.load.fxRates([fxRate("2026-05-01", "EUR", 0.9)]);
  await suite.load.orders([
    order("A", "2026-06-01T10:00:00Z", "USD", 100, { sourceName: "web" }),
    order("B", "2026-06-01T12:00:00Z", "EUR", 90, { sourceName: "pos" }),
    order("C", "2026-06-02T10:00:00Z", "EUR", 45, { sourceName: "pos" }),
    order("Z", "2026-05-31T10:00:00Z", "USD", 20, { sourceName: "web" }),
  ]);
});
afterAll(() => suite?.app.close());

const QUERY = {
  measures: ["orders.count", "orders.total_revenue"],
  dimensions: ["orders.source_name"],
  dateRange: { start: "2026-06-01", end: "2026-06-02" },
  compareDateRange: { start: "2026-05-30", end: "2026-05-31" },
  granularity: "day",
  timezone: "UTC",
};

const COLUMNS = [
  "dt",
  "start",
  "end",
  "orders.source_name",
  "orders.count",
  "orders.total_revenue",
  "compare.dt",
  "compare.start",
  "compare.end",
  "compare.orders.count",
  "compare.orders.total_revenue",
];

describe("tabular output of the query API", () => {
  it("format=rows and CSV carry the nested answer's numbers, one row per bucket × dimension value", async () => {
    const nested = resultsOf(await suite.post(QUERY));
    const rowsRes = await suite.post(QUERY, { path: "/db-mgmt/api/query?format=rows" });
    expect(rowsRes.status, rowsRes.text).toBe(200);
    const table = rowsRes.body as { columns: string[]; rows: Record<string, string | number | null>[] };
    expect(table.columns).toEqual(COLUMNS);
    const expected = nested.flatMap((r) =>
      r.data.primary.map((p, i) => ({
        dt: p.dt,
        start: p.start,
        end: p.end,
        "orders.source_name": r.dimensionValues?.["orders.source_name"],
        "orders.count": p["orders.count"],
        "orders.total_revenue": p["orders.total_revenue"],
        "compare.dt": r.data.compare[i]!.dt,
        "compare.start": r.data.compare[i]!.start,
        "compare.end": r.data.compare[i]!.end,
        "compare.orders.count": r.data.compare[i]!["orders.count"],
        "compare.orders.total_revenue": r.data.compare[i]!["orders.total_revenue"],
      })),
    );
    expect(table.rows).toEqual(expected);
    // The worked example, by hand.
    const at = (country: string, day: string) =>
      table.rows.find((r) => r["orders.source_name"] === country && String(r.dt).startsWith(day))!;
    expect(at("pos", "2026-06-01")["orders.total_revenue"]).toBe(100);
    expect(at("pos", "2026-06-02")["orders.total_revenue"]).toBe(50);
    expect(at("web", "2026-06-02")["compare.orders.total_revenue"]).toBe(20);

    for (const via of [
      { path: "/db-mgmt/api/query?format=csv" },
      { path: "/db-mgmt/api/query", headers: { accept: "text/csv" } },
    ]) {
      const csv = await suite.post(QUERY, via);
      expect(csv.status, csv.text).toBe(200);
      expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
      const records = parse(csv.text, { columns: true }) as Record<string, string>[];
      expect(Object.keys(records[0]!)).toEqual(COLUMNS);
      expect(records).toEqual(
        expected.map((r) =>
          Object.fromEntries(
            Object.entries(r).map(([k, v]) => [k, v === null || v === undefined ? "" : String(v)]),
          ),
        ),
      );
    }
  });

  it("attribution and cohorts flatten too; explain stays JSON", async () => {
    const attribution = await suite.post(
      {
        dimension: "attribution.channel",
        dateRange: QUERY.dateRange,
        attributionModel: "last_click",
        attributionWindow: 30,
        timezone: "UTC",
      },
      { path: "/db-mgmt/api/query-attribution?format=rows" },
    );
    expect(attribution.status, attribution.text).toBe(200);
    const a = attribution.body as { columns: string[]; rows: Record<string, unknown>[] };
    expect(a.columns).toEqual([
      "dt",
      "start",
      "end",
      "attribution.channel",
      "attribution.orders",
      "attribution.revenue",
    ]);
    expect(a.rows.reduce((n, r) => n + Number(r["attribution.orders"]), 0)).toBe(3);

    const cohorts = await suite.post(
      {
        dateRange: { start: "2026-05-01", end: "2026-06-30" },
        measures: ["customers.retained"],
        timezone: "UTC",
      },
      { path: "/db-mgmt/api/query-cohort-analysis?format=csv" },
    );
    expect(cohorts.status, cohorts.text).toBe(200);
    const records = parse(cohorts.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([
      "cohort",
      "start",
      "end",
      "size",
      "period",
      "customers.retained",
    ]);

    const explain = await suite.post(QUERY, { path: "/db-mgmt/api/query?format=csv&explain=true" });
    expect(explain.status).toBe(200);
    expect(explain.body).toHaveProperty("explain");
  });
});
