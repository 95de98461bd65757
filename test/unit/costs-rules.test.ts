/**
 * The rules beside resolution: decimal money (rounding like numeric(18, 4), exact percentages), the
 * COG write rule (closing, conflicts), the search cursor and LIKE escaping, and the strict line shapes
 * of each cost type.
 */
import { describe, expect, it } from "vitest";
import type { CogLine } from "../../src/costs/resolve.js";
import { createLineBody, LINE_SCHEMAS, updateLineBody } from "../../src/costs/schemas.js";
import { ValidationError } from "../../src/errors.js";
import { chronological, planNewLine } from "../../src/products/cog-rules.js";
import { decodeCursor, encodeCursor } from "../../src/products/cursor.js";
import { containsPattern } from "../../src/products/search.js";
import { fromUnits, percentOf, roundMoney, toNumericText, toUnits } from "../../src/shared/money.js";
import { toFieldIssues } from "../../src/shared/validate.js";

describe("money", () => {
  it.each([
    [0.1 + 0.2, 0.3],
    [19.99, 19.99],
    [1.00005, 1.0001],
    [1.00004999, 1.0],
    [-0.00005, -0.0001],
    [1e-7, 0],
    [2.5e-5, 0],
    [5e-5, 0.0001],
    [123456789012.34567, 123456789012.3457],
  ])("roundMoney(%s) = %s", (input, expected) => {
    expect(roundMoney(input)).toBe(expected);
  });

  it("units and numeric text are exact", () => {
    expect(toUnits(19.99)).toBe(199_900n);
    expect(fromUnits(199_900n)).toBe(19.99);
    expect(toNumericText(0.1 + 0.2)).toBe("0.3000");
    expect(toNumericText(-2.5)).toBe("-2.5000");
    expect(() => toUnits(Number.NaN)).toThrow(RangeError);
  });

  it("percentOf works on decimals, not floats", () => {
    expect(percentOf(0.1, 30)).toBe(0.03);
    expect(percentOf(59.99, 35)).toBe(20.9965);
    expect(percentOf(10, 33.3333)).toBe(3.3333);
    expect(percentOf(-10, 2.5)).toBe(-0.25);
  });
});

describe("COG write rule", () => {
  const l = (id: string, start: string, end: string | null = null): CogLine => ({
    id,
    cost: 1,
    effectiveStartDate: start,
    effectiveEndDate: end,
  });

  it("a new open-ended line closes each earlier open-ended line the day before it starts", () => {
    const plan = planNewLine(
      [l("A", "2026-01-01"), l("B", "2025-01-01", "2025-12-31")],
      l("N", "2026-03-01"),
    );
    expect(plan).toStrictEqual({
      ok: true,
      closures: [{ before: l("A", "2026-01-01"), after: l("A", "2026-01-01", "2026-02-28") }],
    });
  });

  it("a bounded line closes nothing, nor does an open line starting before the open one", () => {
    expect(planNewLine([l("A", "2026-01-01")], l("N", "2026-03-01", "2026-03-31"))).toStrictEqual({
      ok: true,
      closures: [],
    });
    expect(planNewLine([l("A", "2026-01-01")], l("N", "2025-06-01"))).toStrictEqual({
      ok: true,
      closures: [],
    });
  });

  it("two open-ended lines may not start on one day", () => {
    expect(planNewLine([l("A", "2026-01-01")], l("N", "2026-01-01"))).toStrictEqual({
      ok: false,
      conflict: l("A", "2026-01-01"),
    });
    expect(planNewLine([l("A", "2026-01-01", "2026-01-31")], l("N", "2026-01-01")).ok).toBe(true);
  });

  it("histories are chronological by start, then creation", () => {
    const sorted = [l("02", "2026-02-01"), l("01", "2026-02-01"), l("03", "2026-01-01")].sort(chronological);
    expect(sorted.map((x) => x.id)).toStrictEqual(["03", "01", "02"]);
  });
});

describe("search cursor and pattern", () => {
  it("round-trips a position for the same term only", () => {
    const c = encodeCursor("prod-1042", "linen");
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c, "linen")).toBe("prod-1042");
    expect(() => decodeCursor(c, "wool")).toThrow(ValidationError);
    for (const bad of [
      "",
      "%%%",
      Buffer.from("[]").toString("base64url"),
      Buffer.from('{"v":1}').toString("base64url"),
    ]) {
      expect(() => decodeCursor(bad, "linen")).toThrow(ValidationError);
    }
  });

  it("makes LIKE wildcards in the term literal", () => {
    expect(containsPattern("100%")).toBe("%100\\%%");
    expect(containsPattern("a_b")).toBe("%a\\_b%");
    expect(containsPattern("c:\\x")).toBe("%c:\\\\x%");
  });
});

describe("cost line shapes", () => {
  const keys = (schema: { safeParse(v: unknown): { success: boolean; error?: unknown } }, value: unknown) => {
    const r = schema.safeParse(value);
    if (r.success) return [];
    return toFieldIssues(r.error as Parameters<typeof toFieldIssues>[0])
      .map((i) => i.key)
      .sort();
  };

  it("each type takes its own fields only", () => {
    const base = { name: "x", currency: "USD" };
    expect(keys(LINE_SCHEMAS.order, { ...base, amount: 1 })).toStrictEqual([]);
    expect(
      keys(LINE_SCHEMAS.gateway, { ...base, gateway: "stripe", percentRate: 2.9, fixedFee: 0.3 }),
    ).toStrictEqual([]);
    expect(keys(LINE_SCHEMAS.shipping, { ...base, costPerOrder: 5, costPerItem: 0 })).toStrictEqual([]);
    expect(
      keys(LINE_SCHEMAS.variable, { ...base, type: "per_order", amount: 1, category: "ops", channel: "all" }),
    ).toStrictEqual([]);
    expect(
      keys(LINE_SCHEMAS.fixed, { ...base, amount: 1, frequency: "yearly", category: "rent" }),
    ).toStrictEqual([]);
    expect(
      keys(LINE_SCHEMAS.fixed, { ...base, amount: 1, frequency: "yearly", category: "rent", channel: "x" }),
    ).toStrictEqual(["channel"]);
    expect(keys(LINE_SCHEMAS.shipping, { ...base, amount: 1 })).toStrictEqual([
      "amount",
      "costPerItem",
      "costPerOrder",
    ]);
  });

  it("the body picks the shape by costType and prefixes errors with line / updates", () => {
    expect(
      keys(createLineBody, { costType: "gateway", line: { name: "x", currency: "USD", amount: 1 } }),
    ).toStrictEqual(["line.amount", "line.fixedFee", "line.gateway", "line.percentRate"]);
    expect(keys(updateLineBody, { costType: "order", updates: { frequency: "daily" } })).toStrictEqual([
      "updates.frequency",
    ]);
    expect(keys(updateLineBody, { costType: "order", updates: {} })).toStrictEqual(["updates"]);
    expect(keys(updateLineBody, { costType: "order", updates: { effectiveEndDate: null } })).toStrictEqual(
      [],
    );
  });
});
