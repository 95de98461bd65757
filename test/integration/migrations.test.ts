import { cpSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MigrationError, migrate, SQL_DIR, splitStatements } from "../../src/stores/migrations.js";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";
import { type Opened, openChdb, openPglite, openPostgres, tempDir } from "../helpers/stores.js";

function copySql() {
  const dir = tempDir("pixelhouse-sql-");
  cpSync(SQL_DIR, dir.path, { recursive: true });
  return { ...dir, pg: join(dir.path, "postgres"), ch: join(dir.path, "clickhouse") };
}

let wh: Opened<WarehouseStore>;
beforeAll(async () => {
  wh = await openChdb();
});
afterAll(async () => {
  await wh.close();
});

async function freshWarehouseDb(): Promise<void> {
  // Each case starts from an empty warehouse database.
  const tables = await wh.store.query<{ name: string }>(
    "SELECT name FROM system.tables WHERE database = currentDatabase()",
  );
  for (const t of tables) await wh.store.command(`DROP TABLE IF EXISTS ${t.name}`);
}

describe("migrations", () => {
  let sql: Opened<SqlStore>;
  beforeAll(async () => {
    sql = await openPglite();
  });
  afterAll(async () => {
    await sql.close();
  });

  it("applies every migration to both stores once, then nothing", async () => {
    await freshWarehouseDb();
    const first = await migrate(sql.store, wh.store);
    expect(first.sql).toEqual(readdirSync(join(SQL_DIR, "postgres")).map((f) => f.replace(/\.sql$/, "")));
    expect(first.warehouse).toEqual(
      readdirSync(join(SQL_DIR, "clickhouse"))
        .filter((f) => f.endsWith(".sql"))
        .map((f) => f.replace(/\.sql$/, "")),
    );
    const second = await migrate(sql.store, wh.store);
    expect(second).toEqual({ sql: [], warehouse: [] });

    const { rows } = await sql.store.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining([
        "accounts",
        "api_keys",
        "pixels",
        "cost_lines",
        "variants",
        "dashboard_views",
        "outbox",
        "destinations",
        "schema_migrations",
      ]),
    );
    const tables = await wh.store.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name",
    );
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "events",
        "touchpoints",
        "touchpoints_mv",
        "identity_links",
        "orders",
        "order_lines",
        "refunds",
        "order_costs",
        "ad_entities",
        "ad_metrics_daily",
        "fx_rates",
        "schema_migrations",
      ]),
    );
  });

  it("refuses a Postgres migration edited after it was applied", async () => {
    const dirs = copySql();
    const store = await openPglite();
    await freshWarehouseDb();
    await migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch });
    writeFileSync(join(dirs.pg, "001_init.sql"), "-- edited\nSELECT 1;\n", { flag: "a" });
    await expect(migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch })).rejects.toThrow(
      /postgres migration .*001_init\.sql was edited after it was applied/,
    );
    await store.close();
    dirs.remove();
  });

  it("refuses a ClickHouse migration edited after it was applied", async () => {
    const dirs = copySql();
    const store = await openPglite();
    await freshWarehouseDb();
    await migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch });
    writeFileSync(join(dirs.ch, "001_init.sql"), "\n-- edited\n", { flag: "a" });
    const err = await migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toMatch(/clickhouse migration .*001_init\.sql was edited/);
    await store.close();
    dirs.remove();
  });

  it("rolls a failing Postgres migration back whole and records nothing of it", async () => {
    const dirs = copySql();
    const store = await openPglite();
    await freshWarehouseDb();
    await migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch });
    writeFileSync(join(dirs.pg, "999_broken.sql"), "CREATE TABLE half_done (id int);\nSELEC 1;\n");
    await expect(migrate(store.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch })).rejects.toThrow(
      /999_broken\.sql failed/,
    );
    const { rows } = await store.store.query("SELECT to_regclass('half_done') AS t");
    expect(rows[0]).toEqual({ t: null });
    const { rows: versions } = await store.store.query<{ version: number }>(
      "SELECT version FROM schema_migrations",
    );
    expect(versions.map((v) => v.version)).toEqual(
      readdirSync(join(SQL_DIR, "postgres")).map((f) => Number(f.slice(0, 3))),
    );
    await store.close();
    dirs.remove();
  });

  it("refuses migration files that are not NNN_name.sql", async () => {
    const dirs = copySql();
    writeFileSync(join(dirs.pg, "2_oops.sql"), "SELECT 1;");
    await expect(migrate(sql.store, wh.store, { sqlDir: dirs.pg, warehouseDir: dirs.ch })).rejects.toThrow(
      /2_oops\.sql is not NNN_name\.sql/,
    );
    dirs.remove();
  });

  it.skipIf(!TEST_DATABASE_URL)(
    "two processes migrating one Postgres at once apply each migration once",
    async () => {
      const db = await openPostgres();
      await freshWarehouseDb();
      const url = (db.store as unknown as { pool: { options: { connectionString: string } } }).pool.options
        .connectionString;
      const a = new PgSqlStore(url);
      const b = new PgSqlStore(url);
      const [ra, rb] = await Promise.all([migrate(a, wh.store), migrate(b, wh.store)]);
      expect([ra.sql.length, rb.sql.length].sort()).toEqual([
        0,
        readdirSync(join(SQL_DIR, "postgres")).length,
      ]);
      const { rows } = await db.store.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM schema_migrations",
      );
      expect(rows[0]!.n).toBe(readdirSync(join(SQL_DIR, "postgres")).length);
      const chRows = await wh.store.query<{ n: number }>("SELECT count() AS n FROM schema_migrations");
      expect(chRows[0]!.n).toBe(
        readdirSync(join(SQL_DIR, "clickhouse")).filter((f) => f.endsWith(".sql")).length,
      );
      await a.close();
      await b.close();
      await db.close();
    },
  );
});

describe("splitStatements", () => {
  it("splits on ; at the end of a line and drops comment lines", () => {
    expect(
      splitStatements("-- head\nCREATE TABLE a (x String);\n\n-- c\nCREATE VIEW v AS\nSELECT ';' AS s;\n"),
    ).toEqual(["CREATE TABLE a (x String)", "CREATE VIEW v AS\nSELECT ';' AS s"]);
  });
});

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
