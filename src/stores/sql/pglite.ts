import { mkdirSync } from "node:fs";
import { PGlite, types } from "@electric-sql/pglite";
import { type SqlExecutor, type SqlResult, type SqlStore, type SqlValue, toSqlError } from "./port.js";

// Same result shapes as the pg adapter: int8 as string, timestamps as Date, jsonb parsed.
const parsers = { [types.INT8]: (v: string) => v };

/** PGlite is one connection: its own queue serializes statements, and `transaction` holds it exclusively. */
export class PgliteSqlStore implements SqlStore {
  readonly kind = "pglite" as const;

  private constructor(private readonly db: PGlite) {}

  /** `dir` undefined keeps the database in memory (tests). */
  static async open(dir?: string): Promise<PgliteSqlStore> {
    if (dir) mkdirSync(dir, { recursive: true });
    const db = await PGlite.create(dir ?? "memory://", { parsers });
    return new PgliteSqlStore(db);
  }

  async query<T>(text: string, params: readonly SqlValue[] = []): Promise<SqlResult<T>> {
    return run<T>(this.db, text, params);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction((t) =>
        fn({
          query: (text, params = []) => run(t, text, params),
          exec: async (script) => {
            try {
              await t.exec(script);
            } catch (err) {
              throw toSqlError(err);
            }
          },
        }),
      );
    } catch (err) {
      throw err instanceof Error && "code" in err ? toSqlError(err) : err;
    }
  }

  async exec(script: string): Promise<void> {
    try {
      await this.db.exec(script);
    } catch (err) {
      throw toSqlError(err);
    }
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}

interface Queryable {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
}

async function run<T>(q: Queryable, text: string, params: readonly SqlValue[]): Promise<SqlResult<T>> {
  try {
    const r = await q.query<T>(text, params as unknown[]);
    return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
  } catch (err) {
    throw toSqlError(err);
  }
}
