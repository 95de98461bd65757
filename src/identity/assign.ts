import { LRUCache } from "lru-cache";
import { ulidFactory } from "../shared/random.js";
import type { Alias, GraphChange, Sighting } from "./union.js";

/** What this process knows of one alias of a pixel. */
interface Remembered {
  /** The identity it last gave or learned for the alias. */
  id: string;
  /** The identity the worker filed the alias under (not merely assigned here); undefined until then. */
  filed: string | undefined;
}

/** Ids for a batch's groups of aliases, and which groups bring the graph nothing new. */
export interface Assignment {
  /** An id per group ('' for a group without aliases), index-aligned. */
  ids: string[];
  /**
   * Per group: every alias is already filed under the identity the group got. Such a group's
   * sighting need not be published: merges only ever join identities, so what was filed together
   * stays together.
   */
  known: boolean[];
  /**
   * Per group: its aliases not yet filed under the identity the group got (none when `known`; the
   * group itself when none is). Only these need publishing, with the id: the worker reaches that
   * identity through the id, so an alias already filed under it adds nothing.
   */
  news: (readonly Alias[])[];
}

/**
 * The write path's side of identity: an id for each event's or order's aliases, decided in memory
 * with no store round trip. It is the identity this process last knew for one of the aliases
 * (following merges it learned of), or a new ULID. Whatever it picks, the identity worker files the
 * sighting and links the id to the identity it belongs to, so a stored row resolves in one hop.
 * Aliases sharing a batch share an id, so a request that links identities stores them as one.
 *
 * One cache entry per alias holds both what was assigned and what was filed, and each alias's key is
 * built once per call: every event and order line goes through here on the main thread, and in an
 * import the cache lookups and their key strings were the largest single cost of that thread. In
 * each cache, aliases newly assigned can push out ones the worker filed; a group whose filed entry
 * is gone is only published again (the worker finds nothing new), never given a wrong id.
 *
 * A sighting carries only its group's aliases not yet filed under the group's id, so `learn` never
 * sees the others: when the filing merges that id away, their entries keep it and follow the merge
 * through `merged`; once that entry is forgotten too, their rows store the merged-away id, which its
 * `canonical` link still resolves in one hop.
 *
 * `order` aliases have a cache of their own. An order id is seen a few times at most (the order, its
 * purchase event, its updates), so in the one cache each order of an import took a place and pushed the
 * customers' email and store aliases out before the customer's next order — which then got a new
 * id, and the worker a `canonical` link to write (55,521 of a 300,000-order import's 641,621 links).
 * Apart, they still meet a purchase event sent shortly before or after its order.
 */
export class IdentityAssigner {
  private readonly aliases: LRUCache<string, Remembered>;
  private readonly orders: LRUCache<string, Remembered>;
  /** Identities merged away → their survivor, so remembered ids follow merges at once. */
  private readonly merged = new LRUCache<string, string>({ max: 100_000 });
  private readonly newId = ulidFactory();

  /** How many aliases each cache remembers: of people (identity, email, user, store, customer) and of orders. */
  constructor(sizes: { aliases?: number; orders?: number } = {}) {
    this.aliases = new LRUCache({ max: sizes.aliases ?? 200_000 });
    this.orders = new LRUCache({ max: sizes.orders ?? 50_000 });
  }

  private cacheOf(alias: Alias): LRUCache<string, Remembered> {
    return alias.type === "order" ? this.orders : this.aliases;
  }

  private current(pixelId: string, id: string): string {
    if (this.merged.size === 0) return id;
    let at = id;
    for (let hops = 0; hops < 16; hops++) {
      const next = this.merged.get(`${pixelId}\u0000${at}`);
      if (next === undefined) break;
      at = next;
    }
    return at;
  }

  /** An id per group of aliases ('' for a group without any), index-aligned; groups sharing an alias share the id. */
  assign(pixelId: string, groups: readonly (readonly Alias[])[]): string[] {
    return this.assignGroups(pixelId, groups).ids;
  }

  /** The ids of `assign`, and which groups are already filed under theirs. */
  assignGroups(pixelId: string, groups: readonly (readonly Alias[])[]): Assignment {
    const keys = groups.map((g) => g.map((a) => `${pixelId}\u0000${a.type}\u0000${a.value}`));
    // Components of groups linked by a shared alias (union-find over group indexes).
    const parent = groups.map((_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) {
        parent[i] = parent[parent[i]!]!;
        i = parent[i]!;
      }
      return i;
    };
    const firstGroupOf = new Map<string, number>();
    keys.forEach((ks, i) => {
      for (const k of ks) {
        const j = firstGroupOf.get(k);
        if (j === undefined) firstGroupOf.set(k, i);
        else parent[find(i)] = find(j);
      }
    });
    const entries = keys.map((ks, i) => ks.map((k, j) => this.cacheOf(groups[i]![j]!).get(k)));
    // Each remembered id followed through merges once per call: an entry's `filed` is usually its `id`.
    const followed = new Map<string, string>();
    const currentOf = (id: string): string => {
      let to = followed.get(id);
      if (to === undefined) {
        to = this.current(pixelId, id);
        followed.set(id, to);
      }
      return to;
    };
    const idOf = new Map<number, string>();
    entries.forEach((es, i) => {
      for (const e of es) {
        if (e === undefined) continue;
        const id = currentOf(e.id);
        const c = find(i);
        const had = idOf.get(c);
        // The earliest known id, as the worker will choose when it merges them.
        if (had === undefined || id < had) idOf.set(c, id);
      }
    });
    const ids = groups.map((g, i) => {
      if (g.length === 0) return "";
      const c = find(i);
      let id = idOf.get(c);
      if (id === undefined) {
        id = this.newId();
        idOf.set(c, id);
      }
      return id;
    });
    const news = entries.map((es, i) => {
      // The group itself unless one of its aliases is filed (an import's new customers: no copy).
      let out: Alias[] | null = null;
      for (let j = 0; j < es.length; j++) {
        const e = es[j];
        const filed = e?.filed !== undefined && currentOf(e.filed) === ids[i];
        if (filed && out === null) out = groups[i]!.slice(0, j);
        else if (!filed && out !== null) out.push(groups[i]![j]!);
      }
      return out ?? groups[i]!;
    });
    const known = news.map((n) => n.length === 0);
    keys.forEach((ks, i) => {
      const id = ids[i]!;
      ks.forEach((k, j) => {
        const e = entries[i]![j];
        if (e) e.id = id;
        // Other groups carrying the alias share this id (one component): the first one sets it.
        else if (firstGroupOf.get(k) === i) this.cacheOf(groups[i]![j]!).set(k, { id, filed: undefined });
      });
    });
    return { ids, known, news };
  }

  /** What the worker filed: later rows of these aliases get their identity directly. */
  learn(pixelId: string, sightings: readonly Sighting[], change: GraphChange): void {
    for (const [old, survivor] of change.merges) this.merged.set(`${pixelId}\u0000${old}`, survivor);
    for (const [id, root] of change.links) this.merged.set(`${pixelId}\u0000${id}`, root);
    sightings.forEach((s, i) => {
      const root = change.roots[i];
      if (!root) return;
      for (const a of s.aliases) {
        const k = `${pixelId}\u0000${a.type}\u0000${a.value}`;
        const cache = this.cacheOf(a);
        const e = cache.get(k);
        if (e) {
          e.id = root;
          e.filed = root;
        } else cache.set(k, { id: root, filed: root });
      }
    });
  }
}
