import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
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
 * What the graph holds for a batch, in one round trip: the identity of each alias ($2 types, $3
 * values) of pixel $1, then (alias columns null) which of the ids $4 already name an identity. Each
 * alias and each id is one index probe (the primary key; the canonical_id index), whatever the
 * planner believes of the table: embedded Postgres runs no autovacuum, so without statistics it took
 * `pixel_id = $1` for a few rows and read every alias of the pixel instead — for the aliases a hash
 * of them all (8.6 ms per batch at 21,000 aliases), for a batch of thousands of ids a scan filtering
 * them all (78 ms per 5,000 ids at 345,000 aliases): a cost growing with the graph. A LATERAL
 * subquery with a LIMIT cannot be flattened into such a join.
 */
export const GRAPH_LOOKUP_SQL = `SELECT x.t AS alias_type, x.v AS alias_value, a.canonical_id
FROM unnest($2::text[], $3::text[]) AS x(t, v)
CROSS JOIN LATERAL (
  SELECT canonical_id FROM identity_aliases
  WHERE pixel_id = $1 AND alias_type = x.t AND alias_value = x.v LIMIT 1
) AS a
UNION ALL
SELECT NULL, NULL, y.id
FROM unnest($4::text[]) AS y(id)
CROSS JOIN LATERAL (
  SELECT 1 FROM identity_aliases WHERE pixel_id = $1 AND canonical_id = y.id LIMIT 1
) AS n`;

/**
 * The identity graph of record (Postgres `identity_aliases`): alias → identity, and `canonical`
 * aliases from every id merged away or linked to the identity it belongs to now. Merges re-point
 * every alias of the merged identity, so any id ever stored on a row resolves in one hop.
 */
export class IdentityGraph {
  constructor(private readonly sql: SqlStore) {}

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
    return this.sql.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`identity:${pixelId}`]);
      const known = await this.load(tx, pixelId, sightings);
      const change = resolveSightings(sightings, known);
      const links = await this.store(tx, pixelId, change);
      if (options.repair) links.push(...(await this.identitiesOf(tx, pixelId, change)));
      return { change, links };
    });
  }

  /** Every alias (links included) of the identities the sightings ended in. */
  private async identitiesOf(
    tx: SqlExecutor,
    pixelId: string,
    change: GraphChange,
  ): Promise<IdentityLinkRow[]> {
    const roots = [...new Set(change.roots.filter((r) => r !== ""))];
    if (roots.length === 0) return [];
    const { rows } = await tx.query<{ alias_type: string; alias_value: string; canonical_id: string }>(
      `SELECT alias_type, alias_value, canonical_id FROM identity_aliases
       WHERE pixel_id = $1 AND canonical_id = ANY($2::text[])`,
      [pixelId, roots],
    );
    const now = formatDateTime(new Date());
    return rows.map((r) => ({
      pixel_id: pixelId,
      alias_type: r.alias_type,
      alias_value: r.alias_value,
      canonical_id: r.canonical_id,
      first_seen: now,
      version: nextVersion(),
    }));
  }

  private async load(tx: SqlExecutor, pixelId: string, sightings: readonly Sighting[]): Promise<KnownGraph> {
    const types: string[] = [];
    const values: string[] = [];
    const seen = new Set<string>();
    const ask = (type: string, value: string) => {
      const k = `${type}\u0000${value}`;
      if (seen.has(k)) return;
      seen.add(k);
      types.push(type);
      values.push(value);
    };
    const assigned = new Set<string>();
    for (const s of sightings) {
      for (const a of s.aliases) ask(a.type, a.value);
      if (s.assigned) {
        ask("canonical", s.assigned);
        assigned.add(s.assigned);
      }
    }
    const rootOf = new Map<string, string>();
    const named = new Set<string>();
    if (types.length) {
      const { rows } = await tx.query<{
        alias_type: string | null;
        alias_value: string | null;
        canonical_id: string;
      }>(GRAPH_LOOKUP_SQL, [pixelId, types, values, [...assigned]]);
      for (const r of rows) {
        if (r.alias_type === null) named.add(r.canonical_id);
        else rootOf.set(`${r.alias_type}\u0000${r.alias_value}`, r.canonical_id);
      }
    }
    // Assigned ids with no `canonical` alias that already are an identity's id.
    const roots = new Set([...assigned].filter((id) => !rootOf.has(canonicalKey(id)) && named.has(id)));
    return { rootOf, roots };
  }

  private async store(tx: SqlExecutor, pixelId: string, change: GraphChange): Promise<IdentityLinkRow[]> {
    const links: IdentityLinkRow[] = [];
    const now = formatDateTime(new Date());
    const link = (type: string, value: string, to: string) =>
      links.push({
        pixel_id: pixelId,
        alias_type: type,
        alias_value: value,
        canonical_id: to,
        first_seen: now,
        version: nextVersion(),
      });
    // Existing identities merged away first: their aliases (and links to them) move to the survivor.
    for (const [old, survivor] of change.merges) {
      const { rows } = await tx.query<{ alias_type: string; alias_value: string }>(
        `UPDATE identity_aliases SET canonical_id = $3 WHERE pixel_id = $1 AND canonical_id = $2
         RETURNING alias_type, alias_value`,
        [pixelId, old, survivor],
      );
      for (const r of rows) link(r.alias_type, r.alias_value, survivor);
    }
    // Aliases the lookup did not find are new: nobody else writes this pixel's aliases while the
    // advisory lock is held, so they go in with a plain INSERT (a third cheaper than an upsert, which
    // probes the key once more per row). Links may already exist and are upserted.
    const created = [...change.created.values()];
    if (created.length) {
      await tx.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT $1, t, v, c FROM unnest($2::text[], $3::text[], $4::text[]) AS x(t, v, c)`,
        [
          pixelId,
          created.map((c) => c.alias.type),
          created.map((c) => c.alias.value),
          created.map((c) => c.root),
        ],
      );
      for (const c of created) link(c.alias.type, c.alias.value, c.root);
    }
    const entries: { type: string; value: string; to: string }[] = [];
    for (const [old, survivor] of change.merges)
      entries.push({ type: "canonical", value: old, to: survivor });
    for (const [id, root] of change.links) entries.push({ type: "canonical", value: id, to: root });
    if (entries.length) {
      await tx.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT $1, t, v, c FROM unnest($2::text[], $3::text[], $4::text[]) AS x(t, v, c)
         ON CONFLICT (pixel_id, alias_type, alias_value) DO UPDATE SET canonical_id = excluded.canonical_id`,
        [pixelId, entries.map((e) => e.type), entries.map((e) => e.value), entries.map((e) => e.to)],
      );
      for (const e of entries) link(e.type, e.value, e.to);
    }
    return links;
  }
}
