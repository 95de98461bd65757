/**
 * touchShares (src/query/attribution-models.ts): each touch's share of one conversion, the reference
 * the query engine's fractional models (linear, time_decay, position_based) must reproduce.
 *
 * Worked example (5 touches, one a day, days 0..4 before a conversion, given in that order):
 *   linear          1/5 each                                   = 0.2, 0.2, 0.2, 0.2, 0.2
 *   position_based  40 % first, 40 % last, 20 % / 3 in between = 0.4, 0.0667, 0.0667, 0.0667, 0.4
 *   time_decay h=1  weights 2^−4, 2^−3, 2^−2, 2^−1, 2^0 = 1/16, 1/8, 1/4, 1/2, 1 (sum 31/16)
 *                   → 1/31, 2/31, 4/31, 8/31, 16/31
 *   time_decay h=7  (the default) two touches 7 days apart: weights 1/2, 1 → 1/3, 2/3
 * Touches at the same instant rank by event id (`a` before `b`), whatever the input order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ATTRIBUTION_MODELS,
  type AttributionModel,
  DEFAULT_HALF_LIFE_DAYS,
  FRACTIONAL_MODELS,
  type TouchAt,
  touchShares,
} from "../../src/query/attribution-models.js";

const DAY = 86_400_000;
const T0 = Date.parse("2026-05-01T00:00:00Z");
/** Touches at the given day offsets from T0, event ids e0, e1, … in the order given. */
const at = (...days: number[]): TouchAt[] => days.map((d, i) => ({ time: T0 + d * DAY, eventId: `e${i}` }));

