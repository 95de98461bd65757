/**
 * Time buckets and date ranges in the query timezone (docs/query.md, "Time"): hour, day,
 * week (Monday start), month, quarter and year buckets; the 23-hour day (America/New_York
 * 2026-03-08, clocks 02:00 EST → 03:00 EDT) and the 25-hour day (2026-11-01, 02:00 EDT → 01:00 EST)
 * with the exact instants each row covers; empty buckets present with zeros; relative dates
 * resolved in the query timezone at the service's clock; the account timezone as the default.
 *
 * USD orders, each total a distinct power of two (a bucket's revenue names its orders):
 *
 *   id  total  UTC                  New York
 *   Y1  4096   2026-01-01 04:00     2025-12-31 23:00 EST   (2026 in UTC, 2025 in New York)
 *   M1  2048   2026-02-01 04:30     2026-01-31 23:30 EST   (February in UTC, January in New York)
 *   T1     1   2026-03-08 04:30     2026-03-07 23:30 EST
 *   T2     2   2026-03-08 05:00     2026-03-08 00:00 EST   (a local midnight is inside its day)
 *   T3     4   2026-03-08 06:59     2026-03-08 01:59 EST
 *   T4     8   2026-03-08 07:00     2026-03-08 03:00 EDT   (the next instant after 01:59:59 EST)
 *   T5    16   2026-03-09 03:59     2026-03-08 23:59 EDT
 *   T6    32   2026-03-09 04:00     2026-03-09 00:00 EDT
 *   U1    64   2026-11-01 04:00     2026-11-01 00:00 EDT
 *   U2   128   2026-11-01 05:30     2026-11-01 01:30 EDT   (the first 01:30)
 *   U3   256   2026-11-01 06:30     2026-11-01 01:30 EST   (the second 01:30)
 *   U4   512   2026-11-02 04:59     2026-11-01 23:59 EST
 *   U5  1024   2026-11-02 05:00     2026-11-02 00:00 EST
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { generalQuerySchema } from "../../src/query/schemas.js";
import { QueryService } from "../../src/query/service.js";
import { DataVersions } from "../../src/shared/data-version.js";
import type { TestApp } from "../helpers/app.js";
import { type Json, onlyResult, order, type Pixel, poster, type Row } from "./query-fixtures.js";
import { type Poster, startQuerySuite } from "./query-setup.js";

let app: TestApp;
let px: Pixel;
let post: Poster;
const NY = "America/New_York";

beforeAll(async () => {
  // The tests edit the account row directly: read it on every query.
  const suite = await startQuerySuite({ env: { ACCOUNT_CACHE_MS: "0" } });
  ({ app, px, post } = suite);
  await suite.load.orders([
    order("Y1", "2026-01-01T04:00:00Z", "USD", 4096),
    order("M1", "2026-02-01T04:30:00Z", "USD", 2048),
    order("T1", "2026-03-08T04:30:00Z", "USD", 1),
    order("T2", "2026-03-08T05:00:00Z", "USD", 2),
    order("T3", "2026-03-08T06:59:00Z", "USD", 4),
    order("T4", "2026-03-08T07:00:00Z", "USD", 8),
    order("T5", "2026-03-09T03:59:00Z", "USD", 16),
    order("T6", "2026-03-09T04:00:00Z", "USD", 32),
    order("U1", "2026-11-01T04:00:00Z", "USD", 64),
    order("U2", "2026-11-01T05:30:00Z", "USD", 128),
    order("U3", "2026-11-01T06:30:00Z", "USD", 256),
    order("U4", "2026-11-02T04:59:00Z", "USD", 512),
    order("U5", "2026-11-02T05:00:00Z", "USD", 1024),
  ]);
});
afterAll(() => app?.close());

function series(granularity: string, start: string, end: string, timezone?: string, extra: Json = {}) {
  return post({
    measures: ["orders.count", "orders.total_revenue", "orders.aov"],
    dateRange: { start, end },
    granularity,
    ...(timezone ? { timezone } : {}),
    ...extra,
  });
}

/** Rows as [dt, start, end, count, revenue]. */
const compact = (rows: Row[]) =>
  rows.map((r) => [r.dt, r.start, r.end, r["orders.count"], r["orders.total_revenue"]]);

