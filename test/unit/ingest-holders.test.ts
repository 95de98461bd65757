/**
 * The eventIds a process's ingest groups are storing (src/ingest/holders.ts). Worked example: group A
 * claims "e1" of pixel p; group B meets "e1" again and gets A back (B waits for A's write); B's own
 * "e2" is B's; the same "e1" under pixel q is another event. Once A is released (settled or failed), a
 * later group C claims "e1" itself — and releasing A again does not take C's claim away.
 */
import { describe, expect, it } from "vitest";
import { Holding, LocalHolders } from "../../src/ingest/holders.js";

describe("LocalHolders", () => {
  it("returns the earlier group for a second copy, per pixel, until that group is released", () => {
    const holders = new LocalHolders();
    const a = new Holding();
    const b = new Holding();
    const c = new Holding();
    expect(holders.claim("p", "e1", a)).toBeUndefined();
    expect(holders.claim("p", "e1", a)).toBeUndefined(); // a copy within one group is the group's own
    expect(holders.claim("p", "e1", b)).toBe(a);
    expect(holders.claim("p", "e2", b)).toBeUndefined();
    expect(holders.claim("q", "e1", b)).toBeUndefined();
    expect(holders.size).toBe(3);

    holders.release(a);
    expect(holders.size).toBe(2);
    expect(holders.claim("p", "e1", c)).toBeUndefined();
    holders.release(a);
    expect(holders.claim("p", "e1", b)).toBe(c);
    holders.release(b);
    holders.release(c);
    expect(holders.size).toBe(0);
  });

  it("tells waiting groups whether the holder's write stored its events", async () => {
    const stored = new Holding();
    const failed = new Holding();
    stored.done(true);
    failed.done(false);
    expect(await stored.written).toBe(true);
    expect(await failed.written).toBe(false);
  });

  it("keeps a pixel and an id apart even when their text could join alike", () => {
    const holders = new LocalHolders();
    const a = new Holding();
    expect(holders.claim("p:x", "y", a)).toBeUndefined();
    expect(holders.claim("p", "x:y", new Holding())).toBeUndefined();
  });
});
