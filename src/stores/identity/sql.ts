import type { SqlExecutor, SqlStore, SqlValue } from "../sql/port.js";
import type { AliasRef, AliasRow, GraphWrite, IdentityGraphStore, PixelGraph } from "./port.js";

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

const INSERT_SQL = `INSERT INTO identity_aliases (pixel_id, alias_type, alias_value, canonical_id)
SELECT $1, t, v, c FROM unnest($2::text[], $3::text[], $4::text[]) AS x(t, v, c)`;

/**
 * The graph in Postgres `identity_aliases` (primary key pixel, type, value; an index on pixel,
 * canonical_id): shared by every process on the database, one writer per pixel by a transaction
 * advisory lock.
 */
export class SqlIdentityGraphStore implements IdentityGraphStore {
  readonly kind = "sql" as const;

  constructor(private readonly sql: SqlStore) {}

  withPixel<T>(pixelId: string, fn: (graph: PixelGraph) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`identity:${pixelId}`]);
      return fn(new SqlPixelGraph(tx, pixelId));
    });
  }

  /** Nothing to open: the SQL store's pool connects on demand. */
  async ready(): Promise<void> {}

  async aliases(pixelId: string): Promise<AliasRow[]> {
    const { rows } = await this.sql.query<{ type: string; value: string; canonical: string }>(
      `SELECT alias_type AS type, alias_value AS value, canonical_id AS canonical FROM identity_aliases
       WHERE pixel_id = $1 ORDER BY alias_type, alias_value`,
      [pixelId],
    );
    return rows;
  }

  /** The SQL store is closed by its owner. */
  async close(): Promise<void> {}
}

class SqlPixelGraph implements PixelGraph {
  constructor(
    private readonly tx: SqlExecutor,
    private readonly pixelId: string,
  ) {}

  async lookup(aliases: readonly AliasRef[], ids: readonly string[]) {
    const found: AliasRow[] = [];
    const named = new Set<string>();
    if (aliases.length === 0 && ids.length === 0) return { found, named };
    const { rows } = await this.tx.query<{
      alias_type: string | null;
      alias_value: string | null;
      canonical_id: string;
    }>(GRAPH_LOOKUP_SQL, [this.pixelId, aliases.map((a) => a.type), aliases.map((a) => a.value), [...ids]]);
    for (const r of rows) {
      if (r.alias_type === null) named.add(r.canonical_id);
      else found.push({ type: r.alias_type, value: r.alias_value as string, canonical: r.canonical_id });
    }
    return { found, named };
  }

  async write(change: GraphWrite): Promise<AliasRow[]> {
    const out: AliasRow[] = [];
    // Identities merged away first: their aliases (and links to them) move to the survivor.
    for (const [old, survivor] of change.merges) {
      const { rows } = await this.tx.query<{ alias_type: string; alias_value: string }>(
        `UPDATE identity_aliases SET canonical_id = $3 WHERE pixel_id = $1 AND canonical_id = $2
         RETURNING alias_type, alias_value`,
        [this.pixelId, old, survivor],
      );
      for (const r of rows) out.push({ type: r.alias_type, value: r.alias_value, canonical: survivor });
    }
    // New aliases go in with a plain INSERT (a third cheaper than an upsert, which probes the key once
    // more per row): nobody else writes this pixel's aliases while the advisory lock is held.
    if (change.created.length) {
      await this.tx.query(INSERT_SQL, this.columns(change.created));
      out.push(...change.created);
    }
    if (change.upserts.length) {
      await this.tx.query(
        `${INSERT_SQL} ON CONFLICT (pixel_id, alias_type, alias_value) DO UPDATE SET canonical_id = excluded.canonical_id`,
        this.columns(change.upserts),
      );
      out.push(...change.upserts);
    }
    return out;
  }

  async aliasesOf(ids: readonly string[]): Promise<AliasRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.tx.query<{ type: string; value: string; canonical: string }>(
      `SELECT alias_type AS type, alias_value AS value, canonical_id AS canonical FROM identity_aliases
       WHERE pixel_id = $1 AND canonical_id = ANY($2::text[])`,
      [this.pixelId, [...ids]],
    );
    return rows;
  }

  private columns(rows: readonly AliasRow[]): SqlValue[] {
    return [this.pixelId, rows.map((r) => r.type), rows.map((r) => r.value), rows.map((r) => r.canonical)];
  }
}
