/**
 * The pooled random source behind the ULIDs ingestion and the identity assigner make. ulid maps a
 * fraction f to character floor(f × 32): with f = byte / 256, each character has exactly 8 of the
 * 256 byte values, so every character is equally likely.
 */
import { isValid, monotonicFactory } from "ulid";
import { describe, expect, it } from "vitest";
import { randomFraction } from "../../src/shared/random.js";

describe("randomFraction", () => {
  it("gives whole 256ths in [0, 1), spread evenly over ulid's 32 characters across pool refills", () => {
    const buckets = new Array<number>(32).fill(0);
    for (let i = 0; i < 32_000; i++) {
      const f = randomFraction();
      expect(f >= 0 && f < 1 && Number.isInteger(f * 256)).toBe(true);
      buckets[Math.floor(f * 32)]!++;
    }
    // 1,000 expected per character (standard deviation ~31): far outside this only if broken.
    for (const n of buckets) expect(n).toBeGreaterThan(850);
    for (const n of buckets) expect(n).toBeLessThan(1150);
  });

  it("makes valid, strictly increasing ULIDs through ulid's monotonic factory", () => {
    const next = monotonicFactory(randomFraction);
    const ids = Array.from({ length: 5_000 }, () => next());
    for (const id of ids) expect(isValid(id)).toBe(true);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });
});
