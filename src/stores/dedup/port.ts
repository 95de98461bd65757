/**
 * The exact eventId dedup set. `reserve` atomically claims ids that were not seen within the window;
 * the claim is a lease held by this process (its `owner`) until `commit` (after the warehouse write)
 * or `release` (after a failed write).
 *
 * The set only ever answers `duplicate` for an id whose first copy was acknowledged, which happens
 * after its warehouse write. Whenever the set cannot know whether an earlier copy was stored — a lease
 * that lapsed or whose owner died, a commit that never arrived, a set that lost its data — it says so
 * (`reclaimed`, `unconfirmed`) and the caller asks the warehouse, the source of truth.
 */
export interface DedupStore {
  readonly kind: string;
  /** This process's id as the owner of its leases (other processes check it is alive). */
  readonly owner: string;
  /** One status per id (ids must be distinct): see `DedupStatus`. */
  reserve(pixelId: string, ids: readonly string[]): Promise<Reservation>;
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
  /** Stops the liveness heartbeat and withdraws this owner (its leases become reclaimable at once). */
  close(): Promise<void>;
}

/**
 * A reservation that failed part-way (the store stopped answering, a timeout) may still have taken
 * some of its leases. The error carries a lease covering every id asked for, so the caller can
 * release it: releasing only ever removes entries this very lease holds.
 */
export class ReservationUncertainError extends Error {
  constructor(
    readonly lease: DedupLease,
    cause: unknown,
  ) {
    super(`dedup reservation failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

export interface Reservation {
  status: DedupStatus[];
  lease: DedupLease;
}

/**
 * - `fresh`: reserved by this call; no earlier copy can have been stored within the window.
 * - `reclaimed`: reserved by this call, but an earlier copy may have been stored without being
 *   acknowledged (its lease lapsed or its owner died, or the set lost its data): the caller confirms
 *   against the warehouse before writing, and treats a stored id as a duplicate.
 * - `duplicate`: acknowledged within the window — its first copy is durably stored.
 * - `unconfirmed`: a compact-digest store matched an acknowledged id; the caller confirms it against
 *   the warehouse, so a digest collision can never drop an event.
 * - `inflight`: another live writer holds the id's lease; its write is under way. The caller waits for
 *   it to settle (and never answers `duplicate` before the first copy is stored).
 */
export type DedupStatus = "fresh" | "reclaimed" | "duplicate" | "unconfirmed" | "inflight";

export interface DedupLease {
  pixelId: string;
  token: string;
  /** The ids this lease reserved (`fresh` and `reclaimed`). */
  ids: string[];
  /** Adapter-specific data needed to commit or release exactly what was reserved. */
  detail?: unknown;
}

export interface DedupOptions {
  windowDays: number;
  /** How long a reservation stays valid without commit or release, even if its owner looks alive. */
  leaseSeconds: number;
  /**
   * How long an owner counts as alive after its last heartbeat. A lease of a dead owner is reclaimed
   * (and confirmed against the warehouse) without waiting for the lease to lapse.
   */
  ownerTtlSeconds: number;
}

export const DEFAULT_DEDUP: DedupOptions = { windowDays: 30, leaseSeconds: 60, ownerTtlSeconds: 10 };

/** Heartbeats run this many times per owner TTL, so one or two lost beats never look like a death. */
export const HEARTBEATS_PER_TTL = 4;
