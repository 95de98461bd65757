import type { Response } from "express";
import { RateLimitedError } from "../errors.js";
import type { BucketRule, KvStore } from "../stores/kv/port.js";

export type RateClass = "ingest" | "query" | "collect";

/** Buckets hold two seconds' worth of requests, so short bursts pass and sustained floods do not. */
export function bucketRule(perSecond: number): BucketRule {
  return { capacity: Math.max(1, Math.ceil(perSecond * 2)), refillPerSecond: perSecond };
}

/**
 * Takes one token from `subject`'s bucket of `rateClass`; sets the IETF RateLimit / RateLimit-Policy
 * headers either way, and throws 429 with Retry-After when the bucket is empty.
 */
export async function enforceRateLimit(
  kv: KvStore,
  res: Response,
  rateClass: RateClass,
  subject: string,
  rule: BucketRule,
): Promise<void> {
  const d = await kv.takeTokens(`rl:${rateClass}:${subject}`, rule);
  const windowSeconds = Math.max(1, Math.round(rule.capacity / rule.refillPerSecond));
  const headers = {
    "RateLimit-Policy": `"${rateClass}";q=${rule.capacity};w=${windowSeconds}`,
    RateLimit: `"${rateClass}";r=${d.remaining};t=${Math.ceil(d.resetMs / 1000)}`,
  };
  if (!d.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(d.retryAfterMs / 1000)), headers);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
}
