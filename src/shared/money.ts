/**
 * Money and rates as exact decimals with 4 places, the scale of Postgres `numeric(18, 4)`.
 *
 * JSON carries amounts as numbers in major units. A number is rounded at 4 decimals from the decimal
 * text JavaScript prints for it (its shortest round-trip form), half away from zero — the rounding
 * Postgres applies when it stores that text in `numeric(18, 4)`, so what the API answers after a write
 * is what the table holds, and `0.1 + 0.2` becomes `0.3`. Arithmetic (a percentage of a price) is done
 * on integer ten-thousandths (bigint), never on binary floats, and only the result becomes a number.
 */

export const MONEY_SCALE = 4;
const UNIT = 10n ** BigInt(MONEY_SCALE);
/** numeric(18, 4) holds 14 digits before the point. */
export const MONEY_LIMIT = 1e14;

/**
 * The shortest text of `v` when it has at most 4 decimals and no exponent — then it is already the
 * amount at scale 4, and the decimal arithmetic below can be skipped (an import parses every price of
 * every order line through here) — otherwise null.
 */
function shortAtScale(v: number): string | null {
  const s = String(v);
  if (s.length > 20 || s.includes("e")) return null;
  const dot = s.indexOf(".");
  return dot < 0 || s.length - dot - 1 <= MONEY_SCALE ? s : null;
}

/** The decimal text of a finite number, without exponent (1e-7 → "0.0000001"). */
function plainDecimal(v: number): string {
  const s = String(v);
  if (!s.includes("e")) return s;
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = "", expText] = m;
  const exp = Number(expText);
  const digits = `${lead}${frac}`;
  if (exp >= 0) {
    const intLen = 1 + exp;
    return `${sign}${digits.padEnd(intLen, "0").slice(0, intLen)}.${digits.slice(intLen) || "0"}`;
  }
  return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
}

/** A finite number as integer ten-thousandths, rounded half away from zero. */
export function toUnits(v: number): bigint {
  if (!Number.isFinite(v)) throw new RangeError(`not a finite amount: ${v}`);
  const text = plainDecimal(v);
  const negative = text.startsWith("-");
  const [int = "0", frac = ""] = (negative ? text.slice(1) : text).split(".");
  const kept = BigInt(int + frac.slice(0, MONEY_SCALE).padEnd(MONEY_SCALE, "0"));
  const roundUp = (frac.charCodeAt(MONEY_SCALE) || 48) >= 53; // next digit ≥ 5
  const abs = roundUp ? kept + 1n : kept;
  return negative ? -abs : abs;
}

/** Integer ten-thousandths as the number a client reads (the shortest text of that decimal). */
export function fromUnits(u: bigint): number {
  const negative = u < 0n;
  const abs = negative ? -u : u;
  const int = abs / UNIT;
  const frac = (abs % UNIT).toString().padStart(MONEY_SCALE, "0");
  return Number(`${negative ? "-" : ""}${int}.${frac}`);
}

/** The amount as stored: rounded to 4 decimals. */
export function roundMoney(v: number): number {
  // At most 4 decimals already: the stored amount is this very number (-0 is stored as 0).
  if (Number.isFinite(v) && shortAtScale(v) !== null) return v === 0 ? 0 : v;
  return fromUnits(toUnits(v));
}

/** Decimal text for a `numeric` parameter (no float noise reaches SQL). */
export function toNumericText(v: number): string {
  const short = Number.isFinite(v) ? shortAtScale(v) : null;
  if (short !== null) {
    const dot = short.indexOf(".");
    const int = dot < 0 ? short : short.slice(0, dot);
    const frac = dot < 0 ? "" : short.slice(dot + 1);
    return `${int}.${frac.padEnd(MONEY_SCALE, "0")}`;
  }
  const u = toUnits(v);
  const negative = u < 0n;
  const abs = negative ? -u : u;
  return `${negative ? "-" : ""}${abs / UNIT}.${(abs % UNIT).toString().padStart(MONEY_SCALE, "0")}`;
}

const centText = (c: bigint): string => {
  const abs = c < 0n ? -c : c;
  return `${c < 0n ? "-" : ""}${abs / 100n}.${(abs % 100n).toString().padStart(2, "0")}`;
};

const CENTS_EXACT_BELOW = 2 ** 46;

export const HOLDS_CENTS_MESSAGE =
  "is beyond what a JSON number holds to the cent (from 2^46, about 7.04 × 10^13, neighbouring cents share one number)";

/**
 * Whether a JSON number stands for one amount to the cent. A double near 10^14 is 1/64 apart from the
 * next, so 99999999999999.98 and 99999999999999.99 arrive as the same number and the cents the sender
 * meant are lost before anything is stored. Below 2^46 (about 7 × 10^13) every amount in cents has a
 * double of its own, so only the largest amounts are affected; float noise such as
 * 0.30000000000000004 still stands for 0.30.
 */
export function holdsCents(v: number): boolean {
  if (!Number.isFinite(v)) return false;
  // Below 2^46 neighbouring doubles are at most 2^-7 apart, so the doubles of the two neighbouring
  // cents (0.005 or more away from v) can never be v.
  if (Math.abs(v) < CENTS_EXACT_BELOW) return true;
  const units = toUnits(v);
  const cents = (units < 0n ? units - 50n : units + 50n) / 100n;
  return Number(centText(cents - 1n)) !== v && Number(centText(cents + 1n)) !== v;
}

/** `numeric` text from Postgres (both adapters return it as a string) as a JSON number. */
export const fromNumeric = (text: string | number): number => Number(text);

/** `percent` % of `amount`, exact on decimals, rounded half away from zero at 4 places. */
export function percentOf(amount: number, percent: number): number {
  const product = toUnits(amount) * toUnits(percent); // scale 8, times 100 for the percent
  const divisor = UNIT * 100n;
  const negative = product < 0n;
  const abs = negative ? -product : product;
  const q = (abs + divisor / 2n) / divisor;
  return fromUnits(negative ? -q : q);
}
