/**
 * Orders are partitioned by the month they were created and FINAL resolves versions inside each
 * month, so an order must have exactly one live row across months. When a newer version changes the
 * creation month, the old month gets a tombstone (`is_deleted = 1`) one below the new version: it
 * beats every older row of its month (on a tie, being inserted later), and a FINAL that merges across
 * months (a reader without per-partition FINAL) still lets the new live row win. A write whose
 * tombstone was lost (the rows landed, the tombstone insert failed) is repaired by the next sync of
 * that order, which finds two live months. Pure: docs/data-formats.md describes the behaviour.
 */

/** The latest row of one order in one month, as stored. */
export interface StoredOrderMonth {
  orderId: string;
  /** Warehouse text form, `YYYY-MM-DD hh:mm:ss.fff`. */
  createdAt: string;
  version: number;
  deleted: boolean;
}

export interface OrderTombstone {
  orderId: string;
  createdAt: string;
  version: number;
}

const month = (createdAt: string) => createdAt.slice(0, 7);

/** Per order id: the version of its newest live row (the version a sync compares against). */
export function liveVersions(stored: readonly StoredOrderMonth[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of stored) {
    if (s.deleted) continue;
    const v = out.get(s.orderId);
    if (v === undefined || s.version > v) out.set(s.orderId, s.version);
  }
  return out;
}

/**
 * Tombstones to write for one order. `written` is the row this sync writes (null when the order is
 * unchanged): every other live month below its version is hidden. Without a write, live months left
 * behind by an earlier, half-finished move are hidden below the newest live row. A tombstone's
 * version is one below the row that stays.
 */
export function tombstonesFor(
  orderId: string,
  stored: readonly StoredOrderMonth[],
  written: { createdAt: string; version: number } | null,
): OrderTombstone[] {
  const live = stored.filter((s) => s.orderId === orderId && !s.deleted);
  const keeper =
    written ??
    live.reduce<StoredOrderMonth | null>((a, s) => (a === null || s.version > a.version ? s : a), null);
  if (!keeper) return [];
  return live
    .filter((s) => month(s.createdAt) !== month(keeper.createdAt) && s.version < keeper.version)
    .map((s) => ({ orderId, createdAt: s.createdAt, version: keeper.version - 1 }));
}
