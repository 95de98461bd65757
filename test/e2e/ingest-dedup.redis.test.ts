/** The dedup suite (dedup-cases.ts) with the Redis server holding the digest set (server-mode dedup). */
import { startTestApp } from "../helpers/app.js";
import { skipReason, TEST_REDIS_URL } from "../helpers/env.js";
import { dedupSuite } from "./dedup-cases.js";

if (!TEST_REDIS_URL) skipReason("Redis dedup", "TEST_REDIS_URL");

dedupSuite("eventId dedup, Redis digests", {
  start: () => startTestApp({ kv: "redis" }),
  dedup: "redis",
  enabled: !!TEST_REDIS_URL,
});
