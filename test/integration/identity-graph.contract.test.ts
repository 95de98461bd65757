/**
 * The identity graph of record, the same on every adapter: Postgres `identity_aliases` (PGlite here,
 * a server when TEST_DATABASE_URL is set) and LevelDB (the embedded stores' graph, in this thread and
 * on its own thread as the service runs it), driven through IdentityGraph as the identity worker
 * drives it.
 *
 * Worked example (the merge below): A holds identity:a, B holds identity:b and email:e. A sighting of
 * identity:a with email:e, filed under A, finds two identities: B is merged into A (A < B), so
 * identity:b and email:e move to A and canonical:B → A is written — rows stored under B resolve to A
 * in one hop. A row later stored under B with a new alias x files x under A.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityGraph } from "../../src/identity/graph.js";
import type { Sighting } from "../../src/identity/union.js";
import { LevelIdentityGraphStore } from "../../src/stores/identity/level.js";
import { LevelThreadIdentityGraphStore } from "../../src/stores/identity/level-thread.js";
import type { AliasRow, IdentityGraphStore } from "../../src/stores/identity/port.js";
import { SqlIdentityGraphStore } from "../../src/stores/identity/sql.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { applyEventsSchema } from "../helpers/bus.js";
import { sqlAdapters, tempDir, uniqueName } from "../helpers/stores.js";

interface OpenedGraph {
  store: IdentityGraphStore;
  close(): Promise<void>;
}

/** LevelDB in this thread, and on a thread of its own (what the embedded stores run). */
const levelVariants: {
  name: string;
  open(dir: string, sql: SqlStore | null): Promise<IdentityGraphStore>;
}[] = [
  { name: "level", open: (dir, sql) => LevelIdentityGraphStore.open(dir, sql) },
  { name: "level on its own thread", open: async (dir, sql) => new LevelThreadIdentityGraphStore(dir, sql) },
];

const adapters: { name: string; available: boolean; open(): Promise<OpenedGraph> }[] = [
  ...sqlAdapters.map((a) => ({
    name: `sql: ${a.name}`,
    available: a.available,
    async open() {
      const opened = await a.open();
      await applyEventsSchema(opened.store);
      return { store: new SqlIdentityGraphStore(opened.store), close: () => opened.close() };
    },
  })),
  ...levelVariants.map((v) => ({
    name: v.name,
    available: true,
    async open() {
      const dir = tempDir("pixelhouse-identity-");
      const store = await v.open(dir.path, null);
      return {
        store,
        async close() {
          await store.close();
          dir.remove();
        },
      };
    },
  })),
];

const s = (assigned: string, ...aliases: [string, string][]): Sighting => ({
  assigned,
  aliases: aliases.map(([type, value]) => ({ type, value }) as Sighting["aliases"][number]),
});
const mapping = (rows: readonly AliasRow[]) =>
  Object.fromEntries(rows.map((r) => [`${r.type}:${r.value}`, r.canonical]));
const sorted = (rows: readonly AliasRow[]) =>
  [...rows].sort((a, b) => `${a.type}\u0000${a.value}`.localeCompare(`${b.type}\u0000${b.value}`));
const linked = (links: readonly { alias_type: string; alias_value: string; canonical_id: string }[]) =>
  Object.fromEntries(links.map((l) => [`${l.alias_type}:${l.alias_value}`, l.canonical_id]));

