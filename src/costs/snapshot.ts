import { dayIn, dayWithin } from "../shared/days.js";
import { fromUnits, toUnits } from "../shared/money.js";
import type { CostResolver, CostSource, VariantCostFacts } from "./resolve.js";
import type { StoredLine } from "./schemas.js";

/**
 * The per-order cost snapshot (docs/costs.md "Per-order snapshots"): what one order cost, by
 * component, in the order's currency. Pure and synchronous; the recalculation worker (recalc.ts)
 * loads the facts of a batch once and calls `computeSnapshot` per order.
 *
 * - cogs       Σ quantity × the line variant's unit cost on the order's day (CostResolver tiers:
 *              variant_cog → store_cost → global_override → default 0); a line whose variant is not
 *              in the catalog costs 0 (source "unknown").
 * - handling   Σ quantity × the variant's handling fee.
 * - shipping   Σ over shipping lines in force that day whose `countries` include the order's country
 *              (or have none): costPerOrder + costPerItem × units of the order.
 * - gateway    Σ over gateway lines in force that day whose `gateway` equals the order's (case-
 *              insensitive): percentRate % × total_price + fixedFee.
 * - order_level Σ over order lines in force that day: amount.
 * "That day" is the order's created_at as a day of the account's timezone.
 *
 * Currency: every amount is converted into the order's currency with the FX rates of the order's day
 * (fx_rates: units per USD, the latest rate on or before that day). An amount whose conversion has no
 * rate for either currency is skipped (counted as 0) and named in `details.skipped`, so the gap is
 * visible instead of mixing currencies. Money is bigint ten-thousandths; a conversion rounds once,
 * half away from zero, at 4 places.
 */

export interface SnapshotOrderLine {
  productId: string;
  variantId: string;
  quantity: number;
  price: number;
}

export interface SnapshotOrder {
  orderId: string;
  /** created_at, epoch ms. */
  createdAt: number;
  currency: string;
  totalPrice: number;
  gateway: string;
  country: string;
  lines: readonly SnapshotOrderLine[];
}

/** Units of `currency` per USD on a day; null when unknown. */
export type FxLookup = (currency: string, day: string) => number | null;

export interface SnapshotContext {
  resolver: CostResolver;
  timezone: string;
  /** Variant facts keyed by `${productId}\u0000${variantId}`. */
  variants: ReadonlyMap<string, VariantCostFacts>;
  /** The account's per-order cost lines (stored shape, with id and dates). */
  orderLines: readonly StoredLine[];
  gatewayLines: readonly StoredLine[];
  shippingLines: readonly StoredLine[];
  fx: FxLookup;
}

export interface Snapshot {
  currency: string;
  /** Amounts as integer ten-thousandths of the order currency. */
  cogs: bigint;
  handling: bigint;
  shipping: bigint;
  gateway: bigint;
  orderLevel: bigint;
  /** Compact JSON: per-line sources and the rules applied. */
  details: string;
}

const vkey = (productId: string, variantId: string) => `${productId}\u0000${variantId}`;

function inForce(line: StoredLine, day: string): boolean {
  return dayWithin(day, line.effectiveStartDate, line.effectiveEndDate);
}

/** Ten-thousandths × a multiplier given in ten-thousandths (a percentage is divided by 100 more). */
function mulUnits(a: bigint, b: bigint, divisor: bigint): bigint {
  const p = a * b;
  const neg = p < 0n;
  const abs = neg ? -p : p;
  const q = (abs + divisor / 2n) / divisor;
  return neg ? -q : q;
}

/** FX rates of one batch: for each currency, days ascending with their rate. */
export class FxTable {
  private readonly byCurrency = new Map<string, { days: string[]; rates: number[] }>();

  constructor(rows: readonly { currency: string; date: string; usdRate: number }[]) {
    const sorted = [...rows].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    for (const r of sorted) {
      let c = this.byCurrency.get(r.currency);
      if (!c) {
        c = { days: [], rates: [] };
        this.byCurrency.set(r.currency, c);
      }
      c.days.push(r.date);
      c.rates.push(r.usdRate);
    }
  }

  /** The latest rate on or before `day`. USD is always 1. */
  readonly lookup: FxLookup = (currency, day) => {
    if (currency === "USD") return 1;
    const c = this.byCurrency.get(currency);
    if (!c) return null;
    let lo = 0;
    let hi = c.days.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((c.days[mid] as string) <= day) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? null : (c.rates[found] ?? null);
  };
}

/** Days of 15-minute buckets per timezone (every UTC offset is a multiple of 15 minutes). */
const dayCache = new Map<string, Map<number, string>>();
function orderDay(timezone: string, ms: number): string {
  let byBucket = dayCache.get(timezone);
  if (!byBucket) {
    byBucket = new Map();
    dayCache.set(timezone, byBucket);
  }
  const bucket = Math.floor(ms / 900_000);
  let day = byBucket.get(bucket);
  if (day === undefined) {
    if (byBucket.size > 100_000) byBucket.clear();
    day = dayIn(timezone, bucket * 900_000);
    byBucket.set(bucket, day);
  }
  return day;
}

