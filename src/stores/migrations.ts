import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SqlExecutor, SqlStore } from "./sql/port.js";
import { LazyWarehouse } from "./warehouse/lazy.js";
import type { WarehouseStore } from "./warehouse/port.js";

export const SQL_DIR = fileURLToPath(new URL("../../sql", import.meta.url));

export interface Migration {
  version: number;
  name: string;
  file: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {}

/** Reads `NNN_name.sql` files in version order. */
export function readMigrations(dir: string): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  const out: Migration[] = [];
  for (const file of files) {
    const m = /^(\d{3,})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!m) throw new MigrationError(`migration file name ${file} is not NNN_name.sql`);
    const sql = readFileSync(join(dir, file), "utf8");
    out.push({
      version: Number(m[1]),
      name: m[2]!,
      file: join(dir, file),
      sql,
      checksum: createHash("sha256").update(sql).digest("hex"),
    });
  }
  out.sort((a, b) => a.version - b.version);
  for (let i = 1; i < out.length; i++) {
    if (out[i]!.version === out[i - 1]!.version)
      throw new MigrationError(`two migrations share version ${out[i]!.version}`);
  }
  return out;
}

interface Applied {
  version: number;
  checksum: string;
}

function plan(all: Migration[], applied: Applied[], store: string): Migration[] {
  const byVersion = new Map(applied.map((a) => [Number(a.version), a.checksum]));
  for (const m of all) {
    const sum = byVersion.get(m.version);
    if (sum !== undefined && sum !== m.checksum) {
      throw new MigrationError(
        `${store} migration ${m.file} was edited after it was applied (checksum ${sum.slice(0, 12)}… ≠ ${m.checksum.slice(0, 12)}…); add a new migration instead`,
      );
    }
  }
  return all.filter((m) => !byVersion.has(m.version));
}

/** Same 64-bit id in every process: serializes concurrent migrators on the Postgres side. */
const LOCK_ID = 7_146_022_611;

export interface MigrationReport {
  sql: string[];
  warehouse: string[];
}

/**
 * Applies pending migrations to both stores. The whole run holds a Postgres advisory lock, so two
 * processes starting at once apply each migration once; the Postgres part is one transaction.
 */
export async function migrate(
  sql: SqlStore,
  warehouse: WarehouseStore,
  options: { sqlDir?: string; warehouseDir?: string } = {},
): Promise<MigrationReport> {
  const pgMigrations = readMigrations(options.sqlDir ?? join(SQL_DIR, "postgres"));
  const chMigrations = readMigrations(options.warehouseDir ?? join(SQL_DIR, "clickhouse"));
  // A warehouse not opened yet is migrated when it opens, under the same lock, if it ever does.
  const deferred = warehouse instanceof LazyWarehouse && !warehouse.opened;
  if (deferred) {
    await warehouse.whenOpened((wh) =>
      sql.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1)", [LOCK_ID]);
        await migrateWarehouse(wh, chMigrations);
      }),
    );
  }
  return sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [LOCK_ID]);
    const sqlApplied = await migrateSql(tx, pgMigrations);
    const whApplied = deferred ? [] : await migrateWarehouse(warehouse, chMigrations);
    return { sql: sqlApplied, warehouse: whApplied };
  });
}

async function migrateSql(tx: SqlExecutor, all: Migration[]): Promise<string[]> {
  await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now())`);
  const { rows } = await tx.query<Applied>("SELECT version, checksum FROM schema_migrations");
  const pending = plan(all, rows, "postgres");
  for (const m of pending) {
    try {
      await tx.exec(m.sql);
    } catch (err) {
      throw new MigrationError(`postgres migration ${m.file} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    await tx.query("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)", [
      m.version,
      m.name,
      m.checksum,
    ]);
  }
  return pending.map((m) => basename(m.file, ".sql"));
}

/** ClickHouse has no transactional DDL: statements are idempotent and the record is written last. */
async function migrateWarehouse(wh: WarehouseStore, all: Migration[]): Promise<string[]> {
  await wh.command(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))
    ENGINE = ReplacingMergeTree ORDER BY version`);
  const rows = await wh.query<Applied>("SELECT version, checksum FROM schema_migrations FINAL");
  const pending = plan(all, rows, "clickhouse");
  for (const m of pending) {
    for (const { sql: statement, when } of parseScript(m.sql)) {
      try {
        if (when && !(await holds(wh, when))) continue;
        await wh.command(statement);
      } catch (err) {
        throw new MigrationError(`clickhouse migration ${m.file} failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    await wh.insert("schema_migrations", [{ version: m.version, name: m.name, checksum: m.checksum }]);
  }
  return pending.map((m) => basename(m.file, ".sql"));
}

export interface MigrationState {
  applied: number;
  /** Files not applied yet (`serve` or any command applies them on start). */
  pending: string[];
}

/** Applied and pending migrations of both stores, read without applying anything. */
export async function migrationStatus(
  sql: SqlStore,
  warehouse: WarehouseStore,
): Promise<{ sql: MigrationState; warehouse: MigrationState }> {
  const state = (all: Migration[], applied: { version: number | string }[]): MigrationState => {
    const done = new Set(applied.map((a) => Number(a.version)));
    return {
      applied: all.filter((m) => done.has(m.version)).length,
      pending: all.filter((m) => !done.has(m.version)).map((m) => basename(m.file, ".sql")),
    };
  };
  const pg = await sql
    .query<{ version: number }>("SELECT version FROM schema_migrations")
    .then((r) => r.rows)
    .catch(() => []);
  const ch = await warehouse
    .query<{ version: number }>("SELECT version FROM schema_migrations FINAL")
    .catch(() => []);
  return {
    sql: state(readMigrations(join(SQL_DIR, "postgres")), pg),
    warehouse: state(readMigrations(join(SQL_DIR, "clickhouse")), ch),
  };
}

/** Splits a script on `;` at the end of a line; `--` comment lines are dropped. */
export function splitStatements(script: string): string[] {
  return parseScript(script).map((s) => s.sql);
}

export interface ScriptStatement {
  sql: string;
  /**
   * A warehouse statement preceded by a `-- when: <query>` line runs only when that query answers a
   * non-zero first value. ClickHouse DDL is not transactional and a half-applied file is re-run whole,
   * so a statement that is not idempotent by itself (EXCHANGE TABLES, a copy) is guarded by the
   * state it expects.
   */
  when?: string;
}

export function parseScript(script: string): ScriptStatement[] {
  const out: ScriptStatement[] = [];
  let when: string | undefined;
  let body: string[] = [];
  const flush = () => {
    const sql = body.join("\n").trim();
    if (sql) out.push(when ? { sql, when } : { sql });
    body = [];
    when = undefined;
  };
  for (const line of script.split("\n")) {
    const trimmed = line.trimStart();
    const guard = /^--\s*when:\s*(.+)$/.exec(trimmed);
    if (guard) {
      if (body.join("").trim()) flush();
      when = guard[1]!.trim();
      continue;
    }
    if (trimmed.startsWith("--")) continue;
    const end = /;\s*$/.exec(line);
    if (end) {
      body.push(line.slice(0, end.index));
      flush();
    } else body.push(line);
  }
  flush();
  return out;
}

async function holds(wh: WarehouseStore, condition: string): Promise<boolean> {
  const rows = await wh.query<Record<string, unknown>>(condition);
  const first = rows[0] ? Object.values(rows[0])[0] : undefined;
  return first !== undefined && first !== null && Number(first) !== 0 && first !== false;
}
