/**
 * The in-process locks under SqlStore.exclusive: KeyedLock runs one holder per key (other keys go on),
 * Slots at most N holders at once, both going on after a holder throws.
 */
import { describe, expect, it } from "vitest";
import { KeyedLock, Slots } from "../../src/stores/locks.js";

describe("KeyedLock", () => {
  it("runs one function at a time per key and goes on after a failure", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = lock.run("k", async () => {
      order.push("first start");
      await gate;
      order.push("first end");
      throw new Error("boom");
    });
    const second = lock.run("k", async () => {
      order.push("second");
      return 2;
    });
    const other = lock.run("other", async () => {
      order.push("other key");
      return 3;
    });
    expect(await other).toBe(3);
    release();
    await expect(first).rejects.toThrow("boom");
    expect(await second).toBe(2);
    expect(order).toEqual(["first start", "other key", "first end", "second"]);
  });
});

describe("Slots", () => {
  it("admits at most `size` holders, the rest in arrival order, and frees a slot after a failure", async () => {
    const slots = new Slots(2);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    const gates = [0, 1, 2, 3, 4].map(() => {
      let open!: () => void;
      const p = new Promise<void>((r) => {
        open = r;
      });
      return { p, open };
    });
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        inside++;
        most = Math.max(most, inside);
        order.push(i);
        await g.p;
        inside--;
        if (i === 0) throw new Error("first fails");
        return i;
      }),
    );
    for (const g of gates) g.open();
    const settled = await Promise.allSettled(runs);
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(settled.map((s) => s.status)).toEqual([
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    expect(await slots.run(async () => "free again")).toBe("free again");
  });
});
