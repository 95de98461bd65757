/**
 * DeliveryQueue statement by statement over PGlite, with no worker and no receiver: holds, claims and
 * their leases, each way a claimed row can be settled, and dead letters. The worker's side (sending,
 * timeouts, stop) is in test/integration/forwarding.test.ts.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BadRequestError } from "../../src/errors.js";
import { DestinationService } from "../../src/forwarding/destinations.js";
import { type ClaimedDelivery, DeliveryQueue, type QueueOptions } from "../../src/forwarding/queue.js";
import type { EventRow, ForwardableEvent } from "../../src/shared/event-row.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { openPglite } from "../helpers/stores.js";

const uid = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}`;

function event(pixelId: string, name = "purchase"): ForwardableEvent {
  const row: EventRow = {
    pixel_id: pixelId,
    event_id: uid("evt"),
    client_event_id: true,
    name,
    event_time: "2026-03-29 10:11:12.345",
    received_at: "2026-03-29 10:11:12.400",
    origin: "server",
    request_id: uid("req"),
    identity_id: "idn_1",
    canonical_id: "idn_1",
    email_hashes: [],
    user_ids: [],
    store_ids: [],
    ip: "",
    user_agent: "",
    ua_browser: "",
    ua_browser_version: "",
    ua_os: "",
    ua_device: "",
    locale: "",
    page_url: "",
    page_host: "",
    page_path: "",
    referrer: "",
    referrer_host: "",
    utm_source: "",
    utm_medium: "",
    utm_campaign: "",
    utm_term: "",
    utm_content: "",
    utm_id: "",
    click_ids: {},
    fbc: "",
    fbp: "",
    channel: "",
    source: "",
    campaign_id: "",
    adset_id: "",
    ad_id: "",
    is_touch: false,
    order_id: "",
    value: null,
    currency: "",
    items: [],
    viewport_width: null,
    viewport_height: null,
    page_height: null,
    device_pixel_ratio: null,
    properties: "{}",
  };
  return { row, originalIp: "" };
}

let sql: SqlStore;
let close: () => Promise<void>;
let destinations: DestinationService;

beforeAll(async () => {
  const opened = await openPglite();
  sql = opened.store;
  close = opened.close;
  for (const m of readMigrations(join(SQL_DIR, "postgres"))) await sql.exec(m.sql);
  destinations = new DestinationService(sql);
});
afterAll(() => close?.());

/** A pixel with one enabled webhook destination. */
async function pixel(): Promise<{ pixelId: string; destinationId: string }> {
  const pixelId = uid("px");
  await sql.query("INSERT INTO accounts (id, name) VALUES ($1, 'Queue test')", [`acc_${pixelId}`]);
  await sql.query("INSERT INTO pixels (id, account_id, name) VALUES ($1, $2, 'Queue test')", [
    pixelId,
    `acc_${pixelId}`,
  ]);
  const d = await destinations.add({ pixelId, kind: "webhook", config: { url: "http://127.0.0.1:9/" } });
  return { pixelId, destinationId: d.id };
}

interface Row {
  id: string;
  attempts: number;
  /** next_attempt_at, epoch ms. */
  due_at: number;
  locked: boolean;
  last_error: string | null;
  hold_token: string | null;
}

async function rows(pixelId: string): Promise<Row[]> {
  const r = await sql.query<Row>(
    `SELECT id, attempts, locked_until IS NOT NULL AS locked, last_error, hold_token,
            (extract(epoch FROM next_attempt_at) * 1000)::float8 AS due_at
     FROM deliveries WHERE pixel_id = $1 ORDER BY id`,
    [pixelId],
  );
  return r.rows;
}

const noJitter: QueueOptions = { backoffBaseMs: 1_000, backoffCapMs: 60_000, jitter: 0 };

// Claims are global (every due row of any pixel); clearing keeps each case to its own rows.
beforeEach(async () => {
  await sql.query("DELETE FROM deliveries");
  await sql.query("DELETE FROM dead_letters");
});

