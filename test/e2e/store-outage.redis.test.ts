/**
 * A Redis outage seen from the HTTP API, against a redis-server this test owns: stopped, ingest and
 * queries answer 503 with Retry-After within 2 s each; frozen (SIGSTOP: connections open, nothing
 * answered), the same, and once the breaker opened at once; started or thawed again, the service
 * recovers without a restart.
 */
import { type EventEmitter, once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReservationUncertainError } from "../../src/stores/dedup/port.js";
import { RedisDedupStore } from "../../src/stores/dedup/redis.js";
import { RedisKv } from "../../src/stores/kv/redis.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type OwnRedis, startOwnRedis, which } from "../helpers/own-servers.js";
import { uniqueName } from "../helpers/stores.js";
import { sendEvents } from "./ingest-helpers.js";
import { poster } from "./query-fixtures.js";

const BOUND_MS = 2000;
const haveRedis = !!(await which("redis-server"));
if (!haveRedis) console.warn("Redis outage suite skipped: redis-server is not on PATH");

describe.skipIf(!haveRedis)("Redis outage", () => {
  let redis: OwnRedis;
  let app: TestApp;
  let px: Awaited<ReturnType<TestApp["pixelWithKey"]>>;
  let seq = 0;

  beforeAll(async () => {
    redis = await startOwnRedis();
    app = await startTestApp({
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `${uniqueName("pxh_outage")}:` },
    });
    px = await app.pixelWithKey(["events:write", "analytics:read"]);
  });
  afterAll(async () => {
    await app?.close();
    await redis?.remove();
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

  /** Each call answers 503 with Retry-After within the bound; returns the times taken. */
  async function expectFastOutage(times: number): Promise<number[]> {
    const taken: number[] = [];
    for (let i = 0; i < times; i++) {
      for (const call of [ingest, query]) {
        const { res, ms } = await timed(call);
        expect(res.status, res.text).toBe(503);
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(res.text).toContain("the cache store is not reachable");
        expect(ms).toBeLessThan(BOUND_MS);
        taken.push(ms);
      }
    }
    return taken;
  }

  /** Waits (on the answers, not on a clock) until ingest and query succeed again. */
  async function expectRecovery(deadlineMs = 20_000): Promise<number> {
    const started = performance.now();
    for (;;) {
      const res = await ingest();
      if (res.status === 200) break;
      expect(res.status, res.text).toBe(503);
      if (performance.now() - started > deadlineMs) throw new Error(`no recovery within ${deadlineMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const q = await query();
    expect(q.status, q.text).toBe(200);
    return performance.now() - started;
  }

  it("answers normally while Redis is up", async () => {
    expect((await ingest()).status).toBe(200);
    expect((await query()).status).toBe(200);
  });

  it("a reply that came while the event loop was blocked past the command timeout is not a timeout", async () => {
    const kv = new RedisKv(redis.url, "stall:", { commandTimeoutMs: 100 });
    try {
      // Connected first: a command sent before the connection is ready waits for it within its own
      // 100 ms, which connecting alone can exceed on a loaded machine (CI saw it).
      const client = (kv as unknown as { redis: { status: string } & EventEmitter }).redis;
      if (client.status !== "ready") await once(client, "ready");
      await kv.ping();
      const pending = kv.incr("n");
      const until = performance.now() + 500;
      while (performance.now() < until) {
        // a synchronous stall of the whole process, as a long task or a starved CPU makes one
      }
      await expect(pending).resolves.toBe(1);
    } finally {
      await kv.close();
    }
  });

  it("Redis stopped: ingest and queries answer 503 with Retry-After within 2 s; restarted: recovers", async () => {
    await redis.stop();
    const taken = await expectFastOutage(6);
    const events = await ingest();
    expect(events.body).toMatchObject({ error: { code: "SERVICE_UNAVAILABLE" } });
    console.info(`redis stopped: time to 503 max ${Math.max(...taken).toFixed(0)} ms`);
    await redis.start();
    console.info(`redis restarted: recovered after ${(await expectRecovery()).toFixed(0)} ms`);
  });

  it("a dedup reservation whose answer was lost to a freeze is released, not left blocking its ids", async () => {
    const prefix = `${uniqueName("pxh_uncertain")}:`;
    const options = {
      windowDays: 30,
      ownerTtlSeconds: 10,
      leaseSeconds: 60,
      periodDays: 10,
      bucketBits: 4,
      prefix,
    };
    const kvA = new RedisKv(redis.url, prefix, { commandTimeoutMs: 200 });
    const kvB = new RedisKv(redis.url, prefix);
    const a = new RedisDedupStore(kvA.client, { ...options, mayHoldIds: async () => false });
    const b = new RedisDedupStore(kvB.client, { ...options, mayHoldIds: async () => false });
    try {
      await a.reserve("px", ["warm-up"]);
      redis.freeze();
      let failed: unknown;
      try {
        await a.reserve("px", ["lost-answer"]);
      } catch (err) {
        failed = err;
      } finally {
        redis.thaw();
      }
      // The script was sent before the freeze and ran after it: a's lease exists, a is alive.
      expect(failed).toBeInstanceOf(ReservationUncertainError);
      expect((await b.reserve("px", ["lost-answer"])).status).toEqual(["inflight"]);
      await a.release((failed as ReservationUncertainError).lease);
      expect((await b.reserve("px", ["lost-answer"])).status).toEqual(["fresh"]);
    } finally {
      redis.thaw();
      await a.close();
      await b.close();
      await kvA.close();
      await kvB.close();
    }
  });

  it("Redis frozen: each answer within 2 s, at once once the breaker opened; thawed: recovers", async () => {
    redis.freeze();
    try {
      const taken = await expectFastOutage(5);
      // The first ones waited for the command timeout; the breaker is open by now.
      const { res, ms } = await timed(ingest);
      expect(res.status).toBe(503);
      expect(ms).toBeLessThan(250);
      console.info(
        `redis frozen: time to 503 max ${Math.max(...taken).toFixed(0)} ms, breaker open ${ms.toFixed(0)} ms`,
      );
    } finally {
      redis.thaw();
    }
    console.info(`redis thawed: recovered after ${(await expectRecovery()).toFixed(0)} ms`);
  });
});
