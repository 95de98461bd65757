/**
 * Value formatting by a measure's valueType (GET /db-mgmt/api/measures), and the date arithmetic of
 * compare periods. Pure functions, no DOM: the unit tests import this file directly. Numbers are
 * formatted in en-US so the pages read the same everywhere (the currency symbol follows the code).
 */

export type ValueType = "count" | "currency" | "percent" | "ratio" | "number" | "duration";

const LOCALE = "en-US";
const cache = new Map<string, Intl.NumberFormat>();

function nf(key: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  let f = cache.get(key);
  if (!f) {
    f = new Intl.NumberFormat(LOCALE, options);
    cache.set(key, f);
  }
  return f;
}

function currencyFormat(currency: string, compact: boolean): Intl.NumberFormat | null {
  try {
    return nf(`currency:${currency}:${compact}`, {
      style: "currency",
      currency,
      // Otherwise the currency's own minor units: 2 for USD, 0 for JPY.
      ...(compact ? { notation: "compact", maximumFractionDigits: 1 } : {}),
    });
  } catch {
    return null; // not an ISO 4217 code Intl knows
  }
}

/** Seconds as `1h 05m`, `3m 20s`, `42s` or `0.4s`. */
export function formatDuration(seconds: number): string {
  const sign = seconds < 0 ? "-" : "";
  const s = Math.abs(seconds);
  if (s < 10) return `${sign}${Number(s.toFixed(1))}s`;
  const whole = Math.round(s);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  if (h > 0) return `${sign}${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${sign}${m}m ${String(rest).padStart(2, "0")}s`;
  return `${sign}${rest}s`;
}

/**
 * One value for display. `compact` shortens large numbers (axis ticks, crowded cells): `$12.3K`, `4.5M`.
 * Percent measures arrive already multiplied by 100 (the query API's repeat rate of 12.5 means 12.5 %).
 */
export function formatValue(
  value: number | null | undefined,
  valueType: string,
  currency = "USD",
  options: { compact?: boolean } = {},
): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  const compact = options.compact === true && Math.abs(value) >= 10_000;
  switch (valueType) {
    case "currency": {
      const f = currencyFormat(currency, compact);
      return f ? f.format(value) : `${formatNumber(value, 2, compact)} ${currency}`;
    }
    case "percent":
      return `${formatNumber(value, 2, compact)}%`;
    case "ratio":
      return `${formatNumber(value, 2, compact)}×`;
    case "count":
      return formatNumber(value, 0, compact);
    case "duration":
      return formatDuration(value);
    default:
      return formatNumber(value, 2, compact);
  }
}

export function formatNumber(value: number, maxFractionDigits: number, compact = false): string {
  return nf(`n:${maxFractionDigits}:${compact}`, {
    maximumFractionDigits: compact ? 1 : maxFractionDigits,
    ...(compact ? { notation: "compact" } : {}),
  }).format(value);
}

/** A percent change as `+12.5%` / `−3.1%` (a real minus sign), or `—` when there is none. */
export function formatDelta(percentDiff: number | null | undefined): string {
  if (percentDiff === null || percentDiff === undefined || !Number.isFinite(percentDiff)) return "—";
  const abs = formatNumber(Math.abs(percentDiff), 1);
  if (abs === "0") return "0%";
  return `${percentDiff > 0 ? "+" : "−"}${abs}%`;
}

/** Whether a change is good news for a measure whose preferred trend is `up`, `down` or `neutral`. */
export function deltaTone(
  percentDiff: number | null | undefined,
  preferredTrendDirection: string,
): "good" | "bad" | "neutral" {
  if (percentDiff === null || percentDiff === undefined || percentDiff === 0) return "neutral";
  if (preferredTrendDirection === "up") return percentDiff > 0 ? "good" : "bad";
  if (preferredTrendDirection === "down") return percentDiff < 0 ? "good" : "bad";
  return "neutral";
}

// --- dates (YYYY-MM-DD, calendar arithmetic in UTC so no timezone shifts a day) ---------------------

export interface DateRange {
  start: string;
  end: string;
}
export type ComparePeriod = "previous_period" | "previous_year" | "none";

const DAY_MS = 86_400_000;
const toMs = (d: string) => Date.parse(`${d}T00:00:00Z`);
const toDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const isDay = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && toDay(toMs(s)) === s;

/** Days in an inclusive range. */
export const daysIn = (r: DateRange) => Math.round((toMs(r.end) - toMs(r.start)) / DAY_MS) + 1;

/** The same day one year earlier; 29 February becomes 28 February. */
function yearEarlier(day: string): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const last = new Date(Date.UTC(y - 1, m, 0)).getUTCDate();
  return `${String(y - 1).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(Math.min(d, last)).padStart(2, "0")}`;
}

/**
 * The period a range is compared with: the as-long period just before it, or the same dates a year
 * earlier; null for no comparison.
 */
export function comparePeriod(range: DateRange, kind: ComparePeriod): DateRange | null {
  if (kind === "none") return null;
  if (kind === "previous_year") return { start: yearEarlier(range.start), end: yearEarlier(range.end) };
  const n = daysIn(range);
  const end = toMs(range.start) - DAY_MS;
  return { start: toDay(end - (n - 1) * DAY_MS), end: toDay(end) };
}

/** `Mar 1 – Mar 14, 2026`, `Dec 20, 2025 – Jan 2, 2026`, or one day `Mar 1, 2026`. */
export function formatRange(r: DateRange): string {
  const md = (d: string) =>
    new Date(toMs(d)).toLocaleDateString(LOCALE, { month: "short", day: "numeric", timeZone: "UTC" });
  const y = (d: string) => d.slice(0, 4);
  if (r.start === r.end) return `${md(r.start)}, ${y(r.start)}`;
  if (y(r.start) === y(r.end)) return `${md(r.start)} – ${md(r.end)}, ${y(r.end)}`;
  return `${md(r.start)}, ${y(r.start)} – ${md(r.end)}, ${y(r.end)}`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** An axis label: `2026-03-01` → `Mar 1`; `2026-03-01 14:00[:00]` → `Mar 1 14:00`; long text cut at 18. */
export function shortLabel(label: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?/.exec(label);
  if (!m) return label.length > 18 ? `${label.slice(0, 17)}…` : label;
  const day = `${MONTHS[Number(m[2]) - 1] ?? m[2]} ${Number(m[3])}`;
  return m[4] === undefined ? day : `${day} ${m[4]}:${m[5]}`;
}
