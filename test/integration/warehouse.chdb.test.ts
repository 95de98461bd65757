import { expect, it } from "vitest";
import { WarehouseUnavailableError } from "../../src/stores/warehouse/port.js";
import { openChdb } from "../helpers/stores.js";
import { warehouseContract } from "./warehouse-contract.js";

warehouseContract("chdb (embedded)", () => openChdb());

it("chdb: a closed store answers WarehouseUnavailableError", async () => {
  const opened = await openChdb();
  await opened.store.close();
  await expect(opened.store.query("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
  await opened.close();
});
