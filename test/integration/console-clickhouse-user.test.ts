/**
 * Layer 4 of the SQL console, which only a ClickHouse server has: console queries run as a user made
 * by docker/clickhouse/console-user.sql, which can SELECT the tables behind the analyst tables and
 * nothing else. Runs when TEST_CLICKHOUSE_URL names a server whose user may create users and grants.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleService } from "../../src/console/service.js";
import { migrate } from "../../src/stores/migrations.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import { WarehouseAccessError, type WarehouseStore } from "../../src/stores/warehouse/port.js";
import { insertMarkers } from "../e2e/console-fixtures.js";
import { skipReason, TEST_CLICKHOUSE_URL } from "../helpers/env.js";
import { type Opened, openClickHouseServer, uniqueName } from "../helpers/stores.js";

const limits = { maxExecutionSeconds: 10, maxRowsToRead: 1e9, maxBytesToRead: 1e11, maxMemoryBytes: 2e9 };

describe.skipIf(!TEST_CLICKHOUSE_URL)("SQL console user on a ClickHouse server", () => {
  let opened: Opened<WarehouseStore>;
  let wh: WarehouseStore;
  let consoleUser: WarehouseStore;
  const user = uniqueName("pxh_console");
  const password = uniqueName("pw");

  beforeAll(async () => {
    opened = await openClickHouseServer();
    wh = opened.store;
    const sql = await PgliteSqlStore.open();
    await migrate(sql, wh);
    await sql.close();
    const text = readFileSync("docker/clickhouse/console-user.sql", "utf8")
      .split("\n")
      .filter((l) => !l.startsWith("--"))
      .join("\n")
      .replaceAll("{{CONSOLE_DB}}", `${wh.database}_console`)
      .replaceAll("{{DB}}", wh.database)
      .replaceAll("{{USER}}", user)
      .replaceAll("{{PASSWORD}}", password);
    for (const statement of text.split(/;\s*\n/)) if (statement.trim()) await wh.command(statement);
    await insertMarkers(wh, "px_a", "A");
    await insertMarkers(wh, "px_b", "B");
    consoleUser = await wh.openReader({ database: `${wh.database}_console`, username: user, password });
  });
  afterAll(async () => {
    await wh?.command(`DROP USER IF EXISTS ${user}`);
    await wh?.command(`DROP SETTINGS PROFILE IF EXISTS ${user}_profile`);
    await wh?.command(`DROP DATABASE IF EXISTS ${wh.database}_console`);
    await opened?.close();
  });

  it("reads the tables behind the analyst tables", async () => {
    const rows = await consoleUser.query(
      `SELECT order_id FROM ${wh.database}.orders WHERE pixel_id = 'px_a'`,
    );
    expect(rows).toEqual([{ order_id: "MARKA_orders" }]);
  });

  it.each([
    ["a table no analyst table exposes", (db: string) => `SELECT * FROM ${db}.touchpoints`],
    ["the migrations record", (db: string) => `SELECT * FROM ${db}.schema_migrations`],
    ["url()", () => "SELECT * FROM url('http://127.0.0.1:1/x', CSV, 'a String')"],
    ["file()", () => "SELECT * FROM file('x.csv', CSV, 'a String')"],
    ["remote()", (db: string) => `SELECT * FROM remote('127.0.0.1', ${db}.events)`],
    ["writes", (db: string) => `INSERT INTO ${db}.events (pixel_id, event_id) VALUES ('px_a', 'x')`],
    ["DDL", (db: string) => `CREATE TABLE ${db}.escape (a UInt8) ENGINE = Memory`],
  ])("refuses %s", async (_what, statement) => {
    await expect(consoleUser.query(statement(wh.database))).rejects.toBeInstanceOf(WarehouseAccessError);
  });

  it("runs the console end to end as that user, confined to the pixel", async () => {
    const service = new ConsoleService(wh, { limits, readers: 2, user: { username: user, password } });
    const result = await service.run("px_a", {
      sql: "SELECT event_id FROM events UNION ALL SELECT order_id FROM orders",
    });
    expect(result.rows.map((r) => r[0]).sort()).toEqual(["MARKA_events", "MARKA_orders"]);
  });
});

if (!TEST_CLICKHOUSE_URL) {
  describe("SQL console user on a ClickHouse server", () => {
    it.skip(skipReason("ClickHouse", "TEST_CLICKHOUSE_URL"), () => {});
  });
}
