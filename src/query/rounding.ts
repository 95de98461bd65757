/**
 * How figures are rounded on output, in one place: every answer rounds the same way, and figures
 * that are parts of a whole (attribution rows, a journey's per-touch credit) add up to it.
 */

/** Half away from zero on the decimal value (0.125 → 0.13); the epsilon absorbs float noise (x.xx5). */
export function roundHalfAway(v: number, places: number): number {
  const f = 10 ** places;
  return (Math.sign(v) * Math.round(Math.abs(v) * f + 1e-9)) / f;
}

/** Remainders closer than this (in units of the last place) are equal: 2/3 and 1/6 differ in their last bits. */
const TIE = 1e-9;

/**
 * `values` rounded to `places` so that they add up exactly to their sum rounded half away from zero
 * (largest remainder): each is floored, and the units left over go to the largest remainders — or,
 * when the floors overshoot (values of mixed sign), are taken from the smallest. Ties go to the value
 * `before` ranks first (default: the earlier index), so the answer never depends on float noise.
 */
export function roundAddingUp(
  values: readonly number[],
  places: number,
  before: (a: number, b: number) => number = (a, b) => a - b,
): number[] {
  // Parts of a negative whole (a refund's shares) round as mirror images of a positive one.
  if (values.length && values.every((v) => v <= 0))
    return roundAddingUp(
      values.map((v) => -v),
      places,
      before,
    ).map((x) => -x + 0);
  const f = 10 ** places;
  const scaled = values.map((v) => v * f);
  const sum = scaled.reduce((a, x) => a + x, 0);
  const units = Math.sign(sum) * Math.round(Math.abs(sum) + TIE);
  const floors = scaled.map((x) => Math.floor(x + TIE));
  let left = units - floors.reduce((a, x) => a + x, 0);
  const ranked = scaled
    .map((x, i) => ({ i, rem: x - floors[i]! }))
    .sort((a, b) => (Math.abs(b.rem - a.rem) > TIE ? b.rem - a.rem : before(a.i, b.i)));
  for (let j = 0; left > 0 && ranked.length; j = (j + 1) % ranked.length, left--) floors[ranked[j]!.i]! += 1;
  for (
    let j = ranked.length - 1;
    left < 0 && ranked.length;
    j = (j - 1 + ranked.length) % ranked.length, left++
  )
    floors[ranked[j]!.i]! -= 1;
  // + 0 turns a -0 into 0.
  return floors.map((x) => x / f + 0);
}
