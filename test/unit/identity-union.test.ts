/**
 * The identity union-find as a pure function (src/identity/union.ts) and the write path's in-memory
 * assignment (src/identity/assign.ts).
 *
 * Worked example (the first test): known {identity:a → A, identity:b → B}; sightings
 * {identity:b, email:e} stored under B, then {identity:a, email:e} stored under A. The first files
 * email:e under B; the second finds A (via a) and B (via e) and merges B into A, the earlier id:
 * created {email:e → A}, merges {B → A}, no links, roots [A, A].
 */
import { describe, expect, it } from "vitest";
import { IdentityAssigner } from "../../src/identity/assign.js";
import { parseSightings, sightingsPayload } from "../../src/identity/messages.js";
import {
  type Alias,
  aliasKey,
  canonicalKey,
  type KnownGraph,
  resolveSightings,
  type Sighting,
} from "../../src/identity/union.js";

const id = (v: string): Alias => ({ type: "identity", value: v });
const email = (v: string): Alias => ({ type: "email", value: v });
const known = (rootOf: Record<string, string> = {}, roots: string[] = []): KnownGraph => ({
  rootOf: new Map(Object.entries(rootOf)),
  roots: new Set(roots),
});

describe("resolveSightings", () => {
  it("merges two known identities into the earlier one when a sighting links them", () => {
    const graph = known({ [aliasKey(id("a"))]: "A", [aliasKey(id("b"))]: "B" }, ["A", "B"]);
    const change = resolveSightings(
      [
        { aliases: [id("b"), email("e")], assigned: "B" },
        { aliases: [id("a"), email("e")], assigned: "A" },
      ],
      graph,
    );
    expect([...change.created]).toEqual([[aliasKey(email("e")), { alias: email("e"), root: "A" }]]);
    expect([...change.merges]).toEqual([["B", "A"]]);
    expect([...change.links]).toEqual([]);
    expect(change.roots).toEqual(["A", "A"]);
  });

  it("a sighting of new aliases becomes the identity it was stored under", () => {
    const change = resolveSightings([{ aliases: [id("n"), email("m")], assigned: "N" }], known());
    expect(change.roots).toEqual(["N"]);
    expect([...change.created.values()].map((c) => c.root)).toEqual(["N", "N"]);
    expect(change.merges.size + change.links.size).toBe(0);
  });

  it("an id stored for known aliases that is not an identity is linked to theirs", () => {
    const change = resolveSightings(
      [{ aliases: [email("e")], assigned: "X" }],
      known({ [aliasKey(email("e"))]: "A" }, ["A"]),
    );
    expect(change.roots).toEqual(["A"]);
    expect([...change.links]).toEqual([["X", "A"]]);
  });

  it("an id already linked counts as its identity: no new link, and it joins that identity", () => {
    const change = resolveSightings(
      [{ aliases: [id("z")], assigned: "X" }],
      known({ [canonicalKey("X")]: "A", [aliasKey(id("z"))]: "Z" }, ["A", "Z"]),
    );
    expect(change.roots).toEqual(["A"]);
    expect([...change.merges]).toEqual([["Z", "A"]]);
    expect(change.links.size).toBe(0);
  });

  it("an id used twice in one batch ties both sightings together", () => {
    const change = resolveSightings(
      [
        { aliases: [email("e")], assigned: "X" },
        { aliases: [email("f")], assigned: "X" },
      ],
      known({ [aliasKey(email("e"))]: "A", [aliasKey(email("f"))]: "B" }, ["A", "B"]),
    );
    expect(change.roots).toEqual(["A", "A"]);
    expect([...change.merges]).toEqual([["B", "A"]]);
    expect([...change.links]).toEqual([["X", "A"]]);
  });

  it("chains resolve to the final survivor in one hop, and a sighting without aliases has none", () => {
    const change = resolveSightings(
      [
        { aliases: [id("c")], assigned: "C" },
        { aliases: [id("c"), id("b")], assigned: "C" },
        { aliases: [], assigned: "" },
        { aliases: [id("b"), id("a")], assigned: "B" },
      ],
      known({ [aliasKey(id("a"))]: "A", [aliasKey(id("b"))]: "B" }, ["A", "B"]),
    );
    expect(change.roots).toEqual(["A", "A", "", "A"]);
    expect(Object.fromEntries(change.merges)).toEqual({ B: "A", C: "A" });
    expect(change.created.get(aliasKey(id("c")))?.root).toBe("A");
  });

  it("refuses a sighting with aliases but no id", () => {
    expect(() => resolveSightings([{ aliases: [id("a")], assigned: "" }], known())).toThrow(/stored under/);
  });

  // Property: filing random sightings batch by batch gives the partition of a plain graph search
  // over aliases and stored ids, and every stored id resolves to its component's identity in one hop.
  it("matches connected components for random batches, with every stored id one hop from its identity", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const graph = new Map<string, string>(); // alias key or canonical key → identity
      const roots = new Set<string>();
      const all: Sighting[] = [];
      let next = 0;
      for (let batch = 0; batch < 4; batch++) {
        const sightings: Sighting[] = [];
        for (let i = 0; i < 1 + rand(6); i++) {
          const aliases = Array.from({ length: 1 + rand(3) }, () =>
            rand(2) ? id(`v${rand(12)}`) : email(`e${rand(8)}`),
          );
          // The write path stores either a fresh id or one it remembers for an alias of the sighting.
          const remembered = aliases.map((a) => graph.get(aliasKey(a))).find((x) => x !== undefined);
          const assigned = remembered && rand(2) ? remembered : `N${String(next++).padStart(4, "0")}`;
          sightings.push({ aliases, assigned });
        }
        const change = resolveSightings(sightings, { rootOf: graph, roots });
        // Apply like IdentityGraph does.
        for (const [old, survivor] of change.merges) {
          for (const [k, v] of graph) if (v === old) graph.set(k, survivor);
          roots.delete(old);
          graph.set(canonicalKey(old), survivor);
        }
        for (const [k, c] of change.created) {
          graph.set(k, c.root);
          roots.add(c.root);
        }
        for (const [x, r] of change.links) graph.set(canonicalKey(x), r);
        all.push(...sightings);
      }
      // Reference: components over alias keys and stored ids.
      const adj = new Map<string, Set<string>>();
      const edge = (a: string, b: string) => {
        adj.set(a, (adj.get(a) ?? new Set()).add(b));
        adj.set(b, (adj.get(b) ?? new Set()).add(a));
      };
      for (const s of all) for (const a of s.aliases) edge(`#${s.assigned}`, aliasKey(a));
      const comp = new Map<string, number>();
      let n = 0;
      for (const start of adj.keys()) {
        if (comp.has(start)) continue;
        const stack = [start];
        comp.set(start, n);
        while (stack.length) {
          for (const m of adj.get(stack.pop()!)!) {
            if (comp.has(m)) continue;
            comp.set(m, n);
            stack.push(m);
          }
        }
        n++;
      }
      const resolve = (storedId: string) => graph.get(canonicalKey(storedId)) ?? storedId;
      const identityOfComp = new Map<number, string>();
      for (const s of all) {
        const c = comp.get(`#${s.assigned}`)!;
        const r = resolve(s.assigned);
        expect(roots.has(r), `round ${round}: ${s.assigned} → ${r} is an identity`).toBe(true);
        if (!identityOfComp.has(c)) identityOfComp.set(c, r);
        expect(r, `round ${round}: one identity per component`).toBe(identityOfComp.get(c));
        for (const a of s.aliases) expect(graph.get(aliasKey(a))).toBe(r);
      }
      expect(new Set(identityOfComp.values()).size, `round ${round}: components stay apart`).toBe(
        identityOfComp.size,
      );
    }
  });
});

