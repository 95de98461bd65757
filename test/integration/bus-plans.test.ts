/**
 * The SQL bus reaches a stream's messages only through the primary key's range from a group's
 * position, or one probe per pending id — never by reading every message the stream keeps — on tables
 * without statistics (embedded Postgres gathers none). A stream keeps its messages for the retention
 * period, so a read or a backlog that scanned them all would slow down with every day of traffic.
 *
 * Worked example: stream s keeps 50,000 messages (ids 1…50,000). Group g read up to 49,900 and holds
 * 49,801…49,900 pending (handed out, not acknowledged). Its backlog is the 100 pending plus the 100
 * after its position: 200 messages, the oldest being 49,801. Its next read of 50 hands out 49,901…
 * 49,950. No plan node of either statement touches more than a few hundred index entries or rows of
 * bus_messages (before, the read walked all 50,000 index entries and the backlog all 50,000 rows).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKLOG_SQL, READ_SQL, SqlBus } from "../../src/stores/bus/sql.js";
import type { SqlStore, SqlValue } from "../../src/stores/sql/port.js";
import { applyEventsSchema } from "../helpers/bus.js";
import { explainNodes, rowsOn } from "../helpers/plans.js";
import { type Opened, sqlAdapters } from "../helpers/stores.js";

const KEPT = 50_000;

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`SQL bus plans: ${adapter.name}`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    const stream = `plans-${adapter.name}`;

    /** Rows each node of the statement's plan produced, over all its loops, on bus_messages. */
    async function messagesTouched(text: string, params: SqlValue[]): Promise<number[]> {
      // EXPLAIN ANALYZE runs the statement (a read moves the group): in a transaction rolled back.
      const rollback = new Error("rollback");
      let touched: number[] = [];
      await sql
        .transaction(async (tx) => {
          touched = rowsOn(await explainNodes(tx, text, params, true), "bus_messages");
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
      return touched;
    }

    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      await applyEventsSchema(sql);
      const bus = new SqlBus(sql);
      await bus.read(stream, "g", "c", { count: 1 });
      await sql.query(
        `INSERT INTO bus_messages (stream, id, key, payload)
         SELECT $1, i, 'k' || i, '{}' FROM generate_series(1, $2::int) AS i`,
        [stream, KEPT],
      );
      await sql.query(
        `INSERT INTO bus_streams (stream, last_id) VALUES ($1, $2)
         ON CONFLICT (stream) DO UPDATE SET last_id = excluded.last_id`,
        [stream, KEPT],
      );
      await sql.query("UPDATE bus_groups SET last_id = $2 WHERE stream = $1 AND group_name = 'g'", [
        stream,
        KEPT - 200,
      ]);
      // 49,801…49,900 handed out and not acknowledged.
      const handed = await bus.read(stream, "g", "c", { count: 100, claimIdleMs: 60_000 });
      expect(handed.map((m) => Number(m.id))).toStrictEqual(
        Array.from({ length: 100 }, (_, i) => KEPT - 199 + i),
      );
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
    });

    it("counts a group's backlog from its position and its pending ids", async () => {
      const bus = new SqlBus(sql);
      const backlog = await bus.backlog(stream, "g");
      expect(backlog.messages).toBe(200);
      const [oldest] = (
        await sql.query<{ ms: string }>(
          "SELECT (extract(epoch FROM created_at) * 1000)::bigint::text AS ms FROM bus_messages WHERE stream = $1 AND id = $2",
          [stream, KEPT - 199],
        )
      ).rows;
      expect(backlog.oldestAt).toBe(Number(oldest!.ms));
      const touched = await messagesTouched(BACKLOG_SQL, [stream, "g"]);
      expect(touched.length).toBeGreaterThan(0);
      expect(Math.max(...touched)).toBeLessThanOrEqual(400);
    });

    it("hands out the messages after the position without walking the stream", async () => {
      const touched = await messagesTouched(READ_SQL, [stream, "g", "c", 60, 50]);
      expect(touched.length).toBeGreaterThan(0);
      expect(Math.max(...touched)).toBeLessThanOrEqual(400);
      const next = await new SqlBus(sql).read(stream, "g", "c", { count: 50, claimIdleMs: 60_000 });
      expect(next.map((m) => Number(m.id))).toStrictEqual(
        Array.from({ length: 50 }, (_, i) => KEPT - 99 + i),
      );
    });

    // An import's sightings message is ~740 KB of JSON: compressing it cost embedded Postgres ~40 ms
    // of its one thread per publish, against ~15 ms stored as is. ~90 KB of repetitive text stands
    // in for it here: far over the ~2 KB from which Postgres compresses a value.
    it("stores a large payload as it is, without compressing it", async () => {
      const big = JSON.stringify({ sightings: Array.from({ length: 5000 }, (_, i) => ["order", `o${i}`]) });
      const bus = new SqlBus(sql);
      await bus.publish(`${stream}-big`, [{ key: "big", payload: JSON.parse(big) as unknown }]);
      const {
        rows: [row],
      } = await sql.query<{ stored: number; length: number }>(
        `SELECT pg_column_size(payload) AS stored, octet_length(payload) AS length
         FROM bus_messages WHERE stream = $1`,
        [`${stream}-big`],
      );
      expect(row!.length).toBe(big.length);
      // pglz would store this repetitive text in a fraction of its length.
      expect(row!.stored).toBeGreaterThanOrEqual(row!.length);
      const [read] = await bus.read(`${stream}-big`, "g", "c", { count: 1 });
      expect(read!.payload).toStrictEqual(JSON.parse(big));
    });
  });
}
