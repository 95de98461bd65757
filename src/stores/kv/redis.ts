import { type Command, Redis, ReplyError } from "ioredis";
import { type BreakerOptions, CircuitBreaker, DEFAULT_BREAKER } from "../breaker.js";
import { type BucketRule, KvError, type KvStore, KvUnavailableError, type TokenDecision } from "./port.js";

/**
 * Server replies that mean "not now" rather than "wrong command": loading its data after a restart,
 * a script running too long, a replica or cluster without its master, out of memory, writes refused
 * (failed snapshot, read-only replica after a failover). `\b` keeps BUSYGROUP and the like out.
 */
const UNAVAILABLE_REPLIES =
  /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|OOM|MISCONF|NOREPLICAS)\b/;

/**
 * The typed error of an ioredis failure. A server reply is the store answering (a bug of ours)
 * unless it is one of the replies above; anything else ioredis raises — "Connection is closed.",
 * "Stream isn't writeable and enableOfflineQueue options is false", MaxRetriesPerRequestError,
 * "Command timed out", socket errors (ECONNREFUSED, ECONNRESET…) — means Redis is not reachable.
 */
export function toKvError(err: unknown): KvError {
  if (err instanceof KvError) return err;
  const e = err as { message?: unknown; name?: unknown };
  const message = typeof e?.message === "string" ? e.message : String(err);
  const reply = err instanceof ReplyError || e?.name === "ReplyError";
  if (reply) {
    return UNAVAILABLE_REPLIES.test(message)
      ? new KvUnavailableError(message, { cause: err })
      : new KvError(message, { cause: err });
  }
  if (err instanceof TypeError || err instanceof RangeError) return new KvError(message, { cause: err });
  return new KvUnavailableError(message, { cause: err });
}

export interface RedisKvOptions {
  /**
   * How long a command may wait for its reply. Also bounds a connection attempt, and a connection
   * that stays silent for five times this long while commands wait is replaced.
   */
  commandTimeoutMs?: number;
  breaker?: BreakerOptions;
}

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
  /** Shared with the bus, which uses the same client (and so the same Redis). */
  readonly breaker: CircuitBreaker;

  constructor(
    url: string,
    private readonly prefix = "pixelhouse:",
    options: RedisKvOptions = {},
  ) {
    const timeout = options.commandTimeoutMs ?? 1000;
    this.redis = new Redis(url, {
      lazyConnect: false,
      connectTimeout: Math.max(1000, timeout),
      // A half-open connection (the host vanished without a reset) answers nothing: replace it.
      socketTimeout: Math.max(5000, 5 * timeout),
      // While disconnected, commands fail at once (see below) instead of queueing until Redis is
      // back; commands in flight when the connection drops fail at once too, and are not sent again
      // on the next connection (their caller was already told they failed).
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: true,
      // Reconnect soon after Redis is back (ioredis' default waits up to 2 s between attempts).
      retryStrategy: (times) => Math.min(times * 50, 500),
    });
    armCommandTimeouts(this.redis, timeout);
    this.breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER, Date.now, "kv");
    // Commands issued before the first connection wait for it (each within its timeout), so a
    // store opened and used at once works; after that, the offline queue is off.
    this.redis.once("ready", () => {
      this.redis.options.enableOfflineQueue = false;
    });
    // A new connection is the store answering again: no need to wait out the cool-down.
    this.redis.on("ready", () => this.breaker.reset());
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

  private wrap<T>(fn: () => Promise<T>): Promise<T> {
    return guardRedis(this.breaker, fn);
  }
}

/**
 * Every command of `redis` (the KV's, the bus', the dedup set's) fails with "Command timed out" when
 * no reply came within `ms`. Not ioredis' own `commandTimeout`: its timer runs in the event loop's
 * timers phase, before the poll phase reads replies, so after a stall of the loop (a long
 * synchronous task, a starved CPU) longer than the timeout it fails commands Redis had answered in
 * time. Here the verdict waits one setImmediate, after the replies already received were read.
 */
function armCommandTimeouts(redis: Redis, ms: number): void {
  const armed = new WeakSet<Command>();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Command, stream?: Parameters<Redis["sendCommand"]>[1]) => {
    // A command is sent again after a reconnect or from the offline queue: one deadline for it.
    if (!armed.has(command)) {
      armed.add(command);
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (!command.isSettled) command.reject(new Error("Command timed out"));
          }),
        ms,
      );
      const clear = () => clearTimeout(timer);
      command.promise.then(clear, clear);
    }
    return send(command, stream);
  };
}

/** Runs a Redis call through the breaker, its failure typed by `toKvError`. */
export function guardRedis<T>(breaker: CircuitBreaker, fn: () => Promise<T>): Promise<T> {
  return breaker.run(
    async () => {
      try {
        return await fn();
      } catch (err) {
        throw toKvError(err);
      }
    },
    (err) => err instanceof KvUnavailableError,
    (retryAfterMs) => {
      const err = new KvUnavailableError(`Redis failed repeatedly; not asked again for ${retryAfterMs} ms`);
      err.retryAfterMs = retryAfterMs;
      return err;
    },
  );
}
