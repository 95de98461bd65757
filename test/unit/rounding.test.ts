/**
 * Output rounding (src/query/rounding.ts): half away from zero, and parts of a whole that add up to
 * it rounded. Worked example: three thirds of an order at 4 places are 0.3333 each, 0.9999 in all;
 * the unit left over goes to the largest remainder — all equal, so to the first — 0.3334.
 */
import { describe, expect, it } from "vitest";
import { roundAddingUp, roundHalfAway } from "../../src/query/rounding.js";

describe("roundHalfAway", () => {
  it.each([
    [0.125, 2, 0.13],
    [-0.125, 2, -0.13],
    [154.325, 2, 154.33],
    [0.225, 2, 0.23],
    [1 / 3, 4, 0.3333],
  ])("%d at %i places → %d", (v, places, expected) => {
    expect(roundHalfAway(v, places)).toBe(expected);
  });
});

describe("roundAddingUp", () => {
  it.each([
    [[1 / 3, 1 / 3, 1 / 3], 4, [0.3334, 0.3333, 0.3333]],
    [[2 / 3, 1 / 6, 1 / 6], 4, [0.6667, 0.1667, 0.1666]],
    [[0.4, 0.2, 0.4], 4, [0.4, 0.2, 0.4]],
    [[175 / 3, 175 / 3, 175 / 3], 2, [58.34, 58.33, 58.33]],
    [[-10 / 3, -10 / 3, -10 / 3], 2, [-3.34, -3.33, -3.33]],
    [[0, 1], 4, [0, 1]],
    [[], 4, []],
  ])("%j at %i places → %j", (values, places, expected) => {
    const out = roundAddingUp(values, places);
    expect(out).toEqual(expected);
    expect(Object.is(out[0], -0)).toBe(false);
  });

  it("the rounded values add up to the rounded sum", () => {
    const values = [0.084778, 0.413381, 0.501842];
    const out = roundAddingUp(values, 4);
    expect(out).toEqual([0.0848, 0.4134, 0.5018]);
    expect(Math.round(out.reduce((a, v) => a + v, 0) * 1e4)).toBe(1e4);
  });
});

describe("roundAddingUp across signs and ties", () => {
  it("values of mixed sign add up to their rounded sum", () => {
    const values = [10.005, -3.333, 2.2222, -0.0049];
    const out = roundAddingUp(values, 2);
    expect(Math.round(out.reduce((a, v) => a + v, 0) * 100)).toBe(Math.round(roundHalfAway(8.8893, 2) * 100));
    out.forEach((v, i) => {
      expect(Math.abs(v - values[i]!)).toBeLessThan(0.01 + 1e-9);
    });
  });

  it("remainders equal as decimals are a tie, decided by the order given, not by float noise", () => {
    // 1/6 and 2/3 leave the same .6667 of a unit at 4 places, but differ in their last bits: by
    // float noise alone both 1/6 would take the two units left over.
    const values = [1 / 6, 2 / 3, 1 / 6];
    expect((1 / 6) * 1e4 - 1666).not.toBe((2 / 3) * 1e4 - 6666);
    expect(roundAddingUp(values, 4)).toEqual([0.1667, 0.6667, 0.1666]);
    expect(roundAddingUp(values, 4, (a, b) => b - a)).toEqual([0.1666, 0.6667, 0.1667]);
  });
});
