import { ClassicLevel } from "classic-level";
import { KeyedLock } from "../locks.js";
import type { SqlStore } from "../sql/port.js";
import { type CopiedAlias, type CopyMarkers, type CopyTarget, copyAliasesOnce } from "./copy-from-sql.js";
import { lookupResult, writtenRows } from "./level-wire.js";
import type { AliasRef, AliasRow, GraphWrite, IdentityGraphStore, PixelGraph } from "./port.js";

/*
 * Keys (utf8; components joined by NUL, a component holding NUL or \u0001 escaped so the joins stay
 * unambiguous):
 *   a␀pixel␀type␀value        → the alias's identity id
 *   c␀pixel␀identity␀type␀value → ''   every alias of an identity, for merges and repair
 *   n␀pixel␀identity           → ''   the identity has at least one alias (the lookup's "named")
 *   m␀copied, m␀cleared        → when the graph was copied from the SQL store's identity_aliases,
 *                                and when that table was emptied
 */
const SEP = "\u0000";
const ESC = "\u0001";
/** A component with no NUL: \u0001 → \u0001\u0002, NUL → \u0001\u0001 (rare: ids and hashes hold neither). */
const part = (s: string) =>
  s.includes(SEP) || s.includes(ESC) ? s.replaceAll(ESC, `${ESC}\u0002`).replaceAll(SEP, `${ESC}${ESC}`) : s;
const unpart = (s: string) =>
  s.includes(ESC) ? s.replaceAll(`${ESC}${ESC}`, SEP).replaceAll(`${ESC}\u0002`, ESC) : s;

const aliasKey = (pixel: string, type: string, value: string) =>
  `a${SEP}${part(pixel)}${SEP}${part(type)}${SEP}${part(value)}`;
const memberPrefix = (pixel: string, id: string) => `c${SEP}${part(pixel)}${SEP}${part(id)}${SEP}`;
const memberKey = (pixel: string, id: string, type: string, value: string) =>
  `${memberPrefix(pixel, id)}${part(type)}${SEP}${part(value)}`;
const namedKey = (pixel: string, id: string) => `n${SEP}${part(pixel)}${SEP}${part(id)}`;
const COPIED = `m${SEP}copied`;
const CLEARED = `m${SEP}cleared`;

/** Keys starting with `prefix` (which ends with SEP): from it up to the same prefix ending in \u0001. */
const range = (prefix: string) => ({ gte: prefix, lt: `${prefix.slice(0, -1)}\u0001` });

/** The (type, value) after a member key's prefix. */
function memberOf(key: string, prefixLength: number): AliasRef {
  const rest = key.slice(prefixLength);
  const cut = rest.indexOf(SEP);
  return { type: unpart(rest.slice(0, cut)), value: unpart(rest.slice(cut + 1)) };
}

/**
 * The graph in LevelDB (classic-level) under DATA_DIR, for the embedded stores: a lookup or a filing
 * is one native call over thousands of keys, run on libuv's threads, where WebAssembly Postgres spent
 * one executor probe per alias on its one thread (shared with the bus and ingestion's dedup). The data
 * directory is locked to one process, so one writer per pixel is an in-process lock. A filing is one
 * atomic batch, written through to the OS like PGlite's commits (no fsync, as PGlite runs).
 */
export class LevelIdentityGraphStore implements IdentityGraphStore, CopyTarget {
  readonly kind = "level" as const;
  private readonly writers = new KeyedLock();
  /** The one-time copy from the SQL store, started on first use (after the migrations ran). */
  private copied: Promise<void> | null = null;

  private constructor(
    private readonly db: ClassicLevel<string, string>,
    private readonly sql: SqlStore | null,
  ) {}

  /**
   * Opens (creating) the graph in `dir`. A data directory written before the graph moved here keeps
   * its aliases in the SQL store's `identity_aliases`: on first use they are copied over once, then
   * deleted there.
   */
  static async open(dir: string, sql: SqlStore | null): Promise<LevelIdentityGraphStore> {
    const db = new ClassicLevel<string, string>(dir, {
      keyEncoding: "utf8",
      valueEncoding: "utf8",
      // Imports file ~15,000 aliases per batch: a larger memtable means fewer, larger compactions.
      writeBufferSize: 16 * 1024 * 1024,
    });
    await db.open();
    return new LevelIdentityGraphStore(db, sql);
  }

  ready(): Promise<void> {
    if (!this.copied) {
      const copying = this.copyOnce();
      // A failed copy is tried again by the next use.
      copying.catch(() => {
        if (this.copied === copying) this.copied = null;
      });
      this.copied = copying;
    }
    return this.copied;
  }

  private async copyOnce(): Promise<void> {
    if (this.sql) await copyAliasesOnce(this, this.sql);
  }

  async copyMarkers(): Promise<CopyMarkers> {
    const [copied, cleared] = await this.db.getMany([COPIED, CLEARED]);
    return { copied: copied !== undefined, cleared: cleared !== undefined };
  }

  async copyPage(rows: readonly CopiedAlias[]): Promise<void> {
    if (rows.length === 0) return;
    const batch = this.db.batch();
    try {
      for (const r of rows) {
        batch.put(aliasKey(r.p, r.t, r.v), r.c);
        batch.put(memberKey(r.p, r.c, r.t, r.v), "");
        batch.put(namedKey(r.p, r.c), "");
      }
    } catch (err) {
      await batch.close().catch(() => {});
      throw err;
    }
    await batch.write();
  }