export function computeSnapshot(order: SnapshotOrder, ctx: SnapshotContext): Snapshot {
  const day = orderDay(ctx.timezone, order.createdAt);
  const target = order.currency;
  const skipped: string[] = [];
  const fxDay = new Date(order.createdAt).toISOString().slice(0, 10);
  /** `units` of `from` in the order currency, or null (skipped) when no rate is known. */
  const convert = (units: bigint, from: string, what: string): bigint | null => {
    if (from === target || units === 0n) return units;
    const rf = ctx.fx(from, fxDay);
    const rt = ctx.fx(target, fxDay);
    if (rf === null || rt === null || rf <= 0) {
      skipped.push(`${what}:${from}`);
      return null;
    }
    return toUnits(fromUnits(units) * (rt / rf));
  };

  let cogs = 0n;
  let handling = 0n;
  let units = 0;
  const lineDetails: [string, CostSource | "unknown", string | null, number][] = [];
  for (const l of order.lines) {
    units += l.quantity;
    const facts = ctx.variants.get(vkey(l.productId, l.variantId));
    if (!facts) {
      lineDetails.push([l.variantId, "unknown", null, 0]);
      continue;
    }
    const r = ctx.resolver.at(facts, day);
    const q = BigInt(l.quantity);
    const c = convert(toUnits(r.effectiveCost) * q, r.currency, `cogs:${l.variantId}`);
    if (c !== null) cogs += c;
    const h = convert(toUnits(r.handlingFee) * q, r.handlingFeeCurrency, `handling:${l.variantId}`);
    if (h !== null) handling += h;
    lineDetails.push([l.variantId, r.source, r.activeCogLine?.id ?? null, r.effectiveCost]);
  }

  let shipping = 0n;
  const shipIds: string[] = [];
  for (const s of ctx.shippingLines) {
    if (!inForce(s, day)) continue;
    const countries = s.countries as string[] | undefined | null;
    if (countries && countries.length > 0 && !countries.includes(order.country.toUpperCase())) continue;
    const amount = toUnits(s.costPerOrder as number) + toUnits(s.costPerItem as number) * BigInt(units);
    const c = convert(amount, s.currency, `shipping:${s.id}`);
    if (c !== null) shipping += c;
    shipIds.push(s.id);
  }

  let gateway = 0n;
  const gwIds: string[] = [];
  const gw = order.gateway.toLowerCase();
  for (const g of ctx.gatewayLines) {
    if (!inForce(g, day) || String(g.gateway).toLowerCase() !== gw) continue;
    // percentRate % of the order total (order currency); the fixed fee is in the line's currency.
    const pct = mulUnits(toUnits(order.totalPrice), toUnits(g.percentRate as number), 1_000_000n);
    gateway += pct;
    const fee = convert(toUnits(g.fixedFee as number), g.currency, `gateway:${g.id}`);
    if (fee !== null) gateway += fee;
    gwIds.push(g.id);
  }

  let orderLevel = 0n;
  const ordIds: string[] = [];
  for (const o of ctx.orderLines) {
    if (!inForce(o, day)) continue;
    const c = convert(toUnits(o.amount as number), o.currency, `order:${o.id}`);
    if (c !== null) orderLevel += c;
    ordIds.push(o.id);
  }

  const details: Record<string, unknown> = { day, lines: lineDetails };
  if (shipIds.length) details.shipping = shipIds;
  if (gwIds.length) details.gateway = gwIds;
  if (ordIds.length) details.order = ordIds;
  if (skipped.length) details.skipped = skipped;
  return {
    currency: target,
    cogs,
    handling,
    shipping,
    gateway,
    orderLevel,
    details: JSON.stringify(details),
  };
}

/** Decimal text of ten-thousandths, as Decimal(18, 4) takes and gives it back (trailing zeros kept). */
export function unitsText(u: bigint): string {
  const neg = u < 0n;
  const abs = neg ? -u : u;
  return `${neg ? "-" : ""}${abs / 10000n}.${(abs % 10000n).toString().padStart(4, "0")}`;
}

/** Decimal text from the warehouse ("12.5", "3") as ten-thousandths. */
export function textUnits(text: string): bigint {
  const neg = text.startsWith("-");
  const [int = "0", frac = ""] = (neg ? text.slice(1) : text).split(".");
  const u = BigInt(int + frac.slice(0, 4).padEnd(4, "0"));
  return neg ? -u : u;
}

/** Do two snapshots say the same thing (amounts, currency, details)? */
export function sameSnapshot(a: Snapshot, b: Snapshot): boolean {
  return (
    a.currency === b.currency &&
    a.cogs === b.cogs &&
    a.handling === b.handling &&
    a.shipping === b.shipping &&
    a.gateway === b.gateway &&
    a.orderLevel === b.orderLevel &&
    a.details === b.details
  );
}
