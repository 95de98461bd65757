import type { AliasRow, IdentityGraphStore } from "../stores/identity/port.js";
import { formatDateTime } from "../stores/warehouse/port.js";
import { canonicalKey, type GraphChange, type KnownGraph, resolveSightings, type Sighting } from "./union.js";

/** A row of the warehouse `identity_links` table. */
export interface IdentityLinkRow {
  pixel_id: string;
  alias_type: string;
  alias_value: string;
  canonical_id: string;
  first_seen: string;
  version: number;
}

let lastVersion = 0;
/** Strictly increasing per process, and ahead of wall-clock ms × 1000 so later writes win. */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

export interface Applied {
  change: GraphChange;
  /** Every alias whose identity was set or changed, for the warehouse. */
  links: IdentityLinkRow[];
}

/**
 * Files sightings into the identity graph of record (an IdentityGraphStore: Postgres on servers,
 * LevelDB embedded): alias → identity, and `canonical` aliases from every id merged away or linked
 * to the identity it belongs to now. Merges re-point every alias of the merged identity, so any id
 * ever stored on a row resolves in one hop.
 */
export class IdentityGraph {
  constructor(private readonly store: IdentityGraphStore) {}

  /** The graph of record opened now (see IdentityGraphStore.ready). */
  ready(): Promise<void> {
    return this.store.ready();
  }

  /**
   * Files a pixel's sightings into the graph, one writer per pixel at a time, and returns the links
   * that changed. With `repair` (a message delivered again: an earlier attempt may have committed
   * here and then failed to reach the warehouse) the links returned are every alias of every
   * identity the sightings touch, so whatever that attempt should have written is written now.
   */
  apply(
    pixelId: string,
    sightings: readonly Sighting[],
    options: { repair?: boolean } = {},
  ): Promise<Applied> {
    return this.store.withPixel(pixelId, async (graph) => {
      const { aliases, assigned } = asked(sightings);
      const { found, named } = await graph.lookup(aliases, assigned);
      const change = resolveSightings(sightings, known(found, named, assigned));
      const written = await graph.write({
        merges: change.merges,
        created: [...change.created.values()].map((c) => ({
          type: c.alias.type,
          value: c.alias.value,
          canonical: c.root,
        })),
        upserts: [
          ...[...change.merges].map(([old, survivor]) => ({
            type: "canonical",
            value: old,
            canonical: survivor,
          })),
          ...[...change.links].map(([id, root]) => ({ type: "canonical", value: id, canonical: root })),
        ],
      });
      if (options.repair) {
        const roots = [...new Set(change.roots.filter((r) => r !== ""))];
        written.push(...(await graph.aliasesOf(roots)));
      }
      return { change, links: linkRows(pixelId, written) };
    });
  }
}

/** Each alias and each `canonical` alias of an assigned id once; the assigned ids once. */
function asked(sightings: readonly Sighting[]) {
  const aliases: { type: string; value: string }[] = [];
  const seen = new Set<string>();
  const ask = (type: string, value: string) => {
    const k = `${type}\u0000${value}`;
    if (seen.has(k)) return;
    seen.add(k);
    aliases.push({ type, value });
  };
  const assigned = new Set<string>();
  for (const s of sightings) {
    for (const a of s.aliases) ask(a.type, a.value);
    if (s.assigned) {
      ask("canonical", s.assigned);
      assigned.add(s.assigned);
    }
  }
  return { aliases, assigned: [...assigned] };
}

function known(
  found: readonly AliasRow[],
  named: ReadonlySet<string>,
  assigned: readonly string[],
): KnownGraph {
  const rootOf = new Map<string, string>();
  for (const r of found) rootOf.set(`${r.type}\u0000${r.value}`, r.canonical);
  // Assigned ids with no `canonical` alias that already are an identity's id.
  const roots = new Set(assigned.filter((id) => !rootOf.has(canonicalKey(id)) && named.has(id)));
  return { rootOf, roots };
}

function linkRows(pixelId: string, rows: readonly AliasRow[]): IdentityLinkRow[] {
  const now = formatDateTime(new Date());
  return rows.map((r) => ({
    pixel_id: pixelId,
    alias_type: r.type,
    alias_value: r.value,
    canonical_id: r.canonical,
    first_seen: now,
    version: nextVersion(),
  }));
}