describe("holds", () => {
  it("held rows are not due; release makes them due and tells listeners, cancel drops them", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations);
    let woken = 0;
    queue.onDue(() => woken++);
    expect(await queue.enqueue(pixelId, [event(pixelId)], { token: "kept", ms: 60_000 })).toBe(1);
    expect(await queue.enqueue(pixelId, [event(pixelId)], { token: "dropped", ms: 60_000 })).toBe(1);
    expect(woken).toBe(0);
    expect(await queue.claim(10, 30_000)).toEqual([]);

    await queue.release("kept");
    expect(woken).toBe(1);
    await queue.cancel("dropped");
    const left = await rows(pixelId);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ hold_token: null, locked: false, attempts: 0 });
    expect(left[0]!.due_at).toBeLessThanOrEqual(Date.now());

    await queue.release("no-such-token");
    expect(woken).toBe(1);
  });

  it("an unheld enqueue is due at once and tells listeners; unsubscribed listeners hear nothing", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations);
    let woken = 0;
    const unsubscribe = queue.onDue(() => woken++);
    await queue.enqueue(pixelId, [event(pixelId)]);
    expect(woken).toBe(1);
    unsubscribe();
    await queue.enqueue(pixelId, [event(pixelId)]);
    expect(woken).toBe(1);
    expect(await queue.claim(10, 30_000)).toHaveLength(2);
  });
});

describe("claim", () => {
  it("counts the attempt, holds the row for the lease and returns it with its destination", async () => {
    const { pixelId, destinationId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations);
    const e = event(pixelId);
    await queue.enqueue(pixelId, [e]);
    const before = Date.now();
    const [claimed, ...more] = await queue.claim(10, 30_000);
    expect(more).toEqual([]);
    expect(claimed).toMatchObject({ pixelId, eventId: e.row.event_id, attempts: 1 });
    expect(claimed!.destination).toMatchObject({ id: destinationId, kind: "webhook", enabled: true });
    expect((claimed!.payload as { id: string }).id).toBe(claimed!.id);
    expect(claimed!.lease.getTime()).toBeGreaterThanOrEqual(before + 29_000);

    // Leased: neither this queue nor another sees it again until the lease ends.
    expect(await queue.claim(10, 30_000)).toEqual([]);
    expect(await new DeliveryQueue(sql, destinations).claim(10, 30_000)).toEqual([]);
    const [row] = await rows(pixelId);
    expect(row).toMatchObject({ attempts: 1, locked: true });
  });

  it("a lapsed lease makes the row due again, and the first claimant's settle no longer applies", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations, noJitter);
    await queue.enqueue(pixelId, [event(pixelId)]);
    const [first] = await queue.claim(10, 1);
    await new Promise((r) => setTimeout(r, 20));
    const [second] = await queue.claim(10, 30_000);
    expect(second).toMatchObject({ id: first!.id, attempts: 2 });

    // The first worker finishes late: its outcome is ignored, the row stays with the second.
    await queue.settle([{ delivery: first!, outcome: { kind: "ok" } }]);
    expect(await rows(pixelId)).toMatchObject([{ attempts: 2, locked: true }]);
    await queue.settle([{ delivery: second!, outcome: { kind: "ok" } }]);
    expect(await rows(pixelId)).toEqual([]);
  });

  it("takes at most `limit` rows, oldest due first, and skips disabled destinations", async () => {
    const { pixelId, destinationId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations);
    const events = Array.from({ length: 5 }, () => event(pixelId));
    for (const e of events) await queue.enqueue(pixelId, [e]);
    const batch = await queue.claim(3, 30_000);
    expect(batch.map((d) => d.eventId)).toEqual(events.slice(0, 3).map((e) => e.row.event_id));

    await sql.query("UPDATE destinations SET enabled = false WHERE id = $1", [destinationId]);
    expect(await queue.claim(10, 30_000)).toEqual([]);
    await sql.query("UPDATE destinations SET enabled = true WHERE id = $1", [destinationId]);
    expect(await queue.claim(10, 30_000)).toHaveLength(2);
  });
});

