/**
 * Ids a write path made new for a message (`minted`) are not looked up in the graph when the message
 * is filed, and filing ends as it does when they are: the same identities and roots, and links that
 * say the same (without the lookup a link already in the graph may be written to the warehouse again).
 * Each case files the same history into two pixels, one with the ids looked up and one without.
 *
 * Worked example (case "filed first"): the write path makes X for order o1 with email e (message M1),
 * then reuses X for order o2 with the same email (message M2, X not minted there). M2 is filed first:
 * o2 → X, e → X. Then M1: its email e already names X, so o1 → X — with X looked up or not. Redelivered
 * (the first filing committed, its warehouse write lost), M1 ends the same again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityGraph } from "../../src/identity/graph.js";
import type { Sighting } from "../../src/identity/union.js";
import { mintedHere } from "../../src/identity/worker.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { applyEventsSchema } from "../helpers/bus.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

const order = (id: string) => ({ type: "order" as const, value: id });
const email = (v: string) => ({ type: "email" as const, value: v });

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`identity: minted ids not looked up (${adapter.name})`, () => {
    let opened: Opened<SqlStore>;
    let graph: IdentityGraph;
    let sql: SqlStore;
    let n = 0;
    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      await applyEventsSchema(sql);
      graph = new IdentityGraph(sql);
    });
    afterAll(async () => {
      await opened?.close();
    });

    /** Every alias of a pixel and its identity. */
    const aliases = async (pixelId: string) =>
      (
        await sql.query<{ k: string; c: string }>(
          "SELECT alias_type || ':' || alias_value AS k, canonical_id AS c FROM identity_aliases WHERE pixel_id = $1 ORDER BY 1",
          [pixelId],
        )
      ).rows;

    /** Each link row written agrees with the alias table at the end. */
    const agrees = (o: { links: string[][]; aliases: { k: string; c: string }[] }) => {
      const final = new Map(o.aliases.map((a) => [a.k, a.c]));
      for (const l of o.links.at(-1) ?? []) {
        const [k, c] = l.split(">");
        expect(final.get(k!)).toBe(c);
      }
    };
    const same = (
      probed: { roots: string[][]; links: string[][]; aliases: { k: string; c: string }[] },
      skipped: typeof probed,
    ) => {
      expect(skipped.roots).toStrictEqual(probed.roots);
      expect(skipped.aliases).toStrictEqual(probed.aliases);
      for (const [i, links] of probed.links.entries())
        for (const l of links) expect(skipped.links[i]).toContain(l);
      agrees(probed);
      agrees(skipped);
    };

    /** Files the steps into two fresh pixels, with and without minted lookups; returns both outcomes. */
    async function both(steps: { sightings: Sighting[]; minted: string[]; repair?: boolean }[]) {
      const out: { roots: string[][]; links: string[][]; aliases: { k: string; c: string }[] }[] = [];
      for (const useMinted of [false, true]) {
        const pixelId = `px-${++n}`;
        const roots: string[][] = [];
        const links: string[][] = [];
        for (const step of steps) {
          const r = await graph.apply(pixelId, step.sightings, {
            repair: step.repair,
            minted: useMinted ? new Set(step.minted) : new Set(),
          });
          roots.push(r.change.roots);
          links.push(r.links.map((l) => `${l.alias_type}:${l.alias_value}>${l.canonical_id}`).sort());
        }
        out.push({ roots, links, aliases: await aliases(pixelId) });
      }
      return { probed: out[0]!, skipped: out[1]! };
    }

    it("a new id: it becomes the identity either way", async () => {
      const { probed, skipped } = await both([
        { sightings: [{ aliases: [order("o1"), email("e")], assigned: "X" }], minted: ["X"] },
      ]);
      expect(skipped).toStrictEqual(probed);
      expect(skipped.aliases).toStrictEqual([
        { k: "email:e", c: "X" },
        { k: "order:o1", c: "X" },
      ]);
    });

    it("filed first by a message that reused it, then its own message, then that message again", async () => {
      const m1 = { sightings: [{ aliases: [order("o1"), email("e")], assigned: "X" }], minted: ["X"] };
      const m2 = { sightings: [{ aliases: [order("o2"), email("e")], assigned: "X" }], minted: [] };
      const { probed, skipped } = await both([m2, m1, { ...m1, repair: true }]);
      same(probed, skipped);
      expect(new Set(skipped.aliases.map((a) => a.c))).toStrictEqual(new Set(["X"]));
    });

    it("filed first and linked to an older identity, then merged on: the same identity either way", async () => {
      const steps = [
        // A is an identity of its own (email a).
        { sightings: [{ aliases: [email("a")], assigned: "A" }], minted: ["A"] },
        // X was reused for o2, which also carries email a: X is linked to A.
        { sightings: [{ aliases: [order("o2"), email("e"), email("a")], assigned: "X" }], minted: [] },
        // X's own message.
        { sightings: [{ aliases: [order("o1"), email("e")], assigned: "X" }], minted: ["X"] },
      ];
      const { probed, skipped } = await both(steps);
      same(probed, skipped);
      // Looked up, X's link is known and not written again; not looked up, it is re-stated as it is.
      expect(probed.links[2]).not.toContain("canonical:X>A");
      expect(skipped.links[2]).toContain("canonical:X>A");
      expect(new Set(skipped.aliases.map((a) => a.c))).toStrictEqual(new Set(["A"]));
      expect(skipped.aliases).toContainEqual({ k: "canonical:X", c: "A" });
    });

    it("a batch leaves out of the minted ids those another of its messages carries", () => {
      const msg = (minted: string[], assigned: string[]) => ({
        pixelId: "px",
        at: 0,
        minted,
        sightings: assigned.map((a) => ({ assigned: a, aliases: [email(a)] })),
      });
      expect(mintedHere([msg(["X", "Y"], ["X", "Y"]), msg([], ["X"]), msg(["Z"], ["Z", "Z"])])).toStrictEqual(
        new Set(["Y", "Z"]),
      );
    });
  });
}