for (const adapter of adapters) {
  describe.skipIf(!adapter.available)(`identity graph contract: ${adapter.name}`, () => {
    let opened: OpenedGraph;
    let store: IdentityGraphStore;
    let graph: IdentityGraph;
    beforeAll(async () => {
      opened = await adapter.open();
      store = opened.store;
      graph = new IdentityGraph(store);
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("files first sightings under the assigned id, and filing them again changes nothing", async () => {
      const px = uniqueName("px");
      const first = await graph.apply(px, [s("A", ["identity", "a"], ["email", "e"])]);
      expect(linked(first.links)).toStrictEqual({ "identity:a": "A", "email:e": "A" });
      expect(mapping(await store.aliases(px))).toStrictEqual({ "identity:a": "A", "email:e": "A" });
      const again = await graph.apply(px, [s("A", ["identity", "a"], ["email", "e"])]);
      expect(again.links).toStrictEqual([]);
      expect(again.change.roots).toStrictEqual(["A"]);
    });

    it("merges into the smallest id, moving every alias, and resolves the merged id in one hop", async () => {
      const px = uniqueName("px");
      await graph.apply(px, [s("A", ["identity", "a"]), s("B", ["identity", "b"], ["email", "e"])]);
      const merge = await graph.apply(px, [s("A", ["identity", "a"], ["email", "e"])]);
      expect([...merge.change.merges]).toStrictEqual([["B", "A"]]);
      expect(linked(merge.links)).toStrictEqual({ "identity:b": "A", "email:e": "A", "canonical:B": "A" });
      expect(mapping(await store.aliases(px))).toStrictEqual({
        "identity:a": "A",
        "identity:b": "A",
        "email:e": "A",
        "canonical:B": "A",
      });
      // A row stored under B before the merge, with an alias never seen.
      const late = await graph.apply(px, [s("B", ["identity", "x"])]);
      expect(late.change.roots).toStrictEqual(["A"]);
      expect(linked(late.links)).toStrictEqual({ "identity:x": "A" });
      // B names no identity any more and has no members left; A holds all five.
      const named = await store.withPixel(px, (g) => g.lookup([], ["A", "B"]));
      expect([...named.named]).toStrictEqual(["A"]);
      const membersOf = (id: string) => store.withPixel(px, async (g) => sorted(await g.aliasesOf([id])));
      expect(await membersOf("B")).toStrictEqual([]);
      expect(await membersOf("A")).toStrictEqual(
        sorted([
          { type: "canonical", value: "B", canonical: "A" },
          { type: "email", value: "e", canonical: "A" },
          { type: "identity", value: "a", canonical: "A" },
          { type: "identity", value: "b", canonical: "A" },
          { type: "identity", value: "x", canonical: "A" },
        ]),
      );
    });

    it("links an id that is not an identity to the identity its aliases belong to", async () => {
      const px = uniqueName("px");
      await graph.apply(px, [s("A", ["email", "e"])]);
      const r = await graph.apply(px, [s("N", ["email", "e"])]);
      expect(linked(r.links)).toStrictEqual({ "canonical:N": "A" });
      // A later merge of A re-points the link too.
      await graph.apply(px, [s("0", ["identity", "z"])]);
      const m = await graph.apply(px, [s("0", ["identity", "z"], ["email", "e"])]);
      expect([...m.change.merges]).toStrictEqual([["A", "0"]]);
      expect(mapping(await store.aliases(px))).toMatchObject({ "canonical:N": "0", "canonical:A": "0" });
    });

    it("an id that already is an identity gets the new alias, with no link to itself", async () => {
      const px = uniqueName("px");
      await graph.apply(px, [s("C", ["identity", "c"])]);
      const r = await graph.apply(px, [s("C", ["email", "new"])]);
      expect(linked(r.links)).toStrictEqual({ "email:new": "C" });
    });

    it("in repair mode returns every alias of every identity the sightings touch", async () => {
      const px = uniqueName("px");
      await graph.apply(px, [s("A", ["identity", "a"], ["email", "e"]), s("B", ["identity", "b"])]);
      const r = await graph.apply(px, [s("A", ["identity", "a"])], { repair: true });
      expect(linked(r.links)).toStrictEqual({ "identity:a": "A", "email:e": "A" });
    });

    it("keeps pixels apart", async () => {
      const [p1, p2] = [uniqueName("px"), uniqueName("px")];
      await graph.apply(p1, [s("A", ["email", "e"])]);
      await graph.apply(p2, [s("Z", ["email", "e"])]);
      expect(mapping(await store.aliases(p1))).toStrictEqual({ "email:e": "A" });
      expect(mapping(await store.aliases(p2))).toStrictEqual({ "email:e": "Z" });
    });

    it("files concurrent sightings of one pixel one after the other: one identity, one hop", async () => {
      const px = uniqueName("px");
      await Promise.all([
        graph.apply(px, [s("B", ["identity", "b"], ["email", "shared"])]),
        graph.apply(px, [s("A", ["identity", "a"], ["email", "shared"])]),
      ]);
      const to = mapping(await store.aliases(px));
      const root = to["email:shared"];
      expect(root === "A" || root === "B").toBe(true);
      expect(to["identity:a"]).toBe(root);
      expect(to["identity:b"]).toBe(root);
      const other = root === "A" ? "B" : "A";
      // The id that lost names its identity through a link, when its rows exist.
      if (to[`canonical:${other}`] !== undefined) expect(to[`canonical:${other}`]).toBe(root);
      expect(Object.values(to).every((id) => id === root)).toBe(true);
    });

    it("a link moved to another identity leaves the first one named only while it has aliases", async () => {
      const px = uniqueName("px");
      await store.withPixel(px, (g) =>
        g.write({
          merges: new Map(),
          created: [
            { type: "canonical", value: "N", canonical: "X" },
            { type: "canonical", value: "M", canonical: "W" },
            { type: "email", value: "w", canonical: "W" },
          ],
          upserts: [],
        }),
      );
      const moved = await store.withPixel(px, (g) =>
        g.write({
          merges: new Map(),
          created: [],
          upserts: [
            { type: "canonical", value: "N", canonical: "Y" },
            { type: "canonical", value: "M", canonical: "Y" },
          ],
        }),
      );
      expect(moved).toStrictEqual([
        { type: "canonical", value: "N", canonical: "Y" },
        { type: "canonical", value: "M", canonical: "Y" },
      ]);
      const { named } = await store.withPixel(px, (g) => g.lookup([], ["X", "W", "Y"]));
      expect([...named].sort()).toStrictEqual(["W", "Y"]);
      const members = await store.withPixel(px, async (g) => sorted(await g.aliasesOf(["X", "Y"])));
      expect(members).toStrictEqual([
        { type: "canonical", value: "M", canonical: "Y" },
        { type: "canonical", value: "N", canonical: "Y" },
      ]);
    });

    it("write answers the aliases its merges moved, then the created ones, then the upserts, in order", async () => {
      // The order matters: the warehouse rows get increasing versions in it, so for an alias listed
      // twice the later row is the one kept.
      const px = uniqueName("px");
      await graph.apply(px, [s("B", ["email", "b1"], ["email", "b2"])]);
      const rows = await store.withPixel(px, (g) =>
        g.write({
          merges: new Map([["B", "A"]]),
          created: [{ type: "email", value: "new", canonical: "A" }],
          upserts: [
            { type: "canonical", value: "B", canonical: "A" },
            { type: "canonical", value: "Z", canonical: "A" },
          ],
        }),
      );
      expect(rows.map((r) => `${r.type}:${r.value}>${r.canonical}`)).toStrictEqual([
        "email:b1>A",
        "email:b2>A",
        "email:new>A",
        "canonical:B>A",
        "canonical:Z>A",
      ]);
      expect(mapping(await store.withPixel(px, (g) => g.aliasesOf(["A"])))).toStrictEqual({
        "email:b1": "A",
        "email:b2": "A",
        "email:new": "A",
        "canonical:B": "A",
        "canonical:Z": "A",
      });
    });

    it("an identity that gains an alias and loses it in the same write is not named", async () => {
      const px = uniqueName("px");
      await store.withPixel(px, (g) =>
        g.write({
          merges: new Map(),
          created: [{ type: "email", value: "e", canonical: "A" }],
          upserts: [],
        }),
      );
      await store.withPixel(px, (g) =>
        g.write({
          merges: new Map(),
          created: [{ type: "canonical", value: "Y", canonical: "X" }],
          upserts: [{ type: "canonical", value: "Y", canonical: "A" }],
        }),
      );
      const { named } = await store.withPixel(px, (g) => g.lookup([], ["X", "A"]));
      expect([...named]).toStrictEqual(["A"]);
      expect(await store.withPixel(px, (g) => g.aliasesOf(["X"]))).toStrictEqual([]);
    });
  });
}

for (const variant of levelVariants)
  describe(`identity graph in LevelDB: ${variant.name}`, () => {
    it("keeps aliases holding NUL and \\u0001 apart and whole, also in a pixel id", async () => {
      const dir = tempDir("pixelhouse-identity-");
      const store = await variant.open(dir.path, null);
      try {
        const graph = new IdentityGraph(store);
        await graph.apply("p", [s("A", ["user", "x\u0000y"], ["user", "x\u0001\u0000"])]);
        await graph.apply("p\u0001", [s("B", ["user", "x"])]);
        await graph.apply("p\u0000q", [s("C", ["user", "\u0001"])]);
        expect(mapping(await store.aliases("p"))).toStrictEqual({
          "user:x\u0000y": "A",
          "user:x\u0001\u0000": "A",
        });
        expect(mapping(await store.aliases("p\u0001"))).toStrictEqual({ "user:x": "B" });
        expect(mapping(await store.aliases("p\u0000q"))).toStrictEqual({ "user:\u0001": "C" });
        const again = await graph.apply("p", [s("Z", ["user", "x\u0000y"])]);
        expect(linked(again.links)).toStrictEqual({ "canonical:Z": "A" });
      } finally {
        await store.close();
        dir.remove();
      }
    });

    it("keeps the graph across a restart", async () => {
      const dir = tempDir("pixelhouse-identity-");
      let store = await variant.open(dir.path, null);
      try {
        await new IdentityGraph(store).apply("p", [s("A", ["email", "e"])]);
        await store.close();
        store = await variant.open(dir.path, null);
        const r = await new IdentityGraph(store).apply("p", [s("N", ["email", "e"])]);
        expect(linked(r.links)).toStrictEqual({ "canonical:N": "A" });
      } finally {
        await store.close();
        dir.remove();
      }
    });

    it("copies a data directory's aliases from the SQL store once, on first use, and empties the table", async () => {
      const dir = tempDir("pixelhouse-identity-");
      let sql: SqlStore | null = null;
      let store: IdentityGraphStore | null = null;
      try {
        sql = await PgliteSqlStore.open();
        await applyEventsSchema(sql);
        // More than one page of the copy (20,000 rows), over two pixels.
        await sql.query(
          `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT CASE WHEN i % 2 = 0 THEN 'p1' ELSE 'p2' END, 'email', 'e' || i, 'c' || (i / 3)
         FROM generate_series(0, 24999) AS i`,
        );
        store = await variant.open(dir.path, sql);
        const p1 = await store.aliases("p1");
        expect(p1).toHaveLength(12_500);
        expect(mapping(p1)["email:e300"]).toBe("c100");
        expect((await store.aliases("p2")).length).toBe(12_500);
        const { rows } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM identity_aliases");
        expect(Number(rows[0]!.n)).toBe(0);
        // The copied graph works as filed: e300's identity c100 takes the new row's id as a link.
        const r = await new IdentityGraph(store).apply("p1", [s("N", ["email", "e300"])]);
        expect(linked(r.links)).toStrictEqual({ "canonical:N": "c100" });
        const members = await store.withPixel("p1", (g) => g.aliasesOf(["c100"]));
        expect(mapping(members)).toStrictEqual({
          "email:e300": "c100",
          "email:e302": "c100",
          "canonical:N": "c100",
        });
        // Copied once: a row that appears in the table afterwards is not read.
        await store.close();
        await sql.query(
          "INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id) VALUES ('p1', 'email', 'late', 'L')",
        );
        store = await variant.open(dir.path, sql);
        expect(mapping(await store.aliases("p1"))["email:late"]).toBeUndefined();
      } finally {
        await store?.close();
        await sql?.close();
        dir.remove();
      }
    });
  });

describe("identity graph in LevelDB on its own thread", () => {
  it("starts its thread on first use, not when the stores open", async () => {
    const dir = tempDir("pixelhouse-identity-");
    const path = `${dir.path}/graph`;
    const store = new LevelThreadIdentityGraphStore(path, null);
    try {
      expect(existsSync(path)).toBe(false);
      await new IdentityGraph(store).apply("p", [s("A", ["email", "e"])]);
      expect(existsSync(path)).toBe(true);
      expect(mapping(await store.aliases("p"))).toStrictEqual({ "email:e": "A" });
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it("fails each call with the reason while LevelDB cannot be opened, and works once it can", async () => {
    const dir = tempDir("pixelhouse-identity-");
    // Another holder of the directory (LevelDB's lock): the thread cannot open it.
    const holder = await LevelIdentityGraphStore.open(dir.path, null);
    const store = new LevelThreadIdentityGraphStore(dir.path, null);
    try {
      await expect(store.ready()).rejects.toThrow(/cannot open .*lock/i);
      await expect(store.aliases("p")).rejects.toThrow(/cannot open .*lock/i);
      await expect(new IdentityGraph(store).apply("p", [s("A", ["email", "e"])])).rejects.toThrow(
        /cannot open/,
      );
      await holder.close();
      await new IdentityGraph(store).apply("p", [s("A", ["email", "e"])]);
      expect(mapping(await store.aliases("p"))).toStrictEqual({ "email:e": "A" });
    } finally {
      await holder.close().catch(() => {});
      await store.close();
      dir.remove();
    }
  });

  it("refuses calls once closed, with or without a thread started", async () => {
    const dir = tempDir("pixelhouse-identity-");
    const unused = new LevelThreadIdentityGraphStore(`${dir.path}/a`, null);
    const used = new LevelThreadIdentityGraphStore(`${dir.path}/b`, null);
    try {
      await unused.close();
      await expect(unused.aliases("p")).rejects.toThrow(/closed/);
      await new IdentityGraph(used).apply("p", [s("A", ["email", "e"])]);
      await used.close();
      await expect(used.aliases("p")).rejects.toThrow(/closed/);
      // Closed cleanly: the directory opens again with the filing in it.
      const again = await LevelIdentityGraphStore.open(`${dir.path}/b`, null);
      expect(mapping(await again.aliases("p"))).toStrictEqual({ "email:e": "A" });
      await again.close();
    } finally {
      dir.remove();
    }
  });

  it("a thread that dies fails the calls it held and is replaced by the next call", async () => {
    const dir = tempDir("pixelhouse-identity-");
    const store = new LevelThreadIdentityGraphStore(dir.path, null);
    try {
      await new IdentityGraph(store).apply("p", [s("A", ["email", "e"])]);
      // What an out-of-memory end of the thread looks like from here: the worker gone.
      const thread = (store as unknown as { current: { worker: { terminate(): Promise<number> } } }).current;
      await thread.worker.terminate();
      expect(mapping(await store.aliases("p"))).toStrictEqual({ "email:e": "A" });
      await new IdentityGraph(store).apply("p", [s("B", ["email", "f"])]);
      expect(mapping(await store.aliases("p"))).toStrictEqual({ "email:e": "A", "email:f": "B" });
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it("a copy from the SQL store cut short lets go of LevelDB, and the next use copies it whole", async () => {
    const dir = tempDir("pixelhouse-identity-");
    const sql = await PgliteSqlStore.open();
    let store: LevelThreadIdentityGraphStore | null = null;
    try {
      await applyEventsSchema(sql);
      await sql.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT 'p', 'email', 'e' || i, 'c' || (i / 3) FROM generate_series(0, 24999) AS i`,
      );
      // The second page's read fails once.
      let pages = 0;
      const flaky = new Proxy(sql, {
        get(target, key) {
          if (key === "query")
            return (text: string, params?: unknown[]) => {
              if (/FROM identity_aliases/.test(text) && /^\s*SELECT/.test(text) && ++pages === 2)
                return Promise.reject(new Error("connection lost"));
              return target.query(text, params as never);
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      store = new LevelThreadIdentityGraphStore(dir.path, flaky);
      await expect(store.aliases("p")).rejects.toThrow(/connection lost/);
      expect(await store.aliases("p")).toHaveLength(25_000);
      const { rows } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM identity_aliases");
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await store?.close();
      await sql.close();
      dir.remove();
    }
  });
});
