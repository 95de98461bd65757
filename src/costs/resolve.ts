import { addDays, dayIn } from "../shared/days.js";
import { percentOf } from "../shared/money.js";

/**
 * COGS resolution: what one unit of a variant costs on a given day, and which tier said so. Pure and
 * synchronous, so the per-order cost snapshot worker can load the facts of many variants once and
 * resolve thousands of (variant, day) pairs without further I/O (`CostResolver`).
 *
 * Tiers, tried in this order for the day asked (a day of the account's timezone):
 * 1. `variant_cog`     — a manual COG line of the variant in force that day (account currency);
 * 2. `store_cost`      — a store-synced cost line in force that day (the variant's currency);
 * 3. `global_override` — the account's override: a percentage of the variant's current price (the
 *                        variant's currency) or a fixed amount (account currency);
 * 4. `default`         — 0 in the account currency.
 *
 * Overlapping lines of one history resolve by "latest start wins": among the lines covering the day,
 * the one with the latest `effectiveStartDate`; on a tie, the most recently created (largest ULID).
 * So a short line added inside a longer one takes precedence for its own days only.
 */

export const COST_SOURCES = ["variant_cog", "store_cost", "global_override", "default"] as const;
export type CostSource = (typeof COST_SOURCES)[number];

export interface CogLine {
  id: string;
  cost: number;
  effectiveStartDate: string;
  /** null = open-ended. */
  effectiveEndDate: string | null;
  description?: string;
}

export interface GlobalOverride {
  type: "percent_of_price" | "fixed";
  value: number;
}

/** What the resolution needs to know about a variant. */
export interface VariantKey {
  productId: string;
  variantId: string;
}
export const variantKey = (k: VariantKey) => `${k.productId}\u0000${k.variantId}`;

/** Loads the cost facts of a pixel's variants, keyed by `variantKey` (the catalog module provides it). */
export type LoadVariantCostFacts = (
  pixelId: string,
  keys: readonly VariantKey[],
) => Promise<Map<string, VariantCostFacts>>;

export interface VariantCostFacts {
  manual: readonly CogLine[];
  store: readonly CogLine[];
  currentPrice: number;
  /** Currency of `currentPrice` and of the store cost lines. */
  currency: string;
  /** Per unit, in the account currency. */
  handlingFee: number;
}

/** What the resolution needs to know about the account. */
export interface AccountCostFacts {
  currency: string;
  timezone: string;
  override: GlobalOverride | null;
}

export interface ResolvedCost {
  effectiveCost: number;
  handlingFee: number;
  /** Currency of `effectiveCost`. */
  currency: string;
  /** Currency of `handlingFee` (the account's, like every amount entered by hand). */
  handlingFeeCurrency: string;
  source: CostSource;
  /** The COG line in force; null for the override and default tiers. */
  activeCogLine: CogLine | null;
}

/** Does line `a` take precedence over line `b` where both apply? */
const wins = (a: CogLine, b: CogLine) =>
  a.effectiveStartDate !== b.effectiveStartDate ? a.effectiveStartDate > b.effectiveStartDate : a.id > b.id;

/**
 * One cost history flattened into non-overlapping segments, each naming its winning line (or none),
 * so a lookup is a binary search however the lines overlap.
 */
export class CostTimeline {
  private readonly starts: string[] = [];
  private readonly lines: (CogLine | null)[] = [];

  constructor(history: readonly CogLine[]) {
    const bounds = new Set<string>();
    for (const l of history) {
      bounds.add(l.effectiveStartDate);
      if (l.effectiveEndDate !== null) bounds.add(addDays(l.effectiveEndDate, 1));
    }
    for (const day of [...bounds].sort()) {
      let best: CogLine | null = null;
      for (const l of history) {
        const covers =
          l.effectiveStartDate <= day && (l.effectiveEndDate === null || day <= l.effectiveEndDate);
        if (covers && (best === null || wins(l, best))) best = l;
      }
      // Adjacent segments with the same winner are merged: fewer steps for every lookup.
      if (this.lines.length > 0 && this.lines[this.lines.length - 1] === best) continue;
      this.starts.push(day);
      this.lines.push(best);
    }
  }

  /** The line in force on `day`, or null. */
  at(day: string): CogLine | null {
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((this.starts[mid] as string) <= day) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? null : (this.lines[found] ?? null);
  }
}

/** What the resolver keeps per facts object: its two timelines and the answers given so far. */
interface VariantState {
  manual: CostTimeline;
  store: CostTimeline;
  /** One answer per winning line: a variant has few segments, however many days are asked. */
  byLine: Map<CogLine, ResolvedCost>;
  /** The override or default answer (the same whatever the day). */
  fallback: ResolvedCost | null;
}

/** Resolves many (variant, day) pairs for one account; timelines are built once per facts object. */
export class CostResolver {
  private readonly states = new WeakMap<VariantCostFacts, VariantState>();

  constructor(private readonly account: AccountCostFacts) {}

  /** The cost on `day` (`YYYY-MM-DD` in the account timezone). */
  at(variant: VariantCostFacts, day: string): ResolvedCost {
    return { ...this.sharedAt(variant, day) };
  }

  /**
   * Like `at`, but the object is shared by every day the same line (or tier) wins — the per-order
   * snapshot resolves tens of thousands of lines per batch and keys its own per-line work on it.
   */
  sharedAt(variant: VariantCostFacts, day: string): Readonly<ResolvedCost> {
    let s = this.states.get(variant);
    if (!s) {
      s = {
        manual: new CostTimeline(variant.manual),
        store: new CostTimeline(variant.store),
        byLine: new Map(),
        fallback: null,
      };
      this.states.set(variant, s);
    }
    const manual = s.manual.at(day);
    const line = manual ?? s.store.at(day);
    if (line) {
      let r = s.byLine.get(line);
      if (!r) {
        r = this.resolve(variant, line, manual !== null);
        s.byLine.set(line, r);
      }
      return r;
    }
    s.fallback ??= this.resolve(variant, null, false);
    return s.fallback;
  }

  private resolve(variant: VariantCostFacts, line: CogLine | null, manual: boolean): ResolvedCost {
    const account = this.account;
    const base = { handlingFee: variant.handlingFee, handlingFeeCurrency: account.currency };
    if (line && manual) {
      return {
        ...base,
        effectiveCost: line.cost,
        currency: account.currency,
        source: "variant_cog",
        activeCogLine: line,
      };
    }
    if (line) {
      return {
        ...base,
        effectiveCost: line.cost,
        currency: variant.currency,
        source: "store_cost",
        activeCogLine: line,
      };
    }
    const o = account.override;
    if (o) {
      return o.type === "percent_of_price"
        ? {
            ...base,
            effectiveCost: percentOf(variant.currentPrice, o.value),
            currency: variant.currency,
            source: "global_override",
            activeCogLine: null,
          }
        : {
            ...base,
            effectiveCost: o.value,
            currency: account.currency,
            source: "global_override",
            activeCogLine: null,
          };
    }
    return { ...base, effectiveCost: 0, currency: account.currency, source: "default", activeCogLine: null };
  }

  /** The cost at an instant, taken on its day in the account timezone (an order's time, say). */
  atInstant(variant: VariantCostFacts, instant: Date | number): ResolvedCost {
    return this.at(variant, dayIn(this.account.timezone, instant));
  }
}

/** One answer, for the variant cost endpoint. */
export function resolveVariantCost(
  variant: VariantCostFacts,
  account: AccountCostFacts,
  day: string,
): ResolvedCost {
  return new CostResolver(account).at(variant, day);
}
