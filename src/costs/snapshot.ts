import { dayIn, dayWithin } from "../shared/days.js";
import { fromUnits, toUnits } from "../shared/money.js";
import type { CostResolver, ResolvedCost, VariantCostFacts } from "./resolve.js";
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
  /** The unit price; no component depends on it, so the recalculation does not read it. */
  price?: number;
}

export interface SnapshotOrder {
  orderId: string;
  /** created_at, epoch ms. */
  createdAt: number;
  currency: string;
  totalPrice: number;
  /** `totalPrice` as exact ten-thousandths, when the caller read them so (the warehouse's Decimal). */
  totalUnits?: bigint;
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

/**
 * What a resolved variant cost contributes to a line, apart from its quantity: the amounts as
 * ten-thousandths and the line's `details` entry. `sharedAt` hands out one resolution per winning
 * line, so this is computed once per (variant, line) of a batch rather than once per order line —
 * the decimal parsing of `toUnits` was most of the per-order time.
 */
interface LineCost {
  variantId: string;
  cost: bigint;
  handling: bigint;
  json: string;
}
const lineCosts = new WeakMap<Readonly<ResolvedCost>, LineCost>();

function lineCost(r: Readonly<ResolvedCost>, variantId: string): LineCost {
  let c = lineCosts.get(r);
  // The facts of one map key always carry one variant id; the check keeps a facts object shared by
  // two keys correct.
  if (c === undefined || c.variantId !== variantId) {
    c = {
      variantId,
      cost: toUnits(r.effectiveCost),
      handling: toUnits(r.handlingFee),
      json: JSON.stringify([variantId, r.source, r.activeCogLine?.id ?? null, r.effectiveCost]),
    };
    lineCosts.set(r, c);
  }
  return c;
}

/** An account cost line with its amounts parsed once (on first use) and its id as JSON text. */
interface PreparedLine {
  line: StoredLine;
  idJson: string;
  gateway: string;
  a: bigint | undefined;
  b: bigint | undefined;
}
const preparedLists = new WeakMap<readonly StoredLine[], PreparedLine[]>();

/** The lines of a context, prepared once per list (the recalculation keeps one list per run). */
function prepared(lines: readonly StoredLine[]): PreparedLine[] {
  let p = preparedLists.get(lines);
  if (!p) {
    p = lines.map((line) => ({
      line,
      idJson: JSON.stringify(line.id),
      gateway: String(line.gateway).toLowerCase(),
      a: undefined,
      b: undefined,
    }));
    preparedLists.set(lines, p);
  }
  return p;
}

/**
 * What a snapshot's amounts need to leave their own currency: the order's currency and UTC day, and
 * the list of amounts skipped for want of a rate. One per order, passed to `convert` (a function, not
 * a closure made per order: the per-order allocation showed in CPU profiles of the recalculation).
 */
interface Conversion {
  readonly ctx: SnapshotContext;
  readonly target: string;
  readonly createdAt: number;
  fxDay: string | null;
  readonly skipped: string[];
}

/** `units` of `from` in the order currency, or null (skipped) when no rate is known. */
function convert(cv: Conversion, units: bigint, from: string, kind: string, id: unknown): bigint | null {
  if (from === cv.target || units === 0n) return units;
  cv.fxDay ??= new Date(cv.createdAt).toISOString().slice(0, 10);
  const rf = cv.ctx.fx(from, cv.fxDay);
  const rt = cv.ctx.fx(cv.target, cv.fxDay);
  if (rf === null || rt === null || rf <= 0) {
    cv.skipped.push(`${kind}:${id}:${from}`);
    return null;
  }
  return toUnits(fromUnits(units) * (rt / rf));
}

export function computeSnapshot(order: SnapshotOrder, ctx: SnapshotContext): Snapshot {
  const day = orderDay(ctx.timezone, order.createdAt);
  const target = order.currency;
  const cv: Conversion = { ctx, target, createdAt: order.createdAt, fxDay: null, skipped: [] };
  const skipped = cv.skipped;

  let cogs = 0n;
  let handling = 0n;
  let units = 0;
  let linesJson = "";
  for (const l of order.lines) {
    units += l.quantity;
    if (linesJson) linesJson += ",";
    const facts = ctx.variants.get(vkey(l.productId, l.variantId));
    if (!facts) {
      linesJson += JSON.stringify([l.variantId, "unknown", null, 0]);
      continue;
    }
    const r = ctx.resolver.sharedAt(facts, day);
    const lc = lineCost(r, l.variantId);
    const q = BigInt(l.quantity);
    const c = convert(cv, lc.cost * q, r.currency, "cogs", l.variantId);
    if (c !== null) cogs += c;
    const h = convert(cv, lc.handling * q, r.handlingFeeCurrency, "handling", l.variantId);
    if (h !== null) handling += h;
    linesJson += lc.json;
  }

  let shipping = 0n;
  let shipIds = "";
  for (const p of prepared(ctx.shippingLines)) {
    const s = p.line;
    if (!inForce(s, day)) continue;
    const countries = s.countries as string[] | undefined | null;
    if (countries && countries.length > 0 && !countries.includes(order.country.toUpperCase())) continue;
    p.a ??= toUnits(s.costPerOrder as number);
    p.b ??= toUnits(s.costPerItem as number);
    const c = convert(cv, p.a + p.b * BigInt(units), s.currency, "shipping", s.id);
    if (c !== null) shipping += c;
    shipIds += shipIds ? `,${p.idJson}` : p.idJson;
  }

  let gateway = 0n;
  let gwIds = "";
  const gw = order.gateway.toLowerCase();
  for (const p of prepared(ctx.gatewayLines)) {
    const g = p.line;
    if (!inForce(g, day) || p.gateway !== gw) continue;
    // percentRate % of the order total (order currency); the fixed fee is in the line's currency.
    p.a ??= toUnits(g.percentRate as number);
    p.b ??= toUnits(g.fixedFee as number);
    gateway += mulUnits(order.totalUnits ?? toUnits(order.totalPrice), p.a, 1_000_000n);
    const fee = convert(cv, p.b, g.currency, "gateway", g.id);
    if (fee !== null) gateway += fee;
    gwIds += gwIds ? `,${p.idJson}` : p.idJson;
  }

  let orderLevel = 0n;
  let ordIds = "";
  for (const p of prepared(ctx.orderLines)) {
    const o = p.line;
    if (!inForce(o, day)) continue;
    p.a ??= toUnits(o.amount as number);
    const c = convert(cv, p.a, o.currency, "order", o.id);
    if (c !== null) orderLevel += c;
    ordIds += ordIds ? `,${p.idJson}` : p.idJson;
  }

  // The text JSON.stringify gives for {day, lines, shipping?, gateway?, order?, skipped?}, built from
  // the pieces cached above (the unit test holds the two equal).
  let details = `{"day":${JSON.stringify(day)},"lines":[${linesJson}]`;
  if (shipIds) details += `,"shipping":[${shipIds}]`;
  if (gwIds) details += `,"gateway":[${gwIds}]`;
  if (ordIds) details += `,"order":[${ordIds}]`;
  if (skipped.length) details += `,"skipped":${JSON.stringify(skipped)}`;
  details += "}";
  return { currency: target, cogs, handling, shipping, gateway, orderLevel, details };
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
