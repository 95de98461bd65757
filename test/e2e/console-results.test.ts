/**
 * What the SQL console answers, through the app with limits small enough to reach: the result-size
 * cap (CONSOLE_MAX_RESULT_BYTES, 200 kB here) in the engine and in the console's own byte count, for
 * JSON and CSV; one CSV header whatever the number of blocks, with exact counts; and engine errors as
 * the message and its code name only, for several kinds of failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { insertMarkers, rawCsv as rawCsvOf } from "./console-fixtures.js";

const CAP = 200_000;
const BULK_EVENTS = 3000;

let app: TestApp;
let a: Awaited<ReturnType<TestApp["pixelWithKey"]>>;

beforeAll(async () => {
  app = await startTestApp({
    env: {
      CONSOLE_MAX_RESULT_BYTES: String(CAP),
      CONSOLE_MAX_MEMORY_BYTES: "60000000",
      CONSOLE_MAX_EXECUTION_SECONDS: "2",
      RATE_QUERY_PER_SEC: "100000",
    },
  });
  a = await app.pixelWithKey(["analytics:read"]);
  await insertMarkers(app.stores.warehouse, a.pixelId, "A", BULK_EVENTS);
});
afterAll(() => app?.close());

const sql = (text: string, extra: Record<string, unknown> = {}) =>
  app.call("POST", "/db-mgmt/api/sql", {
    key: a.key,
    pixelId: a.pixelId,
    body: { pixelId: a.pixelId, sql: text, ...extra },
  });
const message = (body: unknown) => (body as { message?: string }).message ?? "";

const rawCsv = (text: string, limit: number) => rawCsvOf(app.url, a, text, limit);

/** `blocks` one-row blocks: each step of a recursive CTE is a block of its own. */
const blocks = (n: number, select: string) =>
  `WITH RECURSIVE t AS (SELECT 1 AS d UNION ALL SELECT d + 1 FROM t WHERE d < ${n}) SELECT ${select} FROM t`;

const TOO_LARGE =
  /^The result is larger than 0\.19 MiB \(CONSOLE_MAX_RESULT_BYTES\).*\(TOO_MANY_ROWS_OR_BYTES\)$/;

describe("CONSOLE_MAX_RESULT_BYTES", () => {
  it("answers a result under the cap", async () => {
    const res = await sql("SELECT event_id, repeat('x', 20) AS pad FROM events", { limit: 3000 });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect((res.body as { rowCount: number }).rowCount).toBe(3000);
    expect(res.text.length).toBeLessThan(CAP);
  });

  it.each([
    // In the engine's memory: the aggregate's one row holds the whole array.
    ["one huge row", "SELECT groupArray(x) FROM (SELECT arrayJoin(range(1000000)) AS x)", 1],
    ["many rows", "SELECT repeat(event_id, 100) AS s FROM events", 50_000],
    // A constant is one value in memory, however many rows repeat it: only the encoded bytes show it.
    ["a repeated constant", "SELECT event_id, repeat('x', 1000) AS pad FROM events", 50_000],
  ])("refuses %s as JSON with 400 naming the limit", async (_what, text, limit) => {
    const res = await sql(text, { limit });
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect(message(res.body)).toMatch(TOO_LARGE);
  });

  it("refuses a CSV result over the cap with 400 when nothing was sent yet", async () => {
    const res = await rawCsv("SELECT repeat(event_id, 100) AS s FROM events", 50_000);
    expect(res.status).toBe(400);
    expect(message(JSON.parse(res.body))).toMatch(TOO_LARGE);
  });

  it("a CSV past the cap is a 400 naming the limit, never a short file ended as if whole", async () => {
    // 500 one-row blocks of 1 kB pass the 200 kB cap. On chDB the CSV is computed whole off the event
    // loop (its stream start would hold it), so the cap is known before any byte goes out.
    const res = await rawCsv(blocks(500, "d, repeat('x', 1000) AS pad"), 50_000);
    expect(res.status).toBe(400);
    expect(res.body).toContain("CONSOLE_MAX_RESULT_BYTES");
    expect(res.body).not.toContain('"d","pad"');
  });
});

