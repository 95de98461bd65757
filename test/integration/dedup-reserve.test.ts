/**
 * The SQL dedup store's reservation (src/stores/dedup/sql.ts): a group of ids none of which is there
 * is inserted plainly; anything else goes through the upsert. Worked example, pixel px:
 *   reserve n1, n2, n3 (all new)                       → fresh ×3, leased by this reservation
 *   reserve n2, m1 (n2 leased and uncommitted, m1 new) → inflight, fresh (the upsert)
 *   commit the first reservation, reserve n1, k1       → duplicate, fresh
 *   reserve r1, r2 with r2 leased by another live writer → the plain INSERT takes nothing, the upsert
 *     runs: r1 fresh, r2 inflight — never a duplicate, never taken twice.
 *   (Postgres) the same with w2 inserted by a transaction still open: the plain INSERT waits for it,
 *     fails on the unique key once it commits, and the upsert answers w1 fresh, w2 inflight.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlDedupStore } from "../../src/stores/dedup/sql.js";
import type { SqlExecutor, SqlStore } from "../../src/stores/sql/port.js";
import { openMigrated, sqlAdapters } from "../helpers/stores.js";

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`dedup reservation on ${adapter.name}`, () => {
    let sql: SqlStore;
    let close: () => Promise<void>;
    const options = { windowDays: 30, leaseSeconds: 60, ownerTtlSeconds: 10, exclusive: true };
    const pixel = `px-${Math.random().toString(36).slice(2, 8)}`;

    beforeAll(async () => {
      ({ store: sql, close } = await openMigrated(adapter));
    });
    afterAll(() => close?.());

    /** A live lease of another reservation (the same owner, so it counts as alive). */
    const otherWritersLease = (id: string, owner: string, on: SqlExecutor = sql) =>
      on.query(
        `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner, reclaimed)
         VALUES ($1, $2, now(), now() + interval '60 seconds', 'other-token', $3, false)`,
        [pixel, id, owner],
      );

    const leased = async (ids: string[]) => {
      const { rows } = await sql.query<{ event_id: string; lease_token: string | null }>(
        "SELECT event_id, lease_token FROM dedup_ids WHERE pixel_id = $1 AND event_id = ANY($2::text[]) ORDER BY event_id",
        [pixel, ids],
      );
      return rows;
    };

    it("new ids are fresh and leased; a mix with a held id goes through the upsert", async () => {
      const dedup = new SqlDedupStore(sql, options);
      const first = await dedup.reserve(pixel, ["n1", "n2", "n3"]);
      expect(first.status).toEqual(["fresh", "fresh", "fresh"]);
      expect(first.lease.ids).toEqual(["n1", "n2", "n3"]);
      expect((await leased(["n1", "n2", "n3"])).map((r) => r.lease_token)).toEqual([
        first.lease.token,
        first.lease.token,
        first.lease.token,
      ]);

      const mixed = await dedup.reserve(pixel, ["n2", "m1"]);
      expect(mixed.status).toEqual(["inflight", "fresh"]);
      expect(mixed.lease.ids).toEqual(["m1"]);

      await dedup.commit(first.lease);
      const again = await dedup.reserve(pixel, ["n1", "k1"]);
      expect(again.status).toEqual(["duplicate", "fresh"]);
    });

    it("an id another writer holds when the statement runs: nothing is inserted plainly, the upsert decides", async () => {
      // Another live writer's lease on r2 lands right before this reservation's statement.
      let raced = false;
      const racingQuery = (async (text: string, params?: unknown[]) => {
        if (!raced && text.includes("WHERE NOT EXISTS (SELECT 1 FROM dedup_ids")) {
          raced = true;
          await otherWritersLease("r2", store.owner);
        }
        return sql.query(text, params as never);
      }) as SqlStore["query"];
      const racing = new Proxy(sql, {
        get: (target, prop) => (prop === "query" ? racingQuery : Reflect.get(target, prop)),
      });
      const store = new SqlDedupStore(racing, options);

      const r = await store.reserve(pixel, ["r1", "r2"]);

      expect(raced).toBe(true);
      expect(r.status).toEqual(["fresh", "inflight"]);
      expect(r.lease.ids).toEqual(["r1"]);
      expect((await leased(["r1", "r2"])).map((x) => `${x.event_id}:${x.lease_token}`)).toEqual([
        `r1:${r.lease.token}`,
        "r2:other-token",
      ]);
    });

    it.skipIf(adapter.name !== "postgres")(
      "a concurrent writer's uncommitted id: the plain INSERT waits, fails on the unique key, the upsert decides",
      async () => {
        const dedup = new SqlDedupStore(sql, options);
        let reservation: ReturnType<SqlDedupStore["reserve"]> | undefined;
        await sql.transaction(async (tx) => {
          await otherWritersLease("w2", dedup.owner, tx);
          reservation = dedup.reserve(pixel, ["w1", "w2"]);
          // Committed only once the reservation waits on w2's row.
          await expect
            .poll(
              async () => {
                const { rows } = await sql.query<{ n: number }>(
                  `SELECT count(*)::int AS n FROM pg_stat_activity
                   WHERE wait_event_type = 'Lock' AND query LIKE '%WHERE NOT EXISTS (SELECT 1 FROM dedup_ids%'`,
                );
                return rows[0]!.n;
              },
              { timeout: 20_000, interval: 10 },
            )
            .toBeGreaterThan(0);
        });
        const r = await reservation!;
        expect(r.status).toEqual(["fresh", "inflight"]);
        expect(r.lease.ids).toEqual(["w1"]);
        expect((await leased(["w1", "w2"])).map((x) => `${x.event_id}:${x.lease_token}`)).toEqual([
          `w1:${r.lease.token}`,
          "w2:other-token",
        ]);
      },
    );
  });
}
