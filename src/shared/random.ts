import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulid";

const pool = new Uint8Array(4096);
let next = pool.length;

/**
 * Cryptographically random fractions in [0, 1), for ulid's factories. Its default source calls
 * `crypto.getRandomValues` once per character, 16 times per id: ~220 ms of the main thread in a CPU
 * profile of ingestion under load. This draws them from a pool refilled once per 4,096 characters.
 * One byte per character: ulid takes floor(fraction × 32), and 256 values split evenly into 32.
 */
export function randomFraction(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}

/**
 * A monotonic ULID generator drawing from the pool above: what every write path uses for its ids
 * (ulid()'s default source would cost 16 `getRandomValues` calls per id).
 */
export function ulidFactory(): (seedTime?: number) => string {
  return monotonicFactory(randomFraction);
}
