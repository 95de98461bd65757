/**
 * The SQL console's function allow-list (src/console/function-list.ts) against the engine it runs on:
 * every function chDB's `system.functions` lists must be allowed or refused — a function a new engine
 * version adds fails this test until someone reviews it — and aliases, case-insensitive names and
 * aggregate combinators resolve as the engine resolves them. Then, through the API: the functions that
 * describe the server are refused, and allowed aggregates keep their combinators and aliases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AGGREGATE_COMBINATORS,
  ALLOWED_FUNCTIONS,
  CASE_INSENSITIVE_NAMES,
  FUNCTION_ALIASES,
  REFUSED_FUNCTIONS,
} from "../../src/console/function-list.js";
import { checkFunction } from "../../src/console/functions.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { insertMarkers } from "./console-fixtures.js";

interface EngineFunction {
  name: string;
  is_aggregate: number;
  case_insensitive: number;
  alias_to: string;
}

let app: TestApp;
let a: Awaited<ReturnType<TestApp["pixelWithKey"]>>;
let engine: EngineFunction[];

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_QUERY_PER_SEC: "100000" } });
  a = await app.pixelWithKey(["analytics:read"]);
  await insertMarkers(app.stores.warehouse, a.pixelId, "A", 20);
  engine = await app.stores.warehouse.query<EngineFunction>(
    "SELECT name, is_aggregate, case_insensitive, alias_to FROM system.functions ORDER BY name",
  );
});
afterAll(() => app?.close());

const sql = (text: string) =>
  app.call("POST", "/db-mgmt/api/sql", {
    key: a.key,
    pixelId: a.pixelId,
    body: { pixelId: a.pixelId, sql: text },
  });
const message = (body: unknown) => (body as { message?: string }).message ?? "";

const { syntax, ...allowedGroups } = ALLOWED_FUNCTIONS;
const allowed = Object.values(allowedGroups).flat();
const refused = Object.values(REFUSED_FUNCTIONS).flatMap((g) => g.names);
const sorted = (xs: Iterable<string>) => [...xs].sort();

describe("the function list against the engine's system.functions", () => {
  it("reads a full list from the engine", () => {
    expect(engine.length).toBeGreaterThan(1000);
  });

  it("has reviewed every function: each one is allowed or refused", () => {
    // A name here is new in the engine: decide whether it computes over the query's own values
    // (allow it, in its group) or describes / reaches outside the server (refuse it, with the reason).
    const unreviewed = engine.filter((f) => checkFunction(f.name).verdict === "unknown").map((f) => f.name);
    expect(unreviewed, "add these to src/console/function-list.ts").toEqual([]);
  });

  it("lists each function once, and only functions the engine has", () => {
    const names = [...allowed, ...refused];
    expect(names.length).toBe(new Set(names).size);
    const own = new Set(engine.filter((f) => !f.alias_to).map((f) => f.name));
    expect(names.filter((n) => !own.has(n))).toEqual([]);
    // Parsed syntax the tree shows as functions; none of them is in system.functions.
    expect(syntax.filter((n) => own.has(n))).toEqual([]);
  });

  it("marks as aggregate exactly the functions the engine registers as aggregates", () => {
    const aggregate = new Set(ALLOWED_FUNCTIONS.aggregate);
    const differ = engine
      .filter((f) => !f.alias_to && allowed.includes(f.name))
      .filter((f) => (f.is_aggregate === 1) !== aggregate.has(f.name))
      .map((f) => f.name);
    expect(differ).toEqual([]);
  });

  it("has the engine's aliases, case-insensitive names and aggregate combinators", async () => {
    expect(sorted(FUNCTION_ALIASES)).toEqual(
      sorted(engine.filter((f) => f.alias_to).map((f) => `${f.name}=${f.alias_to}`)),
    );
    expect(sorted(CASE_INSENSITIVE_NAMES)).toEqual(
      sorted(engine.filter((f) => f.case_insensitive).map((f) => f.name)),
    );
    const combinators = await app.stores.warehouse.query<{ name: string }>(
      "SELECT name FROM system.aggregate_function_combinators WHERE is_internal = 0",
    );
    expect(sorted(AGGREGATE_COMBINATORS)).toEqual(sorted(combinators.map((c) => c.name)));
  });

  it("resolves names as the engine does: aliases, any case where the engine allows it, combinators", () => {
    expect(checkFunction("VERSION")).toMatchObject({ verdict: "refused", name: "version" });
    expect(checkFunction("timeZone")).toMatchObject({ verdict: "refused", name: "timezone" });
    expect(checkFunction("TIMEZONE")).toMatchObject({ verdict: "refused", name: "timezone" });
    expect(checkFunction("serverTimeZone")).toMatchObject({ verdict: "refused", name: "serverTimezone" });
    // connection_id is an alias of `connectionID`, which names connectionId only case-insensitively.
    expect(checkFunction("connection_id")).toMatchObject({ verdict: "refused", name: "connectionId" });
    expect(checkFunction("hostname")).toMatchObject({ verdict: "refused", name: "hostName" });
    expect(checkFunction("flameGraphIf")).toMatchObject({ verdict: "refused", name: "flameGraph" });
    expect(checkFunction("COUNT")).toMatchObject({ verdict: "allowed", name: "count", aggregate: true });
    expect(checkFunction("lcase")).toMatchObject({ verdict: "allowed", name: "lower" });
    expect(checkFunction("countIf")).toMatchObject({ verdict: "allowed", name: "count" });
    expect(checkFunction("uniqExactStateIf")).toMatchObject({ verdict: "allowed", name: "uniqExact" });
    expect(checkFunction("array_concat_agg")).toMatchObject({ verdict: "allowed", name: "groupArray" });
    expect(checkFunction("medianIf")).toMatchObject({ verdict: "allowed", name: "quantile" });
    // Not case-insensitive in the engine, so no function at all; nor is a combinator on a scalar.
    expect(checkFunction("Uptime")).toEqual({ verdict: "unknown" });
    expect(checkFunction("lowerIf")).toEqual({ verdict: "unknown" });
  });
});

describe("functions and columns that describe the server are refused", () => {
  it.each([
    ["SELECT version()", /version\(\)/],
    ["SELECT VERSION()", /VERSION\(\) \(version\)/],
    ["SELECT uptime()", /uptime\(\)/],
    ["SELECT revision()", /revision\(\)/],
    ["SELECT timezone()", /timezone\(\)/],
    ["SELECT timeZone()", /timeZone\(\) \(timezone\)/],
    ["SELECT serverTimezone()", /serverTimezone\(\)/],
    ["SELECT serverTimeZone()", /serverTimeZone\(\)/],
    ["SELECT connectionId()", /connectionId\(\)/],
    ["SELECT connection_id()", /connection_id\(\)/],
    ["SELECT hostname()", /hostname\(\)/],
    ["SELECT event_id FROM events WHERE length(version()) > 0", /version\(\)/],
    ["SELECT _database", /_database/],
    ["SELECT _table", /_table/],
    ["SELECT * FROM (SELECT 1 AS x, _database)", /_database/],
    ["SELECT (SELECT _table) AS t FROM events", /_table/],
    ["SELECT * APPLY(x -> version()) FROM events", /APPLY/],
    ["SELECT arrayReduce('flameGraph', [[toUInt64(1)]], [1])", /flameGraph/],
    ["SELECT finalizeAggregation(CAST(1 AS AggregateFunction(flameGraph, Array(UInt64))))", /flameGraph/],
    ["SELECT no_such_function(1)", /no_such_function\(\) is not on the console's list/],
  ])("%s", async (text, names) => {
    const res = await sql(text);
    expect(res.status, res.text).toBe(400);
    expect(message(res.body)).toMatch(/^Refused: /);
    expect(message(res.body)).toMatch(names);
  });

  it("says why, and suggests allowed names for a misspelt one", async () => {
    expect(message((await sql("SELECT uptime()")).body)).toMatch(/describes the server/);
    expect(message((await sql("SELECT lenght('x')")).body)).toMatch(/did you mean .*\blength\b/);
  });
});

describe("allowed functions keep their combinators, aliases and syntax", () => {
  it.each([
    [
      "SELECT count(), COUNT(*), countIf(name = 'purchase'), countDistinct(event_id) FROM events",
      [["21", "21", "1", "21"]],
    ],
    [
      "SELECT sumIf(1, name = 'page_view'), avgOrNull(toUInt8(2)), sumArray([1, 2]), sumForEach([1, 2]) FROM events",
      [["20", 2, "63", ["21", "42"]]],
    ],
    ["SELECT uniqMerge(s) FROM (SELECT uniqState(event_id) AS s FROM events)", [["21"]]],
    [
      "SELECT uniqExactIfMerge(s) FROM (SELECT uniqExactIfState(event_id, name = 'purchase') AS s FROM events)",
      [["1"]],
    ],
    [
      "SELECT argMaxIf(event_id, event_id, name = 'page_view'), medianIf(1, 1), array_concat_agg([1]) FROM events",
      [["A_bulk_9", 1, Array(21).fill(1)]],
    ],
    [
      "SELECT arrayReduce('sumIf', [1, 2, 3], [1, 0, 1]), arrayMap(x -> x + 1, [1]), lcase('A'), substr('abc', 2)",
      [["4", [2], "a", "bc"]],
    ],
    [
      "SELECT event_id, row_number() OVER (ORDER BY event_id) AS n FROM events ORDER BY event_id LIMIT 1",
      [["A_bulk_0", "1"]],
    ],
    [
      "SELECT CASE WHEN EXISTS (SELECT 1) THEN toDate('2026-03-01') + INTERVAL 1 DAY END, untuple((1, 2))",
      [["2026-03-02", 1, 2]],
    ],
    [
      "SELECT name, GROUPING(name) AS g, count() FROM events GROUP BY ROLLUP(name) ORDER BY name, g",
      [
        ["", "1", "21"],
        ["page_view", "0", "20"],
        ["purchase", "0", "1"],
      ],
    ],
  ])("%s", async (text, rows) => {
    const res = await sql(text);
    expect(res.status, res.text).toBe(200);
    expect((res.body as { rows: unknown[][] }).rows).toEqual(rows);
  });
});
