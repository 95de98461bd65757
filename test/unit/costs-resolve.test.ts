/**
 * COGS resolution (src/costs/resolve.ts): the tier order, "latest start wins" on overlaps, open and
 * bounded lines, day boundaries, currencies of each tier, exact percentages, and the batch resolver
 * agreeing with a brute-force reference over many (variant, day) pairs.
 */
import { describe, expect, it } from "vitest";
import {
  type AccountCostFacts,
  type CogLine,
  CostResolver,
  CostTimeline,
  resolveVariantCost,
  type VariantCostFacts,
} from "../../src/costs/resolve.js";
import { addDays, dayIn, dayWithin, envelope } from "../../src/shared/days.js";

const line = (id: string, cost: number, start: string, end: string | null = null): CogLine => ({
  id,
  cost,
  effectiveStartDate: start,
  effectiveEndDate: end,
});
const account = (override: AccountCostFacts["override"] = null): AccountCostFacts => ({
  currency: "USD",
  timezone: "UTC",
  override,
});
const variant = (v: Partial<VariantCostFacts> = {}): VariantCostFacts => ({
  manual: [],
  store: [],
  currentPrice: 59.99,
  currency: "EUR",
  handlingFee: 1.5,
  ...v,
});

describe("tiers", () => {
  const manual = [line("M1", 12.5, "2026-02-01")];
  const store = [line("S1", 9.2, "2024-01-01", "2025-12-31"), line("S2", 10, "2026-01-01")];

  it("a manual COG line in force wins, in the account currency", () => {
    expect(resolveVariantCost(variant({ manual, store }), account(), "2026-02-01")).toStrictEqual({
      effectiveCost: 12.5,
      handlingFee: 1.5,
      currency: "USD",
      handlingFeeCurrency: "USD",
      source: "variant_cog",
      activeCogLine: manual[0],
    });
  });

  it("then the store cost, in the variant currency", () => {
    const r = resolveVariantCost(variant({ manual, store }), account(), "2026-01-31");
    expect(r).toMatchObject({
      effectiveCost: 10,
      currency: "EUR",
      source: "store_cost",
      activeCogLine: store[1],
    });
    expect(resolveVariantCost(variant({ store }), account(), "2025-12-31")).toMatchObject({
      effectiveCost: 9.2,
      activeCogLine: store[0],
    });
  });

  it("then the global override: a percentage of the price (variant currency) or a fixed amount (account)", () => {
    const pct = resolveVariantCost(
      variant({ store }),
      account({ type: "percent_of_price", value: 35 }),
      "2023-12-31",
    );
    expect(pct).toMatchObject({
      effectiveCost: 20.9965,
      currency: "EUR",
      source: "global_override",
      activeCogLine: null,
    });
    const fixed = resolveVariantCost(variant(), account({ type: "fixed", value: 4.5 }), "2026-01-01");
    expect(fixed).toMatchObject({ effectiveCost: 4.5, currency: "USD", source: "global_override" });
  });

  it("then the default: 0 in the account currency", () => {
    expect(resolveVariantCost(variant(), account(), "2026-01-01")).toStrictEqual({
      effectiveCost: 0,
      handlingFee: 1.5,
      currency: "USD",
      handlingFeeCurrency: "USD",
      source: "default",
      activeCogLine: null,
    });
  });

  it("percentages are exact decimals, rounded half away from zero at 4 places", () => {
    const at = (price: number, pct: number) =>
      resolveVariantCost(
        variant({ currentPrice: price }),
        account({ type: "percent_of_price", value: pct }),
        "2026-01-01",
      ).effectiveCost;
    expect(at(0.1, 30)).toBe(0.03); // 0.1 * 0.3 in floats is 0.030000000000000002
    expect(at(19.99, 33.3333)).toBe(6.6633); // 6.66332667 → 6.6633
    expect(at(0.0003, 50)).toBe(0.0002); // 0.00015 → 0.0002
    expect(at(99_999_999_999.9999, 100)).toBe(99_999_999_999.9999);
  });
});

