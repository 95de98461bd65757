import { createChdbConnection } from "chdb/connection";
import { afterEach, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ClickHouseWarehouse } from "../../src/stores/warehouse/clickhouse.js";
import { tempDir } from "../helpers/stores.js";

type Connection = NonNullable<Parameters<typeof ClickHouseWarehouse.open>[0]["connection"]>;

/**
 * The server adapter over chDB's real @clickhouse/client transport, with the settings of every insert
 * request recorded on the way: chDB has no asynchronous insert queue to observe, so what is checked
 * is what a server would be asked, and that the rows are there once the insert returns.
 */
async function open(asyncInsertTables?: string[]) {
  const dir = tempDir("pixelhouse-async-insert-");
  const inner = createChdbConnection({ path: dir.path }) as unknown as Connection;
  const sent: { query: string; settings: Record<string, unknown> }[] = [];
  const connection = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      // Its methods use private fields: they must run on the connection itself.
      if (typeof value !== "function") return value;
      if (prop !== "insert") return value.bind(target);
      return (params: { query: string; clickhouse_settings?: Record<string, unknown> }) => {
        sent.push({ query: params.query, settings: { ...params.clickhouse_settings } });
        return (value as (p: unknown) => unknown).call(target, params);
      };
    },
  });
  const store = await ClickHouseWarehouse.open({
    url: "http://chdb.local",
    username: "default",
    password: "",
    database: "default",
    connection,
    ...(asyncInsertTables ? { asyncInsertTables } : {}),
  });
  closers.push(async () => {
    await store.close();
    dir.remove();
  });
  await store.command("CREATE TABLE events (id String, n UInt32) ENGINE = MergeTree ORDER BY id");
  await store.command("CREATE TABLE other (id String) ENGINE = MergeTree ORDER BY id");
  return { store, sent };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

it("clickhouse adapter: inserts into the listed tables ask for async_insert and wait for the write", async () => {
  const { store, sent } = await open(["events"]);
  // A caller cannot turn the wait off: the acknowledgement must keep meaning stored.
  await store.insert("events", [{ id: "a", n: 1 }], { settings: { wait_for_async_insert: 0 } });
  await store.insert("other", [{ id: "b" }]);
  expect(
    sent.map((s) => [s.query.split(" ")[2], s.settings.async_insert, s.settings.wait_for_async_insert]),
  ).toEqual([
    ["events", 1, 1],
    ["other", undefined, undefined],
  ]);
  // Written by the time insert() returned.
  expect(await store.query("SELECT id, n FROM events")).toEqual([{ id: "a", n: 1 }]);
});

it("clickhouse adapter: without the option no insert carries async settings", async () => {
  const { store, sent } = await open();
  await store.insert("events", [{ id: "a", n: 1 }]);
  expect(sent).toHaveLength(1);
  expect(sent[0]!.settings).not.toHaveProperty("async_insert");
  expect(sent[0]!.settings).not.toHaveProperty("wait_for_async_insert");
});

it("CLICKHOUSE_ASYNC_INSERT is off unless set to true or 1", () => {
  expect(loadConfig({}).CLICKHOUSE_ASYNC_INSERT).toBe(false);
  expect(loadConfig({ CLICKHOUSE_ASYNC_INSERT: "1" }).CLICKHOUSE_ASYNC_INSERT).toBe(true);
  expect(loadConfig({ CLICKHOUSE_ASYNC_INSERT: "true" }).CLICKHOUSE_ASYNC_INSERT).toBe(true);
  expect(() => loadConfig({ CLICKHOUSE_ASYNC_INSERT: "yes" })).toThrow(/CLICKHOUSE_ASYNC_INSERT/);
});
