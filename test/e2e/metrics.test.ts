/**
 * GET /metrics (docs/operations.md): the Prometheus text of the service, behind METRICS_TOKEN on the
 * service's port. Counters follow what the API answered — worked example: 3 events stored, a resend
 * of one of them (1 duplicate), a request with an invalid event (1 event rejected, reason invalid),
 * one general query (a cache miss), one console query and one refused — and no label carries a
 * pixel id or an event name.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type Pixel, sendEvents, sendOk } from "./ingest-helpers.js";

const TOKEN = "metrics-token-for-tests-0123456789";
let app: TestApp;
let px: Pixel;
beforeAll(async () => {
  app = await startTestApp({ env: { METRICS_TOKEN: TOKEN } });
  px = await app.pixelWithKey(["events:write", "analytics:read"]);
});
afterAll(() => app?.close());

const scrape = async (token: string | null = TOKEN) =>
  app.call("GET", "/metrics", token === null ? {} : { headers: { authorization: `Bearer ${token}` } });

/** The value of one sample (`name{labels}`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[3] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return 0;
}

describe("GET /metrics", () => {
  it("needs the bearer token: none or a wrong one is 401", async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape("wrong-token-wrong-token-wrong")).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(ok.text).toContain("pixelhouse_process_resident_memory_bytes");
    expect(ok.text).toContain("pixelhouse_nodejs_eventloop_lag_seconds");
  });

  it("counts ingestion, queries and console queries as the API answered them, with bounded labels", async () => {
    const events = ["a", "b", "c"].map((k) => ({
      name: "secret_event_name_xyz",
      eventId: `m-${k}`,
      identityId: `visitor-${k}`,
    }));
    expect((await sendOk(app, px, events)).eventsIngested).toBe(3);
    expect((await sendOk(app, px, [events[0]])).duplicatesSkipped).toBe(1);
    const bad = await sendEvents(app, px, [{ name: "" }]);
    expect(bad.status).toBe(400);
    const query = await app.call("POST", "/db-mgmt/api/query", {
      key: px.key,
      pixelId: px.pixelId,
      body: {
        pixelId: px.pixelId,
        measures: ["events.count"],
        dateRange: { start: "2026-01-01", end: "2026-01-02" },
      },
    });
    expect(query.status, query.text).toBe(200);

    const sql = (text: string) =>
      app.call("POST", "/db-mgmt/api/sql", {
        key: px.key,
        pixelId: px.pixelId,
        body: { pixelId: px.pixelId, sql: text },
      });
    expect((await sql("SELECT count() FROM events")).status).toBe(200);
    expect((await sql("SELECT * FROM system.tables")).status).toBe(400);

    const text = (await scrape()).text;
    expect(sample(text, "pixelhouse_events_accepted_total", { origin: "server" })).toBe(3);
    expect(sample(text, "pixelhouse_events_duplicate_total", { origin: "server" })).toBe(1);
    expect(sample(text, "pixelhouse_events_rejected_total", { reason: "invalid" })).toBe(1);
    expect(sample(text, "pixelhouse_ingest_requests_total", { origin: "server", outcome: "accepted" })).toBe(
      2,
    );
    expect(sample(text, "pixelhouse_ingest_requests_total", { origin: "server", outcome: "rejected" })).toBe(
      1,
    );
    expect(sample(text, "pixelhouse_ingest_ack_seconds_count", { origin: "server" })).toBe(2);
    expect(sample(text, "pixelhouse_ingest_group_events_count")).toBeGreaterThanOrEqual(2);
    expect(
      sample(text, "pixelhouse_query_seconds_count", { endpoint: "query", shape: "series", cache: "miss" }),
    ).toBe(1);
    expect(sample(text, "pixelhouse_console_queries_total", { outcome: "ok" })).toBe(1);
    expect(sample(text, "pixelhouse_console_queries_total", { outcome: "refused" })).toBe(1);
    // Both took a reader: the refusal comes from the checks run on it.
    expect(sample(text, "pixelhouse_console_queue_wait_seconds_count")).toBe(2);
    expect(sample(text, "pixelhouse_console_readers_in_use")).toBe(0);
    expect(
      sample(text, "pixelhouse_http_requests_total", {
        route: "/tr/api/events",
        method: "post",
        status: "4xx",
      }),
    ).toBe(1);
    // Labels never carry input: no pixel id, no event name.
    expect(text).not.toContain(px.pixelId);
    expect(text).not.toContain("secret_event_name_xyz");
  });

  it("reports every background consumer's lag; the identity worker (not running here) is behind by what was published", async () => {
    const text = (await scrape()).text;
    for (const consumer of ["outbox-relay", "forwarding", "cogs-recalc", "identity", "derived-tables"]) {
      expect(text, consumer).toMatch(
        new RegExp(`pixelhouse_consumer_lag_messages\\{consumer="${consumer}"\\} \\d+`),
      );
      expect(text, consumer).toMatch(
        new RegExp(`pixelhouse_consumer_lag_seconds\\{consumer="${consumer}"\\} [0-9.e+-]+`),
      );
    }
    expect(sample(text, "pixelhouse_consumer_dead_letters", { consumer: "forwarding" })).toBe(0);
    const backlog = await app.services.identityWorker.lag();
    expect(backlog.messages).toBeGreaterThan(0);
    expect(sample(text, "pixelhouse_consumer_lag_messages", { consumer: "identity" })).toBe(backlog.messages);
    // Filed: the gauge falls to 0 and the worker's throughput counter counts what it filed.
    expect((await app.services.settle()).messages).toBe(0);
    const after = (await scrape()).text;
    expect(sample(after, "pixelhouse_consumer_lag_messages", { consumer: "identity" })).toBe(0);
    expect(sample(after, "pixelhouse_consumer_processed_total", { consumer: "identity" })).toBe(
      backlog.messages,
    );
  });

  it("reports the warehouse's active parts and running merges, as its system tables say", async () => {
    await sendOk(app, px, [{ name: "page_view", eventId: "m-parts", identityId: "visitor-parts" }]);
    const wh = app.stores.warehouse;
    // Merges held, so the parts do not change between the scrape and the count.
    await wh.command("SYSTEM STOP MERGES");
    try {
      const text = (await scrape()).text;
      const [row] = await wh.query<{ parts: string }>(
        "SELECT count() AS parts FROM system.parts WHERE active AND database = currentDatabase()",
      );
      expect(Number(row?.parts)).toBeGreaterThan(0);
      expect(sample(text, "pixelhouse_warehouse_active_parts")).toBe(Number(row?.parts));
      expect(text).toMatch(/^pixelhouse_warehouse_merges \d+$/m);
    } finally {
      await wh.command("SYSTEM START MERGES");
    }
  });

  it("/readyz names each consumer with its lag", async () => {
    const res = await app.call("GET", "/readyz");
    expect(res.status).toBe(200);
    const body = res.body as {
      consumers: Record<string, { ok: boolean; messages: number; seconds: number }>;
    };
    expect(Object.keys(body.consumers).sort()).toEqual([
      "cogs-recalc",
      "derived-tables",
      "forwarding",
      "identity",
      "outbox-relay",
    ]);
    for (const c of Object.values(body.consumers))
      expect(c).toMatchObject({ ok: true, messages: expect.any(Number) });
  });
});
