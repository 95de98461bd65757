/** ClickHouse's HTTP interface on embedded stores (cases: clickhouse-http-cases.ts). */
import { describe } from "vitest";
import { startTestApp } from "../helpers/app.js";
import { clickhouseHttpCases } from "./clickhouse-http-cases.js";

describe("ClickHouse HTTP interface, embedded stores", () => {
  clickhouseHttpCases(() =>
    startTestApp({
      env: {
        CONSOLE_MAX_EXECUTION_SECONDS: "3",
        RATE_QUERY_PER_SEC: "100000",
        CONSOLE_READERS_PER_PIXEL: "4",
      },
    }),
  );
});
