/**
 * The SQL adapters when their store goes away under them: PGlite's worker dying, and a Postgres
 * server ending the session (57P01, as at a shutdown) during a statement or between two statements
 * of a transaction. Each failure is a SqlUnavailableError, nothing hangs or crashes the process, and
 * the store serves again afterwards.
 */
import type { Worker } from "node:worker_threads";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import { type SqlError, SqlUnavailableError } from "../../src/stores/sql/port.js";
import { TEST_DATABASE_URL } from "../helpers/env.js";
import { createTestDatabase } from "../helpers/stores.js";

const caught = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
};

describe("PGlite", () => {
  it("a worker that dies fails the statement under way and every later one at once", async () => {
    const store = await PgliteSqlStore.open();
    try {
      await store.query("SELECT 1");
      const running = store.query("SELECT pg_sleep(30)");
      await (store as unknown as { worker: Worker }).worker.terminate();
      const err = await caught(running);
      expect(err).toBeInstanceOf(SqlUnavailableError);
      expect((err as SqlError).code).toBe("08006");
      await expect(store.query("SELECT 1")).rejects.toBeInstanceOf(SqlUnavailableError);
      await expect(store.transaction(async () => 1)).rejects.toBeInstanceOf(SqlUnavailableError);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)("Postgres server", () => {
  it("a session ended by the server (57P01) → SqlUnavailableError; the next statement gets a new session", async () => {
    const db = await createTestDatabase("pxh_outage");
    const store = new PgSqlStore(db.url, { max: 1 });
    try {
      const err = await caught(store.query("SELECT pg_terminate_backend(pg_backend_pid())"));
      expect(err).toBeInstanceOf(SqlUnavailableError);
      expect((err as SqlError).code).toBe("57P01");
      expect((await store.query<{ n: number }>("SELECT 1 AS n")).rows).toEqual([{ n: 1 }]);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it("a session ended between two statements of a transaction neither crashes the process nor is reused", async () => {
    const db = await createTestDatabase("pxh_outage");
    const store = new PgSqlStore(db.url, { max: 1 });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const err = await caught(
        store.transaction(async (tx) => {
          const { rows } = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
          const pid = rows[0]!.pid;
          await admin.query("SELECT pg_terminate_backend($1)", [pid]);
          // The FATAL message reaches the idle client while no statement of ours is running.
          for (let i = 0; i < 200; i++) {
            const { rowCount } = await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
            if (rowCount === 0) break;
            await new Promise((r) => setTimeout(r, 10));
          }
          await new Promise((r) => setImmediate(r));
          await tx.query("SELECT 1");
        }),
      );
      expect(err).toBeInstanceOf(SqlUnavailableError);
      // The broken connection left the pool (max 1): this one is new.
      expect((await store.query<{ n: number }>("SELECT 1 AS n")).rows).toEqual([{ n: 1 }]);
    } finally {
      await admin.end();
      await store.close();
      await db.drop();
    }
  });
});
