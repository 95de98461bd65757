import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KvStore, KvUnavailableError } from "../../src/stores/kv/port.js";
import { RedisKv } from "../../src/stores/kv/redis.js";
import { skipReason } from "../helpers/env.js";
import { kvAdapters, type Opened } from "../helpers/stores.js";

for (const adapter of kvAdapters) {
  describe.skipIf(!adapter.available)(`kv contract: ${adapter.name}`, () => {
    let opened: Opened<KvStore>;
    let kv: KvStore;
    beforeAll(async () => {
      opened = await adapter.open();
      kv = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("gets, sets and deletes values", async () => {
      expect(await kv.get("missing")).toBeNull();
      await kv.set("a", "1");
      expect(await kv.get("a")).toBe("1");
      await kv.set("a", "two");
      expect(await kv.get("a")).toBe("two");
      await kv.del("a");
      expect(await kv.get("a")).toBeNull();
    });

    it("expires a value after its TTL", async () => {
      await kv.set("ttl", "x", 30);
      let value: string | null = "x";
      for (let i = 0; i < 100 && value !== null; i++) {
        await new Promise((r) => setTimeout(r, 20));
        value = await kv.get("ttl");
      }
      expect(value).toBeNull();
    });

    it("increments atomically under concurrency", async () => {
      const results = await Promise.all(Array.from({ length: 100 }, () => kv.incr("counter")));
      expect(new Set(results).size).toBe(100);
      expect(Math.max(...results)).toBe(100);
      expect(await kv.get("counter")).toBe("100");
    });

    it("takes tokens from a bucket and refuses without taking when it is empty", async () => {
      const rule = { capacity: 5, refillPerSecond: 0.001 };
      const decisions = await Promise.all(Array.from({ length: 7 }, () => kv.takeTokens("bucket", rule)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      const refused = decisions.filter((d) => !d.allowed);
      expect(refused).toHaveLength(2);
      for (const d of refused) {
        expect(d.remaining).toBe(0);
        expect(d.retryAfterMs).toBeGreaterThan(0);
      }
      const big = await kv.takeTokens("other", rule, 6);
      expect(big.allowed).toBe(false);
      const fits = await kv.takeTokens("other", rule, 5);
      expect(fits).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("refills a bucket over time", async () => {
      const rule = { capacity: 1, refillPerSecond: 50 };
      expect((await kv.takeTokens("refill", rule)).allowed).toBe(true);
      let allowed = false;
      for (let i = 0; i < 100 && !allowed; i++) {
        await new Promise((r) => setTimeout(r, 10));
        allowed = (await kv.takeTokens("refill", rule)).allowed;
      }
      expect(allowed).toBe(true);
    });

    it("answers ping", async () => {
      await expect(kv.ping()).resolves.toBeUndefined();
    });
  });
}

if (!kvAdapters.find((a) => a.name === "redis")?.available) {
  it.skip(skipReason("Redis", "TEST_REDIS_URL"), () => {});
}

it("redis adapter: an unreachable server answers KvUnavailableError", async () => {
  const kv = new RedisKv("redis://127.0.0.1:1");
  await expect(kv.get("x")).rejects.toBeInstanceOf(KvUnavailableError);
  await kv.close();
});
