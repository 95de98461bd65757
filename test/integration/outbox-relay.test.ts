import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OutboxRelay } from "../../src/events/relay.js";
import { Subscription } from "../../src/events/subscription.js";
import type { TopicRoute } from "../../src/events/topics.js";
import type { Bus, BusMessage } from "../../src/stores/bus/port.js";
import { RedisBus } from "../../src/stores/bus/redis.js";
import { SqlBus } from "../../src/stores/bus/sql.js";
import { RedisKv } from "../../src/stores/kv/redis.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { dropRedisPrefix, eventually, reopenableSql, unreachableRedisBus } from "../helpers/bus.js";
import { skipReason, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.js";
import { uniqueName } from "../helpers/stores.js";

interface Setup {
  sql: SqlStore;
  bus: Bus;
  close(): Promise<void>;
}

const combos: { name: string; available: boolean; open(): Promise<Setup> }[] = [
  ...reopenableSql.map((s) => ({
    name: `${s.name} + sql bus`,
    available: s.available,
    async open(): Promise<Setup> {
      const o = await s.open();
      return { sql: o.sql, bus: new SqlBus(o.sql), close: () => o.close() };
    },
  })),
  {
    name: "postgres + redis bus",
    available: !!TEST_DATABASE_URL && !!TEST_REDIS_URL,
    async open(): Promise<Setup> {
      const o = await reopenableSql[1]!.open();
      const prefix = `${uniqueName("pxh_relay")}:`;
      const kv = new RedisKv(TEST_REDIS_URL!, prefix);
      return {
        sql: o.sql,
        bus: new RedisBus(kv.client, prefix),
        async close() {
          await dropRedisPrefix(kv.client, prefix);
          await kv.close();
          await o.close();
        },
      };
    },
  },
];

for (const combo of combos) {
  describe.skipIf(!combo.available)(`outbox relay: ${combo.name}`, () => {
    let setup: Setup;
    let sql: SqlStore;
    let bus: Bus;
    // Streams private to each test, so tests never see each other's messages.
    let topics: Record<string, TopicRoute>;
    let stream: { a: string; b: string };
    beforeAll(async () => {
      setup = await combo.open();
      ({ sql, bus } = setup);
    });
    afterAll(async () => {
      await setup?.close();
    });

    const fresh = () => {
      const id = uniqueName("t").replace(/_/g, "-");
      stream = { a: `${id}-a`, b: `${id}-b` };
      topics = {
        [`${id}.a`]: { stream: stream.a },
        [`${id}.b`]: { stream: stream.b, shape: (p) => ({ shaped: p }) },
      };
      return { a: `${id}.a`, b: `${id}.b`, other: `${id}.unmapped` };
    };
    const insert = async (topic: string, payload: object) =>
      (
        await sql.query<{ id: string }>(
          "INSERT INTO outbox (topic, payload) VALUES ($1, $2) RETURNING id::text AS id",
          [topic, payload],
        )
      ).rows[0]!.id;
    const row = async (id: string) =>
      (
        await sql.query<{ published: boolean; claimed: boolean }>(
          "SELECT published_at IS NOT NULL AS published, claimed_until IS NOT NULL AS claimed FROM outbox WHERE id = $1",
          [id],
        )
      ).rows[0];
    const readAll = async (s: string, group = "g") => {
      const got = await bus.read(s, group, "c", { count: 1000, claimIdleMs: 0 });
      await bus.ack(
        s,
        group,
        got.map((m) => m.id),
      );
      return got;
    };

    it("relays the mapped topics in outbox order, marks them published, and leaves other topics alone", async () => {
      const t = fresh();
      const a1 = await insert(t.a, { n: 1 });
      const b1 = await insert(t.b, { n: 2 });
      const other = await insert(t.other, { n: 3 });
      const a2 = await insert(t.a, { n: 4 });
      const relay = new OutboxRelay(sql, bus, { topics });
      expect(await relay.runOnce()).toStrictEqual({ claimed: 3, published: 3 });
      const onA = await readAll(stream.a);
      expect(onA.map((m) => [m.key, m.payload])).toStrictEqual([
        [a1, { n: 1 }],
        [a2, { n: 4 }],
      ]);
      expect((await readAll(stream.b)).map((m) => [m.key, m.payload])).toStrictEqual([
        [b1, { shaped: { n: 2 } }],
      ]);
      for (const id of [a1, b1, a2]) expect(await row(id)).toStrictEqual({ published: true, claimed: false });
      expect(await row(other)).toStrictEqual({ published: false, claimed: false });
      expect(await relay.runOnce()).toStrictEqual({ claimed: 0, published: 0 });
      expect(await readAll(stream.a)).toStrictEqual([]);
    });

    it("leaves a row another live relay has claimed, and takes it over once that lease has lapsed", async () => {
      const t = fresh();
      const id = await insert(t.a, { n: 1 });
      await sql.query("UPDATE outbox SET claimed_until = now() + interval '1 hour' WHERE id = $1", [id]);
      const relay = new OutboxRelay(sql, bus, { topics });
      expect(await relay.runOnce()).toStrictEqual({ claimed: 0, published: 0 });
      await sql.query("UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = $1", [id]);
      expect(await relay.runOnce()).toStrictEqual({ claimed: 1, published: 1 });
      expect((await readAll(stream.a)).map((m) => m.key)).toStrictEqual([id]);
    });

    it("a bus that refuses the batch leaves the rows unpublished and hands them back at once", async () => {
      const t = fresh();
      const ids = [await insert(t.a, { n: 1 }), await insert(t.b, { n: 2 })];
      const down = unreachableRedisBus();
      try {
        await expect(new OutboxRelay(sql, down.bus, { topics }).runOnce()).rejects.toThrow();
      } finally {
        down.close();
      }
      for (const id of ids) expect(await row(id)).toStrictEqual({ published: false, claimed: false });
      expect(await new OutboxRelay(sql, bus, { topics }).runOnce()).toStrictEqual({
        claimed: 2,
        published: 2,
      });
      expect((await readAll(stream.a)).map((m) => m.key)).toStrictEqual([ids[0]]);
      expect((await readAll(stream.b)).map((m) => m.key)).toStrictEqual([ids[1]]);
    });

    it("several relays at once publish every row exactly once when none crashes", async () => {
      const t = fresh();
      await sql.query(
        "INSERT INTO outbox (topic, payload) SELECT $1, jsonb_build_object('n', g) FROM generate_series(1, 120) g",
        [t.a],
      );
      const relays = [1, 2, 3].map(() => new OutboxRelay(sql, bus, { topics, batchSize: 10 }));
      await Promise.all(
        relays.map(async (relay) => {
          // Bounded: 120 rows in batches of 10 need at most 12 rounds in all.
          for (let i = 0; i < 50; i++) if ((await relay.runOnce()).claimed === 0) break;
        }),
      );
      const got = await readAll(stream.a);
      const ns = got.map((m) => (m.payload as { n: number }).n);
      expect(ns).toHaveLength(120);
      expect(new Set(ns).size).toBe(120);
      expect(new Set(got.map((m) => m.key)).size).toBe(120);
      const { rows } = await sql.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM outbox WHERE topic = $1 AND published_at IS NULL",
        [t.a],
      );
      expect(rows[0]!.n).toBe("0");
    });

    it("a relay that died after publishing is covered by another: the row is published again (at-least-once)", async () => {
      const t = fresh();
      const id = await insert(t.a, { n: 1 });
      // What a crash between publish and mark leaves behind: on the bus, claimed, not marked.
      await bus.publish(stream.a, [{ key: id, payload: { n: 1 } }]);
      await sql.query("UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = $1", [id]);
      await new OutboxRelay(sql, bus, { topics }).runOnce();
      const got = await readAll(stream.a);
      expect(got.map((m) => m.key)).toStrictEqual([id, id]);
      expect(await row(id)).toStrictEqual({ published: true, claimed: false });
    });

    it("runs in the background, wakes on demand, and stops cleanly; a restarted relay picks up what came meanwhile", async () => {
      const t = fresh();
      // A poll interval far beyond the test: only `wake` and `start` make it run.
      const relay = new OutboxRelay(sql, bus, { topics, pollIntervalMs: 3_600_000 });
      relay.start();
      expect(relay.running).toBe(true);
      const first = await insert(t.a, { n: 1 });
      relay.wake();
      const delivered = await eventually(async () => {
        const got = await readAll(stream.a);
        return got.length ? got : undefined;
      }, "the woken relay");
      expect(delivered.map((m) => m.key)).toStrictEqual([first]);
      await relay.stop();
      expect(relay.running).toBe(false);
      const second = await insert(t.a, { n: 2 });
      relay.wake(); // stopped: nothing happens
      expect(await readAll(stream.a)).toStrictEqual([]);
      expect(await row(second)).toStrictEqual({ published: false, claimed: false });
      relay.start();
      const later = await eventually(async () => {
        const got = await readAll(stream.a);
        return got.length ? got : undefined;
      }, "the restarted relay");
      expect(later.map((m) => m.key)).toStrictEqual([second]);
      await relay.stop();
    });

    it("housekeeping deletes published rows and acknowledged messages past the retention, nothing else", async () => {
      const t = fresh();
      const published = await insert(t.a, { n: 1 });
      const relay = new OutboxRelay(sql, bus, { topics, retentionMs: 0 });
      await relay.runOnce();
      const unpublished = await insert(t.a, { n: 2 });
      const unmapped = await insert(t.other, { n: 3 });
      await sql.query("UPDATE outbox SET published_at = now() WHERE id = $1", [unmapped]);
      // One group read and acknowledged the message, another has it pending: kept.
      await readAll(stream.a, "done");
      await bus.read(stream.a, "busy", "c");
      expect(await relay.housekeeping()).toStrictEqual({ outbox: 1, bus: 0 });
      expect(await row(published)).toBeUndefined();
      expect(await row(unpublished)).toStrictEqual({ published: false, claimed: false });
      expect(await row(unmapped)).toStrictEqual({ published: true, claimed: false });
      await readAll(stream.a, "busy");
      expect(await relay.housekeeping()).toStrictEqual({ outbox: 0, bus: 1 });
      const keep = new OutboxRelay(sql, bus, { topics, retentionMs: 3_600_000 });
      await keep.runOnce();
      expect(await keep.housekeeping()).toStrictEqual({ outbox: 0, bus: 0 });
    });

    it("a subscription hands every message to its handler and acknowledges only those it handled", async () => {
      const t = fresh();
      const ids = [await insert(t.a, { n: 1 }), await insert(t.a, { n: 2 }), await insert(t.a, { n: 3 })];
      await new OutboxRelay(sql, bus, { topics }).runOnce();
      const handled: BusMessage[] = [];
      const errors: unknown[] = [];
      let failOnce = true;
      const sub = new Subscription(bus, {
        stream: stream.a,
        group: "worker",
        claimIdleMs: 0, // take over failed messages at the next poll
        handler: async (m) => {
          if ((m.payload as { n: number }).n === 2 && failOnce) {
            failOnce = false;
            throw new Error("transient");
          }
          handled.push(m);
        },
        onError: (err, m) => errors.push([(err as Error).message, m?.key]),
      });
      expect(await sub.runOnce()).toStrictEqual({ delivered: 3, acked: 2, failed: 1, released: 0 });
      expect(errors).toStrictEqual([["transient", ids[1]]]);
      expect(await sub.runOnce()).toStrictEqual({ delivered: 1, acked: 1, failed: 0, released: 0 });
      expect(handled.map((m) => [m.key, m.deliveries])).toStrictEqual([
        [ids[0], 1],
        [ids[2], 1],
        [ids[1], 2],
      ]);
      expect(await sub.runOnce()).toStrictEqual({ delivered: 0, acked: 0, failed: 0, released: 0 });
    });

    it("a subscription stopped mid-batch finishes the message in hand and hands the rest back at once", async () => {
      const t = fresh();
      const ids = [await insert(t.a, { n: 1 }), await insert(t.a, { n: 2 }), await insert(t.a, { n: 3 })];
      await new OutboxRelay(sql, bus, { topics }).runOnce();
      const handled: string[] = [];
      let stopped: Promise<void> | undefined;
      const sub: Subscription = new Subscription(bus, {
        stream: stream.a,
        group: "stopper",
        claimIdleMs: 60_000,
        handler: async (m) => {
          handled.push(m.key);
          stopped ??= sub.stop();
        },
      });
      sub.start();
      await (await eventually(async () => (stopped ? { stopped } : undefined), "the stop")).stopped;
      expect(handled).toStrictEqual([ids[0]]);
      // Taken over at once although claimIdleMs is a minute: they were released, not abandoned.
      const rest = await bus.read(stream.a, "stopper", "successor", { claimIdleMs: 60_000 });
      expect(rest.map((m) => m.key)).toStrictEqual([ids[1], ids[2]]);
    });
  });
}

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
if (!TEST_REDIS_URL) it.skip(skipReason("Redis", "TEST_REDIS_URL"), () => {});
