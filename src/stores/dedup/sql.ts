import { randomUUID } from "node:crypto";
import { SqlError, type SqlStore } from "../sql/port.js";
import type { DedupLease, DedupOptions, DedupStatus, DedupStore } from "./port.js";

/** Embedded mode: full ids in the SQL store, so the set is exact and survives restarts. */
export class SqlDedupStore implements DedupStore {
  readonly kind = "sql";

  constructor(
    private readonly sql: SqlStore,
    private readonly options: DedupOptions,
  ) {}

  async reserve(pixelId: string, ids: readonly string[]) {
    const token = randomUUID();
    if (ids.length === 0) return { status: [], lease: { pixelId, token, ids: [] } };
    // Rows are claimed in sorted order, so concurrent overlapping reservations take their row locks in
    // the same order and cannot deadlock; a deadlock or serialization failure is retried all the same.
    const sorted = [...ids].sort();
    let rows: { event_id: string }[] = [];
    for (let attempt = 1; ; attempt++) {
      try {
        rows = await this.claim(pixelId, sorted, token);
        break;
      } catch (err) {
        const code = err instanceof SqlError ? err.code : undefined;
        if (attempt >= 3 || (code !== "40P01" && code !== "40001")) throw err;
      }
    }
    const won = new Set(rows.map((r) => r.event_id));
    const status: DedupStatus[] = ids.map((id) => (won.has(id) ? "fresh" : "duplicate"));
    return { status, lease: { pixelId, token, ids: ids.filter((id) => won.has(id)) } };
  }

  /** A row is (re)claimed when new, when its lease lapsed unacknowledged, or when it left the window. */
  private async claim(pixelId: string, ids: string[], token: string) {
    const { rows } = await this.sql.query<{ event_id: string }>(
      `INSERT INTO dedup_ids AS d (pixel_id, event_id, first_seen, lease_until, lease_token)
       SELECT $1, id, now(), now() + make_interval(secs => $3), $4 FROM unnest($2::text[]) AS id
       ON CONFLICT (pixel_id, event_id) DO UPDATE
         SET first_seen = now(), lease_until = excluded.lease_until, lease_token = excluded.lease_token
         WHERE CASE
           WHEN d.lease_until IS NULL OR EXISTS (SELECT 1 FROM dedup_commits c WHERE c.lease_token = d.lease_token)
             THEN d.first_seen < now() - make_interval(days => $5)
           ELSE d.lease_until < now()
         END
       RETURNING event_id`,
      [pixelId, ids, this.options.leaseSeconds, token, this.options.windowDays],
    );
    return rows;
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

  /** Folds acknowledged groups into their rows, then forgets ids older than the window. */
  async prune(): Promise<number> {
    return this.sql.transaction(async (tx) => {
      await tx.query(
        `UPDATE dedup_ids d SET lease_until = NULL, lease_token = NULL FROM dedup_commits c
         WHERE d.lease_token = c.lease_token`,
      );
      await tx.query(
        "DELETE FROM dedup_commits c WHERE NOT EXISTS (SELECT 1 FROM dedup_ids d WHERE d.lease_token = c.lease_token)",
      );
      const r = await tx.query(
        "DELETE FROM dedup_ids WHERE lease_until IS NULL AND first_seen < now() - make_interval(days => $1)",
        [this.options.windowDays],
      );
      return r.rowCount;
    });
  }
}
