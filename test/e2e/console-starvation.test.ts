/**
 * The SQL console cannot starve ingestion, with its default limits. The query below answered 200 with
 * a 529 MB body before the console capped results; four at once ran past their time limit, took the
 * service to 3.5 GB and held an ingest request for 30 s. Now each stops at a console limit with 400 —
 * CONSOLE_MAX_RESULT_BYTES (the engine's max_result_bytes), or the 30 s time limit when its niced
 * threads get too little CPU to reach the cap first (seen on a slow machine with other test files
 * running) — and the ingest requests of a few clients sent while all four run keep their p99 under 1 s. The console's threads run at nice 19 only where the engine has
 * CAP_SYS_NICE (as root here); without it, on 2 cores kept busy by other test runs, p99 measured
 * 1.0–1.5 s (docs/sql-console.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;

const RUNAWAY = "SELECT groupArray(x) FROM (SELECT arrayJoin(range(60000000)) AS x)";
/** Ingest requests measured at most; measuring also stops when the first runaway answers. */
const MAX_SAMPLES = 300;
/** Fewer samples would say little about a p99. */
const MIN_SAMPLES = 50;
const CLIENTS = 4;

let app: TestApp;
let a: Pixel;
let b: Pixel;
let writer: Pixel;

beforeAll(async () => {
  // Defaults but for the rate limits, which the test's request rate is not about.
  app = await startTestApp({ env: { RATE_QUERY_PER_SEC: "100000", RATE_INGEST_PER_SEC: "100000" } });
  a = await app.pixelWithKey(["analytics:read"]);
  b = await app.pixelWithKey(["analytics:read"]);
  writer = await app.pixelWithKey(["events:write"]);
});
afterAll(() => app?.close());

const sql = (px: Pixel, text: string) =>
  app.call("POST", "/db-mgmt/api/sql", {
    key: px.key,
    pixelId: px.pixelId,
    body: { pixelId: px.pixelId, sql: text, limit: 1 },
  });

/** Runaway queries the engine is executing now. */
async function executing(): Promise<number> {
  const rows = await app.stores.warehouse.query<{ n: number }>(
    "SELECT count() AS n FROM system.processes WHERE query LIKE '%range(60000000)%' AND query NOT LIKE '%system.processes%'",
  );
  return Number(rows[0]?.n ?? 0);
}

/** Polls until `check` holds; bounded by count (each try waits 50 ms), never by a time assertion. */
async function until(check: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not reached");
}

/** Nearest-rank percentile. */
const percentile = (sorted: number[], p: number) =>
  sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe("the SQL console beside ingestion", () => {
  it("keeps ingestion's p99 under 1 s while four runaway queries run; each stops at a console limit with 400", async () => {
    let answered = 0;
    // Two pixels, two each: every reader of the default four is taken.
    const runaways = [a, a, b, b].map((px) =>
      sql(px, RUNAWAY).finally(() => {
        answered++;
      }),
    );
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    try {
      await until(async () => answered > 0 || (await executing()) === 4);
      expect(answered, "the runaways ended before they all ran").toBe(0);

      // A few clients sending one after another, as a shop's pixel and its server would: enough
      // requests for a p99 while the four run.
      const latencies: number[] = [];
      let sent = 0;
      const client = async () => {
        while (sent < MAX_SAMPLES && answered === 0) {
          const i = sent++;
          const started = performance.now();
          const res = await app.call("POST", "/tr/api/events", {
            key: writer.key,
            pixelId: writer.pixelId,
            body: { events: [{ name: "page_view", eventId: `beside-runaways-${i}` }] },
          });
          latencies.push(performance.now() - started);
          expect(res.status, res.text).toBe(200);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      const answers = await Promise.all(runaways);

      const sorted = [...latencies].sort((x, y) => x - y);
      const summary = `${latencies.length} ingest requests: p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms; peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`;
      expect(latencies.length, summary).toBeGreaterThanOrEqual(MIN_SAMPLES);
      expect(percentile(sorted, 99), summary).toBeLessThan(1000);
      for (const res of answers) {
        expect(res.status, res.text.slice(0, 300)).toBe(400);
        expect((res.body as { message: string }).message).toMatch(
          /CONSOLE_MAX_RESULT_BYTES|TIMEOUT_EXCEEDED/,
        );
      }
    } finally {
      clearInterval(sampler);
      await Promise.allSettled(runaways);
    }
  }, 180_000);
});