/** Shares compared to 12 decimals (floating point sums of fractions). */
function expectShares(actual: number[], expected: number[]) {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((s, i) => {
    expect(s, `share ${i} of [${actual.join(", ")}]`).toBeCloseTo(expected[i]!, 12);
  });
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("touchShares by model", () => {
  it("no touch: no shares", () => {
    for (const m of ATTRIBUTION_MODELS) expect(touchShares(m, [])).toEqual([]);
  });

  it("one touch takes the whole conversion in every model", () => {
    for (const m of ATTRIBUTION_MODELS) expectShares(touchShares(m, at(3)), [1]);
    expectShares(touchShares("time_decay", at(3), 1), [1]);
  });

  it("two touches", () => {
    const two = at(0, 7);
    expectShares(touchShares("first_click", two), [1, 0]);
    expectShares(touchShares("last_click", two), [0, 1]);
    expectShares(touchShares("any_click", two), [1, 1]);
    expectShares(touchShares("linear", two), [0.5, 0.5]);
    expectShares(touchShares("position_based", two), [0.5, 0.5]); // two touches: 50 % each
    // 7 days apart, default half-life 7: weights 2^−1 and 2^0 → 1/3, 2/3
    expect(DEFAULT_HALF_LIFE_DAYS).toBe(7);
    expectShares(touchShares("time_decay", two), [1 / 3, 2 / 3]);
    expectShares(touchShares("time_decay", two, 7), [1 / 3, 2 / 3]);
    // half-life 14: weights 2^−0.5 and 1 → 0.414214, 0.585786
    expectShares(touchShares("time_decay", two, 14), [
      Math.SQRT1_2 / (1 + Math.SQRT1_2),
      1 / (1 + Math.SQRT1_2),
    ]);
    // 1 day apart with half-life 1 is the same ratio as 7 days apart with 7
    expectShares(touchShares("time_decay", at(0, 1), 1), [1 / 3, 2 / 3]);
  });

  it("three touches", () => {
    const three = at(0, 7, 14);
    expectShares(touchShares("first_click", three), [1, 0, 0]);
    expectShares(touchShares("last_click", three), [0, 0, 1]);
    expectShares(touchShares("any_click", three), [1, 1, 1]);
    expectShares(touchShares("linear", three), [1 / 3, 1 / 3, 1 / 3]);
    expectShares(touchShares("position_based", three), [0.4, 0.2, 0.4]);
    // weights 2^−2, 2^−1, 1 = 1/4, 1/2, 1 (sum 7/4) → 1/7, 2/7, 4/7
    expectShares(touchShares("time_decay", three), [1 / 7, 2 / 7, 4 / 7]);
  });

  it("five touches (the worked example)", () => {
    const five = at(0, 1, 2, 3, 4);
    expectShares(touchShares("first_click", five), [1, 0, 0, 0, 0]);
    expectShares(touchShares("last_click", five), [0, 0, 0, 0, 1]);
    expectShares(touchShares("any_click", five), [1, 1, 1, 1, 1]);
    expectShares(touchShares("linear", five), [0.2, 0.2, 0.2, 0.2, 0.2]);
    expectShares(touchShares("position_based", five), [0.4, 0.2 / 3, 0.2 / 3, 0.2 / 3, 0.4]);
    expectShares(touchShares("time_decay", five, 1), [1 / 31, 2 / 31, 4 / 31, 8 / 31, 16 / 31]);
    // the same touches with h = 7: 2^(−k/7) for k = 4..0, normalized
    const w = [4, 3, 2, 1, 0].map((k) => 2 ** (-k / 7));
    expectShares(
      touchShares("time_decay", five),
      w.map((x) => x / sum(w)),
    );
  });

  it("time_decay counts fractions of a day: 36 hours are 1.5 days, not 1 or 2", () => {
    // 36 hours apart, h = 1: weights 2^−1.5, 1 → 0.261204, 0.738796
    const touches = [
      { time: T0, eventId: "x" },
      { time: T0 + 1.5 * DAY, eventId: "y" },
    ];
    const w = 2 ** -1.5;
    expectShares(touchShares("time_decay", touches, 1), [w / (1 + w), 1 / (1 + w)]);
  });
});

describe("ties and input order", () => {
  it("touches at the same instant rank by event id, not by input order", () => {
    const b = { time: T0, eventId: "b" };
    const a = { time: T0, eventId: "a" };
    // a ranks before b although given second
    expectShares(touchShares("first_click", [b, a]), [0, 1]);
    expectShares(touchShares("last_click", [b, a]), [1, 0]);
    expectShares(touchShares("first_click", [a, b]), [1, 0]);
    expectShares(touchShares("last_click", [a, b]), [0, 1]);
    // same instant: equal time-decay weights, linear and two-touch position shares either way
    expectShares(touchShares("time_decay", [b, a]), [0.5, 0.5]);
    expectShares(touchShares("linear", [b, a]), [0.5, 0.5]);
    expectShares(touchShares("position_based", [b, a]), [0.5, 0.5]);
  });

  it("a tie at the start of three touches decides who gets the first 40 %", () => {
    // z and y at T0, x a day later: ranked y, z, x → y first (40 %), z between (20 %), x last (40 %)
    const touches = [
      { time: T0, eventId: "z" },
      { time: T0, eventId: "y" },
      { time: T0 + DAY, eventId: "x" },
    ];
    expectShares(touchShares("position_based", touches), [0.2, 0.4, 0.4]);
    expectShares(touchShares("first_click", touches), [0, 1, 0]);
    // event ids compare as strings: "t10" ranks before "t9"
    const strings = [
      { time: T0, eventId: "t9" },
      { time: T0, eventId: "t10" },
      { time: T0 + DAY, eventId: "t1" },
    ];
    expectShares(touchShares("position_based", strings), [0.2, 0.4, 0.4]);
  });

  it("a tie at the end decides who gets the last 40 %", () => {
    const touches = [
      { time: T0 + DAY, eventId: "m" },
      { time: T0, eventId: "a" },
      { time: T0 + DAY, eventId: "k" },
    ];
    // ranked a, k, m → a 40 %, k 20 %, m 40 %; shares come back in input order (m, a, k)
    expectShares(touchShares("position_based", touches), [0.4, 0.4, 0.2]);
    expectShares(touchShares("last_click", touches), [1, 0, 0]);
  });

  it("unsorted input: shares come back in the order given", () => {
    // days 14, 0, 7 → ranks 2, 0, 1
    const shuffled = at(14, 0, 7);
    expectShares(touchShares("first_click", shuffled), [0, 1, 0]);
    expectShares(touchShares("last_click", shuffled), [1, 0, 0]);
    expectShares(touchShares("position_based", shuffled), [0.4, 0.4, 0.2]);
    expectShares(touchShares("time_decay", shuffled), [4 / 7, 1 / 7, 2 / 7]);
    expectShares(touchShares("linear", shuffled), [1 / 3, 1 / 3, 1 / 3]);
    // five touches, reversed and rotated: position_based puts 40 % on days 0 and 4 wherever they are
    expectShares(touchShares("position_based", at(2, 4, 0, 3, 1)), [0.2 / 3, 0.4, 0.4, 0.2 / 3, 0.2 / 3]);
    expectShares(touchShares("time_decay", at(2, 4, 0, 3, 1), 1), [4 / 31, 16 / 31, 1 / 31, 8 / 31, 2 / 31]);
  });
});

describe("properties", () => {
  const touchList = fc.array(
    fc.record({
      // minutes over ~10 years, so ties happen and spans reach past 3,000 days
      time: fc.integer({ min: 0, max: 10 * 365 * 1440 }).map((m) => T0 + m * 60_000),
      eventId: fc.string({ minLength: 1, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 12 },
  );
  const shareModels = ATTRIBUTION_MODELS.filter((m) => m !== "any_click") as AttributionModel[];

  it("every model but any_click gives shares in [0, 1] that add up to 1", () => {
    fc.assert(
      fc.property(
        touchList,
        fc.constantFrom(...shareModels),
        fc.integer({ min: 1, max: 90 }),
        (touches, model, h) => {
          const shares = touchShares(model, touches, h);
          expect(shares).toHaveLength(touches.length);
          for (const s of shares) {
            expect(Number.isFinite(s), `${model}: ${shares.join(", ")}`).toBe(true);
            expect(s).toBeGreaterThanOrEqual(0);
            expect(s).toBeLessThanOrEqual(1 + 1e-12);
          }
          expect(Math.abs(sum(shares) - 1), `${model} h=${h}: ${shares.join(", ")}`).toBeLessThan(1e-9);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("any_click credits every touch fully; the fractional models are the three named", () => {
    fc.assert(
      fc.property(touchList, (touches) => {
        expect(touchShares("any_click", touches)).toEqual(touches.map(() => 1));
      }),
    );
    expect([...FRACTIONAL_MODELS].sort()).toEqual(["linear", "position_based", "time_decay"]);
  });

  it("the shares do not depend on the input order (each touch keeps its share when shuffled)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            time: fc.integer({ min: 0, max: 60 }).map((d) => T0 + d * DAY),
            eventId: fc.string({ minLength: 1, maxLength: 3 }),
          }),
          { minLength: 1, maxLength: 8, selector: (t) => t.eventId },
        ),
        fc.constantFrom(...ATTRIBUTION_MODELS),
        (touches, model) => {
          const shares = touchShares(model, touches);
          const reversed = touchShares(model, [...touches].reverse()).reverse();
          reversed.forEach((s, i) => {
            expect(s).toBeCloseTo(shares[i]!, 12);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("time_decay over long spans", () => {
  it("3,000 days between the first and the last touch: no NaN, the old touches get (almost) nothing", () => {
    const touches = at(0, 1000, 2000, 2999, 3000);
    for (const h of [1, 7, 90]) {
      const shares = touchShares("time_decay", touches, h);
      for (const s of shares) expect(Number.isNaN(s), `h=${h}: ${shares.join(", ")}`).toBe(false);
      expect(Math.abs(sum(shares) - 1)).toBeLessThan(1e-12);
      // the latest touch has the largest share; shares never increase going back in time
      for (let i = 1; i < shares.length; i++) expect(shares[i]!).toBeGreaterThanOrEqual(shares[i - 1]!);
    }
    // h = 1: 2^−3000 underflows to 0 — the touch 3,000 days back gets 0, not NaN;
    // the last two (1 day apart) split 1/3, 2/3 up to the negligible older weights
    const h1 = touchShares("time_decay", touches, 1);
    expect(h1[0]).toBe(0);
    expectShares(h1.slice(3), [1 / 3, 2 / 3]);
    // h = 90: the oldest still counts, 2^(−3000/90) ≈ 9.3e−11 of the latest's weight
    const h90 = touchShares("time_decay", touches, 90);
    expect(h90[0]!).toBeGreaterThan(0);
    expect(h90[0]! / h90[4]!).toBeCloseTo(2 ** (-3000 / 90), 20);
  });

  it("two touches 3,000 days apart, the older alone at h = 1: shares 0 and 1", () => {
    const shares = touchShares("time_decay", at(0, 3000), 1);
    expect(shares).toEqual([0, 1]);
    // a single touch far back is still the whole conversion
    expect(touchShares("time_decay", at(0), 1)).toEqual([1]);
  });
});
