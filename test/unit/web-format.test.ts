/**
 * The pages' value formatting by measure valueType and their compare-period arithmetic
 * (web/shared/format.ts: browser code without DOM, so it runs here as it is).
 */
import { describe, expect, it } from "vitest";
import {
  comparePeriod,
  daysIn,
  deltaTone,
  formatDelta,
  formatDuration,
  formatRange,
  formatValue,
  isDay,
  shortLabel,
} from "../../web/shared/format.js";

describe("formatValue", () => {
  it.each([
    [2100, "currency", "USD", "$2,100.00"],
    [1234.567, "currency", "EUR", "€1,234.57"],
    [-5, "currency", "GBP", "-£5.00"],
    [99.5, "currency", "JPY", "¥100"],
    [12.5, "percent", "USD", "12.5%"],
    [33.3333, "percent", "USD", "33.33%"],
    [3.21, "ratio", "USD", "3.21×"],
    [1234567, "count", "USD", "1,234,567"],
    [2.0001, "number", "USD", "2"],
    [1.25, "number", "USD", "1.25"],
    [3725, "duration", "USD", "1h 02m"],
  ])("%s as %s (%s) → %s", (value, type, currency, expected) => {
    expect(formatValue(value, type, currency)).toBe(expected);
  });

  it("an absent value is a dash, whatever the type", () => {
    for (const type of ["currency", "percent", "ratio", "count", "number", "duration"]) {
      expect(formatValue(null, type)).toBe("—");
      expect(formatValue(undefined, type)).toBe("—");
      expect(formatValue(Number.NaN, type)).toBe("—");
    }
  });

  it("compact shortens large numbers only", () => {
    expect(formatValue(12_345, "currency", "USD", { compact: true })).toBe("$12.3K");
    expect(formatValue(2_500_000, "count", "USD", { compact: true })).toBe("2.5M");
    expect(formatValue(950, "currency", "USD", { compact: true })).toBe("$950.00");
  });

  it("a currency code Intl does not know is written after the number", () => {
    expect(formatValue(10, "currency", "XYZ1")).toBe("10 XYZ1");
  });
});

describe("durations, deltas and tones", () => {
  it.each([
    [0.42, "0.4s"],
    [42, "42s"],
    [200, "3m 20s"],
    [7200, "2h 00m"],
  ])("%s seconds → %s", (s, expected) => expect(formatDuration(s)).toBe(expected));

  it("formatDelta signs the change with a real minus", () => {
    expect(formatDelta(100)).toBe("+100%");
    expect(formatDelta(-12.34)).toBe("−12.3%");
    expect(formatDelta(0.01)).toBe("0%");
    expect(formatDelta(null)).toBe("—");
  });

  it("deltaTone follows the measure's preferred direction", () => {
    expect(deltaTone(5, "up")).toBe("good");
    expect(deltaTone(-5, "up")).toBe("bad");
    expect(deltaTone(5, "down")).toBe("bad");
    expect(deltaTone(-5, "down")).toBe("good");
    expect(deltaTone(5, "neutral")).toBe("neutral");
    expect(deltaTone(null, "up")).toBe("neutral");
  });
});

describe("compare periods", () => {
  const march = { start: "2026-03-01", end: "2026-03-31" };

  it("the previous period is as long and ends the day before", () => {
    expect(daysIn(march)).toBe(31);
    expect(comparePeriod(march, "previous_period")).toEqual({ start: "2026-01-29", end: "2026-02-28" });
    expect(comparePeriod({ start: "2026-01-01", end: "2026-01-01" }, "previous_period")).toEqual({
      start: "2025-12-31",
      end: "2025-12-31",
    });
  });

  it("the same period last year keeps the dates; 29 February becomes the 28th", () => {
    expect(comparePeriod(march, "previous_year")).toEqual({ start: "2025-03-01", end: "2025-03-31" });
    expect(comparePeriod({ start: "2024-02-29", end: "2024-03-01" }, "previous_year")).toEqual({
      start: "2023-02-28",
      end: "2023-03-01",
    });
  });

  it("none is null", () => expect(comparePeriod(march, "none")).toBeNull());

  it("isDay accepts real dates only", () => {
    expect(isDay("2026-02-28")).toBe(true);
    expect(isDay("2026-02-30")).toBe(false);
    expect(isDay("2026-2-1")).toBe(false);
  });

  it("formatRange and shortLabel", () => {
    expect(formatRange(march)).toBe("Mar 1 – Mar 31, 2026");
    expect(formatRange({ start: "2025-12-20", end: "2026-01-02" })).toBe("Dec 20, 2025 – Jan 2, 2026");
    expect(formatRange({ start: "2026-03-01", end: "2026-03-01" })).toBe("Mar 1, 2026");
    expect(shortLabel("2026-03-01")).toBe("Mar 1");
    expect(shortLabel("2026-03-01 14:00")).toBe("Mar 1 14:00");
    expect(shortLabel("paid_social")).toBe("paid_social");
    expect(shortLabel("a very long category name indeed")).toBe("a very long categ…");
  });
});
