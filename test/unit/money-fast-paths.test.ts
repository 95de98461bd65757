/**
 * The money helpers skip their decimal arithmetic for amounts that already have at most 4 decimals
 * (and `holdsCents` below 2^46). Each shortcut must answer exactly what the full computation answers:
 * checked here against the reference formulas, written out as the full path computes them, on
 * generated amounts of every size, sign and number of decimals, and on the edges worked out by hand.
 *
 * Worked example: 24.9 → roundMoney 24.9, toNumericText "24.9000"; -0.5 → "-0.5000";
 * 0.30000000000000004 (17 decimals) takes the full path → 0.3 and "0.3000"; 1e-7 → 0 and "0.0000".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromUnits, holdsCents, roundMoney, toNumericText, toUnits } from "../../src/shared/money.js";

const UNIT = 10_000n;
const referenceRound = (v: number) => fromUnits(toUnits(v));
const referenceText = (v: number) => {
  const u = toUnits(v);
  const abs = u < 0n ? -u : u;
  return `${u < 0n ? "-" : ""}${abs / UNIT}.${(abs % UNIT).toString().padStart(4, "0")}`;
};
const centText = (c: bigint) => {
  const abs = c < 0n ? -c : c;
  return `${c < 0n ? "-" : ""}${abs / 100n}.${(abs % 100n).toString().padStart(2, "0")}`;
};
const referenceHolds = (v: number) => {
  if (!Number.isFinite(v)) return false;
  const units = toUnits(v);
  const cents = (units < 0n ? units - 50n : units + 50n) / 100n;
  return Number(centText(cents - 1n)) !== v && Number(centText(cents + 1n)) !== v;
};

/** Amounts as connectors send them: a whole part and 0–8 decimals, either sign, up to 10^15. */
const amounts = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 10n ** 15n }),
    fc.integer({ min: 0, max: 8 }),
    fc.bigInt({ min: 0n, max: 10n ** 8n - 1n }),
    fc.boolean(),
  )
  .map(([int, places, frac, negative]) => {
    const digits = places === 0 ? "" : `.${(frac % 10n ** BigInt(places)).toString().padStart(places, "0")}`;
    return Number(`${negative ? "-" : ""}${int}${digits}`);
  });

describe("money shortcuts answer what the full computation answers", () => {
  it("on generated amounts", () => {
    fc.assert(
      fc.property(fc.oneof(amounts, fc.double({ noNaN: true, noDefaultInfinity: true })), (v) => {
        expect(roundMoney(v)).toBe(referenceRound(v) === 0 ? 0 : referenceRound(v));
        expect(toNumericText(v)).toBe(referenceText(v));
        expect(holdsCents(v)).toBe(referenceHolds(v));
      }),
      { numRuns: 20_000 },
    );
  });

  it("on the edges", () => {
    expect(toNumericText(24.9)).toBe("24.9000");
    expect(toNumericText(-0.5)).toBe("-0.5000");
    expect(toNumericText(-0)).toBe("0.0000");
    expect(roundMoney(-0)).toBe(0);
    expect(Object.is(roundMoney(-0), 0)).toBe(true);
    expect(roundMoney(0.30000000000000004)).toBe(0.3);
    expect(toNumericText(0.30000000000000004)).toBe("0.3000");
    expect(roundMoney(1e-7)).toBe(0);
    expect(toNumericText(123456789012345680)).toBe("123456789012345680.0000");
    expect(roundMoney(2.00005)).toBe(referenceRound(2.00005));
    // 2^46 is where neighbouring cents start to share a double.
    for (const v of [2 ** 46 - 0.01, 2 ** 46, 2 ** 46 + 0.015625, 99999999999999.98, -(2 ** 46) - 0.015625])
      expect(holdsCents(v)).toBe(referenceHolds(v));
    expect(holdsCents(99999999999999.98)).toBe(false);
    expect(holdsCents(Number.NaN)).toBe(false);
  });
});
