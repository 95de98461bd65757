import { consoleQueueSeconds, consoleReadersInUse, since } from "../metrics.js";
import type { ReaderOptions, WarehouseStore } from "../stores/warehouse/port.js";
import { ConsoleBusyError, ConsoleSaturatedError } from "./errors.js";

export interface PoolLimits {
  /** Readers open at once: console queries running in parallel, all pixels together. */
  size: number;
  /** Readers one pixel may hold at once. */
  perPixel: number;
  /** How long a query waits for a reader before it is refused with 429 / 503. */
  queueTimeoutMs: number;
  /** The longest a query may hold a reader (its time limit): bounds the Retry-After estimate. */
  holdLimitMs: number;
}

/** A reader held for one query of one pixel (counted against the pixel's cap while it opens). */
interface Lease {
  pixel: string;
  started: number;
  reader?: WarehouseStore;
}

interface Waiter {
  pixel: string;
  /** Takes the waiter off the queue and stops its timer. */
  detach(): void;
  resolve(lease: Lease): void;
  reject(err: unknown): void;
}

/**
 * Console queries run on reader connections of their own, at most `size` at once, opened on first
 * use. With chDB a session runs one query at a time, so a runaway query holds only its own reader:
 * ingestion, the query API and other console callers keep answering while it runs to its limit.
 *
 * One pixel holds at most `perPixel` readers, so its runaways cannot take them all. A query waits for
 * a reader at most `queueTimeoutMs` — first come, first served among the waiters whose pixel is under
 * its cap — and is then refused: 429 when its own pixel holds its share, 503 when other pixels hold
 * every reader. A caller that goes away (its signal aborts) leaves the queue at once.
 */
export class ReaderPool {
  private readonly idle: WarehouseStore[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly leases = new Map<string, Lease[]>();
  private opened = 0;
  private opening: Promise<void> | undefined;

  constructor(
    private readonly open: (options: ReaderOptions) => Promise<WarehouseStore>,
    private readonly options: ReaderOptions,
    private readonly limits: PoolLimits,
  ) {}

  /** Runs `work` on a reader held for `pixel`; `signal` gives up the wait for one. */
  async use<T>(
    pixel: string,
    work: (reader: WarehouseStore) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const asked = performance.now();
    const lease = await this.acquire(pixel, signal);
    consoleQueueSeconds.observe(since(asked));
    consoleReadersInUse.inc();
    try {
      return await work(lease.reader!);
    } finally {
      consoleReadersInUse.dec();
      this.release(lease);
    }
  }

  /** Readers held now: by every pixel, or by one. */
  held(pixel?: string): number {
    if (pixel !== undefined) return this.leases.get(pixel)?.length ?? 0;
    let n = 0;
    for (const list of this.leases.values()) n += list.length;
    return n;
  }

  private get perPixel(): number {
    return Math.min(this.limits.perPixel, this.limits.size);
  }

  private acquire(pixel: string, signal?: AbortSignal): Promise<Lease> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held(pixel) < this.perPixel) {
      const ready = this.idle.pop();
      if (ready) return Promise.resolve(this.lease(pixel, ready));
      if (this.opened < this.limits.size) return this.openFor(pixel);
    }
    return new Promise<Lease>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter.detach();
        reject(this.busy(pixel));
      }, this.limits.queueTimeoutMs);
      const onAbort = () => {
        waiter.detach();
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        pixel,
        detach: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
        },
        resolve,
        reject,
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private lease(pixel: string, reader?: WarehouseStore): Lease {
    const lease: Lease = { pixel, started: Date.now(), ...(reader ? { reader } : {}) };
    const list = this.leases.get(pixel) ?? [];
    list.push(lease);
    this.leases.set(pixel, list);
    return lease;
  }

  private drop(lease: Lease): void {
    const list = this.leases.get(lease.pixel) ?? [];
    list.splice(list.indexOf(lease), 1);
    if (list.length === 0) this.leases.delete(lease.pixel);
  }

  /** A new reader for `pixel`: the lease counts against its cap (and the size) from now on. */
  private async openFor(pixel: string): Promise<Lease> {
    const lease = this.lease(pixel);
    this.opened++;
    try {
      // Opening a chDB session is serialised so two first requests never race on the engine.
      const previous = this.opening;
      let done!: () => void;
      this.opening = new Promise<void>((resolve) => {
        done = resolve;
      });
      await previous;
      try {
        lease.reader = await this.open(this.options);
      } finally {
        done();
      }
      return lease;
    } catch (err) {
      this.opened--;
      this.drop(lease);
      this.dispatch();
      throw err;
    }
  }

  private release(lease: Lease): void {
    this.drop(lease);
    this.idle.push(lease.reader!);
    this.dispatch();
  }

  /** Hands idle readers (or new ones, up to `size`) to the oldest waiters under their pixel's cap. */
  private dispatch(): void {
    for (const waiter of [...this.waiting]) {
      if (this.held(waiter.pixel) >= this.perPixel) continue;
      const ready = this.idle.pop();
      if (ready) {
        waiter.detach();
        waiter.resolve(this.lease(waiter.pixel, ready));
      } else if (this.opened < this.limits.size) {
        waiter.detach();
        this.openFor(waiter.pixel).then(waiter.resolve, waiter.reject);
      } else {
        return;
      }
    }
  }

  /** 429 when the pixel holds its share of readers, 503 when other pixels hold them all. */
  private busy(pixel: string): Error {
    const now = Date.now();
    const own = this.leases.get(pixel) ?? [];
    const mine = own.length >= this.perPixel;
    const starts = (mine ? own : [...this.leases.values()].flat()).map((l) => l.started);
    // A reader frees up at the latest when the oldest of those queries reaches its time limit.
    const freeAt = Math.min(now, ...starts) + this.limits.holdLimitMs;
    const retryAfter = Math.max(1, Math.ceil((freeAt - now) / 1000));
    return mine
      ? new ConsoleBusyError(this.perPixel, this.limits.queueTimeoutMs, retryAfter)
      : new ConsoleSaturatedError(this.limits.size, this.limits.queueTimeoutMs, retryAfter);
  }
}
