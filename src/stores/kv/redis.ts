import { Redis } from "ioredis";
import { type BucketRule, type KvStore, KvUnavailableError, type TokenDecision } from "./port.js";

// Same arithmetic as `refill` + `decide` in port.ts, atomically, on the server's clock.
const TAKE_TOKENS = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = capacity
if s[1] then
  tokens = math.min(capacity, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate)
end
local allowed = 0
local retry = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry = math.ceil((cost - tokens) / rate)
end
local reset = math.ceil((capacity - tokens) / rate)
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], reset + 1000)
return {allowed, math.floor(tokens), retry, reset}
`;

export class RedisKv implements KvStore {
  readonly kind = "redis" as const;
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = "pixelhouse:",
  ) {
    this.redis = new Redis(url, {
      lazyConnect: false,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      connectTimeout: 5000,
    });
    // Connection errors surface on the commands that fail; the client reconnects by itself.
    this.redis.on("error", () => {});
    this.redis.defineCommand("pxTakeTokens", { numberOfKeys: 1, lua: TAKE_TOKENS });
  }

  /** The underlying client, for the adapters that need Redis-specific structures (dedup, bus). */
  get client(): Redis {
    return this.redis;
  }

  async get(key: string): Promise<string | null> {
    return this.wrap(() => this.redis.get(this.prefix + key));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    await this.wrap(() =>
      ttlMs
        ? this.redis.set(this.prefix + key, value, "PX", ttlMs)
        : this.redis.set(this.prefix + key, value),
    );
  }

  async del(key: string): Promise<void> {
    await this.wrap(() => this.redis.del(this.prefix + key));
  }

  async incr(key: string): Promise<number> {
    return this.wrap(() => this.redis.incr(this.prefix + key));
  }

  async takeTokens(key: string, rule: BucketRule, cost = 1): Promise<TokenDecision> {
    const r = await this.wrap(() =>
      (
        this.redis as unknown as {
          pxTakeTokens(k: string, ...a: (string | number)[]): Promise<[number, number, number, number]>;
        }
      ).pxTakeTokens(this.prefix + key, rule.capacity, rule.refillPerSecond, cost),
    );
    return { allowed: r[0] === 1, remaining: r[1], retryAfterMs: r[2], resetMs: r[3] };
  }

  async ping(): Promise<void> {
    await this.wrap(() => this.redis.ping());
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private async wrap<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new KvUnavailableError((err as Error).message, { cause: err });
    }
  }
}
