/**
 * The SQL dedup store's reservation (src/stores/dedup/sql.ts): ids never seen are looked up and then
 * inserted plainly; anything else goes through the upsert. Worked example, pixel px:
 *   reserve n1, n2, n3 (all new)                       → fresh ×3, leased by this reservation
 *   reserve n2, m1 (n2 leased and uncommitted, m1 new) → inflight, fresh (the upsert)
 *   commit the first reservation, reserve n1, k1       → duplicate, fresh
 *   reserve r1, r2 while another writer inserts r2 between the lookup and the plain INSERT
 *     → the INSERT fails on the unique key as a whole (r1 not taken by it), the upsert runs:
 *       r1 fresh; r2 inflight (the other writer's lease, live) — never a duplicate, never taken twice.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqlDedupStore } from "../../src/stores/dedup/sql.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { sqlAdapters } from "../helpers/stores.js";

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`dedup reservation on ${adapter.name}`, () => {
    let sql: SqlStore;
    let close: () => Promise<void>;
    const options = { windowDays: 30, leaseSeconds: 60, ownerTtlSeconds: 10, exclusive: true };
    const pixel = `px-${Math.random().toString(36).slice(2, 8)}`;

    beforeAll(async () => {
      const opened = await adapter.open();
      sql = opened.store;
      close = opened.close;
      for (const m of readMigrations(join(SQL_DIR, "postgres"))) await sql.exec(m.sql);
    });
    afterAll(() => close?.());

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

    it("an id inserted by another writer between the lookup and the INSERT: the upsert decides", async () => {
      // Another live writer's lease on r2 lands right after this reservation's lookup.
      let raced = false;
      const racingQuery = (async (text: string, params?: unknown[]) => {
        const answer = await sql.query(text, params as never);
        if (!raced && text.includes("count(*)::int AS n FROM dedup_ids")) {
          raced = true;
          await sql.query(
            `INSERT INTO dedup_ids (pixel_id, event_id, first_seen, lease_until, lease_token, lease_owner, reclaimed)
             VALUES ($1, 'r2', now(), now() + interval '60 seconds', 'other-token', $2, false)`,
            [pixel, store.owner],
          );
        }
        return answer;
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
  });
}
