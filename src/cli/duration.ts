const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 } as const;

/** `90d`, `12h`, `30m`, `2w`, `1y` → milliseconds; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})([mhdwy])$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 ? n * UNIT_MS[m[2] as keyof typeof UNIT_MS] : null;
}
