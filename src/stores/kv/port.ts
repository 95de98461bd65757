/** Token-bucket rule: `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface BucketRule {
  capacity: number;
  refillPerSecond: number;
}

export interface TokenDecision {
  allowed: boolean;
  /** Whole tokens left after this take. */
  remaining: number;
  /** When refused: milliseconds until `cost` tokens are available again. */
  retryAfterMs: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

/** The cache / limits store (Redis). Adapters: ioredis, in-process. */
export interface KvStore {
  readonly kind: "redis" | "memory";
  get(key: string): Promise<string | null>;
  /** `ttlMs` undefined keeps the value until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Atomically adds one and returns the new value (0 when absent before). */
  incr(key: string): Promise<number>;
  /** Atomically takes `cost` tokens from the bucket at `key`, or refuses without taking any. */
  takeTokens(key: string, rule: BucketRule, cost?: number): Promise<TokenDecision>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A failure the KV store answered (a wrong command, a script error): a bug, not an outage. */
export class KvError extends Error {}

/** The KV store cannot be used now (down, restarting, not answering in time): retry later. */
export class KvUnavailableError extends KvError {
  /** Set when the store's circuit breaker refused the call: how long until it is tried again. */
  retryAfterMs?: number;
}

/** The bucket arithmetic shared by both adapters (Redis runs the same steps in Lua). */
export function refill(
  state: { tokens: number; at: number } | undefined,
  rule: BucketRule,
  now: number,
): { tokens: number; at: number } {
  if (!state) return { tokens: rule.capacity, at: now };
  const elapsed = Math.max(0, now - state.at) / 1000;
  return { tokens: Math.min(rule.capacity, state.tokens + elapsed * rule.refillPerSecond), at: now };
}

export function decide(tokens: number, rule: BucketRule, cost: number): TokenDecision & { left: number } {
  const allowed = tokens >= cost;
  const left = allowed ? tokens - cost : tokens;
  const perMs = rule.refillPerSecond / 1000;
  return {
    allowed,
    left,
    remaining: Math.floor(left),
    retryAfterMs: allowed ? 0 : Math.ceil((cost - tokens) / perMs),
    resetMs: Math.ceil((rule.capacity - left) / perMs),
  };
}
