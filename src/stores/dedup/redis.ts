import { createHash, randomInt } from "node:crypto";
import type { Redis } from "ioredis";
import type { DedupLease, DedupOptions, DedupStatus, DedupStore } from "./port.js";

const DAY_MS = 86_400_000;
/** Ids are bucketed by 10-day periods; a period's keys expire the window after it ends. */
export const DEDUP_PERIOD_DAYS = 10;

/**
 * Server mode: a compact digest set in Redis. Each id becomes a 12-byte field (bits 24..119 of
 * SHA-256(pixel, id)) in one of 2^bucketBits small hashes per pixel and period; small hashes stay
 * listpack-encoded, which costs ~16 bytes per field+value instead of ~130 for a `SET key NX`.
 * Periods are `periodDays` long and expire `windowDays` after they end, so an id is remembered for
 * at least the window; a lookup checks the current period and the ones the window reaches back to.
 * Values: a small integer (day within the period) once acknowledged, or a large lease value
 * (lease-expiry ms × 1000 + nonce) while the write is in flight.
 */
const RESERVE = `
local k = tonumber(ARGV[1])
local nowMs = tonumber(ARGV[2])
local leaseValue = ARGV[3]
local expireAt = ARGV[4]
local out = {}
local n = #ARGV - 4
for i = 1, n do
  local field = ARGV[4 + i]
  local base = (i - 1) * k
  local status = 0
  for j = 1, k do
    local v = redis.call('HGET', KEYS[base + j], field)
    if v then
      local num = tonumber(v)
      if num >= 1000000000 then
        if math.floor(num / 1000) > nowMs then status = 2 else redis.call('HDEL', KEYS[base + j], field) end
      else
        status = 1
      end
      if status ~= 0 then break end
    end
  end
  if status == 0 then
    redis.call('HSET', KEYS[base + 1], field, leaseValue)
    redis.call('PEXPIREAT', KEYS[base + 1], expireAt)
  end
  out[i] = status
end
return out
`;

/** KEYS: one per field. ARGV[1]: the lease value to match; ARGV[2]: the committed value or '' to delete. */
const SETTLE = `
local leaseValue = ARGV[1]
local committed = ARGV[2]
for i = 1, #KEYS do
  local field = ARGV[2 + i]
  if redis.call('HGET', KEYS[i], field) == leaseValue then
    if committed == '' then redis.call('HDEL', KEYS[i], field) else redis.call('HSET', KEYS[i], field, committed) end
  end
end
return #KEYS
`;

export interface RedisDedupOptions extends DedupOptions {
  periodDays: number;
  bucketBits: number;
  prefix: string;
  /** The clock (tests move it across the window). */
  now?: () => number;
}

interface Detail {
  keys: string[];
  fields: Buffer[];
  leaseValue: string;
  dayInPeriod: number;
}

type Scripts = {
  pxDedupReserve(...args: (string | Buffer | number)[]): Promise<number[]>;
  pxDedupSettle(...args: (string | Buffer | number)[]): Promise<number>;
};

export class RedisDedupStore implements DedupStore {
  readonly kind = "redis";
  private readonly redis: Redis & Scripts;

  constructor(
    redis: Redis,
    private readonly options: RedisDedupOptions,
  ) {
    redis.defineCommand("pxDedupReserve", { lua: RESERVE });
    redis.defineCommand("pxDedupSettle", { lua: SETTLE });
    this.redis = redis as Redis & Scripts;
  }

  private locate(pixelId: string, id: string, period: number, k: number): { keys: string[]; field: Buffer } {
    const digest = createHash("sha256").update(pixelId).update("\u0000").update(id).digest();
    const bucket =
      ((digest[0]! << 16) | (digest[1]! << 8) | digest[2]!) & ((1 << this.options.bucketBits) - 1);
    const keys: string[] = [];
    // The hash tag keeps a pixel's dedup keys in one Redis Cluster slot (one script touches them all).
    for (let j = 0; j < k; j++)
      keys.push(`${this.options.prefix}dd:{${pixelId}}:${period - j}:${bucket.toString(16)}`);
    return { keys, field: digest.subarray(3, 15) };
  }

  async reserve(pixelId: string, ids: readonly string[]) {
    const token = String(randomInt(1000));
    if (ids.length === 0) return { status: [] as DedupStatus[], lease: { pixelId, token, ids: [] } };
    const now = (this.options.now ?? Date.now)();
    const periodMs = this.options.periodDays * DAY_MS;
    const period = Math.floor(now / periodMs);
    const k = Math.ceil(this.options.windowDays / this.options.periodDays) + 1;
    const located = ids.map((id) => this.locate(pixelId, id, period, k));
    const leaseValue = String((now + this.options.leaseSeconds * 1000) * 1000 + Number(token));
    const expireAt = (period + 1) * periodMs + this.options.windowDays * DAY_MS;
    const keys = located.flatMap((l) => l.keys);
    const raw = await this.redis.pxDedupReserve(
      keys.length,
      ...keys,
      k,
      now,
      leaseValue,
      expireAt,
      ...located.map((l) => l.field),
    );
    const status: DedupStatus[] = raw.map((s) => (s === 0 ? "fresh" : s === 1 ? "unconfirmed" : "duplicate"));
    const mine = located.filter((_, i) => status[i] === "fresh");
    const detail: Detail = {
      keys: mine.map((l) => l.keys[0]!),
      fields: mine.map((l) => l.field),
      leaseValue,
      dayInPeriod: Math.floor((now % periodMs) / DAY_MS),
    };
    return { status, lease: { pixelId, token, ids: ids.filter((_, i) => status[i] === "fresh"), detail } };
  }

  async commit(lease: DedupLease): Promise<void> {
    await this.settle(lease, true);
  }

  async release(lease: DedupLease): Promise<void> {
    await this.settle(lease, false);
  }

  private async settle(lease: DedupLease, commit: boolean): Promise<void> {
    const d = lease.detail as Detail | undefined;
    if (!d || d.keys.length === 0) return;
    await this.redis.pxDedupSettle(
      d.keys.length,
      ...d.keys,
      d.leaseValue,
      commit ? String(d.dayInPeriod) : "",
      ...d.fields,
    );
  }

  async claimUnconfirmed(pixelId: string, ids: readonly string[]) {
    const keys = ids.map(
      (id) =>
        `${this.options.prefix}ddc:{${pixelId}}:${createHash("sha256").update(pixelId).update("\u0000").update(id).digest("hex")}`,
    );
    const pipe = this.redis.pipeline();
    for (const k of keys) pipe.set(k, "1", "PX", this.options.leaseSeconds * 1000, "NX");
    const results = (await pipe.exec()) ?? [];
    const claimed = results.map(([err, r]) => !err && r === "OK");
    return {
      claimed,
      release: async () => {
        const mine = keys.filter((_, i) => claimed[i]);
        if (mine.length) await this.redis.del(...mine);
      },
    };
  }

  async prune(): Promise<number> {
    return 0; // periods expire with their keys
  }
}
