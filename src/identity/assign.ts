import { LRUCache } from "lru-cache";
import { monotonicFactory } from "ulid";
import { randomFraction } from "../shared/random.js";
import { type Alias, aliasKey, type GraphChange, type Sighting } from "./union.js";

/**
 * The write path's side of identity: an id for each event's or order's aliases, decided in memory
 * with no store round trip. It is the identity this process last knew for one of the aliases
 * (following merges it learned of), or a new ULID. Whatever it picks, the identity worker files the
 * sighting and links the id to the identity it belongs to, so a stored row resolves in one hop.
 * Aliases sharing a batch share an id, so a request that links identities stores them as one.
 */
export class IdentityAssigner {
  private readonly ids = new LRUCache<string, string>({ max: 200_000 });
  /** Alias → identity as the worker filed it (not as this process merely assigned it). */
  private readonly filed = new LRUCache<string, string>({ max: 200_000 });
  /** Identities merged away → their survivor, so remembered ids follow merges at once. */
  private readonly merged = new LRUCache<string, string>({ max: 100_000 });
  private readonly newId = monotonicFactory(randomFraction);

  private current(pixelId: string, id: string): string {
    let at = id;
    for (let hops = 0; hops < 16; hops++) {
      const next = this.merged.get(`${pixelId}\u0000${at}`);
      if (next === undefined) break;
      at = next;
    }
    return at;
  }

  private remembered(pixelId: string, a: Alias): string | undefined {
    const id = this.ids.get(`${pixelId}\u0000${aliasKey(a)}`);
    return id === undefined ? undefined : this.current(pixelId, id);
  }

  /**
   * A group whose aliases the worker has all filed under one identity, stored under that identity,
   * brings the graph nothing new: its sighting need not be published. Merges only ever join
   * identities, so what was filed together stays together.
   */
  known(pixelId: string, group: readonly Alias[], id: string): boolean {
    if (group.length === 0) return true;
    for (const a of group) {
      const root = this.filed.get(`${pixelId}\u0000${aliasKey(a)}`);
      if (root === undefined || this.current(pixelId, root) !== id) return false;
    }
    return true;
  }

  /** An id per group of aliases ('' for a group without any), index-aligned; groups sharing an alias share the id. */
  assign(pixelId: string, groups: readonly (readonly Alias[])[]): string[] {
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
    groups.forEach((g, i) => {
      for (const a of g) {
        const k = aliasKey(a);
        const j = firstGroupOf.get(k);
        if (j === undefined) firstGroupOf.set(k, i);
        else parent[find(i)] = find(j);
      }
    });
    const idOf = new Map<number, string>();
    groups.forEach((g, i) => {
      for (const a of g) {
        const id = this.remembered(pixelId, a);
        if (id === undefined) continue;
        const c = find(i);
        const had = idOf.get(c);
        // The earliest known id, as the worker will choose when it merges them.
        if (had === undefined || id < had) idOf.set(c, id);
      }
    });
    const out = groups.map((g, i) => {
      if (g.length === 0) return "";
      const c = find(i);
      let id = idOf.get(c);
      if (id === undefined) {
        id = this.newId();
        idOf.set(c, id);
      }
      return id;
    });
    groups.forEach((g, i) => {
      for (const a of g) this.ids.set(`${pixelId}\u0000${aliasKey(a)}`, out[i]!);
    });
    return out;
  }

  /** What the worker filed: later rows of these aliases get their identity directly. */
  learn(pixelId: string, sightings: readonly Sighting[], change: GraphChange): void {
    for (const [old, survivor] of change.merges) this.merged.set(`${pixelId}\u0000${old}`, survivor);
    for (const [id, root] of change.links) this.merged.set(`${pixelId}\u0000${id}`, root);
    sightings.forEach((s, i) => {
      const root = change.roots[i];
      if (!root) return;
      for (const a of s.aliases) {
        const k = `${pixelId}\u0000${aliasKey(a)}`;
        this.ids.set(k, root);
        this.filed.set(k, root);
      }
    });
  }
}
