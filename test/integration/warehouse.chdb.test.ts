import { expect, it } from "vitest";
import { WarehouseError, WarehouseUnavailableError } from "../../src/stores/warehouse/port.js";
import { openChdb } from "../helpers/stores.js";
import { warehouseContract } from "./warehouse-contract.js";

warehouseContract("chdb (embedded)", () => openChdb());

it("chdb: a closed store answers WarehouseUnavailableError", async () => {
  const opened = await openChdb();
  await opened.store.close();
  await expect(opened.store.query("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
  await opened.close();
});

it("chdb: a reader's query stops in the engine when its signal aborts, and only then settles", async () => {
  const opened = await openChdb();
  const wh = opened.store;
  const reader = await wh.openReader();
  const running = () =>
    wh.query<{ n: number }>(
      "SELECT count() AS n FROM system.processes WHERE query LIKE '%sipHash64(number) = 7%' AND query NOT LIKE '%system.processes%'",
    );
  try {
    // Bound (the engine lists the query re-rendered) or plain text; with settings or without; streamed or not.
    for (const [stream, bound] of [
      [false, true],
      [true, true],
      [false, false],
      [true, false],
    ]) {
      const abort = new AbortController();
      const sql = `SELECT count() FROM numbers(${bound ? "{n:UInt64}" : "100000000000"}) WHERE sipHash64(number) = 7`;
      const params = bound ? { n: 100_000_000_000 } : undefined;
      const options = {
        format: "CSV",
        signal: abort.signal,
        ...(bound ? { settings: { max_execution_time: 600 } } : {}),
      };
      const work = stream
        ? (async () => {
            for await (const _ of reader.queryStream(sql, params, options)) {
              // no chunk comes before the count
            }
          })()
        : reader.queryText(sql, params, options);
      while ((await running())[0]!.n === 0) await new Promise((r) => setTimeout(r, 20));
      abort.abort();
      await expect(work).rejects.toBeInstanceOf(WarehouseError);
      // The reader's session answers at once (a query still running would hold it for 600 s), and
      // nothing of the killed query is left (chDB lists a session's last query until its next one).
      expect(await reader.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      expect((await running())[0]!.n).toBe(0);
    }
    // A signal that is already aborted never starts the query.
    const gone = new AbortController();
    gone.abort();
    await expect(
      reader.queryText("SELECT 1", undefined, { format: "CSV", signal: gone.signal }),
    ).rejects.toBeInstanceOf(WarehouseError);
  } finally {
    await opened.close();
  }
});

it("chdb: a reader's failed query leaves none of its output to the next query", async () => {
  const opened = await openChdb();
  const reader = await opened.store.openReader();
  try {
    // Output first, then a failure: the first 65k-row block is written before the second throws.
    for (const [failing, settings] of [
      ["SELECT number, throwIf(number = 150000) FROM numbers(200000)", { max_rows_to_read: 0 }],
      [
        "SELECT number FROM numbers(100000) UNION ALL SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) = 1",
        { max_rows_to_read: 0, max_execution_time: 1 },
      ],
    ] as const) {
      await expect(reader.queryText(failing, undefined, { format: "CSV", settings })).rejects.toBeInstanceOf(
        WarehouseError,
      );
      expect((await reader.queryText("SELECT 1 AS one", undefined, { format: "CSV" })).text).toBe("1\n");
    }
  } finally {
    await opened.close();
  }
});

it("chdb: a reader binds an id list longer than the engine's default statement size (256 KiB)", async () => {
  // A reader sends its values in a `SET param_…` statement: 20,000 Shopify-style order ids are ~900 KB.
  const opened = await openChdb();
  try {
    const reader = await opened.store.openReader();
    const ids = Array.from(
      { length: 20_000 },
      (_, i) => `gid://shopify/Order/${String(i).padStart(20, "0")}`,
    );
    expect(
      await reader.query<{ n: number; last: string }>(
        "SELECT length({ids:Array(String)}) AS n, arrayElement({ids:Array(String)}, -1) AS last",
        { ids },
      ),
    ).toEqual([{ n: 20_000, last: ids.at(-1) }]);
  } finally {
    await opened.close();
  }
});
