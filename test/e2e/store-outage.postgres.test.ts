/**
 * A Postgres outage seen from the HTTP API, against a cluster this test creates (initdb, pg_ctl):
 * stopped (`pg_ctl stop -m fast`: sessions ended with 57P01, then connections refused), ingest and
 * queries answer 503 with Retry-After within 2 s each; started again, the service recovers without a
 * restart. Keys are not cached (KEY_CACHE_MS=0), so every request needs the SQL store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type OwnPostgres, startOwnPostgres } from "../helpers/own-servers.js";
import { sendEvents } from "./ingest-helpers.js";
import { poster } from "./query-fixtures.js";

const BOUND_MS = 2000;
const cluster = await startOwnPostgres();
const skip = typeof cluster === "string";
if (skip) console.warn(`Postgres outage suite skipped: ${cluster}`);

describe.skipIf(skip)("Postgres outage", () => {
  const pg = cluster as OwnPostgres;
  let app: TestApp;
  let px: Awaited<ReturnType<TestApp["pixelWithKey"]>>;
  let seq = 0;

  beforeAll(async () => {
    app = await startTestApp({
      env: {
        DATABASE_URL: pg.url,
        KEY_SECRET: "outage-secret-outage-secret-outage-secret",
        KEY_CACHE_MS: "0",
        ACCOUNT_CACHE_MS: "0",
      },
    });
    px = await app.pixelWithKey(["events:write", "analytics:read"]);
  });
  afterAll(async () => {
    await app?.close();
    await pg?.remove?.();
  });

  const ingest = () =>
    sendEvents(app, px, [{ name: "page_view", eventId: `e-${++seq}`, identityId: "anon-1" }]);
  const query = () =>
    poster(
      app,
      px,
    )({
      measures: ["events.count"],
      dateRange: { start: "2026-09-01", end: "2026-09-02" },
      granularity: "day",
      timezone: "UTC",
    });

  async function timed<T>(fn: () => Promise<T>): Promise<{ res: T; ms: number }> {
    const started = performance.now();
    const res = await fn();
    return { res, ms: performance.now() - started };
  }

  it("answers normally while Postgres is up", async () => {
    expect((await ingest()).status).toBe(200);
    expect((await query()).status).toBe(200);
  });

  it("Postgres stopped: ingest and queries answer 503 with Retry-After within 2 s; started: recovers", async () => {
    await pg.stop();
    const taken: number[] = [];
    for (let i = 0; i < 6; i++) {
      for (const call of [ingest, query]) {
        const { res, ms } = await timed(call);
        expect(res.status, res.text).toBe(503);
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(res.text).toContain("the SQL store is not reachable");
        expect(ms).toBeLessThan(BOUND_MS);
        taken.push(ms);
      }
    }
    console.info(`postgres stopped: time to 503 max ${Math.max(...taken).toFixed(0)} ms`);

    await pg.start();
    const started = performance.now();
    for (;;) {
      const res = await ingest();
      if (res.status === 200) break;
      expect(res.status, res.text).toBe(503);
      if (performance.now() - started > 20_000) throw new Error("no recovery within 20 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await query()).status).toBe(200);
    console.info(`postgres started: recovered after ${(performance.now() - started).toFixed(0)} ms`);
  });
});
