import { addDays, addMonths, addYears, format, isValid, parseISO } from "date-fns";
import { formatInTimeZone, fromZonedTime, getTimezoneOffset } from "date-fns-tz";
import { BadRequestError } from "../errors.js";
import { addDays as addCalendarDays } from "../shared/days.js";

export const GRANULARITIES = ["none", "hour", "day", "week", "month", "quarter", "year"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** A date range resolved to instants: [start, end) in UTC, from local midnights of the timezone. */
export interface Instants {
  /** Inclusive local dates as given (relative tokens resolved). */
  startDate: string;
  endDate: string;
  start: Date;
  end: Date;
}

/** One row slot of a time series: `key` matches the bucket key the SQL emits. */
export interface Bucket {
  key: number;
  dt: string;
  start: string;
  end: string;
}

const RELATIVE = /^(\d{1,4})daysAgo$/;

/**
 * The days a query may name: the range of the warehouse's DateTime64(3) and Date32 types. A day
 * outside it cannot be bound as a parameter (year 1 is not a DateTime64), so it is refused up front
 * with a 400 naming the field. Stored facts all lie in 1970..2149, so a range reaching past them is
 * only empty there, never wrong.
 */
export const QUERY_MIN_DATE = "1900-01-01";
export const QUERY_MAX_DATE = "2299-12-31";
export const QUERY_DATE_RANGE_MESSAGE = `must be a day from ${QUERY_MIN_DATE} to ${QUERY_MAX_DATE}`;

/** A `YYYY-MM-DD` (or the day of an ISO instant, in UTC) inside the range queries support. */
export const inQueryRange = (day: string): boolean => day >= QUERY_MIN_DATE && day <= QUERY_MAX_DATE;

/**
 * A date of a request: `YYYY-MM-DD`, `today`, `yesterday` or `NdaysAgo` (GA4's spelling), resolved in
 * the query timezone at `now`.
 */
export function resolveDate(token: string, tz: string, now: Date, field: string): string {
  const today = formatInTimeZone(now, tz, "yyyy-MM-dd");
  if (token === "today") return today;
  if (token === "yesterday") return addCalendarDays(today, -1);
  const rel = RELATIVE.exec(token);
  if (rel) return addCalendarDays(today, -Number(rel[1]));
  if (isCalendarDate(token)) return token;
  throw new BadRequestError(`${field} must be YYYY-MM-DD, today, yesterday or NdaysAgo (got "${token}")`);
}

/** `YYYY-MM-DD` naming a day of the calendar (2026-02-30 is not one). */
export function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = parseISO(s);
  return isValid(d) && format(d, "yyyy-MM-dd") === s;
}

/**
 * Results of the zone conversions a request repeats for every bucket, kept per (zone, input). They
 * are pure functions of it, and date-fns-tz spends ~10 µs of Intl formatting per call: a 90-day
 * series with a compare range made ~900 calls, ~20 ms of the event loop per request. Cleared when
 * full, so the memory stays bounded whatever zones and ranges are asked.
 */
const ZONE_MEMO_LIMIT = 50_000;
const midnights = new Map<string, number>();
const isoTexts = new Map<string, string>();

function remember<V>(memo: Map<string, V>, key: string, compute: () => V): V {
  let v = memo.get(key);
  if (v === undefined) {
    if (memo.size >= ZONE_MEMO_LIMIT) memo.clear();
    v = compute();
    memo.set(key, v);
  }
  return v;
}

export function localMidnight(date: string, tz: string): Date {
  return new Date(
    remember(midnights, `${tz} ${date}`, () => fromZonedTime(`${date}T00:00:00`, tz).getTime()),
  );
}

export function resolveRange(
  range: { start: string; end: string },
  tz: string,
  now: Date,
  field: string,
): Instants {
  const startDate = resolveDate(range.start, tz, now, `${field}.start`);
  const endDate = resolveDate(range.end, tz, now, `${field}.end`);
  if (endDate < startDate) throw new BadRequestError(`${field}.end must not be before ${field}.start`);
  return {
    startDate,
    endDate,
    start: localMidnight(startDate, tz),
    end: localMidnight(addCalendarDays(endDate, 1), tz),
  };
}

/**
 * Whether the timezone's offset from UTC is a whole number of hours all through the range, so every
 * local bucket and the range itself are unions of whole UTC hours. False for zones such as
 * Asia/Kolkata (+05:30). Read weekly and at the end: a zone keeps a half-hour offset for months.
 */
