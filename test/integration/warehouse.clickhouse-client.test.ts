import { createChdbConnection } from "chdb/connection";
import { expect, it } from "vitest";
import { ClickHouseWarehouse } from "../../src/stores/warehouse/clickhouse.js";
import { WarehouseUnavailableError } from "../../src/stores/warehouse/port.js";
import { tempDir } from "../helpers/stores.js";
import { warehouseContract } from "./warehouse-contract.js";

/**
 * The server adapter's own code (@clickhouse/client: parameter formatting, result parsing, error
 * mapping) against the real engine, through chDB's pluggable @clickhouse/client connection.
 */
warehouseContract(
  "clickhouse adapter over chDB's @clickhouse/client connection",
  async () => {
    const dir = tempDir("pixelhouse-chconn-");
    const store = await ClickHouseWarehouse.open({
      url: "http://chdb.local",
      username: "default",
      password: "",
      database: "default",
      // chDB bundles its own copy of the client's connection types; the runtime contract is the same.
      connection: createChdbConnection({ path: dir.path }) as unknown as Parameters<
        typeof ClickHouseWarehouse.open
      >[0]["connection"],
    });
    return {
      store,
      async close() {
        await store.close();
        dir.remove();
      },
    };
  },
  // chDB's experimental @clickhouse/client transport aborts the whole engine when a response stream is
  // destroyed mid-query (closing a chDB connection in use does); HTTP to a server just closes the socket.
  // Its engine also hands a failed query's partial output to the next query (see ChdbWarehouse.drain).
  {
    readStats: false,
    settingsPerQuery: false,
    readerDatabase: false,
    leaveStreamEarly: false,
    failureLeavesOutput: true,
  },
);

it("clickhouse adapter: an unreachable server answers WarehouseUnavailableError", async () => {
  await expect(
    ClickHouseWarehouse.open({ url: "http://127.0.0.1:1", username: "default", password: "", database: "x" }),
  ).rejects.toBeInstanceOf(WarehouseUnavailableError);
});
