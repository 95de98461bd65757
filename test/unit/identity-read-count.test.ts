/**
 * How many sightings messages the identity worker asks for next (src/identity/worker.ts): about
 * `maxSightings` worth of messages like the last read's, between 1 and the batch size.
 *
 * Worked example: an import's messages carry 5,000 orders' sightings; with 20,000 per filing the
 * next read asks for 4 messages, where ingestion's messages of ~50 sightings get the full 100.
 */
import { describe, expect, it } from "vitest";
import { nextReadCount } from "../../src/identity/worker.js";

describe("nextReadCount", () => {
  it("asks for about maxSightings worth of messages like the last ones", () => {
    expect(nextReadCount(10, 50_000, 20_000, 100)).toBe(4);
    expect(nextReadCount(3, 300, 20_000, 100)).toBe(100);
  });
  it("asks for at least one message however large they were", () => {
    expect(nextReadCount(1, 500_000, 20_000, 100)).toBe(1);
  });
  it("asks for the full batch after an empty read or messages without sightings", () => {
    expect(nextReadCount(0, 0, 20_000, 100)).toBe(100);
    expect(nextReadCount(5, 0, 20_000, 100)).toBe(100);
  });
});
