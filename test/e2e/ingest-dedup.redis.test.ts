/**
 * The dedup suite (dedup-cases.ts) with the Redis server holding the digest set (server-mode dedup),
 * one group per request so concurrent copies race in Redis (see ONE_GROUP_PER_REQUEST).
 */
import { startTestApp } from "../helpers/app.js";
import { skipReason, TEST_REDIS_URL } from "../helpers/env.js";
import { dedupSuite, ONE_GROUP_PER_REQUEST } from "./dedup-cases.js";

if (!TEST_REDIS_URL) skipReason("Redis dedup", "TEST_REDIS_URL");

dedupSuite("eventId dedup, Redis digests", {
  start: () => startTestApp({ kv: "redis", env: ONE_GROUP_PER_REQUEST }),
  dedup: "redis",
  enabled: !!TEST_REDIS_URL,
});
