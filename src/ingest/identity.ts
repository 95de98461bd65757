import { LRUCache } from "lru-cache";
import { monotonicFactory } from "ulid";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import { formatDateTime } from "../stores/warehouse/port.js";

export type AliasType = "identity" | "email" | "user" | "store" | "customer" | "order" | "canonical";
export interface Alias {
  type: AliasType;
  value: string;
}

/** A row of the warehouse `identity_links` table. */
export interface IdentityLinkRow {
  pixel_id: string;
  alias_type: string;
  alias_value: string;
  canonical_id: string;
  first_seen: string;
  version: number;
}

const keyOf = (a: Alias) => `${a.type}\u0000${a.value}`;

let lastVersion = 0;
/** Strictly increasing per process, and ahead of wall-clock ms × 1000 so later writes win. */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/**
 * The identity graph. Every alias of a pixel points at one canonical identity (a ULID, so the
 * smallest is the earliest seen). An event naming aliases of several identities merges them into the
 * earliest; the merged roots become `canonical` aliases of the survivor, and every warehouse row that
 * changed is re-emitted with a higher version, so queries resolve an old canonical id in one hop.
 * The Postgres index is authoritative; a short-lived cache serves repeat visitors without a query.
 */
export class IdentityResolver {
  private readonly cache = new LRUCache<string, string>({ max: 200_000, ttl: 5 * 60_000 });
  /** Roots merged away (in this process) → their survivor, so cached aliases follow merges at once. */
  private readonly merged = new LRUCache<string, string>({ max: 50_000 });
  private readonly newId = monotonicFactory();

  private cached(pixelId: string, key: string): string | undefined {
    let root = this.cache.get(`${pixelId}\u0000${key}`);
    for (let hops = 0; root !== undefined && hops < 16; hops++) {
      const next = this.merged.get(`${pixelId}\u0000${root}`);
      if (next === undefined) break;
      root = next;
    }
    return root;
  }

  constructor(private readonly sql: SqlStore) {}

  /** Canonical identity per group ('' for a group without aliases) and the link rows to write. */
  async resolve(
    pixelId: string,
    groups: readonly Alias[][],
  ): Promise<{ canonical: string[]; links: IdentityLinkRow[] }> {
    const cached = this.fromCache(pixelId, groups);
    if (cached) return { canonical: cached, links: [] };
    return this.sql.transaction(async (tx) => {
      // One resolver at a time per pixel: merges and first sightings are decided without races.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`identity:${pixelId}`]);
      return this.resolveLocked(tx, pixelId, groups);
    });
  }

  private fromCache(pixelId: string, groups: readonly Alias[][]): string[] | null {
    const out: string[] = [];
    for (const group of groups) {
      let root: string | undefined;
      for (const alias of group) {
        const hit = this.cached(pixelId, keyOf(alias));
        if (hit === undefined || (root !== undefined && hit !== root)) return null;
        root = hit;
      }
      out.push(root ?? "");
    }
    return out;
  }

