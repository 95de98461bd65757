/**
 * The SQL dedup store's housekeeping (`prune`, src/stores/dedup/sql.ts), run in chunks of 3 rows so
 * that every step takes several statements. Worked example, pixel px:
 *   group A: a1…a7 reserved and committed        → folded: no lease left, its commit row gone
 *   group B: b1, b2 reserved, neither committed   → untouched: still leased, its copies in flight
 *   o1…o4 folded long ago, first seen 31 days ago → forgotten (prune returns 4)
 *   y1 folded, first seen 29 days ago             → kept (inside the 30-day window)
 * Afterwards a copy of a1 or y1 is a duplicate, a copy of o1 is fresh again, b1 is still in flight.
 * And the fold reaches the leased rows through the lease index, never by reading every id of the
 * window, on a table without statistics (embedded Postgres gathers none).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FOLD_SQL, SqlDedupStore } from "../../src/stores/dedup/sql.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { openMigrated, sqlAdapters } from "../helpers/stores.js";

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`dedup prune on ${adapter.name}`, () => {
    let sql: SqlStore;
    let close: () => Promise<void>;
    const options = { windowDays: 30, leaseSeconds: 60, ownerTtlSeconds: 10, exclusive: true, pruneChunk: 3 };

    beforeAll(async () => {
      ({ store: sql, close } = await openMigrated(adapter));
    });
    afterAll(() => close?.());

    it("finds the rows to fold through the lease index, not by reading every id", async () => {
      await sql.query(
        `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner, reclaimed)
         SELECT 'plan', 'e' || i, now(), NULL, NULL, NULL, false FROM generate_series(1, 50000) AS i`,
      );
      const { rows } = await sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${FOLD_SQL}`, [1000, ""]);
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(plan).toContain("dedup_ids_lease_idx");
      expect(plan).not.toMatch(/Seq Scan on dedup_ids/);
      await sql.query("DELETE FROM dedup_ids WHERE pixel_id = 'plan'");
    });

    it("folds committed groups, keeps open leases, forgets ids past the window, a chunk at a time", async () => {
      const dedup = new SqlDedupStore(sql, options);
      const ids = (p: string, n: number) => Array.from({ length: n }, (_, i) => `${p}${i + 1}`);
      const a = await dedup.reserve("px", ids("a", 7));
      await dedup.commit(a.lease);
      await dedup.reserve("px", ids("b", 2));
      const old = await dedup.reserve("px", [...ids("o", 4), "y1"]);
      await dedup.commit(old.lease);
      expect(await dedup.prune()).toBe(0); // folds o*, y1 and a*; nothing is old enough yet
      await sql.query(
        "UPDATE dedup_ids SET first_seen = now() - interval '31 days' WHERE pixel_id = 'px' AND event_id LIKE 'o%'",
      );
      await sql.query(
        "UPDATE dedup_ids SET first_seen = now() - interval '29 days' WHERE pixel_id = 'px' AND event_id = 'y1'",
      );

      expect(await dedup.prune()).toBe(4);

      const { rows } = await sql.query<{ event_id: string; leased: boolean }>(
        "SELECT event_id, lease_token IS NOT NULL AS leased FROM dedup_ids WHERE pixel_id = 'px' ORDER BY event_id",
      );
      expect(rows.map((r) => `${r.event_id}${r.leased ? "*" : ""}`)).toEqual([
        ...ids("a", 7),
        "b1*",
        "b2*",
        "y1",
      ]);
      const commits = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM dedup_commits");
      expect(commits.rows[0]!.n).toBe(0);

      const copies = await dedup.reserve("px", ["a1", "y1", "o1", "b1"]);
      expect(copies.status).toEqual(["duplicate", "duplicate", "fresh", "inflight"]);
    });
  });
}
