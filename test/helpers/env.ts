/**
 * Which server stores this run can reach. CI sets TEST_DATABASE_URL / TEST_REDIS_URL and
 * REQUIRE_SERVER_STORES=1, so a missing server fails the run instead of skipping quietly.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
export const TEST_CLICKHOUSE_URL = process.env.TEST_CLICKHOUSE_URL || undefined;
export const REQUIRE_SERVER_STORES = process.env.REQUIRE_SERVER_STORES === "1";

if (REQUIRE_SERVER_STORES && (!TEST_DATABASE_URL || !TEST_REDIS_URL)) {
  throw new Error("REQUIRE_SERVER_STORES=1 needs TEST_DATABASE_URL and TEST_REDIS_URL");
}

const said = new Set<string>();
/** Prints once per process why a server suite does not run. */
export function skipReason(store: string, variable: string): string {
  const reason = `${store} server suite skipped: ${variable} is not set`;
  if (!said.has(reason)) {
    said.add(reason);
    console.warn(reason);
  }
  return reason;
}