  private async resolveLocked(tx: SqlExecutor, pixelId: string, groups: readonly Alias[][]) {
    const distinct = new Map<string, Alias>();
    for (const g of groups) for (const a of g) distinct.set(keyOf(a), a);
    // Cached aliases need no query; a stale entry (its identity merged since) still resolves in one hop.
    const known = new Map<string, string>();
    const misses: Alias[] = [];
    for (const [k, a] of distinct) {
      const hit = this.cached(pixelId, k);
      if (hit === undefined) misses.push(a);
      else known.set(k, hit);
    }
    // Another process may have merged a cached root away: follow its `canonical` alias (always one
    // hop, merges re-point every alias) so nothing new is filed under a root that no longer is one.
    const cachedRoots = [...new Set(known.values())];
    if (cachedRoots.length) {
      const { rows } = await tx.query<{ alias_value: string; canonical_id: string }>(
        `SELECT alias_value, canonical_id FROM identity_aliases
         WHERE pixel_id = $1 AND alias_type = 'canonical' AND alias_value = ANY($2::text[])`,
        [pixelId, cachedRoots],
      );
      const moved = new Map(rows.map((r) => [r.alias_value, r.canonical_id]));
      for (const [k, root] of known) {
        const to = moved.get(root);
        if (to !== undefined) known.set(k, to);
      }
      for (const [from, to] of moved) this.merged.set(`${pixelId}\u0000${from}`, to);
    }
    if (misses.length) {
      const list = misses;
      const { rows } = await tx.query<{ alias_type: string; alias_value: string; canonical_id: string }>(
        `SELECT alias_type, alias_value, canonical_id FROM identity_aliases
         WHERE pixel_id = $1 AND (alias_type, alias_value) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
        [pixelId, list.map((a) => a.type), list.map((a) => a.value)],
      );
      for (const r of rows) known.set(`${r.alias_type}\u0000${r.alias_value}`, r.canonical_id);
    }

    const created = new Map<string, string>(); // alias key → canonical, first sightings
    const merges = new Map<string, string>(); // old root → surviving root
    const rootOf = (id: string): string => {
      let r = id;
      while (merges.has(r)) r = merges.get(r)!;
      return r;
    };
    const canonical: string[] = [];
    for (const group of groups) {
      if (group.length === 0) {
        canonical.push("");
        continue;
      }
      const roots = new Set<string>();
      for (const a of group) {
        const c = known.get(keyOf(a)) ?? created.get(keyOf(a));
        if (c) roots.add(rootOf(c));
      }
      const sorted = [...roots].sort();
      const root = sorted[0] ?? this.newId();
      for (const other of sorted.slice(1)) merges.set(other, root);
      for (const a of group) {
        const k = keyOf(a);
        if (!known.has(k) && !created.has(k)) created.set(k, root);
      }
      canonical.push(root);
    }

    const links: IdentityLinkRow[] = [];
    const now = formatDateTime(new Date());
    const link = (type: string, value: string, to: string): IdentityLinkRow => ({
      pixel_id: pixelId,
      alias_type: type,
      alias_value: value,
      canonical_id: to,
      first_seen: now,
      version: nextVersion(),
    });
    if (created.size) {
      const entries = [...created.entries()].map(([k, c]) => {
        const a = distinct.get(k)!;
        return { type: a.type, value: a.value, canonical: rootOf(c) };
      });
      await tx.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
         SELECT $1, t, v, c FROM unnest($2::text[], $3::text[], $4::text[]) AS x(t, v, c)
         ON CONFLICT DO NOTHING`,
        [pixelId, entries.map((e) => e.type), entries.map((e) => e.value), entries.map((e) => e.canonical)],
      );
      for (const e of entries) links.push(link(e.type, e.value, e.canonical));
    }
    for (const old of merges.keys()) {
      const survivor = rootOf(old);
      const { rows } = await tx.query<{ alias_type: string; alias_value: string }>(
        `UPDATE identity_aliases SET canonical_id = $3 WHERE pixel_id = $1 AND canonical_id = $2
         RETURNING alias_type, alias_value`,
        [pixelId, old, survivor],
      );
      await tx.query(
        `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id) VALUES ($1, 'canonical', $2, $3)
         ON CONFLICT (pixel_id, alias_type, alias_value) DO UPDATE SET canonical_id = excluded.canonical_id`,
        [pixelId, old, survivor],
      );
      for (const r of rows) links.push(link(r.alias_type, r.alias_value, survivor));
      links.push(link("canonical", old, survivor));
    }

    for (const old of merges.keys()) this.merged.set(`${pixelId}\u0000${old}`, rootOf(old));
    const resolved = canonical.map((c) => (c ? rootOf(c) : ""));
    groups.forEach((group, i) => {
      for (const a of group) this.cache.set(`${pixelId}\u0000${keyOf(a)}`, resolved[i]!);
    });
    return { canonical: resolved, links };
  }
}
