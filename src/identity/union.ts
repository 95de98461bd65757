export type AliasType = "identity" | "email" | "user" | "store" | "customer" | "order" | "canonical";
export interface Alias {
  type: AliasType;
  value: string;
}

export const aliasKey = (a: Alias): string => `${a.type}\u0000${a.value}`;
export const canonicalKey = (id: string): string => `canonical\u0000${id}`;

/** The aliases one event or order carried, and the identity id the write path stored on its row. */
export interface Sighting {
  aliases: readonly Alias[];
  /** Never '' when there are aliases: every stored row names an id the graph can resolve. */
  assigned: string;
}

/** What the graph holds now, for the aliases and assigned ids of the sightings at hand. */
export interface KnownGraph {
  /** Alias key → its identity now. `canonical` keys map an id merged away or linked to its root. */
  rootOf: ReadonlyMap<string, string>;
  /** Ids that are identities now (aliases point at them). */
  roots: ReadonlySet<string>;
}

export interface GraphChange {
  /** First sightings: alias key → the alias and its identity. */
  created: Map<string, { alias: Alias; root: string }>;
  /** Identities merged away → the survivor (final: never itself merged). */
  merges: Map<string, string>;
  /** Assigned ids that are not identities (yet) → the identity their rows belong to. */
  links: Map<string, string>;
  /** The identity of each sighting, index-aligned ('' for one without aliases). */
  roots: string[];
}

/**
 * Union-find over identities. A sighting's aliases, and the id its rows were stored under, belong to
 * one identity: the earliest (smallest ULID) of those they already map to, the others merged into
 * it; when none is known, the assigned id itself becomes the identity. An assigned id that is not an
 * identity is linked to its sighting's, so rows stored under it resolve in one hop.
 *
 * Worked example: known {identity:a → A, identity:b → B}, sighting {identity:b, email:e} assigned B,
 * then {identity:a, email:e} assigned A. The first files email:e under B; the second finds A (via a)
 * and B (via e), merges B into A (A < B): created {email:e → A}, merges {B → A}, roots [A, A].
 */
export function resolveSightings(sightings: readonly Sighting[], known: KnownGraph): GraphChange {
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let root = id;
    while (parent.has(root)) root = parent.get(root)!;
    // Path compression keeps later finds short.
    let at = id;
    while (at !== root) {
      const next = parent.get(at)!;
      parent.set(at, root);
      at = next;
    }
    return root;
  };
  const merged = new Set<string>();
  const union = (ids: readonly string[]): string => {
    const roots = [...new Set(ids.map(find))].sort();
    const survivor = roots[0]!;
    for (const other of roots.slice(1)) {
      parent.set(other, survivor);
      merged.add(other);
    }
    return survivor;
  };

  const created = new Map<string, { alias: Alias; root: string }>();
  const newRoots = new Set<string>();
  const links = new Map<string, string>();
  const sightingRoots: string[] = [];
  for (const s of sightings) {
    if (s.aliases.length === 0) {
      sightingRoots.push("");
      continue;
    }
    if (!s.assigned) throw new TypeError("a sighting with aliases needs the id its rows were stored under");
    const candidates: string[] = [];
    // Each alias's key once: an import files ~3 aliases for each of hundreds of thousands of orders.
    const keys = new Array<string | null>(s.aliases.length);
    for (let i = 0; i < s.aliases.length; i++) {
      const k = aliasKey(s.aliases[i]!);
      const r = known.rootOf.get(k);
      if (r !== undefined) {
        candidates.push(r);
        keys[i] = null; // filed already: nothing to create
        continue;
      }
      keys[i] = k;
      const c = created.get(k);
      if (c !== undefined) candidates.push(c.root);
    }
    const assignedRoot =
      known.rootOf.get(canonicalKey(s.assigned)) ??
      (known.roots.has(s.assigned) || newRoots.has(s.assigned) ? s.assigned : links.get(s.assigned));
    if (assignedRoot !== undefined) candidates.push(assignedRoot);
    let root: string;
    if (candidates.length === 0) {
      root = s.assigned;
      newRoots.add(root);
    } else {
      root = union(candidates);
      if (assignedRoot === undefined) links.set(s.assigned, root);
    }
    for (let i = 0; i < s.aliases.length; i++) {
      const k = keys[i];
      if (k !== null && k !== undefined && !created.has(k)) created.set(k, { alias: s.aliases[i]!, root });
    }
    sightingRoots.push(root);
  }

  for (const c of created.values()) c.root = find(c.root);
  const merges = new Map([...merged].map((old) => [old, find(old)] as const));
  for (const [id, root] of links) {
    const to = find(root);
    if (to === id || merges.has(id)) links.delete(id);
    else links.set(id, to);
  }
  return { created, merges, links, roots: sightingRoots.map((r) => (r ? find(r) : "")) };
}
