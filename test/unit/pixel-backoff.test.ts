/**
 * PixelBackoff (src/derived/backoff.ts): a held pixel waits out the interval, the others go on.
 *
 * Worked example, interval 30 s: px fails at 12:00:00 and is held; at 12:00:29.999 it still waits,
 * at 12:00:30 it is tried again; py was never held and is tried at once. A success clears px at once;
 * an interval set to 0 lets every held pixel go.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PixelBackoff } from "../../src/derived/backoff.js";

describe("PixelBackoff", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-27T12:00:00.000Z"));
  });
  afterEach(() => vi.useRealTimers());

  it("holds a pixel for the interval, per pixel, until cleared", () => {
    let interval = 30_000;
    const backoff = new PixelBackoff(() => interval);
    backoff.hold("px");
    expect(backoff.waiting("px")).toBe(true);
    expect(backoff.waiting("py")).toBe(false);
    vi.setSystemTime(new Date("2026-11-27T12:00:29.999Z"));
    expect(backoff.waiting("px")).toBe(true);
    vi.setSystemTime(new Date("2026-11-27T12:00:30.000Z"));
    expect(backoff.waiting("px")).toBe(false);
    backoff.hold("px");
    backoff.clear("px");
    expect(backoff.waiting("px")).toBe(false);
    backoff.hold("px");
    interval = 0;
    expect(backoff.waiting("px")).toBe(false);
  });
});
