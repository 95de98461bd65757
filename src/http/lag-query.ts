import { z } from "zod";

/** `?waitMs` of the lag endpoints: how long to wait for a background worker to catch up. */
export const lagWaitQuery = z.strictObject({
  waitMs: z
    .string()
    .regex(/^\d{1,5}$/, "waitMs must be a whole number of milliseconds, 0-30000")
    .transform(Number)
    .refine((n) => n <= 30_000, "waitMs must be at most 30000")
    .optional()
    .describe("wait up to this long for the worker to catch up before answering (0-30000, default 0)"),
});

/**
 * Reads `read` until `done` says so or `waitMs` has passed, backing off from `firstPauseMs` (doubling,
 * at most `maxPauseMs`); answers the last reading.
 */
export async function readUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  waitMs: number,
  firstPauseMs = 5,
  maxPauseMs = 200,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  let value = await read();
  for (
    let pause = firstPauseMs;
    !done(value) && Date.now() < deadline;
    pause = Math.min(pause * 2, maxPauseMs)
  ) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(1, deadline - Date.now()))));
    value = await read();
  }
  return value;
}
