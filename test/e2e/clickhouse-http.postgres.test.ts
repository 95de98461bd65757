/** ClickHouse's HTTP interface with Postgres and Redis servers (cases: clickhouse-http-cases.ts). */
import { describe } from "vitest";
import { startTestApp } from "../helpers/app.js";
import { skipReason, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.js";
import { clickhouseHttpCases } from "./clickhouse-http-cases.js";

const available = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);
if (!available)
  skipReason("ClickHouse HTTP interface (Postgres + Redis)", "TEST_DATABASE_URL / TEST_REDIS_URL");

describe.skipIf(!available)("ClickHouse HTTP interface, Postgres + Redis servers", () => {
  clickhouseHttpCases(() =>
    startTestApp({
      sql: "postgres",
      kv: "redis",
      env: {
        CONSOLE_MAX_EXECUTION_SECONDS: "3",
        RATE_QUERY_PER_SEC: "100000",
        CONSOLE_READERS_PER_PIXEL: "4",
      },
    }),
  );
});
