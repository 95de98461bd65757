/**
 * The identity graph's lookup probes the primary key once per alias, and the canonical_id index once
 * per id the rows were stored under, at any graph size and batch size, on a table the planner has no
 * statistics for (embedded Postgres runs no autovacuum).
 *
 * Worked example: pixel px holds 30,000 aliases (email e0…e29999, each of identity c0…c29999). A
 * sighting of e17 with a new id N1 finds e17's identity c17 and links N1 to it; a sighting of an
 * unknown email with N2 makes N2 an identity of its own; a sighting filed under c5 (e5's identity)
 * adds its email to c5. Before the lookup probed the key, the
 * planner read `pixel_id = 'px'` as a few rows and hashed all 30,000 aliases for every sighting; and
 * for a batch of thousands of ids (an import's 5,000 orders) it filtered all of them for the ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityGraph } from "../../src/identity/graph.js";
import { GRAPH_LOOKUP_SQL, SqlIdentityGraphStore } from "../../src/stores/identity/sql.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { applyEventsSchema } from "../helpers/bus.js";
import { explainNodes, type PlanNode } from "../helpers/plans.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

const ALIASES = 30_000;

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`identity alias lookup: ${adapter.name}`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      await applyEventsSchema(sql);
      await sql.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT 'px', 'email', 'e' || i, 'c' || i FROM generate_series(0, $1::int - 1) AS i`,
        [ALIASES],
      );
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
    });

    const planOf = (values: string[], ids: string[]) =>
      explainNodes(sql, GRAPH_LOOKUP_SQL, ["px", values.map(() => "email"), values, ids]);
    const expectProbes = (all: PlanNode[]) => {
      expect(all.some((n) => n["Node Type"].includes("Hash"))).toBe(false);
      const onAliases = all.filter((n) => n["Relation Name"] === "identity_aliases");
      // The aliases by the primary key; the ids that name an identity by the canonical_id index —
      // each a plain index probe, never a scan of the pixel's aliases.
      expect(onAliases.map((n) => n["Node Type"]).sort()).toStrictEqual(["Index Only Scan", "Index Scan"]);
      const indexes = all.map((n) => n["Index Name"]).filter((i) => i !== undefined);
      expect(indexes).toStrictEqual(["identity_aliases_pkey", "identity_aliases_canonical_idx"]);
    };

    it("probes the primary key per alias instead of reading the pixel's aliases", async () => {
      const values = Array.from({ length: 68 }, (_, i) => `e${i * 401}`);
      expectProbes(await planOf(values, ["c3", "N9"]));
    });

    it("probes the canonical_id index per id, also for an import's batch of thousands", async () => {
      const values = Array.from({ length: 15_000 }, (_, i) => `e${i * 2}`);
      const ids = Array.from({ length: 5_000 }, (_, i) => (i % 2 ? `c${i}` : `N${i}`));
      expectProbes(await planOf(values, ids));
    });

    it("finds known aliases and leaves unknown ones to new identities", async () => {
      const graph = new IdentityGraph(new SqlIdentityGraphStore(sql));
      const { links } = await graph.apply("px", [
        { aliases: [{ type: "email", value: "e17" }], assigned: "N1" },
        { aliases: [{ type: "email", value: "nobody@example.com" }], assigned: "N2" },
        // c5 is e5's identity: an id that already names one gets its canonical alias, no new identity.
        { aliases: [{ type: "email", value: "other@example.com" }], assigned: "c5" },
      ]);
      const to = Object.fromEntries(links.map((l) => [`${l.alias_type}:${l.alias_value}`, l.canonical_id]));
      expect(to["canonical:N1"]).toBe("c17");
      expect(to["email:nobody@example.com"]).toBe("N2");
      expect(to["email:e17"]).toBeUndefined();
      expect(to["email:other@example.com"]).toBe("c5");
    });
  });
}
