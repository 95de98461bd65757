/**
 * The SQL console beside everything else (issue 7): runaway console queries hold readers — and, on
 * chDB, libuv pool threads — for their whole time limit (600 s here). Two pixels' runaways take four
 * readers, as many threads as libuv has by default, while another pixel's console query, an ingest
 * call and /readyz still answer; a pixel's query beyond its share of readers is refused with 429
 * instead of waiting; and a caller that goes away frees its reader at once (the engine kills the query).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { insertMarkers, marker } from "./console-fixtures.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;

const READERS = 5;
const RUNAWAY = "SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c";

let app: TestApp;
let a: Pixel;
let b: Pixel;
let c: Pixel;
let writer: Pixel;

beforeAll(async () => {
  app = await startTestApp({
    env: {
      CONSOLE_READERS: String(READERS),
      CONSOLE_READERS_PER_PIXEL: "2",
      CONSOLE_QUEUE_TIMEOUT_MS: "1500",
      // Far longer than the test may take: only an abort can end these runaways in time.
      CONSOLE_MAX_EXECUTION_SECONDS: "600",
      RATE_QUERY_PER_SEC: "100000",
    },
  });
  a = await app.pixelWithKey(["analytics:read"]);
  b = await app.pixelWithKey(["analytics:read"]);
  c = await app.pixelWithKey(["analytics:read"]);
  writer = await app.pixelWithKey(["events:write"]);
  await insertMarkers(app.stores.warehouse, a.pixelId, "A", 2000);
  await insertMarkers(app.stores.warehouse, b.pixelId, "B");
  await insertMarkers(app.stores.warehouse, c.pixelId, "C", 2000);
});
afterAll(() => app?.close());

function sql(px: Pixel, text: string, extra: Record<string, unknown> = {}) {
  return app.call("POST", "/db-mgmt/api/sql", {
    key: px.key,
    pixelId: px.pixelId,
    body: { pixelId: px.pixelId, sql: text, ...extra },
  });
}

/** A runaway console query the test can walk away from, as a closed browser tab would. */
function runaway(px: Pixel, format: "json" | "csv" = "json") {
  const controller = new AbortController();
  const done = fetch(`${app.url}/db-mgmt/api/sql`, {
    method: "POST",
    headers: { "x-api-key": px.key, "x-pixel-id": px.pixelId, "content-type": "application/json" },
    body: JSON.stringify({ pixelId: px.pixelId, sql: RUNAWAY, format }),
    signal: controller.signal,
  }).then(
    (res) => res.status,
    () => "aborted" as const,
  );
  return { abort: () => controller.abort(), done };
}

/** Polls until `check` holds; bounded by count (each try waits 50 ms), never by a time assertion. */
async function until(check: () => boolean | Promise<boolean>, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    `condition not reached: running ${running()}, executing ${await executing()}, ${JSON.stringify(await app.stores.warehouse.query("SELECT query, is_cancelled, elapsed FROM system.processes WHERE query NOT LIKE '%system.processes%'"))}`,
  );
}

/** Runaway queries the engine is executing now. */
async function executing(): Promise<number> {
  const rows = await app.stores.warehouse.query<{ n: number }>(
    "SELECT count() AS n FROM system.processes WHERE query LIKE '%CROSS JOIN events AS c%' AND is_cancelled = 0 AND query NOT LIKE '%system.processes%'",
  );
  return Number(rows[0]?.n ?? 0);
}

const running = (px?: Pixel) => app.services.console.running(px?.pixelId);

describe("console readers under runaway queries", () => {
  it("runs with libuv's pool sized above the console readers (vitest.config.ts sets it)", () => {
    expect(Number(process.env.UV_THREADPOOL_SIZE)).toBeGreaterThanOrEqual(READERS + 4);
  });

  it("answers another pixel's console query, ingestion and /readyz while four runaways run; a fifth of one pixel gets 429", async () => {
    const runaways = [runaway(a), runaway(a), runaway(c), runaway(c)];
    try {
      // All four in the engine: four libuv threads taken, as many as Node has by default.
      await until(async () => (await executing()) === 4);
      expect(running(a)).toBe(2);
      expect(running(c)).toBe(2);

      const other = await sql(b, "SELECT event_id FROM events");
      expect(other.status, other.text).toBe(200);
      expect((other.body as { rows: unknown[][] }).rows).toEqual([[marker("B", "events")]]);

      const ingest = await app.call("POST", "/tr/api/events", {
        key: writer.key,
        pixelId: writer.pixelId,
        body: { events: [{ name: "page_view", eventId: "beside-the-runaways" }] },
      });
      expect(ingest.status, ingest.text).toBe(200);
      expect((ingest.body as { eventsIngested: number }).eventsIngested).toBe(1);

      const ready = await app.call("GET", "/readyz");
      expect(ready.status, ready.text).toBe(200);

      // Pixel A holds its two readers: a third query waits its 1.5 s, then is refused, not queued forever.
      const third = await sql(a, "SELECT 1");
      expect(third.status, third.text).toBe(429);
      expect((third.body as { message: string }).message).toMatch(/CONSOLE_READERS_PER_PIXEL/);
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // The runaways are still running: none of the answers above came from their end.
      expect(running()).toBe(4);
    } finally {
      for (const r of runaways) r.abort();
      await Promise.all(runaways.map((r) => r.done));
      await until(() => running() === 0);
    }
  });

  it("frees the reader of a caller that goes away: the engine kills the query, the pixel's next query runs", async () => {
    // Pixel A's share of readers, held by a JSON and a CSV runaway.
    const runaways = [runaway(a), runaway(a, "csv")];
    await until(async () => (await executing()) === 2);
    expect(running(a)).toBe(2);
    for (const r of runaways) r.abort();
    expect(await Promise.all(runaways.map((r) => r.done))).toEqual(["aborted", "aborted"]);
    // Without the kill both readers would stay held for the 600 s time limit.
    await until(() => running(a) === 0);
    const next = await sql(a, "SELECT count() AS n FROM events");
    expect(next.status, next.text).toBe(200);
    expect((next.body as { rows: unknown[][] }).rows).toEqual([["2001"]]);
    expect(await executing()).toBe(0);
  });
});
