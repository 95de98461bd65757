/**
 * The SQL dedup store's reservation (src/stores/dedup/sql.ts): the ids not in the table take one plain
 * INSERT; only the ids already there go through the upsert. Worked example, pixel px:
 *   reserve n1, n2, n3 (all new)                  → fresh ×3, leased by this reservation; no upsert
 *   reserve n2, m1 (n2 leased, uncommitted)       → inflight, fresh; the upsert sees n2 alone
 *   commit the first reservation, reserve n1, k1  → duplicate, fresh; the upsert sees n1 alone
 *   reserve r1, r2 with r2 leased by another live writer just before the statement
 *                                                 → fresh, inflight; the upsert sees r2 alone
 *   (Postgres) w2 inserted by a transaction still open: the plain INSERT waits for it, fails on the
 *     unique key once it commits, and every id goes through the upsert: w1 fresh, w2 inflight.
 * Never a duplicate for an id not acknowledged, never an id taken twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSERT_NEW_SQL, SqlDedupStore } from "../../src/stores/dedup/sql.js";
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

    /** The store, with the ids of every upsert it runs recorded. */
    const recording = (upserts: string[][], before?: (text: string) => Promise<void>) => {
      const query = (async (text: string, params?: unknown[]) => {
        await before?.(text);
        if (text.includes("ON CONFLICT (pixel_id, event_id) DO UPDATE"))
          upserts.push([...(params![1] as string[])]);
        return sql.query(text, params as never);
      }) as SqlStore["query"];
      return new Proxy(sql, {
        get: (target, prop) => (prop === "query" ? query : Reflect.get(target, prop)),
      });
    };

    const leased = async (ids: string[]) => {
      const { rows } = await sql.query<{ event_id: string; lease_token: string | null }>(
        "SELECT event_id, lease_token FROM dedup_ids WHERE pixel_id = $1 AND event_id = ANY($2::text[]) ORDER BY event_id",
        [pixel, ids],
      );
      return rows;
    };

    it("new ids take the plain INSERT; only ids already there go through the upsert", async () => {
      const upserts: string[][] = [];
      const dedup = new SqlDedupStore(recording(upserts), options);
      const first = await dedup.reserve(pixel, ["n1", "n2", "n3"]);
      expect(first.status).toEqual(["fresh", "fresh", "fresh"]);
      expect(first.lease.ids).toEqual(["n1", "n2", "n3"]);
      expect((await leased(["n1", "n2", "n3"])).map((r) => r.lease_token)).toEqual([
        first.lease.token,
        first.lease.token,
        first.lease.token,
      ]);
      expect(upserts).toEqual([]);

      const mixed = await dedup.reserve(pixel, ["n2", "m1"]);
      expect(mixed.status).toEqual(["inflight", "fresh"]);
      expect(mixed.lease.ids).toEqual(["m1"]);
      expect(upserts).toEqual([["n2"]]);

      await dedup.commit(first.lease);
      const again = await dedup.reserve(pixel, ["n1", "k1"]);
      expect(again.status).toEqual(["duplicate", "fresh"]);
      expect(upserts).toEqual([["n2"], ["n1"]]);
      expect((await leased(["k1", "m1"])).map((r) => r.lease_token)).toEqual([
        again.lease.token,
        mixed.lease.token,
      ]);
    });

    it("an id another writer takes just before the statement: the upsert decides it", async () => {
      const upserts: string[][] = [];
      let raced = false;
      const store = new SqlDedupStore(
        recording(upserts, async (text) => {
          if (raced || text !== INSERT_NEW_SQL) return;
          raced = true;
          await otherWritersLease("r2", store.owner);
        }),
        options,
      );

      const r = await store.reserve(pixel, ["r1", "r2"]);

      expect(raced).toBe(true);
      expect(r.status).toEqual(["fresh", "inflight"]);
      expect(r.lease.ids).toEqual(["r1"]);
      expect(upserts).toEqual([["r2"]]);
      expect((await leased(["r1", "r2"])).map((x) => `${x.event_id}:${x.lease_token}`)).toEqual([
        `r1:${r.lease.token}`,
        "r2:other-token",
      ]);
    });

    it.skipIf(adapter.name !== "postgres")(
      "a concurrent writer's uncommitted id: the plain INSERT waits, fails on the unique key, the upsert decides",
      async () => {
        const upserts: string[][] = [];
        const dedup = new SqlDedupStore(recording(upserts), options);
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
                   WHERE wait_event_type = 'Lock' AND query = $1 AND datname = current_database()`,
                  [INSERT_NEW_SQL],
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
        expect(upserts).toEqual([["w1", "w2"]]);
        expect((await leased(["w1", "w2"])).map((x) => `${x.event_id}:${x.lease_token}`)).toEqual([
          `w1:${r.lease.token}`,
          "w2:other-token",
        ]);
      },
    );
  });
}
