import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import { SqlError, type SqlStore, SqlUnavailableError } from "../../src/stores/sql/port.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

/** A promise and the function that settles it (a gate a test opens, or a sign that work started). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`sql contract: ${adapter.name}`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      await sql.exec(`
        CREATE TABLE contract (id text PRIMARY KEY, n integer, big bigint, amount numeric(18, 4), doc jsonb,
          tags text[], at timestamptz, raw bytea, flag boolean, note text);
        CREATE TABLE counter (id integer PRIMARY KEY, n integer NOT NULL);
        INSERT INTO counter VALUES (1, 0);`);
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("binds $N parameters of every type used and returns the same shapes", async () => {
      const at = new Date("2026-03-29T01:02:03.456Z");
      await sql.query(
        `INSERT INTO contract (id, n, big, amount, doc, tags, at, raw, flag, note)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          "a'; DROP TABLE contract; --",
          42,
          "9007199254740993",
          "12.3456",
          { k: ["v", 1] },
          ["x", "y'"],
          at,
          Buffer.from([0, 1, 255]),
          true,
          null,
        ],
      );
      const { rows, rowCount } = await sql.query<Record<string, unknown>>("SELECT * FROM contract");
      expect(rowCount).toBe(1);
      const row = rows[0]!;
      expect(row.id).toBe("a'; DROP TABLE contract; --");
      expect(row.n).toBe(42);
      expect(row.big).toBe("9007199254740993");
      expect(row.amount).toBe("12.3456");
      expect(row.doc).toEqual({ k: ["v", 1] });
      expect(row.tags).toEqual(["x", "y'"]);
      expect((row.at as Date).toISOString()).toBe(at.toISOString());
      expect(Buffer.from(row.raw as Uint8Array).equals(Buffer.from([0, 1, 255]))).toBe(true);
      expect(row.flag).toBe(true);
      expect(row.note).toBeNull();
    });

    it("reports affected rows of writes", async () => {
      const r = await sql.query("UPDATE contract SET n = n + 1 WHERE n = $1", [42]);
      expect(r.rowCount).toBe(1);
      const none = await sql.query("UPDATE contract SET n = n + 1 WHERE n = $1", [-1]);
      expect(none.rowCount).toBe(0);
    });

    it("commits a transaction that resolves and rolls back one that throws", async () => {
      await sql.transaction(async (tx) => {
        await tx.query("INSERT INTO contract (id) VALUES ($1)", ["committed"]);
      });
      await expect(
        sql.transaction(async (tx) => {
          await tx.query("INSERT INTO contract (id) VALUES ($1)", ["rolled-back"]);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      const { rows } = await sql.query<{ id: string }>(
        "SELECT id FROM contract WHERE id IN ($1, $2) ORDER BY id",
        ["committed", "rolled-back"],
      );
      expect(rows.map((r) => r.id)).toEqual(["committed"]);
    });

    it("serializes concurrent read-modify-write transactions under row locks", async () => {
      await Promise.all(
        Array.from({ length: 20 }, () =>
          sql.transaction(async (tx) => {
            const { rows } = await tx.query<{ n: number }>("SELECT n FROM counter WHERE id = 1 FOR UPDATE");
            await tx.query("UPDATE counter SET n = $1 WHERE id = 1", [rows[0]!.n + 1]);
          }),
        ),
      );
      const { rows } = await sql.query<{ n: number }>("SELECT n FROM counter WHERE id = 1");
      expect(rows[0]!.n).toBe(20);
    });

    it("maps errors to SqlError with the SQLSTATE", async () => {
      await sql.query("INSERT INTO contract (id) VALUES ('dup')");
      const dup = await sql.query("INSERT INTO contract (id) VALUES ('dup')").catch((e: unknown) => e);
      expect(dup).toBeInstanceOf(SqlError);
      expect((dup as SqlError).isUniqueViolation).toBe(true);
      const syntax = await sql.query("SELEC 1").catch((e: unknown) => e);
      expect(syntax).toBeInstanceOf(SqlError);
      expect((syntax as SqlError).code).toBe("42601");
      expect(await sql.query<{ one: number }>("SELECT 1 AS one")).toMatchObject({ rows: [{ one: 1 }] });
    });

    it("exclusive(key) runs one holder of a key at a time, other keys alongside, and frees it after a failure", async () => {
      const order: string[] = [];
      const { promise: gate, resolve: release } = signal();
      const { promise: inside, resolve: entered } = signal();
      const first = sql.exclusive("k", async () => {
        order.push("first in");
        entered();
        await gate;
        order.push("first out");
        throw new Error("boom");
      });
      await inside;
      const second = sql.exclusive("k", async () => {
        order.push("second");
        return 2;
      });
      expect(await sql.exclusive("other", async () => "other key")).toBe("other key");
      // The store stays usable for plain statements while a key is held.
      expect((await sql.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      release();
      await expect(first).rejects.toThrow("boom");
      expect(await second).toBe(2);
      expect(order).toEqual(["first in", "first out", "second"]);
    });

    it("takes transaction-scoped advisory locks (used by the migrator)", async () => {
      const r = await sql.transaction((tx) =>
        tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(42) AS ok"),
      );
      expect(r.rows[0]!.ok).toBe(true);
    });
  });
}

if (!sqlAdapters.find((a) => a.name === "postgres")?.available) {
  it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
}

it("pg adapter: an unreachable server answers SqlUnavailableError", async () => {
  const store = new PgSqlStore("postgres://postgres@127.0.0.1:1/none");
  await expect(store.query("SELECT 1")).rejects.toBeInstanceOf(SqlUnavailableError);
  await store.close();
});

it.skipIf(!TEST_DATABASE_URL)(
  "pg adapter: exclusive(key) orders two processes sharing one Postgres",
  async () => {
    // Two stores with pools of their own stand for two service processes.
    const a = new PgSqlStore(TEST_DATABASE_URL!);
    const b = new PgSqlStore(TEST_DATABASE_URL!);
    const key = `contract:${process.pid}:${Date.now()}`;
    const order: string[] = [];
    const { promise: gate, resolve: release } = signal();
    const { promise: inside, resolve: entered } = signal();
    const first = a.exclusive(key, async () => {
      order.push("a in");
      entered();
      await gate;
      order.push("a out");
    });
    await inside;
    const second = b.exclusive(key, async () => {
      order.push("b");
    });
    // b is waiting on the server: its lock attempt shows up as a backend blocked on an advisory lock.
    await vi.waitFor(
      async () => {
        const { rows } = await a.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        expect(rows[0]!.n).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(order).toEqual(["a in"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["a in", "a out", "b"]);
    await a.close();
    await b.close();
  },
);

it.skipIf(!TEST_DATABASE_URL)(
  "pg adapter: exclusive sections that query the store meanwhile never take every connection",
  async () => {
    // Two connections: were both held by exclusive sections, their own queries would find none.
    const store = new PgSqlStore(TEST_DATABASE_URL!, { max: 2, connectTimeoutMs: 1000 });
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((k) =>
        store.exclusive(`slots:${process.pid}:${k}`, async () => {
          const { rows } = await store.query<{ k: string }>("SELECT $1::text AS k", [k]);
          return rows[0]!.k;
        }),
      ),
    );
    expect(results).toEqual(["a", "b", "c", "d"]);
    await store.close();
  },
);
