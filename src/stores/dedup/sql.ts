import { randomUUID } from "node:crypto";
import { SqlError, type SqlStore, type SqlValue } from "../sql/port.js";
import { Heartbeat, newOwnerId } from "./heartbeat.js";
import {
  type DedupLease,
  type DedupOptions,
  type DedupStatus,
  type DedupStore,
  type Reservation,
  ReservationUncertainError,
} from "./port.js";

export interface SqlDedupOptions extends DedupOptions {
  /**
   * True when no other process can use this SQL store (embedded PGlite behind the data-dir lock): then
   * every lease of another owner belongs to a process that is gone, and no heartbeat is needed.
   */
  exclusive: boolean;
  /** Rows a prune folds or forgets per statement (default PRUNE_CHUNK). */
  pruneChunk?: number;
}

/**
 * Rows per prune statement. A minute of ingestion at full speed is ~500,000 ids: folded in one
 * statement, that held embedded Postgres's one thread for seconds, and every request arriving then
 * waited on its dedup reservation. In chunks, requests get their turn between them (a chunk of 1,000
 * takes ~25 ms there; 5,000 took ~120 ms).
 */
const PRUNE_CHUNK = 1_000;

/**
 * One chunk ($1 rows) of acknowledged groups folded into their rows, from the group $2 on (groups in
 * key order; '' for the first chunk): returns how many rows it folded and the last group it reached,
 * where the next chunk starts (that group may have rows left). The rows are found through the lease
 * index, one committed group at a time (a LATERAL subquery with a LIMIT): embedded Postgres keeps no
 * statistics, and the plain join of the two tables was planned as a scan of every id of the window
 * hashed against the commits — 40 ms per chunk at 1M ids, 400 at 10M, for each of the hundreds of
 * chunks a minute of ingestion leaves. Starting from where the previous chunk stopped keeps a pass
 * from probing the groups it already folded again (their commits are deleted only after the pass).
 * The outer conditions are checked again on a row changed since the chunk was picked.
 */
export const FOLD_SQL = `WITH folded AS (
  UPDATE dedup_ids d SET lease_until = NULL, lease_token = NULL, lease_owner = NULL, reclaimed = false
  FROM dedup_commits c
  WHERE d.lease_token = c.lease_token AND d.ctid = ANY(ARRAY(
    SELECT p.ctid
    FROM (SELECT lease_token FROM dedup_commits WHERE lease_token >= $2 ORDER BY lease_token) AS c2
    CROSS JOIN LATERAL (SELECT d2.ctid FROM dedup_ids d2 WHERE d2.lease_token = c2.lease_token LIMIT $1) AS p
    LIMIT $1))
  RETURNING c.lease_token
)
SELECT count(*)::int AS n, max(lease_token) AS last FROM folded`;

/**
 * The reservation's first statement ($1 pixel, $2 ids, $3 lease seconds, $4 token, $5 owner): the ids
 * not in the table are inserted with a lease, and the ids that are come back (usually none). The
 * lookup probes the primary key with the whole array at once: a per-id anti-join (`NOT EXISTS` per
 * id) took 90–190 ms per 1,000 ids in PGlite, growing with the table.
 */
export const INSERT_NEW_SQL = `WITH seen AS (
  SELECT event_id FROM dedup_ids WHERE pixel_id = $1 AND event_id = ANY($2::text[])
), fresh AS (
  INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner, reclaimed)
  SELECT $1, id, now(), now() + make_interval(secs => $3), $4, $5, false FROM unnest($2::text[]) AS id
  WHERE NOT EXISTS (SELECT 1 FROM seen WHERE seen.event_id = id)
)
SELECT event_id FROM seen`;

const freshRow = (id: string) => ({ event_id: id, reclaimed: false });

const COMMITTED =
  "(d.lease_until IS NULL OR EXISTS (SELECT 1 FROM dedup_commits c WHERE c.lease_token = d.lease_token))";

/** Full ids in the SQL store, so the set is exact and survives restarts. */
export class SqlDedupStore implements DedupStore {
  readonly kind = "sql";
  readonly owner = newOwnerId();
  private readonly heartbeat: Heartbeat | undefined;

