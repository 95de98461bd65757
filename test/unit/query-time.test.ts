/**
 * Time buckets of a series (src/query/time.ts). Worked example: Europe/Berlin, 28–30 March 2026,
 * by day. Clocks go forward at 02:00 on the 29th, so that day runs from 23:00 UTC on the 28th to
 * 22:00 UTC on the 29th (23 hours) and the next starts at +02:00:
 *   2026-03-28  2026-03-27T23:00:00Z  start 2026-03-28T00:00:00+01:00  end 2026-03-29T00:00:00+01:00
 *   2026-03-29  2026-03-28T23:00:00Z  start 2026-03-29T00:00:00+01:00  end 2026-03-30T00:00:00+02:00
 *   2026-03-30  2026-03-29T22:00:00Z  start 2026-03-30T00:00:00+02:00  end 2026-03-31T00:00:00+02:00
 * The zone conversions are remembered per (zone, input): a repeated request gets the same buckets,
 * and so does one after the memory was cleared for being full.
 */
import { describe, expect, it } from "vitest";
import { buckets, localMidnight, resolveRange } from "../../src/query/time.js";

const NOW = new Date("2026-04-15T12:00:00Z");
const berlin = () =>
  resolveRange({ start: "2026-03-28", end: "2026-03-30" }, "Europe/Berlin", NOW, "dateRange");

describe("buckets", () => {
  it("by day across a DST change in Europe/Berlin (worked example)", () => {
    const days = buckets(berlin(), "day", "Europe/Berlin");
    expect(days).toEqual([
      {
        key: Date.parse("2026-03-27T23:00:00Z") / 1000,
        dt: "2026-03-28",
        start: "2026-03-28T00:00:00+01:00",
        end: "2026-03-29T00:00:00+01:00",
      },
      {
        key: Date.parse("2026-03-28T23:00:00Z") / 1000,
        dt: "2026-03-29",
        start: "2026-03-29T00:00:00+01:00",
        end: "2026-03-30T00:00:00+02:00",
      },
      {
        key: Date.parse("2026-03-29T22:00:00Z") / 1000,
        dt: "2026-03-30",
        start: "2026-03-30T00:00:00+02:00",
        end: "2026-03-31T00:00:00+02:00",
      },
    ]);
    // UTC says Z, as date-fns' XXX does.
    const utc = resolveRange({ start: "2026-03-28", end: "2026-03-28" }, "UTC", NOW, "dateRange");
    expect(buckets(utc, "day", "UTC")[0]).toMatchObject({
      start: "2026-03-28T00:00:00Z",
      end: "2026-03-29T00:00:00Z",
    });
  });

  it("a remembered midnight is a new Date each time: changing one changes no later answer", () => {
    const first = localMidnight("2026-03-29", "Europe/Berlin");
    first.setTime(0);
    expect(localMidnight("2026-03-29", "Europe/Berlin").toISOString()).toBe("2026-03-28T23:00:00.000Z");
  });

  it("the same buckets again, and after more distinct conversions than are remembered", () => {
    const before = buckets(berlin(), "day", "Europe/Berlin");
    expect(buckets(berlin(), "day", "Europe/Berlin")).toEqual(before);
    // 6 × 9,000 hourly buckets: more distinct instants than the memory keeps (it is cleared once full).
    for (let i = 0; i < 6; i++) {
      const start = new Date(Date.UTC(2020 + i, 0, 1)).toISOString().slice(0, 10);
      const end = new Date(Date.UTC(2020 + i, 0, 1) + 374 * 86_400_000).toISOString().slice(0, 10);
      const range = resolveRange({ start, end }, "America/New_York", NOW, "dateRange");
      expect(buckets(range, "hour", "America/New_York").length).toBeGreaterThan(8_900);
    }
    expect(buckets(berlin(), "day", "Europe/Berlin")).toEqual(before);
  });
});
