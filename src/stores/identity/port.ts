/**
 * The identity graph of record: per pixel, alias (type, value) → the identity id it belongs to now.
 * `canonical` aliases map an id merged away, or an id rows were stored under that is not an identity,
 * to the identity it belongs to. What to store is decided by src/identity (union-find); an adapter
 * only keeps it, one writer per pixel at a time.
 */
export interface AliasRow {
  type: string;
  value: string;
  /** The identity id. */
  canonical: string;
}

export interface AliasRef {
  type: string;
  value: string;
}

/** One filing's changes, applied together (all or nothing). */
export interface GraphWrite {
  /** Identities merged away → their survivor (never itself merged away): every alias moves. */
  merges: ReadonlyMap<string, string>;
  /** Aliases the lookup did not find: new to the graph. */
  created: readonly AliasRow[];
  /** Aliases set to an identity whether or not they exist (the `canonical` links). */
  upserts: readonly AliasRow[];
}

/** A pixel's graph while this writer holds it. */
export interface PixelGraph {
  /** The identity of each alias that has one, and which of `ids` are an identity now. */
  lookup(
    aliases: readonly AliasRef[],
    ids: readonly string[],
  ): Promise<{ found: AliasRow[]; named: Set<string> }>;
  /** Applies the write; returns every alias whose identity was set or changed (moved ones first). */
  write(change: GraphWrite): Promise<AliasRow[]>;
  /** Every alias of these identities, the write above included. */
  aliasesOf(ids: readonly string[]): Promise<AliasRow[]>;
}

export interface IdentityGraphStore {
  /** `sql`: the SQL store's `identity_aliases` (shared by processes); `level`: LevelDB in DATA_DIR. */
  readonly kind: "sql" | "level";
  /**
   * Opens what the graph needs now rather than at its first use, so a process about to file
   * identities (`serve`, an import) fails at once when it cannot (LevelDB unreadable or corrupt).
   */
  ready(): Promise<void>;
  /** Runs `fn` as the pixel's only writer (across processes where the store is shared). */
  withPixel<T>(pixelId: string, fn: (graph: PixelGraph) => Promise<T>): Promise<T>;
  /** Every alias of a pixel (inspection and tests; not for hot paths). */
  aliases(pixelId: string): Promise<AliasRow[]>;
  close(): Promise<void>;
}

/**
 * The embedded graph's thread could not open LevelDB, crashed, or was closed: the calls it held
 * fail with this (and, for an unopenable directory, LevelDB's reason).
 */
export class IdentityThreadError extends Error {}