describe("settle", () => {
  async function claimOne(queue: DeliveryQueue, pixelId: string): Promise<ClaimedDelivery> {
    await queue.enqueue(pixelId, [event(pixelId)]);
    const [d] = await queue.claim(1, 30_000);
    return d!;
  }

  it("deletes a delivered row", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations);
    const d = await claimOne(queue, pixelId);
    expect(await queue.settle([{ delivery: d, outcome: { kind: "ok" } }])).toEqual({
      delivered: 1,
      retried: 0,
      deadLettered: 0,
      released: 0,
    });
    expect(await rows(pixelId)).toEqual([]);
  });

  /** Runs `settle` and returns the wall-clock window it ran in. */
  async function timed(fn: () => Promise<unknown>): Promise<{ from: number; to: number }> {
    const from = Date.now();
    await fn();
    return { from, to: Date.now() };
  }

  /** The row is due `delayMs` after a moment inside `window` (the statement's clock). */
  function expectDueAfter(row: Row | undefined, window: { from: number; to: number }, delayMs: number) {
    expect(row!.due_at).toBeGreaterThanOrEqual(window.from + delayMs - 1);
    expect(row!.due_at).toBeLessThanOrEqual(window.to + delayMs + 1);
  }

  it("reschedules a failure after base × 2^(n-1), keeping the attempt and the error", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations, noJitter);
    const d = await claimOne(queue, pixelId);
    let result: unknown;
    let window = await timed(async () => {
      result = await queue.settle([{ delivery: d, outcome: { kind: "failed", error: "HTTP 500" } }]);
    });
    expect(result).toMatchObject({ retried: 1 });
    let [row] = await rows(pixelId);
    expect(row).toMatchObject({ attempts: 1, locked: false, last_error: "HTTP 500" });
    expectDueAfter(row, window, 1_000);

    // Third failure: 4 s.
    await sql.query("UPDATE deliveries SET next_attempt_at = now(), attempts = 2 WHERE id = $1", [d.id]);
    const [third] = await queue.claim(1, 30_000);
    expect(third!.attempts).toBe(3);
    window = await timed(() =>
      queue.settle([{ delivery: third!, outcome: { kind: "failed", error: "HTTP 502" } }]),
    );
    [row] = await rows(pixelId);
    expect(row).toMatchObject({ attempts: 3, last_error: "HTTP 502" });
    expectDueAfter(row, window, 4_000);
  });

  it("a Retry-After replaces the backoff, capped at backoffCapMs", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations, noJitter);
    const a = await claimOne(queue, pixelId);
    const b = await claimOne(queue, pixelId);
    const window = await timed(() =>
      queue.settle([
        { delivery: a, outcome: { kind: "failed", error: "HTTP 429", retryAfterMs: 10_000 } },
        { delivery: b, outcome: { kind: "failed", error: "HTTP 503", retryAfterMs: 86_400_000 } },
      ]),
    );
    const [ra, rb] = await rows(pixelId);
    expectDueAfter(ra, window, 10_000);
    expectDueAfter(rb, window, 60_000);
  });

  it("hands a released row back due now without counting the attempt or touching its error", async () => {
    const { pixelId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations, noJitter);
    const d = await claimOne(queue, pixelId);
    await sql.query("UPDATE deliveries SET last_error = 'earlier' WHERE id = $1", [d.id]);
    expect(await queue.settle([{ delivery: d, outcome: { kind: "released" } }])).toMatchObject({
      released: 1,
    });
    const [row] = await rows(pixelId);
    expect(row).toMatchObject({ attempts: 0, locked: false, last_error: "earlier" });
    expect(row!.due_at).toBeLessThanOrEqual(Date.now());
  });

  it("moves the row to dead_letters on the maxAttempts-th failure with its attempts and last error", async () => {
    const { pixelId, destinationId } = await pixel();
    const queue = new DeliveryQueue(sql, destinations, { ...noJitter, backoffBaseMs: 0, maxAttempts: 2 });
    const d = await claimOne(queue, pixelId);
    await queue.settle([{ delivery: d, outcome: { kind: "failed", error: "HTTP 500" } }]);
    const [again] = await queue.claim(1, 30_000);
    expect(again!.attempts).toBe(2);
    const ok = await claimOne(queue, pixelId);
    expect(
      await queue.settle([
        { delivery: again!, outcome: { kind: "failed", error: "HTTP 400: bad" } },
        { delivery: ok, outcome: { kind: "ok" } },
      ]),
    ).toEqual({ delivered: 1, retried: 0, deadLettered: 1, released: 0 });
    expect(await rows(pixelId)).toEqual([]);
    const letters = await queue.listDeadLetters(pixelId);
    expect(letters).toEqual([
      {
        id: expect.any(String),
        destinationId,
        pixelId,
        eventId: d.eventId,
        eventName: "purchase",
        attempts: 2,
        lastError: "HTTP 400: bad",
        failedAt: expect.any(Date),
        replayedAt: null,
      },
    ]);
  });

  it("does nothing for an empty batch", async () => {
    const queue = new DeliveryQueue(sql, destinations);
    expect(await queue.settle([])).toEqual({ delivered: 0, retried: 0, deadLettered: 0, released: 0 });
  });
});

