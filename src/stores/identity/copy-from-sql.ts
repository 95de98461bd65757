import type { SqlStore } from "../sql/port.js";

/** A row of the SQL store's `identity_aliases`, in the short names the copy reads it under. */
export interface CopiedAlias {
  p: string;
  t: string;
  v: string;
  c: string;
}

export interface CopyMarkers {
  /** Every row was copied (and synced to disk). */
  copied: boolean;
  /** The SQL table was emptied after the copy. */
  cleared: boolean;
}

/** Where the graph is copied to: LevelDB in this thread, or on its own thread. */
export interface CopyTarget {
  copyMarkers(): Promise<CopyMarkers>;
  copyPage(rows: readonly CopiedAlias[]): Promise<void>;
  /** Durable before it returns: the source is emptied next. */
  markCopied(): Promise<void>;
  markCleared(): Promise<void>;
}

/** Rows copied from identity_aliases per read (keyset pages on its primary key). */
const COPY_PAGE = 20_000;

/**
 * A data directory written before the embedded graph moved to LevelDB keeps its aliases in the SQL
 * store's `identity_aliases`: they are copied over once, in pages, then the table is emptied — two
 * marked steps, so a copy cut short starts again and an emptying cut short is redone.
 */
export async function copyAliasesOnce(target: CopyTarget, sql: SqlStore): Promise<void> {
  const { copied, cleared } = await target.copyMarkers();
  if (!copied) {
    let after: [string, string, string] | null = null;
    for (;;) {
      const { rows }: { rows: CopiedAlias[] } = await sql.query<CopiedAlias>(
        `SELECT pixel_id AS p, alias_type AS t, alias_value AS v, canonical_id AS c FROM identity_aliases
         ${after ? "WHERE (pixel_id, alias_type, alias_value) > ($1, $2, $3)" : ""}
         ORDER BY pixel_id, alias_type, alias_value LIMIT ${COPY_PAGE}`,
        after ?? [],
      );
      if (rows.length === 0) break;
      await target.copyPage(rows);
      const last: CopiedAlias = rows[rows.length - 1]!;
      after = [last.p, last.t, last.v];
    }
    await target.markCopied();
  }
  if (!cleared) {
    await sql.query("DELETE FROM identity_aliases");
    await target.markCleared();
  }
}