describe("IdentityAssigner", () => {
  it("one id per group, shared by groups linked through an alias; none for a group without aliases", () => {
    const a = new IdentityAssigner();
    const ids = a.assign("px", [[id("a")], [id("b")], [id("a"), email("e")], [], [email("e")]]);
    expect(ids[3]).toBe("");
    expect(ids[0]).toBe(ids[2]);
    expect(ids[2]).toBe(ids[4]);
    expect(ids[1]).not.toBe(ids[0]);
    // Remembered for the next batch, per pixel.
    expect(a.assign("px", [[email("e")]])).toEqual([ids[0]]);
    expect(a.assign("other", [[email("e")]])[0]).not.toBe(ids[0]);
  });

  it("follows what the worker filed: merges, links and each alias's identity", () => {
    const a = new IdentityAssigner();
    const [x] = a.assign("px", [[id("x")]]);
    const [y] = a.assign("px", [[id("y")]]);
    const sightings: Sighting[] = [{ aliases: [id("x"), id("y")], assigned: x! }];
    a.learn("px", sightings, {
      created: new Map(),
      merges: new Map([[y!, x!]]),
      links: new Map(),
      roots: [x!],
    });
    expect(a.assign("px", [[id("y")]])).toEqual([x]);
  });

  it("a group is known once the worker filed all its aliases under the id it gets, following merges", () => {
    const a = new IdentityAssigner();
    const [earlier] = a.assign("px", [[id("e")]]);
    const first = a.assignGroups("px", [[id("k"), email("k@x")], [id("k")], []]);
    // Assigned, not filed yet: both groups are news; a group without aliases brings nothing.
    expect(first.known).toEqual([false, false, true]);
    expect(first.ids[1]).toBe(first.ids[0]);
    const k = first.ids[0]!;
    expect(earlier! < k).toBe(true);
    a.learn("px", [{ aliases: [id("k"), email("k@x")], assigned: k }], {
      created: new Map(),
      merges: new Map(),
      links: new Map(),
      roots: [k],
    });
    expect(a.assignGroups("px", [[id("k")], [email("k@x"), id("k")], [id("k"), id("new")]])).toEqual({
      ids: [k, k, k],
      known: [true, true, false],
      news: [[], [], [id("new")]],
    });
    // k merged into the earlier identity: email:k@x, filed under k, follows it and stays known.
    a.learn("px", [{ aliases: [id("e"), id("k")], assigned: earlier! }], {
      created: new Map(),
      merges: new Map([[k, earlier!]]),
      links: new Map(),
      roots: [earlier!],
    });
    expect(a.assignGroups("px", [[email("k@x")], [id("e")]])).toEqual({
      ids: [earlier, earlier],
      known: [true, true],
      news: [[], []],
    });
    // Per pixel: the same alias elsewhere is news.
    expect(a.assignGroups("other", [[id("k")]]).known).toEqual([false]);
    // Assigned before but never filed: still news.
    const [z] = a.assign("px", [[id("z")]]);
    expect(a.assignGroups("px", [[id("z")]])).toEqual({ ids: [z], known: [false], news: [[id("z")]] });
  });

  it("every alias of a group remembers the group's id, also an alias that had another id", () => {
    const a = new IdentityAssigner();
    const [p] = a.assign("px", [[id("p")]]);
    const [q] = a.assign("px", [[id("q")]]);
    expect(a.assign("px", [[id("q"), id("p")]])).toEqual([p]);
    // q now goes with p's id (as the worker will merge them), not its own earlier one.
    expect(a.assign("px", [[id("q")]])).toEqual([p]);
    expect(q).not.toBe(p);
  });

  it("order aliases have a cache of their own: orders never push a customer's aliases out", () => {
    const a = new IdentityAssigner({ aliases: 4, orders: 2 });
    const order = (v: string): Alias => ({ type: "order", value: v });
    const [customer] = a.assign("px", [[order("o-1"), email("c@x")]]);
    // More orders than either cache holds, of other customers.
    for (let n = 2; n <= 6; n++) a.assign("px", [[order(`o-${n}`)]]);
    expect(a.assign("px", [[email("c@x")]])).toEqual([customer]);
    // The oldest orders are forgotten (a new id; the worker links it when it files the order), the
    // latest remembered, so a purchase event sent just after its order gets the order's id.
    expect(a.assign("px", [[order("o-1")]])).not.toEqual([customer]);
    const [sixth] = a.assign("px", [[order("o-6")]]);
    expect(a.assign("px", [[id("anon"), order("o-6")]])).toEqual([sixth]);
  });

  it("news: a group's aliases not yet filed under its id, the group itself when none is", () => {
    const a = new IdentityAssigner();
    const order = (v: string): Alias => ({ type: "order", value: v });
    const [c] = a.assign("px", [[email("c@x"), id("anon")]]);
    a.learn("px", [{ aliases: [email("c@x"), id("anon")], assigned: c! }], {
      created: new Map(),
      merges: new Map(),
      links: new Map(),
      roots: [c!],
    });
    const [d] = a.assign("px", [[email("d@x")]]);
    const r = a.assignGroups("px", [
      // A returning customer's order: only the order id is news.
      [order("o-1"), email("c@x"), id("anon")],
      [email("c@x")],
      [order("o-2"), email("new@x")],
      // d@x is assigned, not filed: news, and so is the other alias its group joins.
      [email("d@x"), id("anon-d")],
      [],
    ]);
    expect(r.ids).toEqual([c, c, expect.any(String), d, ""]);
    expect(r.news).toEqual([
      [order("o-1")],
      [],
      [order("o-2"), email("new@x")],
      [email("d@x"), id("anon-d")],
      [],
    ]);
    expect(r.known).toEqual([false, true, false, false, true]);
  });

  it("two remembered ids in one group: the earlier wins, as the worker will merge them", () => {
    const a = new IdentityAssigner();
    const [first] = a.assign("px", [[id("p")]]);
    const [second] = a.assign("px", [[id("q")]]);
    expect(first! < second!).toBe(true);
    expect(a.assign("px", [[id("q"), id("p")]])).toEqual([first]);
  });
});

describe("sightingsPayload", () => {
  it("sends identical sightings once, keeps different ones under one id, and skips groups without aliases", () => {
    const p = sightingsPayload(
      "px",
      [[id("a"), email("e")], [id("a"), email("e")], [id("a")], [], [id("b")], [id("a"), email("e")]],
      ["A", "A", "A", "", "B", "A"],
    );
    expect(p?.pixelId).toBe("px");
    expect(p?.sightings).toEqual([
      ["A", "identity", "a", "email", "e"],
      ["A", "identity", "a"],
      ["B", "identity", "b"],
    ]);
    expect(sightingsPayload("px", [[], []], ["", ""])).toBeNull();
  });

  it("reads back what it sends", () => {
    const p = sightingsPayload("px", [[id("a"), email("e")], [id("b")]], ["A", "B"]);
    expect(parseSightings(p)?.sightings).toEqual([
      { assigned: "A", aliases: [id("a"), email("e")] },
      { assigned: "B", aliases: [id("b")] },
    ]);
  });
});
