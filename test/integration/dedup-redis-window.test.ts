import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisDedupStore } from "../../src/stores/dedup/redis.js";
import { skipReason, TEST_REDIS_URL } from "../helpers/env.js";
import { uniqueName } from "../helpers/stores.js";

const DAY = 86_400_000;

describe.skipIf(!TEST_REDIS_URL)("Redis dedup window (clock moved, real Redis)", () => {
  const redis = TEST_REDIS_URL ? new Redis(TEST_REDIS_URL) : undefined;
  const prefix = `${uniqueName("pxh_window")}:`;
  // Near the real time: keys expire by Redis's own clock, so an expiry computed in the past would drop them.
  let clock = Date.now();
  const store = redis
    ? new RedisDedupStore(redis, {
        windowDays: 30,
        ownerTtlSeconds: 10,
        leaseSeconds: 60,
        periodDays: 10,
        bucketBits: 8,
        prefix,
        mayHoldIds: async () => false,
        now: () => clock,
      })
    : undefined;
  afterAll(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await store?.close();
    redis.disconnect();
  });

  it("remembers an acknowledged id for the whole window and forgets it after the period that holds it expires", async () => {
    const start = clock;
    const first = await store!.reserve("px", ["order-1"]);
    expect(first.status).toEqual(["fresh"]);
    await store!.commit(first.lease);
    for (const days of [1, 15, 29, 30]) {
      clock = start + days * DAY;
      const again = await store!.reserve("px", ["order-1"]);
      // A digest hit on an acknowledged id: the pipeline confirms it against the warehouse.
      expect(again.status, `${days} days later`).toEqual(["unconfirmed"]);
    }
    clock = start + 41 * DAY;
    const late = await store!.reserve("px", ["order-1"]);
    expect(late.status).toEqual(["fresh"]);
  });

  // Ids remembered before an upgrade must be found after it: where an id goes is fixed by the
  // SHA-256 of pixel, NUL and id as UTF-8 — its first 3 bytes pick the bucket, the next 12 are the
  // field, and the confirmation claim's key is its hex. Ids outside ASCII (a lone surrogate becomes
  // U+FFFD) are where another way of hashing would differ first.
  it.each(["order-placed", "ordér-\u00ff-\ud800-日本"])(
    "files %j under the bucket, field and claim key its SHA-256 digest names",
    async (id) => {
      const reserved = await store!.reserve("px", [id]);
      await store!.commit(reserved.lease);
      const digest = createHash("sha256").update("px").update("\u0000").update(id).digest();
      const bucket = digest[2]!; // bucketBits 8: the low 8 bits of the first 3 bytes
      const period = Math.floor(clock / (10 * DAY));
      const key = `${prefix}dd:{px}:${period}:${bucket.toString(16)}`;
      expect(await redis!.hexists(key, digest.subarray(3, 15))).toBe(1);
      const claim = await store!.claimUnconfirmed("px", [id]);
      expect(claim.claimed).toEqual([true]);
      expect(await redis!.exists(`${prefix}ddc:{px}:${digest.toString("hex")}`)).toBe(1);
      await claim.release();
    },
  );

  it("every key holding ids expires after its period plus the window", async () => {
    const keys = await redis!.keys(`${prefix}dd:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const expireAt = await redis!.pexpiretime(k);
      const period = Number(k.split(":").at(-2));
      expect(expireAt).toBe((period + 1) * 10 * DAY + 30 * DAY);
    }
  });
});

if (!TEST_REDIS_URL) it.skip(skipReason("Redis", "TEST_REDIS_URL"), () => {});