describe("dead letters", () => {
  async function deadLetters(pixelId: string, n: number, queue: DeliveryQueue): Promise<void> {
    await queue.enqueue(
      pixelId,
      Array.from({ length: n }, () => event(pixelId, "lead")),
    );
    const claimed = await queue.claim(n, 30_000);
    await queue.settle(claimed.map((delivery) => ({ delivery, outcome: { kind: "failed", error: "x" } })));
  }

  it("replay re-queues matching letters once, due now with attempts 0 and the same payload", async () => {
    const a = await pixel();
    const b = await pixel();
    const queue = new DeliveryQueue(sql, destinations, { maxAttempts: 1 });
    await deadLetters(a.pixelId, 2, queue);
    await deadLetters(b.pixelId, 1, queue);
    const letters = await queue.listDeadLetters(a.pixelId);
    expect(letters.map((l) => l.eventName)).toEqual(["lead", "lead"]);
    let woken = 0;
    queue.onDue(() => woken++);

    expect(await queue.replayDeadLetters({ ids: [letters[0]!.id] })).toBe(1);
    expect(await queue.replayDeadLetters({ destinationId: a.destinationId })).toBe(1);
    expect(await queue.replayDeadLetters({ pixelId: a.pixelId })).toBe(0);
    expect(woken).toBe(2);
    expect(await queue.listDeadLetters(a.pixelId)).toEqual([]);
    expect(await queue.listDeadLetters(a.pixelId, { includeReplayed: true })).toHaveLength(2);
    expect(await queue.listDeadLetters(b.pixelId)).toHaveLength(1);

    const requeued = await queue.claim(10, 30_000);
    expect(requeued.map((d) => d.attempts)).toEqual([1, 1]);
    expect(new Set(requeued.map((d) => (d.payload as { id: string }).id))).toEqual(
      new Set((await rowsOfLetters(a.pixelId)).map((p) => p.id)),
    );
  });

  it("replay refuses an unfiltered call and ids that are not integers", async () => {
    const queue = new DeliveryQueue(sql, destinations);
    await expect(queue.replayDeadLetters({})).rejects.toBeInstanceOf(BadRequestError);
    await expect(queue.replayDeadLetters({ ids: ["1; DROP TABLE x"] })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });

  async function rowsOfLetters(pixelId: string): Promise<{ id: string }[]> {
    const r = await sql.query<{ payload: { id: string } }>(
      "SELECT payload FROM dead_letters WHERE pixel_id = $1",
      [pixelId],
    );
    return r.rows.map((x) => x.payload);
  }
});
