import pg from "pg";
import { type BreakerOptions, CircuitBreaker, DEFAULT_BREAKER } from "../breaker.js";
import { KeyedLock, Slots } from "../locks.js";
import {
  type SqlExecutor,
  type SqlResult,
  type SqlStore,
  SqlUnavailableError,
  type SqlValue,
  toSqlError,
} from "./port.js";

// Return int8/numeric as strings (no silent precision loss); timestamps stay Date.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export interface PgStoreOptions {
  max?: number;
  /**
   * Bounds opening a connection (TCP, TLS, authentication) and waiting for a free one of the pool:
   * a server that does not answer fails the call after this long instead of hanging.
   */
  connectTimeoutMs?: number;
  breaker?: BreakerOptions;
}

export class PgSqlStore implements SqlStore {
  readonly kind = "postgres" as const;
  private readonly pool: pg.Pool;
  private readonly breaker: CircuitBreaker;
  private readonly local = new KeyedLock();
  /**
   * Exclusive sections hold a connection each while their work runs queries on others: at most half
   * the pool is held that way, so the work always finds a connection (all of it held would deadlock
   * until the connect timeout).
   */
  private readonly sections: Slots;

  constructor(url: string, options: PgStoreOptions = {}) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
      // A peer that vanished without closing (host down, network cut) is noticed by the kernel.
      keepAlive: true,
    });
    this.breaker = new CircuitBreaker(options.breaker ?? DEFAULT_BREAKER, Date.now, "sql");
    this.sections = new Slots(Math.max(1, Math.floor((options.max ?? 10) / 2)));
    // An idle client's error must not crash the process; the next query reports it.
    this.pool.on("error", () => {});
  }

  async query<T>(text: string, params: readonly SqlValue[] = []): Promise<SqlResult<T>> {
    return this.guard(() => run<T>(this.pool, text, params));
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.guard(async () => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw toSqlError(err);
      }
      // A checked-out client has no listener of pg-pool's: a connection lost between two statements
      // (server shutdown, 57P01 while idle) would be an unhandled 'error' event and end the process.
      // The next statement fails with the connection error anyway.
      const onError = () => {};
      client.on("error", onError);
      const tx: SqlExecutor = {
        query: (text, params = []) => run(client, text, params),
        exec: async (script) => {
          await run(client, script, []);
        },
      };
      let failure: unknown;
      try {
        await run(client, "BEGIN", []);
        const result = await fn(tx);
        await run(client, "COMMIT", []);
        return result;
      } catch (err) {
        failure = err;
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.off("error", onError);
        // A broken connection is dropped from the pool rather than handed to the next caller.
        client.release(failure instanceof SqlUnavailableError ? failure : undefined);
      }
    });
  }

  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    // One connection per key in this process; the advisory lock orders the processes.
    return this.local.run(key, () => this.sections.run(() => this.lockedOnOwnConnection(key, fn)));
  }

  private async lockedOnOwnConnection<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.guard(async () => {
      try {
        return await this.pool.connect();
      } catch (err) {
        throw toSqlError(err);
      }
    });
    const onError = () => {};
    client.on("error", onError);
    let broken: unknown;
    try {
      await this.guard(() => run(client, "SELECT pg_advisory_lock(hashtext($1))", [key]));
      try {
        return await fn();
      } finally {
        await run(client, "SELECT pg_advisory_unlock(hashtext($1))", [key]).catch((err) => {
          // Dropping the connection releases its session locks.
          broken = err;
        });
      }
    } catch (err) {
      broken ??= err instanceof SqlUnavailableError ? err : undefined;
      throw err;
    } finally {
      client.off("error", onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async exec(script: string): Promise<void> {
    await this.guard(async () => {
      try {
        await this.pool.query(script);
      } catch (err) {
        throw toSqlError(err);
      }
    });
  }

  async ping(): Promise<void> {
    await this.query("SELECT 1");
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private guard<T>(fn: () => Promise<T>): Promise<T> {
    return this.breaker.run(
      fn,
      (err) => err instanceof SqlUnavailableError,
      (retryAfterMs) => {
        const err = new SqlUnavailableError(
          `the SQL store failed repeatedly; not asked again for ${retryAfterMs} ms`,
          undefined,
        );
        err.retryAfterMs = retryAfterMs;
        return err;
      },
    );
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