  constructor(
    private readonly sql: SqlStore,
    private readonly options: SqlDedupOptions,
  ) {
    if (!options.exclusive) {
      this.heartbeat = new Heartbeat(
        () =>
          this.sql.query(
            `INSERT INTO dedup_owners (owner, alive_until) VALUES ($1, now() + make_interval(secs => $2))
             ON CONFLICT (owner) DO UPDATE SET alive_until = excluded.alive_until`,
            [this.owner, options.ownerTtlSeconds],
          ),
        options.ownerTtlSeconds,
      );
    }
  }

  /**
   * A lease belongs to a dead owner when its owner is not this process and (exclusive) cannot be alive
   * or (shared) has not beaten its heartbeat within the TTL. A lease without an owner was taken before
   * owners were recorded: it is judged by its expiry alone unless the store is exclusive.
   */
  private deadOwner(): string {
    return this.options.exclusive
      ? "d.lease_owner IS DISTINCT FROM $6"
      : `(d.lease_owner IS NOT NULL AND d.lease_owner <> $6 AND NOT EXISTS (
           SELECT 1 FROM dedup_owners o WHERE o.owner = d.lease_owner AND o.alive_until > now()))`;
  }

  async reserve(pixelId: string, ids: readonly string[]): Promise<Reservation> {
    const token = randomUUID();
    if (ids.length === 0) return { status: [], lease: { pixelId, token, ids: [] } };
    await this.heartbeat?.ready();
    // Rows are claimed in sorted order, so concurrent overlapping reservations take their row locks in
    // the same order and cannot deadlock; the upsert retries a deadlock or a serialization failure all
    // the same (the first statement is not retried: if it fails, the reservation does).
    const sorted = [...ids].sort();
    let rows: { event_id: string; reclaimed: boolean }[];
    try {
      const seen = await this.insertNew(pixelId, sorted, token);
      rows = sorted.filter((id) => !seen.has(id)).map(freshRow);
      if (seen.size > 0) rows.push(...(await this.upsert(pixelId, [...seen].sort(), token)));
    } catch (err) {
      // A statement may have committed before its answer was lost: the caller releases by token.
      throw new ReservationUncertainError({ pixelId, token, ids: [...ids] }, err);
    }
    const won = new Map(rows.map((r) => [r.event_id, r.reclaimed]));
    const lease = { pixelId, token, ids: ids.filter((id) => won.has(id)) };
    let others: Map<string, boolean>;
    try {
      others = await this.stateOf(
        pixelId,
        ids.filter((id) => !won.has(id)),
      );
    } catch (err) {
      throw new ReservationUncertainError(lease, err);
    }
    const status: DedupStatus[] = ids.map((id) => {
      const reclaimed = won.get(id);
      if (reclaimed !== undefined) return reclaimed ? "reclaimed" : "fresh";
      // Gone between the two statements (released) is in flight too: the caller asks again shortly.
      return others.get(id) ? "duplicate" : "inflight";
    });
    return { status, lease };
  }

  /**
   * Most ids of a reservation were never seen: one plain INSERT takes them all, and only the ids already
   * there (copies, leases in flight, ids past the window) go through the upsert. The upsert's conflict
   * handling is most of its cost (in PGlite, 1,000 new ids: ~35 ms against ~19). Returns the ids left
   * for the upsert. The unique key still decides: an id another writer inserts meanwhile fails the
   * plain INSERT as a whole, and then every id goes through the upsert.
   */
  private async insertNew(pixelId: string, ids: string[], token: string): Promise<Set<string>> {
    try {
      const { rows } = await this.sql.query<{ event_id: string }>(INSERT_NEW_SQL, [
        pixelId,
        ids,
        this.options.leaseSeconds,
        token,
        this.owner,
      ]);
      return new Set(rows.map((r) => r.event_id));
    } catch (err) {
      if (err instanceof SqlError && err.code === "23505") return new Set(ids);
      throw err;
    }
  }

