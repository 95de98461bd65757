import { BadRequestError } from "../errors.js";
import { addDays } from "../shared/days.js";

/** A variable or fixed cost line as stored (docs/costs.md shapes), with its effective dates. */
export interface ReportCostLine {
  costType: "variable" | "fixed";
  line: {
    type?: string;
    percentRate?: number;
    amount?: number;
    frequency?: string;
    currency?: string;
  };
  effectiveStart: string | null;
  effectiveEnd: string | null;
}

/** Daily rates of the currencies involved, ascending by date: currency → [date, units per USD][]. */
export type RateTable = Map<string, [string, number][]>;

const DAYS_PER: Record<string, number> = { daily: 1, weekly: 7, monthly: 365 / 12, yearly: 365 };

/** Units of `to` per unit of `from` on `day`, at the latest rate on or before it. */
export function fxFactor(rates: RateTable, from: string, to: string, day: string): number {
  if (from === to) return 1;
  const rate = (c: string) => {
    if (c === "USD") return 1;
    const series = rates.get(c) ?? [];
    let found: number | undefined;
    for (const [d, r] of series) {
      if (d > day) break;
      found = r;
    }
    if (found === undefined)
      throw new BadRequestError(
        `no exchange rate for ${c} on or before ${day}; load rates with pixelhouse fx import`,
      );
    return found;
  };
  return rate(to) / rate(from);
}

/**
 * Report-time costs of one interval of local days [firstDay, lastDay]: fixed lines prorated per day
 * (monthly = 12 per 365 days), variable lines as a rate of the interval's spend or net revenue, or
 * an amount per order. A line counts on the days inside its effective dates; variable lines count
 * for the interval when it overlaps them. Amounts convert at each day's rate.
 */
export function reportCost(
  kind: "variable" | "fixed",
  lines: readonly ReportCostLine[],
  interval: { firstDay: string; lastDay: string },
  bases: { spend: number; netRevenue: number; orders: number },
  currency: string,
  rates: RateTable,
): number {
  let total = 0;
  for (const l of lines) {
    if (l.costType !== kind) continue;
    const from =
      l.effectiveStart && l.effectiveStart > interval.firstDay ? l.effectiveStart : interval.firstDay;
    const to = l.effectiveEnd && l.effectiveEnd < interval.lastDay ? l.effectiveEnd : interval.lastDay;
    if (from > to) continue;
    const lineCurrency = (l.line.currency ?? "USD").toUpperCase();
    if (kind === "fixed") {
      const perDay = (l.line.amount ?? 0) / (DAYS_PER[l.line.frequency ?? "monthly"] ?? DAYS_PER.monthly!);
      for (let d = from; d <= to; d = addDays(d, 1))
        total += perDay * fxFactor(rates, lineCurrency, currency, d);
      continue;
    }
    const rate = (l.line.percentRate ?? 0) / 100;
    if (l.line.type === "pct_ad_spend") total += rate * bases.spend;
    else if (l.line.type === "pct_revenue") total += rate * bases.netRevenue;
    else if (l.line.type === "per_order")
      total += (l.line.amount ?? 0) * bases.orders * fxFactor(rates, lineCurrency, currency, from);
  }
  return total;
}
