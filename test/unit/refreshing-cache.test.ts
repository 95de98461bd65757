/**
 * RefreshingCache on a clock the test moves. Worked example with ttlMs 1000: a value read at t=0 is
 * served from the cache until t=500 with no read; from t=500 it is still served, and one background
 * read starts; from t=1000 it is never served again, so a caller there waits for a read of its own.
 */
import { describe, expect, it } from "vitest";
import { RefreshingCache } from "../../src/shared/refreshing-cache.js";

/** A store read the test controls: each call is held until the test settles it. */
function heldLoads() {
  const calls: { key: string; resolve: (v: string | undefined) => void; reject: (e: unknown) => void }[] = [];
  const load = (key: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      calls.push({ key, resolve, reject });
    });
  return { calls, load };
}

function setup(ttlMs = 1000, max = 100) {
  let t = 0;
  const errors: unknown[] = [];
  const { calls, load } = heldLoads();
  const cache = new RefreshingCache(load, {
    ttlMs,
    max,
    maxAbsent: max,
    now: () => t,
    onRefreshError: (err) => errors.push(err),
  });
  return {
    cache,
    calls,
    errors,
    at: (ms: number) => {
      t = ms;
    },
  };
}

describe("RefreshingCache", () => {
  it("serves a read value without reading again before half its time", async () => {
    const { cache, calls, at } = setup();
    const first = cache.get("k");
    calls[0]!.resolve("v1");
    expect(await first).toBe("v1");
    at(499);
    expect(await cache.get("k")).toBe("v1");
    expect(calls).toHaveLength(1);
  });

  it("lets concurrent misses of one key share one read", async () => {
    const { cache, calls } = setup();
    const gets = [cache.get("k"), cache.get("k"), cache.get("k"), cache.get("other")];
    expect(calls.map((c) => c.key)).toStrictEqual(["k", "other"]);
    calls[0]!.resolve("v");
    calls[1]!.resolve("o");
    expect(await Promise.all(gets)).toStrictEqual(["v", "v", "v", "o"]);
  });

  it("past half its time, serves the value at once and reads it again once, in the background", async () => {
    const { cache, calls, at } = setup();
    const first = cache.get("k");
    calls[0]!.resolve("v1");
    await first;
    at(600);
    // Served now, though the re-read has not answered.
    expect(await cache.get("k")).toBe("v1");
    expect(await cache.get("k")).toBe("v1");
    expect(calls.map((c) => c.key)).toStrictEqual(["k", "k"]);
    calls[1]!.resolve("v2");
    await Promise.resolve();
    expect(await cache.get("k")).toBe("v2");
    // The new value's time counts from its read (t=600): at 1099 it is fresh, no third read.
    at(1099);
    expect(await cache.get("k")).toBe("v2");
    expect(calls).toHaveLength(2);
  });

  it("never serves a value once its time since the read began is up", async () => {
    const { cache, calls, at } = setup();
    at(100);
    const first = cache.get("k");
    at(300); // the read answers late; its time still counts from 100
    calls[0]!.resolve("v1");
    await first;
    at(1100);
    let answered: string | undefined = "none";
    const waiting = cache.get("k").then((v) => {
      answered = v;
    });
    await Promise.resolve();
    expect(answered).toBe("none");
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("v2");
    await waiting;
    expect(answered).toBe("v2");
  });

  it("a lapsed value's caller joins the background read already under way", async () => {
    const { cache, calls, at } = setup();
    const first = cache.get("k");
    calls[0]!.resolve("v1");
    await first;
    at(700);
    await cache.get("k"); // starts the re-read at 700
    at(1000);
    const late = cache.get("k");
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("v2");
    expect(await late).toBe("v2");
  });

  it("remembers undefined (a key the store does not know) like any value", async () => {
    const { cache, calls, at } = setup();
    const first = cache.get("missing");
    calls[0]!.resolve(undefined);
    expect(await first).toBeUndefined();
    at(400);
    expect(await cache.get("missing")).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it("invalidate forgets the key, and a read begun before it is neither stored nor joined", async () => {
    const { cache, calls } = setup();
    const before = cache.get("k");
    cache.invalidate("k");
    const after = cache.get("k");
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("new");
    expect(await after).toBe("new");
    // The read begun before the invalidation answers last, and still does not replace "new".
    calls[0]!.resolve("old");
    expect(await before).toBe("old");
    expect(await cache.get("k")).toBe("new");
    expect(calls).toHaveLength(2);

    const { cache: c2, calls: calls2 } = setup();
    const stale = c2.get("k");
    c2.invalidate("k");
    calls2[0]!.resolve("old");
    expect(await stale).toBe("old");
    // Nothing was stored from the read that began before the invalidation.
    const fresh = c2.get("k");
    expect(calls2).toHaveLength(2);
    calls2[1]!.resolve("new");
    expect(await fresh).toBe("new");
  });

  it("a failed read fails its callers and stores nothing; a failed re-read keeps the value until its time", async () => {
    const { cache, calls, errors, at } = setup();
    const a = cache.get("k");
    const b = cache.get("k");
    calls[0]!.reject(new Error("store down"));
    await expect(a).rejects.toThrow("store down");
    await expect(b).rejects.toThrow("store down");
    const c = cache.get("k");
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("v1");
    expect(await c).toBe("v1");

    at(600);
    expect(await cache.get("k")).toBe("v1");
    calls[2]!.reject(new Error("refresh failed"));
    await Promise.resolve();
    await Promise.resolve();
    expect(errors).toHaveLength(1);
    at(900);
    // Still within its time: served, and the next re-read is tried.
    expect(await cache.get("k")).toBe("v1");
    expect(calls).toHaveLength(4);
    calls[3]!.reject(new Error("refresh failed again"));
    await Promise.resolve();
    await Promise.resolve();
    // Its time is up (read at 0): a caller now waits for a read of its own, whatever the re-reads did.
    at(1000);
    const late = cache.get("k");
    expect(calls).toHaveLength(5);
    calls[4]!.resolve("v2");
    expect(await late).toBe("v2");
  });

  it("a caller whose value lapsed while a background read fails reads again itself instead of failing", async () => {
    const { cache, calls, errors, at } = setup();
    const first = cache.get("k");
    calls[0]!.resolve("v1");
    await first;
    at(600);
    await cache.get("k"); // the background re-read, begun at 600
    at(1000);
    const lapsed = cache.get("k"); // joins it
    expect(calls).toHaveLength(2);
    calls[1]!.reject(new Error("refresh failed"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(3);
    calls[2]!.resolve("v2");
    expect(await lapsed).toBe("v2");
    expect(errors).toHaveLength(1);
  });

  it("does not share a read that began ttlMs ago or more (a stalled store)", async () => {
    const { cache, calls, at } = setup();
    const stalled = cache.get("k");
    at(1000);
    const later = cache.get("k");
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("fresh");
    expect(await later).toBe("fresh");
    calls[0]!.resolve("stale");
    expect(await stalled).toBe("stale");
    // The stalled read was replaced: what it brought is not stored.
    expect(await cache.get("k")).toBe("fresh");
    expect(calls).toHaveLength(2);
  });

  it("invalidating one key leaves another key's background read to be stored", async () => {
    const { cache, calls, at } = setup();
    const a = cache.get("a");
    const b = cache.get("b");
    calls[0]!.resolve("a1");
    calls[1]!.resolve("b1");
    await Promise.all([a, b]);
    at(600);
    expect(await cache.get("b")).toBe("b1"); // re-read of b under way
    cache.invalidate("a");
    calls[2]!.resolve("b2");
    await Promise.resolve();
    expect(await cache.get("b")).toBe("b2");
    expect(calls).toHaveLength(3);
  });

  it("invalidate during a background read: the value is gone at once and the read's answer is not stored", async () => {
    const { cache, calls, at } = setup();
    const first = cache.get("k");
    calls[0]!.resolve("before");
    await first;
    at(600);
    expect(await cache.get("k")).toBe("before");
    cache.invalidate("k");
    const after = cache.get("k");
    expect(calls).toHaveLength(3);
    calls[1]!.resolve("refreshed-before-invalidate");
    calls[2]!.resolve("after");
    expect(await after).toBe("after");
    expect(await cache.get("k")).toBe("after");
  });

  it("keys the store does not know cannot push known values out", async () => {
    const { cache, calls } = setup(1000, 2);
    const known = cache.get("known");
    calls[0]!.resolve("v");
    await known;
    for (const k of ["x1", "x2", "x3", "x4"]) {
      const miss = cache.get(k);
      calls.at(-1)!.resolve(undefined);
      expect(await miss).toBeUndefined();
    }
    expect(calls).toHaveLength(5);
    expect(await cache.get("known")).toBe("v");
    expect(calls).toHaveLength(5);
  });

  it("with ttlMs 0 reads every time", async () => {
    const { cache, calls } = setup(0);
    const a = cache.get("k");
    const b = cache.get("k");
    expect(calls).toHaveLength(2);
    calls[0]!.resolve("x");
    calls[1]!.resolve("y");
    expect([await a, await b]).toStrictEqual(["x", "y"]);
  });
  it("a load that throws at once fails a foreground caller, and a background one fails no caller", async () => {
    let t = 0;
    let mode: "ok" | "throw" = "ok";
    const errors: unknown[] = [];
    const cache = new RefreshingCache<string>(
      (key) => {
        if (mode === "throw") throw new Error(`cannot read ${key}`);
        return Promise.resolve(`${key}@${t}`);
      },
      { ttlMs: 1000, max: 10, maxAbsent: 10, now: () => t, onRefreshError: (err) => errors.push(err) },
    );
    expect(await cache.get("k")).toBe("k@0");
    mode = "throw";
    t = 600;
    expect(await cache.get("k")).toBe("k@0");
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
    await expect(cache.get("other")).rejects.toThrow("cannot read other");
  });
});
