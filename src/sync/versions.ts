let last = 0;

/**
 * Wall-clock milliseconds, strictly increasing within this process, for records whose source gives
 * no version (ad metrics without updatedAt, FX rates): two writes in one millisecond never tie.
 */
export function monotonicMs(): number {
  last = Math.max(last + 1, Date.now());
  return last;
}
