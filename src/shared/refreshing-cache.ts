import { performance } from "node:perf_hooks";
import { LRUCache } from "lru-cache";

export interface RefreshingCacheOptions {
  /** How long a value read from the store may be served, counted from the moment its read began; 0 = no cache. */
  ttlMs: number;
  /** Values remembered at most (least recently used go first). */
  max: number;
  /** Keys the store did not know (`undefined`) remembered at most, apart from the values. */
  maxAbsent: number;
  /** A background re-read failed: the value it would have replaced is still served until its time is up. */
  onRefreshError?: (err: unknown) => void;
  /** Milliseconds on a monotonic clock (tests pass their own). */
  now?: () => number;
}

interface Entry<V> {
  value: V | undefined;
  readAt: number;
}

interface Read<V> {
  promise: Promise<V | undefined>;
  readAt: number;
  background: boolean;
}

/**
 * A bounded cache in front of a store read, for values read on every request (API keys). Two things
 * keep the requests off the store:
 * - concurrent misses of one key share one read, so an entry lapsing under load costs one query,
 *   not one per request waiting for it;
 * - a value past half its time is read again in the background while it is still served, so steady
 *   traffic does not wait for the store.
 * What bounds staleness is unchanged: no cached value is served, and no read is shared with a new
 * caller, once `ttlMs` has passed since that read began (a caller that joined a read in time gets its
 * answer whenever it comes, as the caller that started it does). `invalidate` drops a key at once,
 * and a read of it that began before is neither stored nor shared. Keys the store does not know
 * (`undefined`) are remembered apart, so many of them cannot push the known values out. A caller
 * never fails for a background read's failure: it reads again itself.
 */
export class RefreshingCache<V> {
  private readonly values: LRUCache<string, Entry<V>>;
  private readonly absent: LRUCache<string, Entry<V>>;
  private readonly reads = new Map<string, Read<V>>();
  private readonly now: () => number;

  constructor(
    private readonly load: (key: string) => Promise<V | undefined>,
    private readonly options: RefreshingCacheOptions,
  ) {
    this.values = new LRUCache({ max: options.max });
    this.absent = new LRUCache({ max: options.maxAbsent });
    this.now = options.now ?? (() => performance.now());
  }

  get(key: string): Promise<V | undefined> {
    const { ttlMs } = this.options;
    if (ttlMs <= 0) return this.load(key);
    const now = this.now();
    const entry = this.values.get(key) ?? this.absent.get(key);
    if (entry) {
      const age = now - entry.readAt;
      if (age < ttlMs) {
        if (age >= ttlMs / 2 && !this.reads.has(key)) this.refresh(key);
        return Promise.resolve(entry.value);
      }
      this.forget(key);
    }
    const under = this.reads.get(key);
    if (!under || now - under.readAt >= ttlMs) return this.read(key, false).promise;
    // A background read that fails is no answer for a request: that request reads for itself.
    return under.background ? under.promise.catch(() => this.get(key)) : under.promise;
  }

  /** Forgets the key now; a read already under way for it is neither stored nor shared. */
  invalidate(key: string): void {
    this.forget(key);
    this.reads.delete(key);
  }

  private forget(key: string): void {
    this.values.delete(key);
    this.absent.delete(key);
  }

  private refresh(key: string): void {
    this.read(key, true).promise.catch((err) => {
      try {
        this.options.onRefreshError?.(err);
      } catch {
        // A failing report must not become an unhandled rejection.
      }
    });
  }

  private read(key: string, background: boolean): Read<V> {
    const read: Read<V> = { promise: Promise.resolve(undefined), readAt: this.now(), background };
    // Only the read the key still points at when it answers is stored: an invalidation or a newer
    // read in between replaced it.
    const current = () => {
      const mine = this.reads.get(key) === read;
      if (mine) this.reads.delete(key);
      return mine;
    };
    let loading: Promise<V | undefined>;
    try {
      loading = this.load(key);
    } catch (err) {
      // A load that throws before it returns a promise fails this read like one that rejects.
      loading = Promise.reject(err);
    }
    read.promise = loading.then(
      (value) => {
        if (current()) {
          this.forget(key);
          (value === undefined ? this.absent : this.values).set(key, { value, readAt: read.readAt });
        }
        return value;
      },
      (err: unknown) => {
        current();
        throw err;
      },
    );
    this.reads.set(key, read);
    return read;
  }
}
