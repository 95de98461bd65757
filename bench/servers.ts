/**
 * The Postgres + Redis servers a benchmark runs the service against besides the embedded stores:
 * BENCH_DATABASE_URL / BENCH_REDIS_URL, or the tests' TEST_DATABASE_URL / TEST_REDIS_URL.
 */
import { randomBytes } from "node:crypto";
import { createTestDatabase } from "../test/helpers/stores.js";

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;

/** A new empty database on the server of `url`; its URL, and a function that drops it. */
export const freshDatabase = (url: string) => createTestDatabase("pxh_bench", url);

/** The environment of a service process on those servers: its own database and Redis key prefix. */
export function serverEnv(databaseUrl: string, redisUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `pxhb${randomBytes(3).toString("hex")}:`,
    KEY_SECRET: randomBytes(24).toString("hex"),
  };
}
