import { describe, expect, it } from "vitest";
import { CostResolver, type VariantCostFacts } from "../../src/costs/resolve.js";
import type { StoredLine } from "../../src/costs/schemas.js";
import {
  computeSnapshot,
  FxTable,
  type SnapshotContext,
  type SnapshotOrder,
  sameSnapshot,
  textUnits,
  unitsText,
} from "../../src/costs/snapshot.js";

const k = (p: string, v: string) => `${p}\u0000${v}`;
const variant = (over: Partial<VariantCostFacts> = {}): VariantCostFacts => ({
  manual: [],
  store: [],
  currentPrice: 20,
  currency: "EUR",
  handlingFee: 0,
  ...over,
});
const line = (id: string, fields: Record<string, unknown>): StoredLine => ({
  id,
  name: id,
  currency: "EUR",
  effectiveStartDate: null,
  effectiveEndDate: null,
  ...fields,
});

function ctx(over: Partial<SnapshotContext> = {}): SnapshotContext {
  return {
    resolver: new CostResolver({ currency: "EUR", timezone: "Europe/Berlin", override: null }),
    timezone: "Europe/Berlin",
    variants: new Map(),
    orderLines: [],
    gatewayLines: [],
    shippingLines: [],
    fx: new FxTable([]).lookup,
    ...over,
  };
}

const order: SnapshotOrder = {
  orderId: "o1",
  // 2026-03-31T23:30Z is 2026-04-01 in Berlin.
  createdAt: Date.parse("2026-03-31T23:30:00Z"),
  currency: "EUR",
  totalPrice: 100,
  gateway: "Stripe",
  country: "de",
  lines: [
    { productId: "p1", variantId: "v1", quantity: 2, price: 30 },
    { productId: "p1", variantId: "v2", quantity: 1, price: 40 },
    { productId: "p9", variantId: "gone", quantity: 5, price: 1 },
  ],
};

describe("computeSnapshot", () => {
  it("sums every component with hand-computed figures", () => {
    const variants = new Map([
      [
        k("p1", "v1"),
        variant({
          handlingFee: 0.5,
          manual: [
            { id: "c1", cost: 7, effectiveStartDate: "2026-01-01", effectiveEndDate: "2026-03-31" },
            { id: "c2", cost: 8.25, effectiveStartDate: "2026-04-01", effectiveEndDate: null },
          ],
        }),
      ],
      [
        k("p1", "v2"),
        variant({
          store: [{ id: "s1", cost: 12.1, effectiveStartDate: "2026-01-01", effectiveEndDate: null }],
        }),
      ],
    ]);
    const s = computeSnapshot(
      order,
      ctx({
        variants,
        shippingLines: [
          line("sh1", { countries: ["DE", "AT"], costPerOrder: 4, costPerItem: 0.5 }),
          line("sh2", { countries: ["US"], costPerOrder: 100, costPerItem: 100 }),
        ],
        gatewayLines: [
          line("g1", { gateway: "stripe", percentRate: 2.9, fixedFee: 0.3 }),
          line("g2", { gateway: "paypal", percentRate: 5, fixedFee: 1 }),
        ],
        orderLines: [
          line("ol1", { amount: 1.5, effectiveStartDate: "2026-04-01" }),
          line("ol2", { amount: 99, effectiveEndDate: "2026-03-31" }),
        ],
      }),
    );
    // cogs: 2 × 8.25 (April line, Berlin day) + 1 × 12.1 (store cost) + unknown variant 0 = 28.6
    expect(unitsText(s.cogs)).toBe("28.6000");
    // handling: 2 × 0.5
    expect(unitsText(s.handling)).toBe("1.0000");
    // shipping: 4 + 0.5 × 8 units
    expect(unitsText(s.shipping)).toBe("8.0000");
    // gateway: 2.9 % × 100 + 0.3
    expect(unitsText(s.gateway)).toBe("3.2000");
    // order-level: only ol1 is in force on 2026-04-01
    expect(unitsText(s.orderLevel)).toBe("1.5000");
    // The exact text (key order, number forms) the stored snapshots hold: the recalculation compares
    // a hash of it, so any other spelling of the same JSON would rewrite every order.
    expect(s.details).toBe(
      JSON.stringify({
        day: "2026-04-01",
        lines: [
          ["v1", "variant_cog", "c2", 8.25],
          ["v2", "store_cost", "s1", 12.1],
          ["gone", "unknown", null, 0],
        ],
        shipping: ["sh1"],
        gateway: ["g1"],
        order: ["ol1"],
      }),
    );
    // The total as exact ten-thousandths (what the recalculation reads from the warehouse's Decimal)
    // keeps the 4th decimal that a 17-digit number cannot.
    const big = { ...order, totalPrice: Number("12345678901234.5679"), totalUnits: 123456789012345679n };
    const full = ctx({ gatewayLines: [line("g1", { gateway: "stripe", percentRate: 100, fixedFee: 0.3 })] });
    expect(unitsText(computeSnapshot(big, full).gateway)).toBe("12345678901234.8679");
  });

  it("falls back to override, then default 0", () => {
    const variants = new Map([[k("p1", "v1"), variant({ currentPrice: 30 })]]);
    const one = { ...order, lines: [{ productId: "p1", variantId: "v1", quantity: 3, price: 30 }] };
    const withOverride = ctx({
      variants,
      resolver: new CostResolver({
        currency: "EUR",
        timezone: "Europe/Berlin",
        override: { type: "percent_of_price", value: 40 },
      }),
    });
    // 3 × 40 % of 30 = 36
    expect(unitsText(computeSnapshot(one, withOverride).cogs)).toBe("36.0000");
    expect(unitsText(computeSnapshot(one, ctx({ variants })).cogs)).toBe("0.0000");
  });

  it("converts foreign-currency amounts with the order day's rate and skips without one", () => {
    const usdOrder = { ...order, currency: "USD", lines: [] };
    const orderLines = [line("ol1", { amount: 10, currency: "EUR" })];
    // 0.8 EUR per USD → 10 EUR = 12.5 USD
    const fx = new FxTable([
      { currency: "EUR", date: "2026-03-01", usdRate: 0.8 },
      { currency: "EUR", date: "2026-04-05", usdRate: 0.5 },
    ]).lookup;
    expect(unitsText(computeSnapshot(usdOrder, ctx({ orderLines, fx })).orderLevel)).toBe("12.5000");
    const gbp = computeSnapshot({ ...usdOrder, currency: "GBP" }, ctx({ orderLines, fx }));
    expect(gbp.orderLevel).toBe(0n);
    expect(gbp.details).toBe(
      JSON.stringify({ day: "2026-04-01", lines: [], order: ["ol1"], skipped: ["order:ol1:EUR"] }),
    );
  });

  it("compares snapshots and round-trips decimal text", () => {
    const a = computeSnapshot(order, ctx());
    expect(sameSnapshot(a, computeSnapshot(order, ctx()))).toBe(true);
    expect(sameSnapshot(a, { ...a, cogs: 1n })).toBe(false);
    expect(textUnits("12.5")).toBe(125000n);
    expect(textUnits("-0.0001")).toBe(-1n);
    expect(unitsText(-1n)).toBe("-0.0001");
  });
});
