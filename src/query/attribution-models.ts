/**
 * The attribution models as data: which spread fractional credit over a conversion's touches, and
 * the share each touch of one conversion gets. The SQL emitters (sources/attribution.ts) compute
 * the same shares in the engine; this is the reference the journey endpoint and tests use.
 */
export const ATTRIBUTION_MODELS = [
  "first_click",
  "last_click",
  "any_click",
  "linear",
  "time_decay",
  "position_based",
] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];

/** Models whose credit is a fraction of a conversion spread over its touches (shares add up to 1). */
export const FRACTIONAL_MODELS: ReadonlySet<AttributionModel> = new Set([
  "linear",
  "time_decay",
  "position_based",
]);

export const DEFAULT_HALF_LIFE_DAYS = 7;
export const POSITION_ENDS_SHARE = 0.4;
export const POSITION_MIDDLE_SHARE = 0.2;

const DAY_MS = 86_400_000;

/** One touch of a conversion, already inside its window; `time` in epoch milliseconds. */
export interface TouchAt {
  time: number;
  eventId: string;
}

/**
 * Each touch's share of one conversion, in the order given. Touches are ranked
 * by (time, event id), as the engine ranks them, so ties never depend on read order.
 * - first_click / last_click: 1 to the first / last touch, 0 to the others.
 * - any_click: 1 to every touch (each touched value is credited the whole conversion).
 * - linear: 1/n each.
 * - time_decay: 2^(−Δ/h), Δ the days from the touch to the conversion, normalized to add up to 1
 *   (the conversion time cancels out in the normalization).
 * - position_based: 40 % first, 40 % last, 20 % spread over the ones between; one touch 100 %,
 *   two touches 50 % each.
 */
export function touchShares(
  model: AttributionModel,
  touches: readonly TouchAt[],
  halfLifeDays = DEFAULT_HALF_LIFE_DAYS,
): number[] {
  const n = touches.length;
  if (n === 0) return [];
  const order = touches
    .map((t, i) => ({ t, i }))
    .sort(
      (a, b) => a.t.time - b.t.time || (a.t.eventId < b.t.eventId ? -1 : a.t.eventId > b.t.eventId ? 1 : 0),
    );
  const rank = new Array<number>(n);
  order.forEach(({ i }, r) => {
    rank[i] = r;
  });
  switch (model) {
    case "first_click":
      return rank.map((r) => (r === 0 ? 1 : 0));
    case "last_click":
      return rank.map((r) => (r === n - 1 ? 1 : 0));
    case "any_click":
      return rank.map(() => 1);
    case "linear":
      return rank.map(() => 1 / n);
    case "position_based":
      return rank.map((r) =>
        n === 1
          ? 1
          : n === 2
            ? 0.5
            : r === 0 || r === n - 1
              ? POSITION_ENDS_SHARE
              : POSITION_MIDDLE_SHARE / (n - 2),
      );
    case "time_decay": {
      // Relative to the latest touch, so the weights never all underflow to 0 on a long window.
      const latest = Math.max(...touches.map((t) => t.time));
      const weights = touches.map((t) => 2 ** (-(latest - t.time) / (halfLifeDays * DAY_MS)));
      const sum = weights.reduce((a, w) => a + w, 0);
      return weights.map((w) => w / sum);
    }
  }
}
