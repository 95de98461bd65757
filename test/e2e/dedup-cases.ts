/**
 * The eventId dedup suite (docs/ingestion.md, "Duplicate means stored"), run against each dedup store by its own test file (one app per
 * file: chDB allows one data directory per process):
 *   ingest-dedup.embedded.test.ts  SqlDedupStore over PGlite
 *   ingest-dedup.postgres.test.ts  SqlDedupStore over the Postgres server (real concurrency)
 *   ingest-dedup.redis.test.ts     RedisDedupStore (compact digests) over the Redis server
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisDedupStore } from "../../src/stores/dedup/redis.js";
import type { RedisKv } from "../../src/stores/kv/redis.js";
import type { TestApp } from "../helpers/app.js";
import { TEST_REDIS_URL } from "../helpers/env.js";
import {
  eventCount,
  eventRows,
  expectEnvelope,
  type IngestOk,
  oneRow,
  sendEvents,
  sendOk,
  sha256,
  ULID_RE,
} from "./ingest-helpers.js";

/**
 * The cases that hold a lease forever wait out the whole in-flight wait before their 503: 5 s keeps
 * them short and still leaves a busy machine's groups time to finish (the default is 12 s).
 */
export const DEDUP_TEST_ENV: Record<string, string> = { DEDUP_INFLIGHT_WAIT_MS: "5000" };

/**
 * Group commit dedups requests that arrive together in memory, before the dedup store is asked. With
 * every request its own group and up to 8 groups at once — as several server processes would be —
 * concurrent copies race in the dedup store itself.
 */
export const ONE_GROUP_PER_REQUEST: Record<string, string> = {
  INGEST_FLUSH_ROWS: "1",
  INGEST_GROUPS: "8",
  ...DEDUP_TEST_ENV,
};

export interface DedupSuiteOptions {
  /** Starts the app of this file (called once, in beforeAll). */
  start(): Promise<TestApp>;
  /** Which adapter the app's dedup store is: the time-travel and crash cases differ per adapter. */
  dedup: "sql" | "redis";
  /** False when the server store this variant needs is not configured (the suite is skipped). */
  enabled: boolean;
  /** More cases of one variant only, sharing the suite's app. */
  extra?: (app: () => TestApp) => void;
}