  /**
   * A row is (re)claimed when new, when it left the window, or when it is an unacknowledged lease that
   * lapsed or whose owner died — that last kind comes back `reclaimed`. Retried on a deadlock or a
   * serialization failure.
   */
  private async upsert(pixelId: string, ids: string[], token: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.upsertOnce(pixelId, ids, token);
      } catch (err) {
        const code = err instanceof SqlError ? err.code : undefined;
        if (attempt < 3 && (code === "40P01" || code === "40001")) continue;
        throw err;
      }
    }
  }

  private async upsertOnce(pixelId: string, ids: string[], token: string) {
    const { rows } = await this.sql.query<{ event_id: string; reclaimed: boolean }>(
      `INSERT INTO dedup_ids AS d (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner, reclaimed)
       SELECT $1, id, now(), now() + make_interval(secs => $3), $4, $6, false FROM unnest($2::text[]) AS id
       ON CONFLICT (pixel_id, event_id) DO UPDATE
         SET first_seen = now(), lease_until = excluded.lease_until, lease_token = excluded.lease_token,
             lease_owner = excluded.lease_owner, reclaimed = NOT ${COMMITTED}
         WHERE CASE
           WHEN ${COMMITTED} THEN d.first_seen < now() - make_interval(days => $5)
           ELSE d.lease_until < now() OR ${this.deadOwner()}
         END
       RETURNING event_id, reclaimed`,
      [pixelId, ids, this.options.leaseSeconds, token, this.options.windowDays, this.owner],
    );
    return rows;
  }

  /** For ids another reservation holds: true when acknowledged, false while still in flight. */
  private async stateOf(pixelId: string, ids: string[]): Promise<Map<string, boolean>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.sql.query<{ event_id: string; committed: boolean }>(
      `SELECT d.event_id, ${COMMITTED} AS committed FROM dedup_ids d
       WHERE d.pixel_id = $1 AND d.event_id = ANY($2::text[])`,
      [pixelId, ids],
    );
    return new Map(rows.map((r) => [r.event_id, r.committed]));
  }

  /** One row per group: the reserved rows count as acknowledged from here on (see `prune`). */
  async commit(lease: DedupLease): Promise<void> {
    if (lease.ids.length === 0) return;
    await this.sql.query("INSERT INTO dedup_commits (lease_token) VALUES ($1) ON CONFLICT DO NOTHING", [
      lease.token,
    ]);
  }

  async release(lease: DedupLease): Promise<void> {
    if (lease.ids.length === 0) return;
    await this.sql.query(
      `DELETE FROM dedup_ids WHERE lease_token = $1 AND lease_until IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM dedup_commits c WHERE c.lease_token = $1)`,
      [lease.token],
    );
  }

  /**
   * Folds acknowledged groups into their rows, then forgets ids older than the window; a chunk of rows
   * per statement (PRUNE_CHUNK). Each step is safe alone: a row is folded only while its group's
   * commit is there, a commit goes only once no row names it, and an id is forgotten only once folded.
   * Returns the ids forgotten.
   */
  async prune(): Promise<number> {
    const chunk = this.options.pruneChunk ?? PRUNE_CHUNK;
    for (let from = ""; ; ) {
      const { rows } = await this.sql.query<{ n: number; last: string | null }>(FOLD_SQL, [chunk, from]);
      const folded = rows[0];
      if (!folded || Number(folded.n) < chunk || folded.last === null) break;
      from = folded.last;
    }
    await this.sql.query(
      "DELETE FROM dedup_commits c WHERE NOT EXISTS (SELECT 1 FROM dedup_ids d WHERE d.lease_token = c.lease_token)",
    );
    await this.sql.query("DELETE FROM dedup_owners WHERE alive_until < now() - interval '1 day'");
    return this.inChunks(
      `DELETE FROM dedup_ids WHERE lease_until IS NULL AND first_seen < now() - make_interval(days => $2)
         AND ctid = ANY(ARRAY(SELECT ctid FROM dedup_ids
           WHERE lease_until IS NULL AND first_seen < now() - make_interval(days => $2) LIMIT $1))`,
      [chunk, this.options.windowDays],
      chunk,
    );
  }

  /** Runs a statement that changes at most `chunk` rows until it changes fewer; the rows changed. */
  private async inChunks(text: string, params: SqlValue[], chunk: number): Promise<number> {
    let total = 0;
    for (;;) {
      const { rowCount } = await this.sql.query(text, params);
      total += rowCount;
      if (rowCount < chunk) return total;
    }
  }

  async close(): Promise<void> {
    if (!this.heartbeat) return;
    await this.heartbeat.stop();
    await this.sql.query("DELETE FROM dedup_owners WHERE owner = $1", [this.owner]).catch(() => {});
  }
}
