import { LRUCache } from "lru-cache";
import { type BucketRule, decide, type KvStore, refill, type TokenDecision } from "./port.js";

/** In-process KV for the embedded mode: bounded LRU with per-entry TTL; nothing survives a restart. */
export class MemoryKv implements KvStore {
  readonly kind = "memory" as const;
  private readonly values = new LRUCache<string, string>({ max: 100_000, ttlAutopurge: false });
  private readonly buckets = new LRUCache<string, { tokens: number; at: number }>({ max: 100_000 });

  async get(key: string): Promise<string | null> {
    return this.values.get(key) ?? null;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.values.set(key, value, ttlMs ? { ttl: ttlMs } : {});
  }

  async del(key: string): Promise<void> {
    this.values.delete(key);
  }

  async incr(key: string): Promise<number> {
    const next = Number(this.values.get(key) ?? "0") + 1;
    this.values.set(key, String(next), { noUpdateTTL: true });
    return next;
  }

  async takeTokens(key: string, rule: BucketRule, cost = 1): Promise<TokenDecision> {
    const now = Date.now();
    const state = refill(this.buckets.get(key), rule, now);
    const { left, ...decision } = decide(state.tokens, rule, cost);
    this.buckets.set(key, { tokens: left, at: now });
    return decision;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.values.clear();
    this.buckets.clear();
  }
}
