import { performance } from "node:perf_hooks";
import { LRUCache } from "lru-cache";

export interface RefreshingCacheOptions {
  /** How long a value read from the store may be served, counted from the moment its read began; 0 = no cache. */
  ttlMs: number;
  /** Keys remembered at most (least recently used go first). */
  max: number;
  /** A background re-read failed: the value it would have replaced is still served until its time is up. */
  onRefreshError?: (err: unknown) => void;
  /** Milliseconds on a monotonic clock (tests pass their own). */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  readAt: number;
}

/**
 * A bounded cache in front of a store read, for values read on every request (API keys). Two things
 * keep the requests off the store:
 * - concurrent misses of one key share one read, so an entry lapsing under load costs one query,
 *   not one per request waiting for it;
 * - a value past half its time is read again in the background while it is still served, so steady
 *   traffic never waits for the store at all.
 * What bounds staleness is unchanged: no value is served once `ttlMs` has passed since its read
 * began. `invalidate` drops a key at once, and a read that began before it stores nothing and is not
 * joined by later calls. `undefined` is a value like any other (a key the store does not know).
 */
export class RefreshingCache<V> {
  private readonly entries: LRUCache<string, Entry<V>>;
  private readonly reads = new Map<string, Promise<V>>();
  private readonly now: () => number;
  /** Bumped by `invalidate`: a read that began under an older epoch stores nothing. */
  private epoch = 0;

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly options: RefreshingCacheOptions,
  ) {
    this.entries = new LRUCache({ max: options.max });
    this.now = options.now ?? (() => performance.now());
  }

  get(key: string): Promise<V> {
    const { ttlMs } = this.options;
    if (ttlMs <= 0) return this.load(key);
    const entry = this.entries.get(key);
    if (entry) {
      const age = this.now() - entry.readAt;
      if (age < ttlMs) {
        if (age >= ttlMs / 2 && !this.reads.has(key)) {
          this.read(key).catch((err) => this.options.onRefreshError?.(err));
        }
        return Promise.resolve(entry.value);
      }
      this.entries.delete(key);
    }
    return this.reads.get(key) ?? this.read(key);
  }

  /** Forgets the key now; a read already under way for it is neither stored nor shared. */
  invalidate(key: string): void {
    this.epoch++;
    this.entries.delete(key);
    this.reads.delete(key);
  }

  private read(key: string): Promise<V> {
    const epoch = this.epoch;
    const readAt = this.now();
    const reading = this.load(key).then(
      (value) => {
        if (this.reads.get(key) === reading) this.reads.delete(key);
        if (this.epoch === epoch) this.entries.set(key, { value, readAt });
        return value;
      },
      (err: unknown) => {
        if (this.reads.get(key) === reading) this.reads.delete(key);
        throw err;
      },
    );
    this.reads.set(key, reading);
    return reading;
  }
}
