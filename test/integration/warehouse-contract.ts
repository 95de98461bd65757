import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  WarehouseError,
  WarehouseLimitError,
  WarehouseParameterError,
  type WarehouseStore,
  WarehouseSyntaxError,
  WarehouseUnknownIdentifierError,
} from "../../src/stores/warehouse/port.js";
import type { Opened } from "../helpers/stores.js";

/** The behaviour every warehouse adapter must share; run once per reachable adapter. */
export function warehouseContract(
  name: string,
  open: () => Promise<Opened<WarehouseStore>>,
  options: {
    readStats?: boolean;
    settingsPerQuery?: boolean;
    readerDatabase?: boolean;
    /** Whether a stream may be left while the engine still runs (chDB's client transport crashes). */
    leaveStreamEarly?: boolean;
    /**
     * Whether a failed query's partial output can reach the next query (chDB's engine does; the chDB
     * adapter drains it itself, the test-only client transport over chDB does not).
     */
    failureLeavesOutput?: boolean;
  } = {},
) {
  describe(`warehouse contract: ${name}`, () => {
    let opened: Opened<WarehouseStore>;
    let wh: WarehouseStore;
    beforeAll(async () => {
      opened = await open();
      wh = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    // On a reader too: chDB binds there through session parameters, not the process-wide bound queue.
    it("binds every parameter type the compiler uses, as values (never SQL text), on the store and a reader", async () => {
      const reader = await wh.openReader();
      try {
        for (const on of [wh, reader]) await bindsEveryType(on);
        // Without a map: every value goes through the session's parameters on a chDB reader.
        const arrays = {
          arr: ["a'b", "c\\d", "", "tab\tnew\nline", "[x]", "y,z", "🎉"],
          nums: [1, 4294967295],
          e: [],
        };
        for (const on of [wh, reader]) {
          const [row] = await on.query<Record<string, unknown>>(
            "SELECT {arr:Array(String)} AS arr, {nums:Array(UInt32)} AS nums, {e:Array(String)} AS e, 'y,z' IN {arr:Array(String)} AS found",
            arrays,
          );
          expect(row).toEqual({ ...arrays, found: 1 });
        }
      } finally {
        await reader.close();
      }
    });

    async function bindsEveryType(wh: WarehouseStore): Promise<void> {
      const hostile = "x'); DROP TABLE t; -- \\ \" ünïcødé 🎉\nline2";
      const [row] = await wh.query<Record<string, unknown>>(
        `SELECT {s:String} AS s, {i32:Int32} AS i32, {i64:Int64} AS i64, toString({u64:UInt64}) AS u64,
                {f:Float64} AS f, toString({d:Decimal(18, 4)}) AS d, {b:Bool} AS b, toString({day:Date}) AS day,
                toString({ts:DateTime64(3, 'UTC')}) AS ts, {arr:Array(String)} AS arr, {nums:Array(UInt32)} AS nums,
                {n:Nullable(String)} AS n, {m:Map(String, String)} AS m, toString({id:UUID}) AS id,
                {lc:LowCardinality(String)} AS lc, {empty:Array(String)} AS empty`,
        {
          s: hostile,
          i32: -2147483648,
          i64: -9007199254740991n,
          u64: 18446744073709551615n,
          f: 0.1 + 0.2,
          d: "12345678901234.5678",
          b: true,
          day: "2026-03-29",
          ts: new Date("2026-03-29T01:02:03.456Z"),
          arr: ["a'b", "c\\d", "", "tab\tnew\nline", "[x]", "y,z"],
          nums: [1, 2, 4294967295],
          n: null,
          m: { "k'1": "v'1", k2: "" },
          id: "0b6e1c9a-8f3e-4d5b-9a1c-2e3f4a5b6c7d",
          lc: "paid_social",
          empty: [],
        },
      );
      expect(row).toEqual({
        s: hostile,
        i32: -2147483648,
        i64: -9007199254740991,
        u64: "18446744073709551615",
        f: 0.30000000000000004,
        d: "12345678901234.5678",
        b: true,
        day: "2026-03-29",
        ts: "2026-03-29 01:02:03.456",
        arr: ["a'b", "c\\d", "", "tab\tnew\nline", "[x]", "y,z"],
        nums: [1, 2, 4294967295],
        n: null,
        m: { "k'1": "v'1", k2: "" },
        id: "0b6e1c9a-8f3e-4d5b-9a1c-2e3f4a5b6c7d",
        lc: "paid_social",
        empty: [],
      });
    }

    it("returns 64-bit aggregates as numbers and decimals as numbers", async () => {
      const [row] = await wh.query<{ c: number; s: number }>(
        "SELECT count() AS c, sum(toDecimal64(number, 4) / 100) AS s FROM numbers(1000)",
      );
      expect(row).toEqual({ c: 1000, s: 4995 });
    });

    it("creates tables, inserts 100k rows in one batch and reads them back exactly", async () => {
      await wh.command("DROP TABLE IF EXISTS contract_rows");
      await wh.command(`CREATE TABLE contract_rows (
        pixel_id LowCardinality(String), id UInt32, at DateTime64(3, 'UTC'), amount Decimal(18, 4),
        tags Array(String), note Nullable(String)) ENGINE = MergeTree ORDER BY (pixel_id, id)`);
      // Text that looks like a row boundary, long enough that the batch (~14 MB) is split for parallel
      // parsing (chDB's rows are sent as `[…],[…]`).
      const boundary = `"],[" ]\n,[ ${"x".repeat(100)}`;
      const rows = Array.from({ length: 100_000 }, (_, i) => ({
        pixel_id: i % 2 ? "p1" : "p2",
        id: i,
        at: `2026-01-01 00:00:${String(i % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}`,
        amount: (i % 1000) / 100,
        tags: i % 3 ? ["a", boundary] : [],
        note: i % 5 ? null : `n${i}`,
      }));
      await wh.insert("contract_rows", rows);
      const [agg] = await wh.query<{
        n: number;
        ids: number;
        cents: number;
        notes: number;
        p1: number;
        boundaries: number;
      }>(
        `SELECT count() AS n, sum(id) AS ids, toInt64(sum(amount) * 100) AS cents, countIf(note IS NOT NULL) AS notes,
                countIf(pixel_id = {p:String}) AS p1, countIf(tags = ['a', {b:String}]) AS boundaries FROM contract_rows`,
        { p: "p1", b: boundary },
      );
      expect(agg).toEqual({
        boundaries: 66_666,
        n: 100_000,
        ids: (99_999 * 100_000) / 2,
        cents: rows.reduce((s, r) => s + Math.round(r.amount * 100), 0),
        notes: 20_000,
        p1: 50_000,
      });
      const stats = await wh.queryWithStats("SELECT count() FROM contract_rows WHERE id > {min:UInt32}", {
        min: 10,
      });
      expect(stats.rows).toHaveLength(1);
      // chDB's @clickhouse/client transport sends no X-ClickHouse-Summary header; a server always does.
      if (options.readStats !== false) expect(stats.stats.rowsRead).toBeGreaterThan(0);
    });

    it("inserts awkward values of every column type the events row uses and reads them back equal", async () => {
      await wh.command("DROP TABLE IF EXISTS contract_awkward");
      await wh.command(`CREATE TABLE contract_awkward (
        id UInt32, s String, lc LowCardinality(String), b Bool, origin Enum8('server' = 1, 'browser' = 2),
        at DateTime64(3, 'UTC'), tags Array(String), m Map(LowCardinality(String), String),
        items Array(Tuple(id String, name String, price Decimal(18, 4), quantity Int32)),
        value Nullable(Decimal(18, 4)), width Nullable(UInt32), ratio Nullable(Float32)) ENGINE = MergeTree ORDER BY id`);
      const nasty = "tab\there\nnew\\line 'q' \"dq\" \r ünïcødé 🎉 \\N \\t";
      const rows = [
        {
          id: 1,
          s: nasty,
          lc: nasty,
          b: true,
          origin: "browser",
          at: "2026-03-29 01:02:03.456",
          // Rows travel as `[…],[…]`: text that looks like a row boundary stays text.
          tags: [nasty, "", "[',']", '"],["', "]\n,[", "],[1,2],["],
          m: { [nasty]: nasty, "": "" },
          items: [{ id: nasty, name: "a'b", price: "12345678901234.5678", quantity: -2147483648 }],
          value: "-0.0001",
          width: 4294967295,
          ratio: 1.5,
        },
        {
          id: 2,
          s: "",
          lc: "",
          b: false,
          origin: "server",
          at: "1970-01-01 00:00:00.000",
          tags: [],
          m: {},
          items: [],
          value: null,
          width: null,
          ratio: null,
        },
      ];
      await wh.insert("contract_awkward", rows);
      const back = await wh.query(
        `SELECT id, s, lc, b, origin, toString(at) AS at, tags, m,
                arrayMap(i -> (i.id, i.name, toString(i.price), i.quantity), items) AS items,
                toString(value) AS value, width, ratio FROM contract_awkward ORDER BY id`,
      );
      expect(back).toEqual(
        rows.map((r) => ({
          ...r,
          items: r.items.map((i) => [i.id, i.name, i.price, i.quantity]),
          value: r.value,
        })),
      );
    });

    it("keeps the highest version of a ReplacingMergeTree row when read with FINAL", async () => {
      await wh.command("DROP TABLE IF EXISTS contract_versions");
      await wh.command(
        "CREATE TABLE contract_versions (k String, v UInt64, x String) ENGINE = ReplacingMergeTree(v) ORDER BY k",
      );
      await wh.insert("contract_versions", [{ k: "a", v: 2, x: "new" }]);
      await wh.insert("contract_versions", [{ k: "a", v: 1, x: "old" }]);
      const rows = await wh.query<{ x: string }>("SELECT x FROM contract_versions FINAL WHERE k = 'a'");
      expect(rows).toEqual([{ x: "new" }]);
    });

    it("answers concurrent queries, each with its own parameters", async () => {
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          wh.query<{ v: number; n: number }>(
            "SELECT {v:UInt32} AS v, count() AS n FROM numbers({n:UInt32})",
            {
              v: i,
              n: i * 10,
            },
          ),
        ),
      );
      results.forEach((rows, i) => {
        expect(rows).toEqual([{ v: i, n: i * 10 }]);
      });
    });

    it("maps engine failures to typed errors", async () => {
      await expect(wh.query("SELEC 1")).rejects.toBeInstanceOf(WarehouseSyntaxError);
      await expect(wh.query("SELECT * FROM no_such_table_here")).rejects.toBeInstanceOf(
        WarehouseUnknownIdentifierError,
      );
      await expect(wh.query("SELECT no_such_column FROM numbers(1)")).rejects.toBeInstanceOf(
        WarehouseUnknownIdentifierError,
      );
      await expect(wh.query("SELECT {x:UInt8} AS x", { x: "not a number" })).rejects.toBeInstanceOf(
        WarehouseParameterError,
      );
      await expect(wh.query("SELECT {x:UInt8} AS x")).rejects.toBeInstanceOf(WarehouseParameterError);
      await expect(wh.query("SELECT {x:Float64} AS x", { x: Number.NaN })).rejects.toBeInstanceOf(
        WarehouseParameterError,
      );
      await expect(
        wh.query("SELECT count() FROM numbers(100000000)", {}, { settings: { max_rows_to_read: 1000 } }),
      ).rejects.toBeInstanceOf(WarehouseLimitError);
      // The store still answers after every failure above.
      expect(await wh.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    });

    it("runs a MATERIALIZED CTE once where it says it can", async () => {
      // Two references to one random value: equal only when the CTE ran once (inlined, each reference
      // draws its own UUID). Where the store says it cannot, callers write the plain form: it runs.
      const once = wh.materializedCte;
      const rows = await wh.query<{ n: number }>(
        `WITH x AS ${once ? "MATERIALIZED " : ""}(SELECT generateUUIDv4() AS u)
         SELECT count() AS n FROM x WHERE u IN (SELECT u FROM x)${once ? " SETTINGS enable_materialized_cte = 1" : ""}`,
      );
      if (once) expect(rows).toEqual([{ n: 1 }]);
      else expect(rows).toHaveLength(1);
    });

    it("answers in the engine's own text formats", async () => {
      const { text, stats } = await wh.queryText(
        "SELECT number AS n, toString(number) AS s FROM numbers(5) WHERE number < {max:UInt8}",
        { max: 2 },
        { format: "CSVWithNames" },
      );
      expect(text).toBe('"n","s"\n0,"0"\n1,"1"\n');
      expect(typeof stats.elapsedMs).toBe("number");
    });

    it("streams the output as it is produced; leaving early cancels the query", async () => {
      const sql = "SELECT number AS n, toString(number) AS s FROM numbers({rows:UInt32})";
      // max_rows_to_read 0: chDB's @clickhouse/client transport keeps an earlier test's limit.
      const csv = { format: "CSVWithNames", settings: { max_rows_to_read: 0 } };
      const { text } = await wh.queryText(sql, { rows: 200_000 }, csv);
      let streamed = "";
      for await (const chunk of wh.queryStream(sql, { rows: 200_000 }, csv))
        streamed += Buffer.from(chunk).toString("utf8");
      expect(streamed).toBe(text);
      if (options.leaveStreamEarly === false) return;
      const reader = await wh.openReader();
      try {
        let first = "";
        for await (const chunk of reader.queryStream("SELECT number FROM numbers(100000000000)", undefined, {
          format: "CSV",
          settings: { max_rows_to_read: 0 },
        })) {
          first = Buffer.from(chunk).toString("utf8");
          break;
        }
        expect(first.startsWith("0\n1\n")).toBe(true);
        // The reader is free again at once: the endless read was cancelled, not left running.
        expect(await reader.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      } finally {
        await reader.close();
      }
    });

    it("throws an engine failure from the stream, also after the first chunk", async () => {
      const chunks: Uint8Array[] = [];
      const failing = async () => {
        for await (const chunk of wh.queryStream(
          "SELECT number, throwIf(number = 150000) FROM numbers(200000)",
          undefined,
          { format: "CSV", settings: { max_rows_to_read: 0 } },
        ))
          chunks.push(chunk);
      };
      await expect(failing()).rejects.toBeInstanceOf(WarehouseError);
      if (options.failureLeavesOutput) await wh.queryText("SELECT 1", undefined, { format: "CSV" });
      // The store still answers (in CSV: chDB's client transport keeps a failed query's format).
      expect((await wh.queryText("SELECT 1 AS one", undefined, { format: "CSV" })).text).toBe("1\n");
    });

    it("opens a reader on the same tables, resolving names in another database", async () => {
      const other = `${wh.database}_reader`;
      await wh.command(`CREATE DATABASE IF NOT EXISTS ${other}`);
      await wh.command(
        `CREATE TABLE IF NOT EXISTS ${wh.database}.reader_seen (v UInt8) ENGINE = MergeTree ORDER BY v`,
      );
      await wh.insert("reader_seen", [{ v: 7 }]);
      const reader = await wh.openReader({ database: other });
      try {
        const rows = await reader.query<{ db: string; v: number }>(
          `SELECT currentDatabase() AS db, v FROM ${wh.database}.reader_seen WHERE v = {v:UInt8}`,
          { v: 7 },
        );
        expect(rows.map((r) => r.v)).toEqual([7]);
        // chDB's @clickhouse/client transport keeps the database of its own session.
        if (options.readerDatabase !== false) {
          expect(rows[0]?.db).toBe(other);
          await expect(reader.query("SELECT * FROM reader_seen")).rejects.toBeInstanceOf(
            WarehouseUnknownIdentifierError,
          );
        }
      } finally {
        await reader.close();
        await wh.command(`DROP DATABASE IF EXISTS ${other}`);
      }
    });

    // chDB's @clickhouse/client transport keeps settings on its session; HTTP and native chDB do not.
    it.skipIf(options.settingsPerQuery === false)(
      "applies per-query settings to that query only",
      async () => {
        await expect(
          wh.query("SELECT count() FROM numbers(100000)", {}, { settings: { max_rows_to_read: 10 } }),
        ).rejects.toBeInstanceOf(WarehouseLimitError);
        expect(await wh.query<{ c: number }>("SELECT count() AS c FROM numbers(100000)")).toEqual([
          { c: 100000 },
        ]);
      },
    );
  });
}
