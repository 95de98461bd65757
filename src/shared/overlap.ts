/**
 * Waiting on work that runs in the engines' threads while this thread does its own share. A write
 * that was started is always waited for before its caller moves on or fails: a batch's lock is never
 * released while something it wrote is still under way.
 */

/** Waits for every promise, then fails with the first failure. */
export async function allDone(work: readonly (Promise<unknown> | null)[]): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Runs `build` on this thread while `pending` is under way elsewhere, and answers both. If `build`
 * throws, `pending` is still waited for, and `build`'s error is the one thrown.
 */
export async function alongside<P, B>(pending: Promise<P>, build: () => B): Promise<[P, B]> {
  let built: B;
  try {
    built = build();
  } catch (err) {
    await pending.catch(() => {});
    throw err;
  }
  return [await pending, built];
}
