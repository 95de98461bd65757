import { Worker } from "node:worker_threads";
import { KeyedLock } from "../locks.js";
import type { SqlStore } from "../sql/port.js";
import { type CopiedAlias, type CopyMarkers, type CopyTarget, copyAliasesOnce } from "./copy-from-sql.js";
import { type FlatRows, flatWrite, lookupResult, unflatRows, writtenRows } from "./level-wire.js";
import {
  type AliasRef,
  type AliasRow,
  type GraphWrite,
  type IdentityGraphStore,
  IdentityThreadError,
  type PixelGraph,
} from "./port.js";

interface Reply {
  id?: number;
  ok?: boolean;
  ready?: boolean;
  result?: unknown;
  error?: { message: string };
}

/** The thread and its calls in flight. */
class GraphThread {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private dead: IdentityThreadError | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (m: Reply) => {
      if (m.id === undefined) return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(m.error?.message ?? "identity graph error"));
    });
    worker.on("error", (err) => this.died(`failed: ${err.message}`));
    worker.on("exit", (code) => this.died(`exited with code ${code}`));
  }

  static async start(dir: string): Promise<GraphThread> {
    const worker = new Worker(new URL("./level-thread-entry.mjs", import.meta.url), { workerData: { dir } });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: Reply) => {
        if (m.ready === undefined) return;
        worker.off("message", onMessage);
        worker.off("error", reject);
        if (m.ready) resolve();
        else reject(new IdentityThreadError(`cannot open ${dir}: ${m.error?.message}`));
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
      worker.once("exit", (code) =>
        reject(
          new IdentityThreadError(`the identity graph's thread exited with code ${code} before it was ready`),
        ),
      );
    });
    return new GraphThread(worker);
  }

  /** False once the thread is gone (crashed, out of memory, closed). */
  get alive(): boolean {
    return this.dead === undefined;
  }

  private died(how: string): void {
    this.dead ??= new IdentityThreadError(`the identity graph's thread ${how}`);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }

  call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  async close(): Promise<void> {
    if (!this.dead) await this.call({ op: "close" }).catch(() => {});
    this.dead ??= new IdentityThreadError("the identity graph is closed");
    await this.worker.terminate();
  }
}

/**
 * The embedded graph of record (LevelDB, level.ts) on a thread of its own: building and converting
 * the keys of a filing (tens of thousands per import batch) and LevelDB's batch preparation left the
 * event loop, which ingestion and imports need for parsing, validation and rows. The main thread
 * keeps the per-pixel writer lock and the union-find; each graph call is one message each way. The
 * thread starts on first use (a command that never files identities never pays for it), after which
 * a data directory written before the graph moved to LevelDB has its aliases copied over once.
 */
export class LevelThreadIdentityGraphStore implements IdentityGraphStore {
  readonly kind = "level" as const;
  private readonly writers = new KeyedLock();
  private thread: Promise<GraphThread> | null = null;
  /** The thread once started, to see whether it is still alive. */
  private current: GraphThread | null = null;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly sql: SqlStore | null,
  ) {}

  private started(): Promise<GraphThread> {
    if (this.closed) return Promise.reject(new IdentityThreadError("the identity graph is closed"));
    // A thread that died (out of memory, say) failed the calls it held; the next call starts another.
    if (this.current && !this.current.alive) {
      this.current = null;
      this.thread = null;
    }
    if (!this.thread) {
      const starting = this.start();
      // A failed start (the copy from the SQL store, say) is tried again by the next use.
      starting.catch(() => {
        if (this.thread === starting) this.thread = null;
      });
      this.thread = starting;
    }
    return this.thread;
  }

  private async start(): Promise<GraphThread> {
    const thread = await GraphThread.start(this.dir);
    try {
      if (this.sql) await copyAliasesOnce(copyTarget(thread), this.sql);
    } catch (err) {
      await thread.close();
      throw err;
    }
    this.current = thread;
    return thread;
  }

  async ready(): Promise<void> {
    await this.started();
  }

  async withPixel<T>(pixelId: string, fn: (graph: PixelGraph) => Promise<T>): Promise<T> {
    const thread = await this.started();
    return this.writers.run(pixelId, () => fn(new ThreadPixelGraph(thread, pixelId)));
  }

  async aliases(pixelId: string): Promise<AliasRow[]> {
    return (await this.started()).call<AliasRow[]>({ op: "aliases", pixel: pixelId });
  }

  async close(): Promise<void> {
    this.closed = true;
    const thread = await this.thread?.catch(() => null);
    this.thread = null;
    this.current = null;
    await thread?.close();
  }
}

function copyTarget(thread: GraphThread): CopyTarget {
  return {
    copyMarkers: () => thread.call<CopyMarkers>({ op: "copyMarkers" }),
    copyPage: (rows: readonly CopiedAlias[]) => thread.call<void>({ op: "copyPage", rows }),
    markCopied: () => thread.call<void>({ op: "markCopied" }),
    markCleared: () => thread.call<void>({ op: "markCleared" }),
  };
}

class ThreadPixelGraph implements PixelGraph {
  constructor(
    private readonly thread: GraphThread,
    private readonly pixel: string,
  ) {}

  async lookup(aliases: readonly AliasRef[], ids: readonly string[]) {
    const values = await this.thread.call<(string | null)[]>({
      op: "values",
      pixel: this.pixel,
      types: aliases.map((a) => a.type),
      values: aliases.map((a) => a.value),
      ids,
    });
    return lookupResult(aliases, ids, values);
  }

  async write(change: GraphWrite): Promise<AliasRow[]> {
    const moved = await this.thread.call<FlatRows>({
      op: "write",
      pixel: this.pixel,
      change: flatWrite(change),
    });
    return writtenRows(unflatRows(moved), change);
  }

  async aliasesOf(ids: readonly string[]): Promise<AliasRow[]> {
    return unflatRows(await this.thread.call<FlatRows>({ op: "aliasesOf", pixel: this.pixel, ids }));
  }
}
