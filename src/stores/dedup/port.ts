/**
 * The exact eventId dedup set. `reserve` atomically claims ids that were not seen within the window;
 * the claim is a lease until `commit` (after the warehouse write) or `release` (after a failed write).
 * A lease that lapses — the process died in between — can be claimed again, so no id is ever made
 * unstorable by a crash.
 */
export interface DedupStore {
  readonly kind: string;
  /** One status per id (ids must be distinct): see `DedupStatus`. */
  reserve(pixelId: string, ids: readonly string[]): Promise<{ status: DedupStatus[]; lease: DedupLease }>;
  commit(lease: DedupLease): Promise<void>;
  release(lease: DedupLease): Promise<void>;
  /**
   * For `unconfirmed` ids the warehouse does not hold (a digest collision): a short exclusive claim so
   * that concurrent copies of such an id are still stored once. It expires with the lease.
   */
  claimUnconfirmed?(
    pixelId: string,
    ids: readonly string[],
  ): Promise<{ claimed: boolean[]; release(): Promise<void> }>;
  /** Drops memory of ids older than the window (the Redis adapter expires keys by itself). */
  prune(): Promise<number>;
}

/**
 * `fresh`: reserved by this call. `duplicate`: seen within the window, or in flight in another request.
 * `unconfirmed`: a compact-digest store matched an acknowledged id; the caller confirms it against the
 * warehouse, so a digest collision can never drop an event.
 */
export type DedupStatus = "fresh" | "duplicate" | "unconfirmed";

export interface DedupLease {
  pixelId: string;
  token: string;
  ids: string[];
  /** Adapter-specific data needed to commit or release exactly what was reserved. */
  detail?: unknown;
}

export interface DedupOptions {
  windowDays: number;
  /** How long a reservation stays valid without commit or release. */
  leaseSeconds: number;
}

export const DEFAULT_DEDUP: DedupOptions = { windowDays: 30, leaseSeconds: 60 };
