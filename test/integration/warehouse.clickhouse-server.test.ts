import { existsSync } from "node:fs";
import { describe, it } from "vitest";
import { skipReason, TEST_CLICKHOUSE_URL } from "../helpers/env.js";
import { openClickHouseServer } from "../helpers/stores.js";
import { warehouseContract } from "./warehouse-contract.js";

const dockerAvailable = existsSync("/var/run/docker.sock") || !!process.env.DOCKER_HOST;

if (TEST_CLICKHOUSE_URL) {
  warehouseContract(`clickhouse server at ${new URL(TEST_CLICKHOUSE_URL).host}`, openClickHouseServer);
} else if (dockerAvailable && process.env.TEST_CLICKHOUSE_TESTCONTAINERS === "1") {
  // Started on demand through testcontainers where a Docker engine runs.
  warehouseContract("clickhouse server (testcontainers)", async () => {
    const { ClickHouseContainer } = await import("@testcontainers/clickhouse");
    const container = await new ClickHouseContainer("clickhouse/clickhouse-server:25.8").start();
    process.env.TEST_CLICKHOUSE_URL = `http://${container.getUsername()}:${container.getPassword()}@${container.getHost()}:${container.getMappedPort(8123)}`;
    const opened = await openClickHouseServer();
    return {
      store: opened.store,
      async close() {
        await opened.close();
        await container.stop();
      },
    };
  });
} else {
  describe("warehouse contract: clickhouse server", () => {
    it.skip(
      skipReason(
        "ClickHouse",
        "TEST_CLICKHOUSE_URL (no Docker engine for testcontainers here; set TEST_CLICKHOUSE_TESTCONTAINERS=1 where one runs)",
      ),
      () => {},
    );
  });
}
