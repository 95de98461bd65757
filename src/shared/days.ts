/**
 * Calendar days (`YYYY-MM-DD`) as cost lines use them: a day of the account's timezone, compared as
 * text (four-digit years sort lexically), shifted through UTC midnight so no local clock is involved.
 */

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The day an instant falls on in `timeZone` (IANA). */
export function dayIn(timeZone: string, instant: Date | number): string {
  const parts = formatter(timeZone).formatToParts(instant);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

/** `day` moved by `n` days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Is `day` within [start, end], where a null bound is open? */
export function dayWithin(day: string, start: string | null, end: string | null): boolean {
  return (start === null || start <= day) && (end === null || day <= end);
}

/** The smallest range covering every given range (null bounds are open and win). */
export function envelope(ranges: readonly { from: string | null; to: string | null }[]): {
  from: string | null;
  to: string | null;
} {
  if (ranges.length === 0) return { from: null, to: null };
  let from: string | null = ranges[0]?.from ?? null;
  let to: string | null = ranges[0]?.to ?? null;
  for (const r of ranges) {
    from = from === null || r.from === null ? null : r.from < from ? r.from : from;
    to = to === null || r.to === null ? null : r.to > to ? r.to : to;
  }
  return { from, to };
}