/** Every row ends where the next starts; the first starts and the last ends at the range's instants. */
function expectContiguous(rows: Row[], from: string, to: string) {
  expect(rows[0]!.start).toBe(from);
  expect(rows.at(-1)!.end).toBe(to);
  for (let i = 1; i < rows.length; i++) expect(rows[i]!.start, `row ${i}`).toBe(rows[i - 1]!.end);
}

const hours = (rows: Row[]) =>
  rows.reduce((h, r) => h + (Date.parse(String(r.end)) - Date.parse(String(r.start))) / 3_600_000, 0);

describe("days across DST in America/New_York", () => {
  it("the 23-hour day 2026-03-08 runs from 00:00 EST to 00:00 EDT", async () => {
    const rows = onlyResult(await series("day", "2026-03-07", "2026-03-09", NY)).data.primary;
    // Mar 7: T1; Mar 8: T2 + T3 + T4 + T5 = 30; Mar 9: T6
    expect(compact(rows)).toEqual([
      ["2026-03-07", "2026-03-07T00:00:00-05:00", "2026-03-08T00:00:00-05:00", 1, 1],
      ["2026-03-08", "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 4, 30],
      ["2026-03-09", "2026-03-09T00:00:00-04:00", "2026-03-10T00:00:00-04:00", 1, 32],
    ]);
    expect(hours(rows.slice(1, 2))).toBe(23);
  });

  it("the same orders by UTC day", async () => {
    // Mar 7: none; Mar 8: T1..T4 = 15; Mar 9: T5 + T6 = 48
    const rows = onlyResult(await series("day", "2026-03-07", "2026-03-09", "UTC")).data.primary;
    expect(compact(rows)).toEqual([
      ["2026-03-07", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", 0, 0],
      ["2026-03-08", "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z", 4, 15],
      ["2026-03-09", "2026-03-09T00:00:00Z", "2026-03-10T00:00:00Z", 2, 48],
    ]);
  });

  it("the 25-hour day 2026-11-01 runs from 00:00 EDT to 00:00 EST", async () => {
    // Nov 1: U1..U4 = 960; Nov 2: U5
    const rows = onlyResult(await series("day", "2026-11-01", "2026-11-02", NY)).data.primary;
    expect(compact(rows)).toEqual([
      ["2026-11-01", "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00", 4, 960],
      ["2026-11-02", "2026-11-02T00:00:00-05:00", "2026-11-03T00:00:00-05:00", 1, 1024],
    ]);
    expect(hours(rows.slice(0, 1))).toBe(25);
  });

  it("hours of the 23-hour day: 02:00 does not exist", async () => {
    const rows = onlyResult(await series("hour", "2026-03-08", "2026-03-08", NY)).data.primary;
    expect(rows).toHaveLength(23);
    const localHours = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23];
    expect(rows.map((r) => r.dt)).toEqual(
      localHours.map((h) => `2026-03-08 ${String(h).padStart(2, "0")}:00`),
    );
    expectContiguous(rows, "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00");
    // the hour before the jump ends at 03:00 EDT, one real hour later
    expect(rows[1]).toMatchObject({ dt: "2026-03-08 01:00", start: "2026-03-08T01:00:00-05:00" });
    expect(rows[1]!.end).toBe("2026-03-08T03:00:00-04:00");
    // T2 at 00:00, T3 at 01:59, T4 at 03:00, T5 at 23:59; every other hour is present with zeros
    const nonEmpty = rows
      .filter((r) => r["orders.count"] !== 0)
      .map((r) => [r.dt, r["orders.total_revenue"]]);
    expect(nonEmpty).toEqual([
      ["2026-03-08 00:00", 2],
      ["2026-03-08 01:00", 4],
      ["2026-03-08 03:00", 8],
      ["2026-03-08 23:00", 16],
    ]);
    for (const r of rows.filter((x) => x["orders.count"] === 0)) {
      expect(r["orders.total_revenue"]).toBe(0);
      expect(r["orders.aov"]).toBeNull(); // a ratio with nothing to divide by
    }
  });

  it("hours of the 25-hour day: 01:00 comes twice, told apart by its offset", async () => {
    const rows = onlyResult(await series("hour", "2026-11-01", "2026-11-01", NY)).data.primary;
    expect(rows).toHaveLength(25);
    expectContiguous(rows, "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00");
    expect(compact(rows.slice(0, 4))).toEqual([
      ["2026-11-01 00:00", "2026-11-01T00:00:00-04:00", "2026-11-01T01:00:00-04:00", 1, 64], // U1
      ["2026-11-01 01:00", "2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", 1, 128], // U2, EDT
      ["2026-11-01 01:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00", 1, 256], // U3, EST
      ["2026-11-01 02:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00", 0, 0],
    ]);
    expect(compact(rows.slice(-1))).toEqual([
      ["2026-11-01 23:00", "2026-11-01T23:00:00-05:00", "2026-11-02T00:00:00-05:00", 1, 512], // U4
    ]);
    expect(rows.reduce((s, r) => s + Number(r["orders.count"]), 0)).toBe(4);
  });

  it("hours in a zone 5:45 ahead of UTC (Asia/Kathmandu) start at a quarter past the UTC hour", async () => {
    // T1 04:30Z = 10:15 NPT, T2 05:00Z = 10:45 NPT → both in 10:00 (04:15Z–05:15Z); T3 06:59Z = 12:44;
    // T4 07:00Z = 12:45 → both in 12:00
    const rows = onlyResult(await series("hour", "2026-03-08", "2026-03-08", "Asia/Kathmandu")).data.primary;
    expect(rows).toHaveLength(24);
    const nonEmpty = rows.filter((r) => r["orders.count"] !== 0);
    expect(compact(nonEmpty)).toEqual([
      ["2026-03-08 10:00", "2026-03-08T10:00:00+05:45", "2026-03-08T11:00:00+05:45", 2, 3],
      ["2026-03-08 12:00", "2026-03-08T12:00:00+05:45", "2026-03-08T13:00:00+05:45", 2, 12],
    ]);
  });
});

describe("calendar buckets", () => {
  it("weeks start on Monday; Sunday 2026-03-08 closes the week of Mar 2; rows are clipped to the range", async () => {
    // Wed Mar 4 .. Tue Mar 17: week of Mar 2 (from Mar 4) = T1..T5 = 31; week of Mar 9 = T6; week of
    // Mar 16 (to the end of Mar 17) empty.
    const rows = onlyResult(await series("week", "2026-03-04", "2026-03-17", NY)).data.primary;
    expect(compact(rows)).toEqual([
      ["2026-03-02", "2026-03-04T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 5, 31],
      ["2026-03-09", "2026-03-09T00:00:00-04:00", "2026-03-16T00:00:00-04:00", 1, 32],
      ["2026-03-16", "2026-03-16T00:00:00-04:00", "2026-03-18T00:00:00-04:00", 0, 0],
    ]);
  });

  it("months in New York: M1 is January's, February is empty", async () => {
    const rows = onlyResult(await series("month", "2026-01-15", "2026-04-10", NY)).data.primary;
    expect(compact(rows)).toEqual([
      ["2026-01-01", "2026-01-15T00:00:00-05:00", "2026-02-01T00:00:00-05:00", 1, 2048],
      ["2026-02-01", "2026-02-01T00:00:00-05:00", "2026-03-01T00:00:00-05:00", 0, 0],
      ["2026-03-01", "2026-03-01T00:00:00-05:00", "2026-04-01T00:00:00-04:00", 6, 63],
      ["2026-04-01", "2026-04-01T00:00:00-04:00", "2026-04-11T00:00:00-04:00", 0, 0],
    ]);
  });

  it("months in UTC: M1 is February's", async () => {
    const rows = onlyResult(await series("month", "2026-01-15", "2026-04-10", "UTC")).data.primary;
    expect(rows.map((r) => [r.dt, r["orders.total_revenue"]])).toEqual([
      ["2026-01-01", 0],
      ["2026-02-01", 2048],
      ["2026-03-01", 63],
      ["2026-04-01", 0],
    ]);
  });

  it("quarters", async () => {
    // Q4 2025 (from Dec 1) = Y1; Q1 2026 = M1 + T1..T6 = 2111; Q2, Q3 empty; Q4 = U1..U5 = 1984
    const rows = onlyResult(await series("quarter", "2025-12-01", "2026-12-31", NY)).data.primary;
    expect(compact(rows)).toEqual([
      ["2025-10-01", "2025-12-01T00:00:00-05:00", "2026-01-01T00:00:00-05:00", 1, 4096],
      ["2026-01-01", "2026-01-01T00:00:00-05:00", "2026-04-01T00:00:00-04:00", 7, 2111],
      ["2026-04-01", "2026-04-01T00:00:00-04:00", "2026-07-01T00:00:00-04:00", 0, 0],
      ["2026-07-01", "2026-07-01T00:00:00-04:00", "2026-10-01T00:00:00-04:00", 0, 0],
      ["2026-10-01", "2026-10-01T00:00:00-04:00", "2027-01-01T00:00:00-05:00", 5, 1984],
    ]);
  });

  it("years: Y1 is 2025's in New York and 2026's in UTC", async () => {
    const ny = onlyResult(await series("year", "2025-06-01", "2026-12-31", NY)).data.primary;
    expect(compact(ny)).toEqual([
      ["2025-01-01", "2025-06-01T00:00:00-04:00", "2026-01-01T00:00:00-05:00", 1, 4096],
      ["2026-01-01", "2026-01-01T00:00:00-05:00", "2027-01-01T00:00:00-05:00", 12, 4095],
    ]);
    const utc = onlyResult(await series("year", "2025-06-01", "2026-12-31", "UTC")).data.primary;
    expect(compact(utc)).toEqual([
      ["2025-01-01", "2025-06-01T00:00:00Z", "2026-01-01T00:00:00Z", 0, 0],
      ["2026-01-01", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", 13, 8191],
    ]);
  });

  it("granularity none: one row covering the whole range", async () => {
    const res = onlyResult(await series("none", "2026-03-01", "2026-11-30", NY));
    expect(compact(res.data.primary)).toEqual([
      ["2026-03-01", "2026-03-01T00:00:00-05:00", "2026-12-01T00:00:00-05:00", 11, 2047],
    ]);
  });

  it("an empty range is every bucket with zeros", async () => {
    const rows = onlyResult(await series("day", "2026-06-01", "2026-06-03", NY)).data.primary;
    expect(rows).toEqual([
      {
        dt: "2026-06-01",
        start: "2026-06-01T00:00:00-04:00",
        end: "2026-06-02T00:00:00-04:00",
        "orders.count": 0,
        "orders.total_revenue": 0,
        "orders.aov": null,
      },
      {
        dt: "2026-06-02",
        start: "2026-06-02T00:00:00-04:00",
        end: "2026-06-03T00:00:00-04:00",
        "orders.count": 0,
        "orders.total_revenue": 0,
        "orders.aov": null,
      },
      {
        dt: "2026-06-03",
        start: "2026-06-03T00:00:00-04:00",
        end: "2026-06-04T00:00:00-04:00",
        "orders.count": 0,
        "orders.total_revenue": 0,
        "orders.aov": null,
      },
    ]);
  });

  it("the account's timezone is the default", async () => {
    await app.stores.sql.query("UPDATE accounts SET timezone = $1 WHERE id = $2", [NY, px.accountId]);
    try {
      const rows = onlyResult(await series("day", "2026-03-08", "2026-03-08")).data.primary;
      expect(compact(rows)).toEqual([
        ["2026-03-08", "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 4, 30],
      ]);
    } finally {
      await app.stores.sql.query("UPDATE accounts SET timezone = 'UTC' WHERE id = $1", [px.accountId]);
    }
  });
});

describe("the account cache", () => {
  /** Orders of Mar 9 in the account's timezone (no timezone in the body). */
  const mar9 = async (a: TestApp, p: Pixel) => {
    const res = await poster(
      a,
      p,
    )({ measures: ["orders.count"], dateRange: { start: "2026-03-09", end: "2026-03-09" } });
    return onlyResult(res).data.primary[0]!["orders.count"];
  };
  /** A new pixel with one order at 03:30 UTC on Mar 9: Mar 9 in UTC, Mar 8 in New York. */
  const withOrder = async (a: TestApp) => {
    const p = await a.pixelWithKey(["analytics:read"]);
    await a.services.sync.upsert("orders", p.pixelId, [order("C1", "2026-03-09T03:30:00Z", "USD", 10)]);
    return p;
  };

  it("reuses the account's timezone for accountCacheMs; with 0 a direct edit counts at once", async () => {
    // A second service on the same stores, keeping account rows for a minute (one chDB per process).
    const cached = new QueryService({
      sql: app.stores.sql,
      warehouse: app.stores.warehouse,
      kv: app.stores.kv,
      versions: new DataVersions(app.stores.kv),
      log: createLogger("silent"),
      accountCacheMs: 60_000,
    });
    const own = await withOrder(app);
    const body = generalQuerySchema.parse({
      pixelId: own.pixelId,
      measures: ["orders.count"],
      dateRange: { start: "2026-03-09", end: "2026-03-09" },
    });
    const viaCached = async () => {
      const answer = await cached.general(own.accountId, body, { explain: false, bypassCache: true });
      const results = (answer.body as { results: { data: { primary: Row[] } }[] }).results;
      return results[0]!.data.primary[0]!["orders.count"];
    };
    expect(await viaCached()).toBe(1);
    await app.stores.sql.query("UPDATE accounts SET timezone = $1 WHERE id = $2", [NY, own.accountId]);
    expect(await viaCached()).toBe(1); // the row it holds still says UTC
    expect(await mar9(app, own)).toBe(0); // this file's app (ACCOUNT_CACHE_MS=0) reads the edit at once
  });
});

describe("relative dates", () => {
  const clock = () => app.services.queries as unknown as { deps: { now?: () => Date } };

  it("today, yesterday and NdaysAgo resolve in the query timezone at the service's clock", async () => {
    // 2026-03-09 03:30 UTC is 2026-03-08 23:30 EDT: "today" is Mar 8 in New York, Mar 9 in UTC.
    clock().deps.now = () => new Date("2026-03-09T03:30:00Z");
    try {
      const today = onlyResult(await series("none", "today", "today", NY));
      expect(today.dateRange).toEqual({ start: "2026-03-08", end: "2026-03-08" });
      expect(today.data.primary[0]!["orders.total_revenue"]).toBe(30); // T2..T5
      const yesterday = onlyResult(await series("none", "yesterday", "yesterday", NY));
      expect(yesterday.dateRange).toEqual({ start: "2026-03-07", end: "2026-03-07" });
      expect(yesterday.data.primary[0]!["orders.total_revenue"]).toBe(1); // T1
      const utc = onlyResult(await series("none", "today", "today", "UTC"));
      expect(utc.dateRange).toEqual({ start: "2026-03-09", end: "2026-03-09" });
      expect(utc.data.primary[0]!["orders.total_revenue"]).toBe(48); // T5, T6
      // 2daysAgo..0daysAgo in New York = Mar 6..8 = T1..T5 = 31, by day
      const days = onlyResult(await series("day", "2daysAgo", "0daysAgo", NY));
      expect(days.dateRange).toEqual({ start: "2026-03-06", end: "2026-03-08" });
      expect(days.data.primary.map((r) => [r.dt, r["orders.total_revenue"]])).toEqual([
        ["2026-03-06", 0],
        ["2026-03-07", 1],
        ["2026-03-08", 30],
      ]);
      // a relative compare range: 1daysAgo..1daysAgo = Mar 7
      const cmp = onlyResult(
        await series("none", "today", "today", NY, {
          compareDateRange: { start: "1daysAgo", end: "1daysAgo" },
        }),
      );
      expect(cmp.compareDateRange).toEqual({ start: "2026-03-07", end: "2026-03-07" });
      expect(cmp.data.compare[0]!["orders.total_revenue"]).toBe(1);
      // the clock moves on an hour: Mar 9 in New York, the same request answers for Mar 9 (T6)
      clock().deps.now = () => new Date("2026-03-09T04:30:00Z");
      const next = onlyResult(await series("none", "today", "today", NY));
      expect(next.dateRange).toEqual({ start: "2026-03-09", end: "2026-03-09" });
      expect(next.data.primary[0]!["orders.total_revenue"]).toBe(32);
    } finally {
      delete clock().deps.now;
    }
  });

  it("without an injected clock, today is the real date in the query timezone", async () => {
    const day = (tz: string) =>
      new Intl.DateTimeFormat("en-CA", {
        timeZone: tz,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
      }).format(new Date());
    for (const tz of ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"]) {
      const before = day(tz);
      const res = onlyResult(await series("none", "today", "today", tz));
      const after = day(tz);
      expect([before, after], tz).toContain(res.dateRange.start);
    }
  });

  it("a malformed date or an end before the start is a 400", async () => {
    expect((await series("day", "3weeksAgo", "today", NY)).status).toBe(400);
    expect((await series("day", "2026-02-30", "2026-03-01", NY)).status).toBe(400);
    expect((await series("day", "2026-03-02", "2026-03-01", NY)).status).toBe(400);
  });
});
