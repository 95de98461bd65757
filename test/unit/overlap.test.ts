/**
 * allDone and alongside (src/shared/overlap.ts): the sync path builds rows on this thread while an
 * engine answers, and never moves on — or fails — while a write it started is still under way.
 * Worked example: the bus stores a batch's notices (pending) while this thread builds the order lines
 * (build); if building throws, the error surfaces only after the bus has answered.
 */
import { describe, expect, it } from "vitest";
import { allDone, alongside } from "../../src/shared/overlap.js";

/** A promise and the functions that settle it, so a test decides when the "engine" answers. */
function gate<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("alongside", () => {
  it("answers what was pending and what was built, the build running before the pending work settles", async () => {
    const pending = gate<string>();
    const order: string[] = [];
    const both = alongside(pending.promise, () => {
      order.push("built");
      return 42;
    });
    order.push("returned");
    pending.resolve("stored");
    expect(await both).toEqual(["stored", 42]);
    expect(order).toEqual(["built", "returned"]);
  });

  it("a build that throws waits for the pending work, then throws its own error", async () => {
    const pending = gate<string>();
    let settled = false;
    const both = alongside(pending.promise, () => {
      throw new Error("bad row");
    });
    both.catch(() => {
      settled = true;
    });
    // Give every queued continuation a chance to run: it must still be waiting for the write.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(settled).toBe(false);
    pending.reject(new Error("store down"));
    await expect(both).rejects.toThrow("bad row");
  });

  it("pending work that fails fails the whole, after the build", async () => {
    const pending = gate<string>();
    let built = false;
    const both = alongside(pending.promise, () => {
      built = true;
    });
    pending.reject(new Error("store down"));
    await expect(both).rejects.toThrow("store down");
    expect(built).toBe(true);
  });
});

describe("allDone", () => {
  it("waits for every write, then fails with the first failure in the list", async () => {
    const slow = gate<void>();
    let slowDone = false;
    const all = allDone([
      Promise.reject(new Error("first")),
      slow.promise.then(() => {
        slowDone = true;
      }),
      null,
      Promise.reject(new Error("second")),
    ]);
    let settled = false;
    all.catch(() => {
      settled = true;
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(settled).toBe(false);
    slow.resolve();
    await expect(all).rejects.toThrow("first");
    expect(slowDone).toBe(true);
  });

  it("resolves when every write succeeded (nulls are nothing to wait for)", async () => {
    await expect(allDone([Promise.resolve(1), null])).resolves.toBeUndefined();
  });
});
