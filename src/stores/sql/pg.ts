import pg from "pg";
import { type SqlExecutor, type SqlResult, type SqlStore, type SqlValue, toSqlError } from "./port.js";

// Return int8/numeric as strings (no silent precision loss); timestamps stay Date.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export class PgSqlStore implements SqlStore {
  readonly kind = "postgres" as const;
  private readonly pool: pg.Pool;

  constructor(url: string, options: { max?: number } = {}) {
    this.pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: 5000 });
    // An idle client's error must not crash the process; the next query reports it.
    this.pool.on("error", () => {});
  }

  async query<T>(text: string, params: readonly SqlValue[] = []): Promise<SqlResult<T>> {
    return run<T>(this.pool, text, params);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw toSqlError(err);
    }
    const tx: SqlExecutor = {
      query: (text, params = []) => run(client, text, params),
      exec: async (script) => {
        await run(client, script, []);
      },
    };
    try {
      await client.query("BEGIN");
      const result = await fn(tx);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async exec(script: string): Promise<void> {
    try {
      await this.pool.query(script);
    } catch (err) {
      throw toSqlError(err);
    }
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

async function run<T>(
  q: pg.Pool | pg.PoolClient,
  text: string,
  params: readonly SqlValue[],
): Promise<SqlResult<T>> {
  try {
    const r = await q.query(text, params as unknown[]);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  } catch (err) {
    throw toSqlError(err);
  }
}
