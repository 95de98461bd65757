import { cpSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { DerivedWorker } from "../../src/derived/worker.js";
import { migrate, parseScript, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { type Opened, openChdb, openPglite, tempDir } from "./stores.js";

/**
 * The schema as it stood before a warehouse migration, for tests of that migration on an existing
 * store: every Postgres file and the named warehouse files, copied to a temp dir. `restart` empties
 * both stores and migrates them to it.
 */
export function schemaBefore(warehouseFiles: readonly string[]) {
  const dir = tempDir("pixelhouse-sql-before-");
  cpSync(join(SQL_DIR, "postgres"), join(dir.path, "postgres"), { recursive: true });
  mkdirSync(join(dir.path, "clickhouse"));
  for (const f of warehouseFiles) cpSync(join(SQL_DIR, "clickhouse", f), join(dir.path, "clickhouse", f));
  return {
    async restart(wh: WarehouseStore, sql: SqlStore): Promise<void> {
      const tables = await wh.query<{ name: string }>(
        "SELECT name FROM system.tables WHERE database = currentDatabase()",
      );
      for (const t of tables) await wh.command(`DROP TABLE IF EXISTS ${t.name}`);
      await sql.exec("DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
      await migrate(sql, wh, {
        sqlDir: join(dir.path, "postgres"),
        warehouseDir: join(dir.path, "clickhouse"),
      });
    },
    remove: () => dir.remove(),
  };
}

/** The statements of a warehouse migration file, parsed as the migration runner parses them. */
export const migrationStatements = (file: string) =>
  parseScript(readFileSync(join(SQL_DIR, "clickhouse", file), "utf8"));

/**
 * The first `stop` statements of a warehouse migration file, each skipped when its `-- when:` guard
 * does not hold, as the migration runner would run them: a run interrupted after `stop` statements.
 */
export async function runMigrationUntil(wh: WarehouseStore, file: string, stop: number): Promise<void> {
  for (const s of migrationStatements(file).slice(0, stop)) {
    if (s.when) {
      const [first] = await wh.query<Record<string, unknown>>(s.when);
      if (!first || Number(Object.values(first)[0]) === 0) continue;
    }
    await wh.command(s.sql);
  }
}

/**
 * Stores for a migration test, opened once per file: an embedded warehouse and Postgres, a derived
 * tables' worker over them, and `restart` — both stores emptied and migrated to the schema before the
 * migration under test (`schemaBefore(warehouseFiles)`). The fields are set in the file's `beforeAll`.
 */
export function migrationTestStores(warehouseFiles: readonly string[]) {
  const before = schemaBefore(warehouseFiles);
  let opened: { wh: Opened<WarehouseStore>; sql: Opened<SqlStore> } | undefined;
  const stores = {
    wh: undefined as unknown as WarehouseStore,
    sql: undefined as unknown as SqlStore,
    worker: undefined as unknown as DerivedWorker,
    restart: () => before.restart(stores.wh, stores.sql),
  };
  beforeAll(async () => {
    opened = { wh: await openChdb(), sql: await openPglite() };
    stores.wh = opened.wh.store;
    stores.sql = opened.sql.store;
    const sql = opened.sql.store;
    stores.worker = new DerivedWorker(stores.wh, {
      marginMs: 0,
      exclusive: (key, fn) => sql.exclusive(key, fn),
    });
  });
  afterAll(async () => {
    await opened?.wh.close();
    await opened?.sql.close();
    before.remove();
  });
  return stores;
}
