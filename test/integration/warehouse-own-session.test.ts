/**
 * A background worker's own warehouse session (src/stores/warehouse/session.ts) over chDB: its
 * statements do not queue behind the main session's, and its own calls run one at a time, so values
 * bound as a reader's session parameters never mix. (Not the whole warehouse contract: a chDB
 * reader's `queryStream` repeats a CSVWithNames header per block, and no worker streams.)
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { OwnSession } from "../../src/stores/warehouse/session.js";
import { type Opened, openChdb } from "../helpers/stores.js";

let opened: Opened<WarehouseStore>;
beforeAll(async () => {
  opened = await openChdb();
});
afterAll(() => opened?.close());

it("a statement on its own session does not wait for the main session's running one", async () => {
  const own = new OwnSession(opened.store);
  await opened.store.command("CREATE TABLE own_t (a UInt64) ENGINE = MergeTree ORDER BY a");
  let slowDone = false;
  // Three seconds in the engine on the main session (sleep is capped at 3 s per block).
  const slow = opened.store
    .query("SELECT sleepEachRow(1) FROM numbers(3) SETTINGS max_block_size = 1")
    .then(() => {
      slowDone = true;
    });
  await own.insert("own_t", [{ a: 1 }]);
  expect(await own.query("SELECT count() AS n FROM own_t")).toEqual([{ n: 1 }]);
  expect(slowDone).toBe(false);
  await slow;
});

it("concurrent calls each get their own bound values", async () => {
  const own = new OwnSession(opened.store);
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      own.query<{ v: string; n: number }>("SELECT {v:String} AS v, {n:UInt32} * 2 AS n", {
        v: `value-${i}`,
        n: i,
      }),
    ),
  );
  expect(answers).toEqual(answers.map((_, i) => [{ v: `value-${i}`, n: i * 2 }]));
});

it("inserts, commands and reads through the one reader, in the order they were called", async () => {
  const own = new OwnSession(opened.store);
  await own.command("CREATE TABLE own_order (i UInt32) ENGINE = MergeTree ORDER BY i");
  const calls = Array.from({ length: 10 }, (_, i) => own.insert("own_order", [{ i }]));
  const counted = own.query<{ n: number }>("SELECT count() AS n FROM own_order");
  await Promise.all(calls);
  expect(await counted).toEqual([{ n: 10 }]);
  await own.close();
  // Closing it closes nothing: the reader belongs to the store it came from.
  expect(await own.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
});
