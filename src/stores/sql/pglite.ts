import { Worker } from "node:worker_threads";
import { KeyedLock } from "../locks.js";
import {
  type SqlExecutor,
  type SqlResult,
  type SqlStore,
  SqlUnavailableError,
  type SqlValue,
  toSqlError,
} from "./port.js";

interface Reply {
  id?: number;
  ok?: boolean;
  ready?: boolean;
  result?: unknown;
  error?: { message: string; code?: string; detail?: string };
}

/**
 * PGlite's buffer pool when the caller names none. Postgres's 128 MB default is touched page by page
 * and never given back, and an import's bus payloads fill it: 32 MB took 130–230 MB off a
 * 300,000-order import's peak with no change in its speed; reads past the pool come from the OS's file cache.
 */
export const DEFAULT_SHARED_BUFFERS_MB = 32;

/**
 * Embedded Postgres: PGlite (Postgres compiled to WebAssembly) in a worker thread, so its CPU never
 * blocks the event loop. PGlite is one connection: statements run in arrival order, and a
 * transaction holds the connection until it ends (a statement outside it waits meanwhile).
 */
export class PgliteSqlStore implements SqlStore {
  readonly kind = "pglite" as const;
  private nextId = 1;
  private readonly local = new KeyedLock();
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private closed = false;
  /** Set once the worker is gone (crashed, out of memory, terminated): every call fails with it. */
  private dead: SqlUnavailableError | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (m: Reply) => {
      if (m.id === undefined) return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(toSqlError(Object.assign(new Error(m.error?.message ?? "PGlite error"), m.error ?? {})));
    });
    worker.on("error", (err) => this.died(`failed: ${err.message}`, err));
    worker.on("exit", (code) => this.died(`exited with code ${code}`));
  }

  private died(how: string, cause?: unknown): void {
    if (this.closed) return;
    this.dead ??= new SqlUnavailableError(`the embedded SQL store's worker ${how}`, "08006", { cause });
    this.failAll(this.dead);
  }

  /**
   * `dir` undefined keeps the database in memory (tests). The buffer pool is smaller than
   * Postgres's 128 MB default (docs/architecture.md, "Memory").
   */
  static async open(dir?: string, options: { sharedBuffersMb?: number } = {}): Promise<PgliteSqlStore> {
    const sharedBuffersMb = options.sharedBuffersMb ?? DEFAULT_SHARED_BUFFERS_MB;
    const worker = new Worker(new URL("./pglite-worker.mjs", import.meta.url), {
      workerData: { dir, sharedBuffersMb },
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: Reply) => {
        if (!m.ready) return;
        worker.off("message", onMessage);
        resolve();
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
    });
    return new PgliteSqlStore(worker);
  }

  private call<T>(message: Record<string, unknown>): Promise<T> {
    if (this.closed)
      return Promise.reject(
        toSqlError(Object.assign(new Error("the SQL store is closed"), { code: "08003" })),
      );
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  private failAll(err: unknown) {
    for (const p of this.pending.values()) p.reject(toSqlError(err));
    this.pending.clear();
  }

  async query<T>(text: string, params: readonly SqlValue[] = []): Promise<SqlResult<T>> {
    return this.call<SqlResult<T>>({ op: "query", text, params });
  }

  /** Only this process opens the data directory (its lock), so a lock in the process is enough. */
  exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.local.run(key, fn);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const tx = this.nextId; // the id `call` gives the begin message: it names the transaction
    await this.call<null>({ op: "begin" });
    const executor: SqlExecutor = {
      query: <R>(text: string, params: readonly SqlValue[] = []) =>
        this.call<SqlResult<R>>({ op: "txquery", tx, text, params }),
      exec: (script) => this.call<void>({ op: "txexec", tx, script }),
    };
    let result: T;
    try {
      result = await fn(executor);
    } catch (err) {
      await this.call({ op: "end", tx, commit: false }).catch(() => {});
      throw err;
    }
    await this.call({ op: "end", tx, commit: true });
    return result;
  }

  async exec(script: string): Promise<void> {
    await this.call({ op: "exec", script });
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.call({ op: "close" }).catch(() => {});
    this.closed = true;
    await this.worker.terminate();
  }
}