const uid = (label: string) => `${label}-${randomBytes(5).toString("hex")}`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export function dedupSuite(label: string, options: DedupSuiteOptions): void {
  describe.skipIf(!options.enabled)(label, () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await options.start();
      expect(app.stores.dedup.kind).toBe(options.dedup);
    });
    afterAll(() => app?.close());

    const newPixel = () => app.pixelWithKey(["events:write"]);

    it("the same eventId twice in one request: 1 ingested, 1 skipped, the first copy wins", async () => {
      const px = await newPixel();
      const id = uid("twice");
      const res = await sendOk(app, px, [
        { name: "purchase", eventId: id, eventProperties: { value: 1 } },
        { name: "purchase", eventId: id, eventProperties: { value: 2 } },
      ]);
      expect(res).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
      expect((await oneRow(app, px.pixelId, id)).value).toBe(1);
    });

    it("the same eventId in a later request is skipped", async () => {
      const px = await newPixel();
      const id = uid("later");
      expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
        eventsIngested: 1,
        duplicatesSkipped: 0,
      });
      for (let i = 0; i < 3; i++) {
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 0,
          duplicatesSkipped: 1,
        });
      }
      // A new id next to the known one is still stored.
      const fresh = uid("later-new");
      expect(
        await sendOk(app, px, [
          { name: "purchase", eventId: id },
          { name: "purchase", eventId: fresh },
        ]),
      ).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
      expect(await eventCount(app, px.pixelId, id)).toBe(1);
      expect(await eventCount(app, px.pixelId, fresh)).toBe(1);
    });

    it("50 concurrent identical requests store exactly one copy", async () => {
      const px = await newPixel();
      const id = uid("burst");
      const responses = await Promise.all(
        Array.from({ length: 50 }, () =>
          sendEvents(app, px, [{ name: "purchase", eventId: id, identityId: "burst" }]),
        ),
      );
      for (const r of responses) expect(r.status, r.text).toBe(200);
      const bodies = responses.map((r) => r.body as IngestOk);
      expect(sum(bodies.map((b) => b.eventsIngested))).toBe(1);
      expect(sum(bodies.map((b) => b.duplicatesSkipped))).toBe(49);
      expect(await eventCount(app, px.pixelId, id)).toBe(1);
      expect(await eventCount(app, px.pixelId)).toBe(1);
    });

    it("concurrent requests with overlapping batches store every id exactly once", async () => {
      const px = await newPixel();
      const ids = Array.from({ length: 30 }, (_, i) => uid(`overlap${i}`));
      // Request k carries ids k..k+9 (mod 30): every id is in 10 requests.
      const batches = Array.from({ length: 30 }, (_, k) =>
        Array.from({ length: 10 }, (_, j) => ({ name: "page_view", eventId: ids[(k + j) % 30] })),
      );
      const responses = await Promise.all(batches.map((events) => sendEvents(app, px, events)));
      for (const r of responses) expect(r.status, r.text).toBe(200);
      const bodies = responses.map((r) => r.body as IngestOk);
      expect(sum(bodies.map((b) => b.eventsIngested))).toBe(30);
      expect(sum(bodies.map((b) => b.duplicatesSkipped))).toBe(270);
      const rows = await eventRows(app, px.pixelId);
      expect(rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
    });

    /** Holds the dedup store's commits for one pixel until `release()`; `committing` once one waits. */
    function holdCommits(pixelId: string) {
      const dedup = app.stores.dedup;
      const commit = dedup.commit.bind(dedup);
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let entered!: () => void;
      const committing = new Promise<void>((r) => {
        entered = r;
      });
      dedup.commit = async (lease) => {
        if (lease.pixelId === pixelId) {
          entered();
          await held;
        }
        return commit(lease);
      };
      return {
        committing,
        release,
        restore() {
          release();
          dedup.commit = commit;
        },
      };
    }

    /**
     * Holds the first warehouse INSERT of this pixel's events until `finish(error?)`, and records every
     * id the dedup store is asked to reserve for the pixel.
     */
    function holdFirstInsert(pixelId: string) {
      const { warehouse, dedup } = app.stores;
      const insert = warehouse.insert.bind(warehouse);
      const reserve = dedup.reserve.bind(dedup);
      const reserved: string[] = [];
      let finish!: (error?: Error) => void;
      const outcome = new Promise<Error | undefined>((r) => {
        finish = r;
      });
      let entered!: () => void;
      const inserting = new Promise<void>((r) => {
        entered = r;
      });
      let first = true;
      warehouse.insert = async (table, rows, options) => {
        if (table === "events" && first && rows.some((r) => r.pixel_id === pixelId)) {
          first = false;
          entered();
          const error = await outcome;
          if (error) throw error;
        }
        return insert(table, rows, options);
      };
      dedup.reserve = async (pid, ids) => {
        if (pid === pixelId) reserved.push(...ids);
        return reserve(pid, ids);
      };
      return {
        inserting,
        finish,
        reserved,
        restore() {
          finish();
          warehouse.insert = insert;
          dedup.reserve = reserve;
        },
      };
    }

    it("acknowledged before its lease is committed: a copy sent in between is a duplicate at once, stored once", async () => {
      // The group answers once its INSERT succeeded and commits the dedup lease after. Hold that
      // commit: the first request is answered, and a copy sent now is a duplicate without waiting for
      // the commit — this process knows its first copy is stored. The commit lands after.
      const px = await newPixel();
      const id = uid("ack-first");
      const hold = holdCommits(px.pixelId);
      const dedup = app.stores.dedup;
      const reserve = dedup.reserve.bind(dedup);
      const reserved: string[] = [];
      dedup.reserve = async (pid, ids) => {
        if (pid === px.pixelId) reserved.push(...ids);
        return reserve(pid, ids);
      };
      try {
        const first = await sendOk(app, px, [{ name: "purchase", eventId: id }]);
        expect(first).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 0 });
        await hold.committing;
        const copy = await sendOk(app, px, [{ name: "purchase", eventId: id }]);
        expect(copy).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
        // Answered from this process's memory: the store was asked about the id once, by the first.
        expect(reserved.filter((r) => r === id)).toHaveLength(1);
        // A request of new ids is not held up by the commit either.
        expect(await sendOk(app, px, [{ name: "purchase", eventId: uid("after") }])).toMatchObject({
          eventsIngested: 1,
        });
        hold.release();
        expect(await eventCount(app, px.pixelId, id)).toBe(1);
      } finally {
        hold.restore();
        dedup.reserve = reserve;
      }
    });

    it("a copy whose first copy is still being written by this process waits for that write, not the store", async () => {
      // Browser and server copies of one event arrive close together and land in two groups. The
      // second group does not reserve the id in the dedup store (where it would find this process's
      // own lease in flight and poll); it stores the rest of its request and waits for the first group.
      const px = await newPixel();
      const shared = uid("shared");
      const other = uid("other");
      const hold = holdFirstInsert(px.pixelId);
      try {
        const first = sendEvents(app, px, [
          { name: "purchase", eventId: shared, eventProperties: { value: 1 } },
        ]);
        await hold.inserting;
        const copy = sendEvents(app, px, [
          { name: "purchase", eventId: shared, eventProperties: { value: 2 } },
          { name: "page_view", eventId: other },
        ]);
        // The copy's own event is stored while the first write is still held.
        await expect.poll(() => eventCount(app, px.pixelId, other), { timeout: 20_000 }).toBe(1);
        hold.finish();
        const [a, b] = await Promise.all([first, copy]);
        expect(a.status, a.text).toBe(200);
        expect(b.status, b.text).toBe(200);
        expect(a.body).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 0 });
        expect(b.body).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
        expect(hold.reserved.filter((id) => id === shared)).toHaveLength(1);
        expect(await eventCount(app, px.pixelId, shared)).toBe(1);
        expect((await oneRow(app, px.pixelId, shared)).value).toBe(1);
      } finally {
        hold.restore();
      }
    });

    it("a copy whose first copy's write fails answers 503, and its retry stores the event once", async () => {
      const px = await newPixel();
      const shared = uid("lost");
      const other = uid("beside");
      const events = [
        { name: "purchase", eventId: shared },
        { name: "page_view", eventId: other },
      ];
      const hold = holdFirstInsert(px.pixelId);
      let a: Awaited<ReturnType<typeof sendEvents>>;
      let b: Awaited<ReturnType<typeof sendEvents>>;
      try {
        const first = sendEvents(app, px, [{ name: "purchase", eventId: shared }]);
        await hold.inserting;
        const copy = sendEvents(app, px, events);
        await expect.poll(() => eventCount(app, px.pixelId, other), { timeout: 20_000 }).toBe(1);
        hold.finish(new Error("connection reset (injected)"));
        [a, b] = await Promise.all([first, copy]);
      } finally {
        hold.restore();
      }
      expectEnvelope(a, 503);
      // Never 'duplicate' for a first copy that was not stored: the copy's request is retried.
      expectEnvelope(b, 503);
      expect(b.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await eventCount(app, px.pixelId, shared)).toBe(0);
      expect(await sendOk(app, px, events)).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
      expect(await sendOk(app, px, [{ name: "purchase", eventId: shared }])).toMatchObject({
        eventsIngested: 0,
        duplicatesSkipped: 1,
      });
      expect(await eventCount(app, px.pixelId, shared)).toBe(1);
      expect(await eventCount(app, px.pixelId, other)).toBe(1);
    });

    it("the same eventId under another pixel is a different event", async () => {
      const [a, b] = [await newPixel(), await newPixel()];
      const id = uid("shared");
      expect(await sendOk(app, a, [{ name: "purchase", eventId: id }])).toMatchObject({ eventsIngested: 1 });
      expect(await sendOk(app, b, [{ name: "purchase", eventId: id }])).toMatchObject({
        eventsIngested: 1,
        duplicatesSkipped: 0,
      });
      expect(await eventCount(app, a.pixelId, id)).toBe(1);
      expect(await eventCount(app, b.pixelId, id)).toBe(1);
    });

    it("events without eventId are never deduplicated: each gets its own server ULID", async () => {
      const px = await newPixel();
      const event = { name: "page_view", identityId: "no-id", page: { url: "https://shop.example/" } };
      expect(await sendOk(app, px, [event, event])).toMatchObject({
        eventsIngested: 2,
        duplicatesSkipped: 0,
      });
      expect(await sendOk(app, px, [event, event])).toMatchObject({
        eventsIngested: 2,
        duplicatesSkipped: 0,
      });
      const rows = await eventRows(app, px.pixelId);
      expect(rows).toHaveLength(4);
      const ids = rows.map((r) => r.event_id as string);
      expect(new Set(ids).size).toBe(4);
      for (const r of rows) {
        expect(r.event_id).toMatch(ULID_RE);
        expect(r.client_event_id).toBe(false);
      }
    });

    it("a skipped duplicate still contributes its identifiers to identity resolution", async () => {
      const px = await newPixel();
      const id = uid("ident");
      expect(await sendOk(app, px, [{ name: "page_view", eventId: id, identityId: "anon" }])).toMatchObject({
        eventsIngested: 1,
      });
      const dup = await sendOk(app, px, [
        { name: "page_view", eventId: id, identityId: "anon", userProperties: { emails: ["a@b.c"] } },
      ]);
      expect(dup).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
      // The identity worker files the sightings after the write (docs/identity.md).
      expect((await app.services.settle()).messages).toBe(0);
      const rows = await app.stores.identity.aliases(px.pixelId);
      const canonicalOf = (type: string, value: string) =>
        rows.find((r) => r.type === type && r.value === value)?.canonical;
      const anon = canonicalOf("identity", "anon");
      expect(anon).toBeTruthy();
      expect(canonicalOf("email", sha256("a@b.c"))).toBe(anon);
      // The stored row is the first copy's, under the same identity.
      expect((await oneRow(app, px.pixelId, id)).canonical_id).toBe(anon);
    });

    it("a failed warehouse write is a 503 with Retry-After, releases the reservations, and the retry stores all once", async () => {
      const px = await newPixel();
      const known = uid("known");
      await sendOk(app, px, [{ name: "purchase", eventId: known }]);
      const ids = [uid("retry"), uid("retry"), uid("retry")];
      const events = [...ids, known].map((eventId) => ({
        name: "purchase",
        eventId,
        identityId: "retry-anon",
      }));

      await app.stores.warehouse.command("RENAME TABLE events TO events_off");
      let failed: Awaited<ReturnType<typeof sendEvents>>;
      try {
        failed = await sendEvents(app, px, events);
      } finally {
        await app.stores.warehouse.command("RENAME TABLE events_off TO events");
      }
      const body = expectEnvelope(failed, 503);
      expect(body.error.details).toEqual([]);
      expect(failed.headers.get("retry-after")).toMatch(/^\d+$/);
      for (const id of ids) expect(await eventCount(app, px.pixelId, id)).toBe(0);

      // Nothing was swallowed as a duplicate, and the earlier acknowledged id is still remembered.
      const retry = await sendOk(app, px, events);
      expect(retry).toMatchObject({ eventsIngested: 3, duplicatesSkipped: 1 });
      for (const id of [...ids, known]) expect(await eventCount(app, px.pixelId, id)).toBe(1);
      // And a second retry (a client that did not see the 200) stores nothing more.
      expect(await sendOk(app, px, events)).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 4 });
      for (const id of [...ids, known]) expect(await eventCount(app, px.pixelId, id)).toBe(1);
    });

    it("warehouse backstop: a second stored copy never counts twice and collapses on merge", async () => {
      const px = await newPixel();
      const id = uid("backstop");
      await sendOk(app, px, [{ name: "purchase", eventId: id, eventProperties: { value: 5 } }]);
      const counts = async () =>
        (
          await app.stores.warehouse.query<{ rows: number; distinct_events: number }>(
            `SELECT count() AS rows, count(DISTINCT event_id) AS distinct_events
             FROM events WHERE pixel_id = {pixel:String}`,
            { pixel: px.pixelId },
          )
        )[0]!;
      expect(await counts()).toEqual({ rows: 1, distinct_events: 1 });
      // A copy that slipped through a crash window, byte for byte the same row.
      await app.stores.warehouse.command(
        "INSERT INTO events SELECT * FROM events WHERE pixel_id = {pixel:String} AND event_id = {id:String}",
        { pixel: px.pixelId, id },
      );
      expect(await counts()).toEqual({ rows: 2, distinct_events: 1 });
      await app.stores.warehouse.command("OPTIMIZE TABLE events FINAL");
      expect(await counts()).toEqual({ rows: 1, distinct_events: 1 });
    });

    if (options.dedup === "sql") {
      it("29 days later a copy is still skipped; after 31 days (window 30) it is accepted again", async () => {
        const px = await newPixel();
        const id = uid("window");
        await sendOk(app, px, [{ name: "purchase", eventId: id }]);
        const age = (days: number) =>
          app.stores.sql.query(
            `UPDATE dedup_ids SET first_seen = now() - make_interval(days => $3) WHERE pixel_id = $1 AND event_id = $2`,
            [px.pixelId, id, days],
          );
        expect((await age(29)).rowCount).toBe(1);
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 0,
          duplicatesSkipped: 1,
        });
        await age(31);
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 1,
          duplicatesSkipped: 0,
        });
        // The new copy starts a new window.
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 0,
          duplicatesSkipped: 1,
        });
      });

      it("a reservation whose lease lapsed (process died before the write) does not block the id", async () => {
        const px = await newPixel();
        const id = uid("crashed");
        await app.stores.sql.query(
          `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token)
           VALUES ($1, $2, now() - interval '2 minutes', now() - interval '1 minute', 'dead')`,
          [px.pixelId, id],
        );
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 1,
          duplicatesSkipped: 0,
        });
        expect(await eventCount(app, px.pixelId, id)).toBe(1);
        // Now acknowledged: remembered like any other id.
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          duplicatesSkipped: 1,
        });
      });

      it("a crash after the write but before the commit: the retry finds the stored copy and is skipped", async () => {
        const px = await newPixel();
        const id = uid("after-write");
        await sendOk(app, px, [{ name: "purchase", eventId: id, eventProperties: { value: 7 } }]);
        // As if the process died after the INSERT and before committing: the lease is left to lapse.
        await app.stores.sql.query(
          `UPDATE dedup_ids SET lease_until = now() - interval '1 minute', lease_token = 'dead'
           WHERE pixel_id = $1 AND event_id = $2`,
          [px.pixelId, id],
        );
        // The client never saw the 200 and retries: the lapsed lease is reclaimed, the warehouse asked.
        expect(
          await sendOk(app, px, [{ name: "purchase", eventId: id, eventProperties: { value: 7 } }]),
        ).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
        expect(await eventCount(app, px.pixelId, id)).toBe(1);
      });

      it("a lease whose owner died is taken over at once, before it lapses", async () => {
        const px = await newPixel();
        const [lost, stored] = [uid("dead-owner"), uid("dead-owner-stored")];
        await sendOk(app, px, [{ name: "purchase", eventId: stored }]);
        // Process "gone" reserved both and died: one before its write, one after it.
        await app.stores.sql.query(
          `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner)
           VALUES ($1, $2, now(), now() + interval '1 minute', 'gone-token', 'gone')
           ON CONFLICT (pixel_id, event_id) DO UPDATE
             SET lease_until = excluded.lease_until, lease_token = excluded.lease_token,
                 lease_owner = excluded.lease_owner`,
          [px.pixelId, lost],
        );
        await app.stores.sql.query(
          `UPDATE dedup_ids SET lease_until = now() + interval '1 minute', lease_token = 'gone-token',
             lease_owner = 'gone' WHERE pixel_id = $1 AND event_id = $2`,
          [px.pixelId, stored],
        );
        expect(
          await sendOk(app, px, [
            { name: "purchase", eventId: lost },
            { name: "purchase", eventId: stored },
          ]),
        ).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
        expect(await eventCount(app, px.pixelId, lost)).toBe(1);
        expect(await eventCount(app, px.pixelId, stored)).toBe(1);
      });

      it("a live lease that never settles: the copy gets 503 after the wait, never 'duplicate'", async () => {
        const px = await newPixel();
        const id = uid("inflight");
        // Held by this very process (alive), as by a write that hangs.
        await app.stores.sql.query(
          `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner)
           VALUES ($1, $2, now(), now() + interval '1 minute', 'alive', $3)`,
          [px.pixelId, id, app.stores.dedup.owner],
        );
        const other = uid("with-it");
        const res = await sendEvents(app, px, [
          { name: "purchase", eventId: id },
          { name: "purchase", eventId: other },
        ]);
        expectEnvelope(res, 503);
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(await eventCount(app, px.pixelId, id)).toBe(0);
        expect(await eventCount(app, px.pixelId, other)).toBe(0);
        // The writer gives up (releases): the retry stores both.
        await app.stores.sql.query("DELETE FROM dedup_ids WHERE lease_token = 'alive' AND pixel_id = $1", [
          px.pixelId,
        ]);
        expect(
          await sendOk(app, px, [
            { name: "purchase", eventId: id },
            { name: "purchase", eventId: other },
          ]),
        ).toMatchObject({ eventsIngested: 2, duplicatesSkipped: 0 });
      });

      it("a live lease whose write lands during the wait: the copy is a duplicate, stored once", async () => {
        const px = await newPixel();
        const id = uid("lands");
        await sendOk(app, px, [{ name: "purchase", eventId: id }]);
        // Turn the acknowledged row back into a live lease of this process, as while its write runs.
        await app.stores.sql.query(
          `UPDATE dedup_ids SET lease_until = now() + interval '1 minute', lease_token = 'landing', lease_owner = $3
           WHERE pixel_id = $1 AND event_id = $2`,
          [px.pixelId, id, app.stores.dedup.owner],
        );
        const copy = sendEvents(app, px, [{ name: "purchase", eventId: id }]);
        // The writer acknowledges while the copy waits.
        await app.stores.sql.query("INSERT INTO dedup_commits (lease_token) VALUES ('landing')");
        const res = await copy;
        expect(res.status, res.text).toBe(200);
        expect(res.body).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
        expect(await eventCount(app, px.pixelId, id)).toBe(1);
      });
    } else {
      // The Redis store cannot be rewound 29 days: its periods are keyed by the wall clock and expire
      // with Redis TTLs, so the 29/31-day case runs only against the SQL store. For Redis the window
      // holds by construction: a lookup checks the current period and every period the window reaches
      // back to, and a period's keys expire windowDays after the period ends — the next case checks the
      // second half (no key holding a remembered id expires before 30 days from now).
      it.skip("29 days later a copy is still skipped (Redis time cannot be rewound; see the comment above)", () => {});

      it("every Redis key holding a remembered id lives at least the 30-day window", async () => {
        const px = await newPixel();
        await sendOk(app, px, [{ name: "purchase", eventId: uid("ttl") }]);
        const redis = (app.stores.kv as RedisKv).client;
        // The pixel's query-cache data version (`dv:`) holds no id and lives on purpose.
        const keys = (await redis.keys(`${app.config.REDIS_KEY_PREFIX}*${px.pixelId}*`)).filter(
          (k) => !k.startsWith(`${app.config.REDIS_KEY_PREFIX}dv:`),
        );
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) {
          const ttl = await redis.pttl(key);
          expect(ttl, key).toBeGreaterThanOrEqual(30 * 86_400_000 - 60_000);
        }
      });

      it("a reservation held by a live writer that never finishes: a copy gets 503, never 'duplicate'", async () => {
        const px = await newPixel();
        const id = uid("hung");
        // This process reserves the id and does not write it: its owner is alive.
        const orphan = await app.stores.dedup.reserve(px.pixelId, [id]);
        expect(orphan.status).toEqual(["fresh"]);
        const res = await sendEvents(app, px, [{ name: "purchase", eventId: id }]);
        expectEnvelope(res, 503);
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(await eventCount(app, px.pixelId, id)).toBe(0);
        await app.stores.dedup.release(orphan.lease);
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 1,
        });
      });

      it("a reservation of a process that died is taken over at once and confirmed", async () => {
        const px = await newPixel();
        const [lost, stored] = [uid("died"), uid("died-stored")];
        await sendOk(app, px, [{ name: "purchase", eventId: stored }]);
        const redis = new Redis(TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
        try {
          // Another process on the same set reserves both ids, then dies (its heartbeat key is gone).
          const other = new RedisDedupStore(redis, {
            windowDays: 30,
            ownerTtlSeconds: 10,
            leaseSeconds: 60,
            periodDays: 10,
            bucketBits: app.config.DEDUP_BUCKET_BITS,
            prefix: app.config.REDIS_KEY_PREFIX,
          });
          const r = await other.reserve(px.pixelId, [lost, stored]);
          expect(r.status).toEqual(["fresh", "unconfirmed"]);
          await other.close();
        } finally {
          redis.disconnect();
        }
        expect(
          await sendOk(app, px, [
            { name: "purchase", eventId: lost },
            { name: "purchase", eventId: stored },
          ]),
        ).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 1 });
        expect(await eventCount(app, px.pixelId, lost)).toBe(1);
        expect(await eventCount(app, px.pixelId, stored)).toBe(1);
      });

      it("RedisDedupStore: a lapsed reservation is reclaimed; committed ids are confirmed; released ids are free", async () => {
        const prefix = `pxh_dedup_test_${randomBytes(5).toString("hex")}:`;
        const redis = new Redis(TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
        const store = new RedisDedupStore(redis, {
          windowDays: 30,
          ownerTtlSeconds: 10,
          leaseSeconds: 0.001,
          periodDays: 10,
          bucketBits: 4,
          prefix,
          mayHoldIds: async () => false,
        });
        try {
          const first = await store.reserve("px-lease", ["Y"]);
          expect(first.status).toEqual(["fresh"]);
          // No commit: wait until the 1 ms lease has surely lapsed.
          await new Promise((r) => setTimeout(r, 20));
          const again = await store.reserve("px-lease", ["Y"]);
          // The lapsed write may have landed: the caller must ask the warehouse.
          expect(again.status).toEqual(["reclaimed"]);
          // The stale lease of the dead reservation cannot settle the new one.
          await store.release(first.lease);
          await store.commit(again.lease);
          expect((await store.reserve("px-lease", ["Y"])).status).toEqual(["unconfirmed"]);

          const released = await store.reserve("px-lease", ["Z"]);
          expect(released.status).toEqual(["fresh"]);
          await store.release(released.lease);
          expect((await store.reserve("px-lease", ["Z"])).status).toEqual(["fresh"]);
        } finally {
          await store.close();
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length) await redis.del(...keys);
          redis.disconnect();
        }
      });

      it("a digest match with no stored row is not a duplicate: the event is stored (no false positive)", async () => {
        const px = await newPixel();
        const id = uid("ghost");
        // The set remembers the id (as after a digest collision) but the warehouse holds no such row.
        const r = await app.stores.dedup.reserve(px.pixelId, [id]);
        await app.stores.dedup.commit(r.lease);
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 1,
          duplicatesSkipped: 0,
        });
        expect(await sendOk(app, px, [{ name: "purchase", eventId: id }])).toMatchObject({
          eventsIngested: 0,
          duplicatesSkipped: 1,
        });
        expect(await eventCount(app, px.pixelId, id)).toBe(1);
      });

      it("concurrent copies of an id whose digest matched but is not stored: exactly one copy", async () => {
        const px = await newPixel();
        const id = uid("ghost-burst");
        const r = await app.stores.dedup.reserve(px.pixelId, [id]);
        await app.stores.dedup.commit(r.lease);
        const responses = await Promise.all(
          Array.from({ length: 10 }, () => sendEvents(app, px, [{ name: "purchase", eventId: id }])),
        );
        for (const res of responses) expect(res.status, res.text).toBe(200);
        const bodies = responses.map((res) => res.body as IngestOk);
        expect({
          ingested: sum(bodies.map((b) => b.eventsIngested)),
          skipped: sum(bodies.map((b) => b.duplicatesSkipped)),
          stored: await eventCount(app, px.pixelId, id),
        }).toEqual({ ingested: 1, skipped: 9, stored: 1 });
      });

      it("Redis lost its data: resent acknowledged ids are found in the warehouse, new ids still stored", async () => {
        const px = await newPixel();
        const acked = [uid("before-loss"), uid("before-loss")];
        await sendOk(
          app,
          px,
          acked.map((eventId) => ({ name: "purchase", eventId })),
        );
        // As after a restart without persistence: every dedup key of this service is gone.
        const redis = (app.stores.kv as RedisKv).client;
        const keys = await redis.keys(`${app.config.REDIS_KEY_PREFIX}dd*`);
        if (keys.length) await redis.del(...keys);
        const fresh = uid("after-loss");
        expect(
          await sendOk(
            app,
            px,
            [...acked, fresh].map((eventId) => ({ name: "purchase", eventId })),
          ),
        ).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 2 });
        for (const id of [...acked, fresh]) expect(await eventCount(app, px.pixelId, id)).toBe(1);
        // The set knows it must confirm new ids for a window from now.
        const marker = Number(await redis.get(`${app.config.REDIS_KEY_PREFIX}dd-marker`));
        expect(marker).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      });
    }

    options.extra?.(() => app);
  });
}
