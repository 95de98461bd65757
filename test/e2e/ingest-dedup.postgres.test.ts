/**
 * The dedup suite (dedup-cases.ts) with SqlDedupStore on the Postgres server: unlike PGlite's single
 * connection, concurrent requests really race on the reservation there (one group per request, see
 * ONE_GROUP_PER_REQUEST).
 */
import { startTestApp } from "../helpers/app.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";
import { dedupSuite, ONE_GROUP_PER_REQUEST } from "./dedup-cases.js";

if (!TEST_DATABASE_URL) skipReason("Postgres dedup", "TEST_DATABASE_URL");

dedupSuite("eventId dedup, SQL dedup on the Postgres server", {
  start: () => startTestApp({ sql: "postgres", env: ONE_GROUP_PER_REQUEST }),
  dedup: "sql",
  enabled: !!TEST_DATABASE_URL,
});