export function wholeHourOffsets(tz: string, range: Pick<Instants, "start" | "end">): boolean {
  const end = range.end.getTime();
  for (let t = range.start.getTime(); ; t = Math.min(t + 7 * 86_400_000, end)) {
    if (getTimezoneOffset(tz, new Date(t)) % 3_600_000 !== 0) return false;
    if (t >= end) return true;
  }
}

const iso = (d: Date, tz: string) =>
  remember(isoTexts, `${tz} ${d.getTime()}`, () => formatInTimeZone(d, tz, "yyyy-MM-dd'T'HH:mm:ssXXX"));

/** The local calendar start of the bucket holding `date` (a local date), and the next one. */
function calendarStep(
  date: string,
  g: Exclude<Granularity, "none" | "hour">,
): { first: string; next: (d: string) => string } {
  const d = parseISO(date);
  if (g === "day") return { first: date, next: (x) => addCalendarDays(x, 1) };
  if (g === "week") {
    const monday = addDays(d, -((d.getDay() + 6) % 7));
    return { first: format(monday, "yyyy-MM-dd"), next: (x) => addCalendarDays(x, 7) };
  }
  const months = g === "month" ? 1 : g === "quarter" ? 3 : 12;
  const monthIndex = g === "year" ? 0 : Math.floor(d.getMonth() / months) * months;
  const first = format(new Date(d.getFullYear(), monthIndex, 1), "yyyy-MM-dd");
  const next = (x: string) =>
    format(g === "year" ? addYears(parseISO(x), 1) : addMonths(parseISO(x), months), "yyyy-MM-dd");
  return { first, next };
}

const MAX_BUCKETS = 10_000;

/**
 * Every bucket of the range, empty ones included. `start`/`end` are the instants a row covers, clipped
 * to the range; `dt` names the bucket by its local calendar start (weeks start on Monday). Days are
 * 23 or 25 hours long across DST changes because they run from local midnight to local midnight.
 */
export function buckets(range: Instants, g: Granularity, tz: string): Bucket[] {
  const clip = (s: Date, e: Date) => ({
    start: iso(s < range.start ? range.start : s, tz),
    end: iso(e > range.end ? range.end : e, tz),
  });
  if (g === "none") return [{ key: 0, dt: range.startDate, ...clip(range.start, range.end) }];
  const out: Bucket[] = [];
  if (g === "hour") {
    // Whole hours of absolute time from the local start of the range's first hour.
    for (let t = range.start.getTime(); t < range.end.getTime(); t += 3_600_000) {
      const s = new Date(t);
      out.push({
        key: t / 1000,
        dt: formatInTimeZone(s, tz, "yyyy-MM-dd HH:mm"),
        ...clip(s, new Date(t + 3_600_000)),
      });
      if (out.length > MAX_BUCKETS) throw tooMany();
    }
    return out;
  }
  const { first, next } = calendarStep(range.startDate, g);
  for (let d = first; localMidnight(d, tz) < range.end; d = next(d)) {
    const s = localMidnight(d, tz);
    out.push({ key: s.getTime() / 1000, dt: d, ...clip(s, localMidnight(next(d), tz)) });
    if (out.length > MAX_BUCKETS) throw tooMany();
  }
  return out;
}

const tooMany = () =>
  new BadRequestError(`granularity makes more than ${MAX_BUCKETS} buckets for dateRange; use a coarser one`);

/**
 * SQL for the bucket key of an instant column: epoch seconds of its bucket's local start, so it
 * matches `Bucket.key`. `tz` is a bound placeholder (ClickHouse substitutes it as a constant).
 */
export function bucketKeySql(column: string, g: Granularity, tz: string): string {
  switch (g) {
    case "none":
      return "toUInt32(0)";
    case "hour":
      return `toUnixTimestamp(toStartOfHour(${column}, ${tz}))`;
    case "day":
      return `toUnixTimestamp(toStartOfDay(${column}, ${tz}))`;
    case "week":
      return `toUnixTimestamp(toDateTime(toMonday(${column}, ${tz}), ${tz}))`;
    case "month":
      return `toUnixTimestamp(toDateTime(toStartOfMonth(${column}, ${tz}), ${tz}))`;
    case "quarter":
      return `toUnixTimestamp(toDateTime(toStartOfQuarter(${column}, ${tz}), ${tz}))`;
    case "year":
      return `toUnixTimestamp(toDateTime(toStartOfYear(${column}, ${tz}), ${tz}))`;
  }
}