  async markCopied(): Promise<void> {
    // Synced (and with it every batch before it in LevelDB's log) before the table is emptied: the
    // copy must outlive a power loss that the source would not.
    await this.db.put(COPIED, new Date().toISOString(), { sync: true });
  }

  async markCleared(): Promise<void> {
    await this.db.put(CLEARED, new Date().toISOString());
  }

  async withPixel<T>(pixelId: string, fn: (graph: LevelPixelGraph) => Promise<T>): Promise<T> {
    await this.ready();
    return this.writers.run(pixelId, () => fn(new LevelPixelGraph(this.db, pixelId)));
  }

  async aliases(pixelId: string): Promise<AliasRow[]> {
    await this.ready();
    const prefix = `a${SEP}${part(pixelId)}${SEP}`;
    const out: AliasRow[] = [];
    for await (const [key, canonical] of this.db.iterator(range(prefix))) {
      out.push({ ...memberOf(key, prefix.length), canonical });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

export class LevelPixelGraph implements PixelGraph {
  constructor(
    private readonly db: ClassicLevel<string, string>,
    private readonly pixel: string,
  ) {}

  async lookup(aliases: readonly AliasRef[], ids: readonly string[]) {
    const values = await this.values(
      aliases.map((a) => a.type),
      aliases.map((a) => a.value),
      ids,
    );
    return lookupResult(aliases, ids, values);
  }

  /** The stored identity of each alias (types[i], values[i]), then whether each id is named, in order. */
  async values(
    types: readonly string[],
    values: readonly string[],
    ids: readonly string[],
  ): Promise<(string | undefined)[]> {
    const keys = new Array<string>(types.length + ids.length);
    for (let i = 0; i < types.length; i++) keys[i] = aliasKey(this.pixel, types[i]!, values[i]!);
    for (let i = 0; i < ids.length; i++) keys[types.length + i] = namedKey(this.pixel, ids[i]!);
    return keys.length ? await this.db.getMany(keys) : [];
  }

  async write(change: GraphWrite): Promise<AliasRow[]> {
    return writtenRows(await this.applyWrite(change), change);
  }

  /**
   * Applies the write; returns the aliases its merges moved (in the order `write` lists them). The
   * keys go into one chained batch, written at the end: an array of operation objects cost ~2.5× the
   * CPU (abstract-level copies every operation to encode it) and most of the graph thread's garbage.
   */
  async applyWrite(change: GraphWrite): Promise<AliasRow[]> {
    const batch = this.db.batch();
    let writing = false;
    try {
      const moved = await this.collectWrite(change, batch);
      writing = true;
      // write() closes the batch, whether it succeeds or not.
      if (batch.length) await batch.write();
      else await batch.close();
      return moved;
    } finally {
      // A batch never written (a read above failed) is released unwritten; that read's error is the
      // one to report.
      if (!writing) await batch.close().catch(() => {});
    }
  }

  private async collectWrite(
    change: GraphWrite,
    batch: ReturnType<ClassicLevel<string, string>["batch"]>,
  ): Promise<AliasRow[]> {
    const p = this.pixel;
    const moved: AliasRow[] = [];
    /** Aliases set by this write → their identity (later steps read through it). */
    const setHere = new Map<string, string>();
    /** Member keys deleted by this write; identities that gained or lost a member in it. */
    const unlinked = new Set<string>();
    const touched = new Set<string>();
    const set = (type: string, value: string, to: string, from: string | undefined) => {
      const key = aliasKey(p, type, value);
      if (from !== undefined && from !== to) {
        const member = memberKey(p, from, type, value);
        batch.del(member);
        unlinked.add(member);
        touched.add(from);
      }
      batch.put(key, to);
      batch.put(memberKey(p, to, type, value), "");
      setHere.set(key, to);
      touched.add(to);
    };
    // Identities merged away: every alias they have moves to the survivor, and they have none left.
    for (const [old, survivor] of change.merges) {
      const prefix = memberPrefix(p, old);
      for await (const key of this.db.keys(range(prefix))) {
        const a = memberOf(key, prefix.length);
        set(a.type, a.value, survivor, old);
        moved.push({ type: a.type, value: a.value, canonical: survivor });
      }
    }
    // New aliases: the lookup under this writer's lock found none.
    for (const c of change.created) set(c.type, c.value, c.canonical, undefined);
    // Links may exist (pointing elsewhere): what they point at now is read first.
    if (change.upserts.length) {
      const keys = change.upserts.map((u) => aliasKey(p, u.type, u.value));
      const stored = await this.db.getMany(keys);
      change.upserts.forEach((u, i) => {
        const key = keys[i]!;
        set(u.type, u.value, u.canonical, setHere.has(key) ? setHere.get(key) : stored[i]);
      });
    }
    // Whether each identity this write touched has an alias after it: one that holds a key set here
    // does; one merged away has given up every member above; another that lost a member is asked.
    const holding = new Set(setHere.values());
    for (const id of touched) {
      let has = holding.has(id);
      if (!has && !change.merges.has(id)) {
        for await (const key of this.db.keys(range(memberPrefix(p, id)))) {
          if (!unlinked.has(key)) {
            has = true;
            break;
          }
        }
      }
      if (has) batch.put(namedKey(p, id), "");
      else batch.del(namedKey(p, id));
    }
    return moved;
  }

  async aliasesOf(ids: readonly string[]): Promise<AliasRow[]> {
    const out: AliasRow[] = [];
    for (const id of new Set(ids)) {
      const prefix = memberPrefix(this.pixel, id);
      for await (const key of this.db.keys(range(prefix))) {
        out.push({ ...memberOf(key, prefix.length), canonical: id });
      }
    }
    return out;
  }
}