describe("CSV over several blocks", () => {
  it("has one header and exact counts for a short result", async () => {
    const res = await sql(blocks(3, "d AS n"), { format: "csv" });
    expect(res.status).toBe(200);
    expect(res.text).toBe('"n"\n1\n2\n3\n');
    expect(res.headers.get("x-row-count")).toBe("3");
    expect(res.headers.get("x-truncated")).toBe("false");
  });

  it("keeps rows that read like the header", async () => {
    const res = await sql(blocks(3, "'n' AS n"), { format: "csv" });
    expect(res.text).toBe('"n"\n"n"\n"n"\n"n"\n');
    expect(res.headers.get("x-row-count")).toBe("3");
  });

  it("has one header and exact counts when a long result streams, whole or cut at the limit", async () => {
    const text = blocks(500, "d, repeat('y', 300) AS pad");
    const whole = await rawCsv(text, 50_000);
    expect(whole.complete).toBe(true);
    // Past 64 KiB the counts come as trailers.
    expect(whole.headers["x-row-count"]).toBeUndefined();
    expect(whole.trailers).toMatchObject({ "x-row-count": "500", "x-truncated": "false" });
    const lines = whole.body.trimEnd().split("\n");
    expect(lines.filter((l) => l === '"d","pad"')).toHaveLength(1);
    expect(lines.slice(1).map((l) => Number(l.split(",")[0]))).toEqual(
      Array.from({ length: 500 }, (_, i) => i + 1),
    );
    const cut = await rawCsv(text, 300);
    expect(cut.trailers).toMatchObject({ "x-row-count": "300", "x-truncated": "true" });
    expect(cut.body.trimEnd().split("\n")).toHaveLength(301);
  });
});

describe("engine errors carry the message and the code name only", () => {
  it.each([
    // The output of 3,001 copies of a 100 kB constant runs out of memory while it is written: chDB
    // nests that exception three deep, each with its own `Code: 241. DB::Exception:` and version.
    [
      "memory limit",
      "SELECT repeat('x', 100000) AS s FROM events",
      /^Query memory limit exceeded: .*\(MEMORY_LIMIT_EXCEEDED\)$/s,
    ],
    [
      "memory limit (aggregation)",
      "SELECT uniqExact(x) FROM (SELECT arrayJoin(range(20000000)) AS x)",
      /limit exceeded.*\(MEMORY_LIMIT_EXCEEDED\)$/s,
    ],
    ["syntax", "SELEC 1", /^Syntax error: .*\(SYNTAX_ERROR\)$/s],
    [
      "unknown identifier",
      "SELECT nope FROM events",
      /^Unknown expression identifier `nope`\. \(UNKNOWN_IDENTIFIER\)$/,
    ],
    [
      "timeout",
      "SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c",
      /^Timeout exceeded: .*\(TIMEOUT_EXCEEDED\)$/,
    ],
    [
      "a conversion",
      "SELECT toUInt64(event_id) FROM events",
      /^Cannot parse string .*\(CANNOT_PARSE_TEXT\)$/s,
    ],
  ])("%s", async (_kind, text, expected) => {
    for (const format of ["json", "csv"]) {
      const res = await sql(text, { format, limit: 50_000 });
      expect(res.status, `${format}: ${res.text.slice(0, 300)}`).toBe(400);
      const m = message(res.body);
      expect(m, format).toMatch(expected);
      expect(m, format).not.toMatch(/Code: \d|DB::Exception|\(version /);
      // One code name, at the end.
      expect(m.match(/\([A-Z][A-Z0-9_]{2,}\)/g), format).toHaveLength(1);
    }
  });
});
