import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus, BusMessage } from "../../src/stores/bus/port.js";
import { SqlBus } from "../../src/stores/bus/sql.js";
import { busAdapters, type OpenedBus, reopenableSql } from "../helpers/bus.js";
import { skipReason, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.js";
import { uniqueName } from "../helpers/stores.js";

const stream = () => uniqueName("s").replace(/_/g, "-");
const keys = (ms: BusMessage[]) => ms.map((m) => m.key);
const msg = (key: string, payload: unknown = { n: key }) => ({ key, payload });

for (const adapter of busAdapters) {
  describe.skipIf(!adapter.available)(`bus contract: ${adapter.name}`, () => {
    let opened: OpenedBus;
    let bus: Bus;
    beforeAll(async () => {
      opened = await adapter.open();
      bus = opened.bus;
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("appends in order and hands each message to a group once, with its key and payload as published", async () => {
      const s = stream();
      const payload = {
        type: "accountUpdated",
        z: 1,
        a: { to: "B", from: "A" },
        list: [1, "x", null],
        e: "é😀",
      };
      const ids = await bus.publish(s, [msg("1", payload), msg("2"), msg("3")]);
      expect(ids).toHaveLength(3);
      expect(new Set(ids).size).toBe(3);
      const got = await bus.read(s, "g", "c1", { count: 10 });
      expect(got.map((m) => m.id)).toStrictEqual(ids);
      expect(keys(got)).toStrictEqual(["1", "2", "3"]);
      expect(got.map((m) => m.deliveries)).toStrictEqual([1, 1, 1]);
      expect(got[0]!.payload).toStrictEqual(payload);
      // Key order survives the trip (the public event's documented order depends on it).
      expect(JSON.stringify(got[0]!.payload)).toBe(JSON.stringify(payload));
      // Nothing new, and pending messages are not handed out again before they are idle.
      expect(await bus.read(s, "g", "c1")).toStrictEqual([]);
      expect(await bus.read(s, "g", "c2")).toStrictEqual([]);
      expect(await bus.ack(s, "g", ids)).toBe(3);
      expect(await bus.read(s, "g", "c1", { claimIdleMs: 0 })).toStrictEqual([]);
    });

    it("publishes later messages after earlier ones, and `count` bounds a read", async () => {
      const s = stream();
      const first = await bus.publish(s, [msg("a"), msg("b")]);
      const second = await bus.publish(s, [msg("c")]);
      const one = await bus.read(s, "g", "c1", { count: 1 });
      const rest = await bus.read(s, "g", "c1", { count: 10 });
      expect([...keys(one), ...keys(rest)]).toStrictEqual(["a", "b", "c"]);
      expect([...one, ...rest].map((m) => m.id)).toStrictEqual([...first, ...second]);
    });

    it("publishes of many messages keep their order, keys and payloads (the SQL bus binds over 1,000 as arrays)", async () => {
      const s = stream();
      const many = Array.from({ length: 1001 }, (_, i) =>
        msg(`m${i}`, { i, text: `"quoted" \\ {braces} é ${i}` }),
      );
      // 1,001 (arrays on the SQL bus), then 1,000 (its largest VALUES list), then 2.
      const ids = [
        ...(await bus.publish(s, many)),
        ...(await bus.publish(s, many.slice(0, 1000))),
        ...(await bus.publish(s, many.slice(0, 2))),
      ];
      expect(new Set(ids).size).toBe(2003);
      const got: BusMessage[] = [];
      for (let batch = await bus.read(s, "g", "c1", { count: 500 }); batch.length; ) {
        got.push(...batch);
        batch = await bus.read(s, "g", "c1", { count: 500 });
      }
      expect(got.map((m) => m.id)).toStrictEqual(ids);
      expect(keys(got)).toStrictEqual(
        [...many, ...many.slice(0, 1000), ...many.slice(0, 2)].map((m) => m.key),
      );
      expect(got[1000]!.payload).toStrictEqual(many[1000]!.payload);
      expect(got[2000]!.payload).toStrictEqual(many[999]!.payload);
      expect(got[2002]!.payload).toStrictEqual(many[1]!.payload);
    });

    it("every group gets every message; the consumers of one group share them", async () => {
      const s = stream();
      await bus.publish(s, [msg("1"), msg("2"), msg("3")]);
      const a = await bus.read(s, "workers", "a", { count: 2 });
      const b = await bus.read(s, "workers", "b", { count: 2 });
      expect(keys(a)).toStrictEqual(["1", "2"]);
      expect(keys(b)).toStrictEqual(["3"]);
      expect(keys(await bus.read(s, "audit", "x"))).toStrictEqual(["1", "2", "3"]);
    });

    it("a group created after messages were published still receives them", async () => {
      const s = stream();
      await bus.publish(s, [msg("early")]);
      await bus.read(s, "first", "c");
      await bus.publish(s, [msg("later")]);
      expect(keys(await bus.read(s, "late-group", "c"))).toStrictEqual(["early", "later"]);
    });

    it("an unacknowledged message is delivered again once idle, to another consumer of the group", async () => {
      const s = stream();
      await bus.publish(s, [msg("m")]);
      const [first] = await bus.read(s, "g", "dies");
      expect(first!.deliveries).toBe(1);
      // Not idle long enough: stays with its consumer.
      expect(await bus.read(s, "g", "survivor", { claimIdleMs: 60_000 })).toStrictEqual([]);
      const again = await bus.read(s, "g", "survivor", { claimIdleMs: 0 });
      expect(again).toStrictEqual([{ ...first!, deliveries: 2 }]);
      expect(await bus.ack(s, "g", [again[0]!.id])).toBe(1);
      expect(await bus.ack(s, "g", [again[0]!.id])).toBe(0);
      expect(await bus.read(s, "g", "dies", { claimIdleMs: 0 })).toStrictEqual([]);
    });

    it("taken-over messages come before new ones, within `count`", async () => {
      const s = stream();
      await bus.publish(s, [msg("old")]);
      await bus.read(s, "g", "a");
      await bus.publish(s, [msg("new1"), msg("new2")]);
      const got = await bus.read(s, "g", "b", { claimIdleMs: 0, count: 2 });
      expect(keys(got)).toStrictEqual(["old", "new1"]);
      expect(got.map((m) => m.deliveries)).toStrictEqual([2, 1]);
    });

    it("release hands a consumer's pending messages back for the next read; others' are untouched", async () => {
      const s = stream();
      await bus.publish(s, [msg("1"), msg("2"), msg("3")]);
      const held = await bus.read(s, "g", "stopping");
      const other = await bus.read(s, "other-group", "x");
      expect(await bus.release(s, "g", "stopping", [held[0]!.id, held[1]!.id])).toBe(2);
      // Not held by this consumer (or not pending at all): nothing happens.
      expect(await bus.release(s, "g", "someone-else", [held[2]!.id])).toBe(0);
      expect(await bus.release(s, "g", "stopping", ["1-1", "bad"])).toBe(0);
      const next = await bus.read(s, "g", "next", { claimIdleMs: 60_000 });
      expect(keys(next)).toStrictEqual(["1", "2"]);
      expect(next.map((m) => m.deliveries)).toStrictEqual([2, 2]);
      // Another group's pending messages were not affected.
      expect(await bus.read(s, "other-group", "y", { claimIdleMs: 60_000 })).toStrictEqual([]);
      expect(other).toHaveLength(3);
    });

    it("consumers reading at once take over each handed-back message exactly once, and new ones too", async () => {
      // 12 messages held by a consumer that stops and hands them back, 12 more never read; four
      // consumers then read side by side (separate connections on a server) until all 24 are out.
      const s = stream();
      const back = Array.from({ length: 12 }, (_, i) => msg(`back-${i}`));
      await bus.publish(s, back);
      const held = await bus.read(s, "g", "stopping", { count: 12 });
      expect(held).toHaveLength(12);
      await bus.publish(
        s,
        Array.from({ length: 12 }, (_, i) => msg(`new-${i}`)),
      );
      expect(
        await bus.release(
          s,
          "g",
          "stopping",
          held.map((m) => m.id),
        ),
      ).toBe(12);
      const got = await Promise.all(
        ["a", "b", "c", "d"].map(async (name) => {
          const mine: BusMessage[] = [];
          for (let round = 0; round < 50; round++) {
            const batch = await bus.read(s, "g", name, { count: 2, claimIdleMs: 60_000 });
            if (batch.length === 0) break;
            mine.push(...batch);
          }
          return mine;
        }),
      );
      const all = got.flat();
      expect(all.map((m) => m.key).sort()).toStrictEqual(
        [...back.map((m) => m.key), ...Array.from({ length: 12 }, (_, i) => `new-${i}`)].sort(),
      );
      expect(all.filter((m) => m.key.startsWith("back-")).every((m) => m.deliveries === 2)).toBe(true);
      expect(all.filter((m) => m.key.startsWith("new-")).every((m) => m.deliveries === 1)).toBe(true);
    });

    it("published, pending and unread messages survive a restart", async () => {
      const s = stream();
      await bus.publish(s, [msg("pending"), msg("unread")]);
      const [pending] = await bus.read(s, "g", "before-restart", { count: 1 });
      bus = await opened.reopen();
      const got = await bus.read(s, "g", "after-restart", { claimIdleMs: 0 });
      expect(keys(got)).toStrictEqual(["pending", "unread"]);
      expect(got[0]).toStrictEqual({ ...pending!, deliveries: 2 });
      expect(got[1]!.deliveries).toBe(1);
      expect(keys(await bus.read(s, "new-group", "c"))).toStrictEqual(["pending", "unread"]);
    });

    it("backlog counts what a group has not acknowledged (unread and pending) and when the oldest was published", async () => {
      const s = stream();
      expect(await bus.backlog(s, "g")).toStrictEqual({ messages: 0, oldestAt: null });
      const before = Date.now();
      const ids = await bus.publish(s, [msg("1"), msg("2"), msg("3")]);
      const after = Date.now();
      // A group that has not read yet owes everything kept.
      const fresh = await bus.backlog(s, "g");
      expect(fresh.messages).toBe(3);
      expect(fresh.oldestAt).toBeGreaterThanOrEqual(before - 1000);
      expect(fresh.oldestAt).toBeLessThanOrEqual(after + 1000);
      await bus.read(s, "g", "c", { count: 2 }); // 1 and 2 pending, 3 unread
      expect((await bus.backlog(s, "g")).messages).toBe(3);
      await bus.ack(s, "g", [ids[0]!]);
      expect((await bus.backlog(s, "g")).messages).toBe(2);
      await bus.ack(s, "g", [ids[1]!]);
      await bus.ack(
        s,
        "g",
        (await bus.read(s, "g", "c")).map((m) => m.id),
      );
      expect(await bus.backlog(s, "g")).toStrictEqual({ messages: 0, oldestAt: null });
      // Other groups keep their own count.
      expect((await bus.backlog(s, "other")).messages).toBe(3);
    });

    it("trim deletes old messages only once every group acknowledged them", async () => {
      const s = stream();
      const ids = await bus.publish(s, [msg("1"), msg("2"), msg("3")]);
      const g1 = await bus.read(s, "g1", "c");
      await bus.ack(s, "g1", [g1[0]!.id]); // g1: 1 done, 2 and 3 pending
      await bus.read(s, "g2", "c", { count: 2 });
      await bus.ack(s, "g2", ids.slice(0, 2)); // g2: 1 and 2 done, 3 not read
      expect(await bus.trim(s, 3_600_000)).toBe(0); // younger than the retention
      expect(await bus.trim(s, 0)).toBe(1);
      expect(keys(await bus.read(s, "g3", "c"))).toStrictEqual(["2", "3"]);
      expect(keys(await bus.read(s, "g1", "c", { claimIdleMs: 0 }))).toStrictEqual(["2", "3"]);
      expect(await bus.trim(stream(), 0)).toBe(0); // a stream nobody wrote
    });

    it("trim keeps a message some group has not read yet, even when no one else needs it", async () => {
      const s = stream();
      await bus.publish(s, [msg("1")]);
      await bus.read(s, "slow", "c", { count: 1 });
      await bus.ack(
        s,
        "slow",
        (await bus.read(s, "slow", "c", { claimIdleMs: 0 })).map((m) => m.id),
      );
      await bus.publish(s, [msg("2")]);
      expect(await bus.trim(s, 0)).toBe(1);
      expect(keys(await bus.read(s, "slow", "c"))).toStrictEqual(["2"]);
    });

    it("concurrent publishers and consumers lose nothing and duplicate nothing", async () => {
      const s = stream();
      const publishers = Array.from({ length: 5 }, (_, p) =>
        (async () => {
          for (let i = 0; i < 4; i++) {
            await bus.publish(
              s,
              Array.from({ length: 5 }, (_, j) => msg(`${p}-${i}-${j}`)),
            );
          }
        })(),
      );
      const seen: string[] = [];
      const idOf = new Map<string, string>();
      let published = false;
      const all = Promise.all(publishers).then(() => {
        published = true;
      });
      const consumers = ["a", "b", "c"].map((name) =>
        (async () => {
          // Bounded: stops once everything published was received.
          for (let round = 0; round < 2000 && !(published && seen.length >= 100); round++) {
            const got = await bus.read(s, "g", name, { count: 7 });
            seen.push(...keys(got));
            for (const m of got) idOf.set(m.key, m.id);
            if (got.length)
              await bus.ack(
                s,
                "g",
                got.map((m) => m.id),
              );
            else await new Promise((r) => setTimeout(r, 2));
          }
        })(),
      );
      await all;
      await Promise.all(consumers);
      expect(seen).toHaveLength(100);
      expect(new Set(seen).size).toBe(100);
      // Each publisher's messages sit in the stream in the order it published them.
      const position = (id: string) => id.split("-").map((part) => BigInt(part));
      const before = (a: string, b: string) => {
        const [am = 0n, as = 0n] = position(a);
        const [bm = 0n, bs = 0n] = position(b);
        return am < bm || (am === bm && as < bs);
      };
      for (let p = 0; p < 5; p++) {
        const mine = Array.from({ length: 20 }, (_, n) => idOf.get(`${p}-${Math.floor(n / 5)}-${n % 5}`)!);
        for (let n = 1; n < mine.length; n++) expect(before(mine[n - 1]!, mine[n]!)).toBe(true);
      }
    });

    it("refuses names outside the bus alphabet and ignores malformed ids", async () => {
      expect(await bus.publish(stream(), [])).toStrictEqual([]);
      await expect(bus.publish("bad name", [msg("1")])).rejects.toThrow(/stream name/);
      await expect(bus.read(stream(), "bad group!", "c")).rejects.toThrow(/group name/);
      await expect(bus.read(stream(), "g", "")).rejects.toThrow(/consumer name/);
      expect(await bus.ack(stream(), "g", ["not-an-id", "x"])).toBe(0);
    });
  });
}

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
if (!TEST_REDIS_URL) it.skip(skipReason("Redis", "TEST_REDIS_URL"), () => {});

for (const store of reopenableSql) {
  describe.skipIf(!store.available)(`SQL bus, a group deleted by hand: ${store.name}`, () => {
    it("the next read of a running process makes the group again, from the oldest message kept", async () => {
      // An abandoned group is deleted with `DELETE FROM bus_groups` (docs/events.md); a process that
      // still reads it must not read nothing forever because it remembered the row.
      const opened = await store.open();
      try {
        const bus = new SqlBus(opened.sql);
        const s = stream();
        await bus.publish(s, [msg("1"), msg("2")]);
        const first = await bus.read(s, "g", "c");
        expect(keys(first)).toStrictEqual(["1", "2"]);
        await bus.ack(
          s,
          "g",
          first.map((m) => m.id),
        );
        await opened.sql.query("DELETE FROM bus_groups WHERE stream = $1 AND group_name = 'g'", [s]);
        await bus.publish(s, [msg("3")]);
        expect(keys(await bus.read(s, "g", "c"))).toStrictEqual(["1", "2", "3"]);
        expect(await bus.read(s, "g", "c")).toStrictEqual([]);
      } finally {
        await opened.close();
      }
    });
  });
}