describe("CostTimeline", () => {
  it("finds nothing before the first line and after a bounded last line", () => {
    const t = new CostTimeline([line("A", 1, "2026-01-01", "2026-01-31")]);
    expect(t.at("2025-12-31")).toBeNull();
    expect(t.at("2026-01-01")?.id).toBe("A");
    expect(t.at("2026-01-31")?.id).toBe("A");
    expect(t.at("2026-02-01")).toBeNull();
  });

  it("latest start wins on overlaps; a bounded line inside an open one lets it resume after", () => {
    const t = new CostTimeline([
      line("OPEN", 10, "2026-01-01"),
      line("PROMO", 8, "2026-03-01", "2026-03-31"),
    ]);
    expect(t.at("2026-02-28")?.id).toBe("OPEN");
    expect(t.at("2026-03-15")?.id).toBe("PROMO");
    expect(t.at("2026-04-01")?.id).toBe("OPEN");
  });

  it("an earlier-starting open line is hidden where a later one starts", () => {
    const t = new CostTimeline([line("LATE", 11, "2026-03-01"), line("EARLY", 9, "2025-01-01")]);
    expect(t.at("2026-02-28")?.id).toBe("EARLY");
    expect(t.at("2026-03-01")?.id).toBe("LATE");
  });

  it("on the same start the most recently created line (largest ULID) wins", () => {
    const t = new CostTimeline([line("01B", 2, "2026-01-01", "2026-01-10"), line("01A", 1, "2026-01-01")]);
    expect(t.at("2026-01-05")?.id).toBe("01B");
    expect(t.at("2026-01-11")?.id).toBe("01A");
  });

  it("agrees with a brute-force reading of the rule on random histories", () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const day = (n: number) => addDays("2026-01-01", n);
    for (let round = 0; round < 200; round++) {
      const history: CogLine[] = Array.from({ length: 1 + rnd(6) }, (_, i) => {
        const start = rnd(60);
        return line(
          `L${String(rnd(1000)).padStart(4, "0")}${i}`,
          i,
          day(start),
          rnd(3) === 0 ? null : day(start + rnd(30)),
        );
      });
      const t = new CostTimeline(history);
      for (let d = -2; d < 95; d++) {
        const covering = history.filter((l) => dayWithin(day(d), l.effectiveStartDate, l.effectiveEndDate));
        covering.sort((a, b) =>
          a.effectiveStartDate === b.effectiveStartDate
            ? a.id < b.id
              ? 1
              : -1
            : a.effectiveStartDate < b.effectiveStartDate
              ? 1
              : -1,
        );
        expect(t.at(day(d))?.id ?? null).toBe(covering[0]?.id ?? null);
      }
    }
  });
});

describe("CostResolver (batch)", () => {
  it("resolves many pairs against facts loaded once, the same as one at a time", () => {
    const acct = account({ type: "percent_of_price", value: 40 });
    const resolver = new CostResolver(acct);
    const variants = Array.from({ length: 50 }, (_, i) =>
      variant({
        manual: i % 3 === 0 ? [line(`M${i}`, i, "2026-02-01")] : [],
        store: i % 2 === 0 ? [line(`S${i}`, i / 2, "2026-01-01", "2026-03-31")] : [],
        currentPrice: 10 + i,
      }),
    );
    for (let n = 0; n < 2000; n++) {
      const v = variants[n % variants.length]!;
      const d = addDays("2025-12-15", n % 120);
      expect(resolver.at(v, d)).toStrictEqual(resolveVariantCost(v, acct, d));
    }
  });

  it("takes an order's instant on its day in the account timezone", () => {
    const v = variant({ manual: [line("M", 5, "2026-03-01")] });
    const instant = Date.parse("2026-02-28T20:00:00Z");
    expect(new CostResolver({ ...account(), timezone: "UTC" }).atInstant(v, instant).source).toBe("default");
    expect(new CostResolver({ ...account(), timezone: "Asia/Tokyo" }).atInstant(v, instant).source).toBe(
      "variant_cog",
    );
  });
});

describe("days", () => {
  it("dayIn reads the calendar day of an instant in a timezone", () => {
    const t = Date.parse("2026-03-01T10:30:00Z");
    expect(dayIn("UTC", t)).toBe("2026-03-01");
    expect(dayIn("Pacific/Kiritimati", t)).toBe("2026-03-02");
    expect(dayIn("Pacific/Pago_Pago", Date.parse("2026-03-01T05:00:00Z"))).toBe("2026-02-28");
  });

  it("addDays crosses months, leap days and years", () => {
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29");
    expect(addDays("2026-03-01", -1)).toBe("2026-02-28");
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
  });

  it("envelope covers every range; a null bound is open and wins", () => {
    expect(envelope([])).toStrictEqual({ from: null, to: null });
    expect(
      envelope([
        { from: "2026-03-01", to: "2026-03-31" },
        { from: "2026-01-01", to: "2026-02-28" },
      ]),
    ).toStrictEqual({ from: "2026-01-01", to: "2026-03-31" });
    expect(
      envelope([
        { from: "2026-03-01", to: null },
        { from: "2026-01-01", to: "2026-02-28" },
      ]),
    ).toStrictEqual({ from: "2026-01-01", to: null });
    expect(envelope([{ from: null, to: "2026-01-01" }])).toStrictEqual({ from: null, to: "2026-01-01" });
  });
});
