/**
 * ClickHouse's HTTP interface (docs/bi.md) through clients nobody here wrote: `@clickhouse/client`
 * at /clickhouse, the `clickhouse` npm package on the interface's own port (it cannot take a path
 * prefix), and curl. Pixel A owns 3 page views and 1 purchase; pixel B holds marker rows in every
 * table. Every answer is A's alone; B's markers never come back, in rows or in errors.
 */
import { execFile } from "node:child_process";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { type ClickHouseClient, ClickHouseError, createClient } from "@clickhouse/client";
import { ClickHouse } from "clickhouse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickhouseApp } from "../../src/clickhouse-http/routes.js";
import { createLogger } from "../../src/log.js";
import type { TestApp } from "../helpers/app.js";
import { escapes } from "./console-escapes.js";
import { insertMarkers } from "./console-fixtures.js";
import { sendOk } from "./ingest-helpers.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
const run = promisify(execFile);

export function clickhouseHttpCases(start: () => Promise<TestApp>): void {
  let app: TestApp;
  let a: Pixel;
  let b: Pixel;
  let writer: Pixel;
  let client: ClickHouseClient;
  let ownPort: Server;
  let ownUrl: string;
  let db: string;

  beforeAll(async () => {
    app = await start();
    db = app.stores.warehouse.database;
    a = await app.pixelWithKey(["analytics:read", "events:write"]);
    b = await app.pixelWithKey(["analytics:read"]);
    writer = await app.pixelWithKey(["events:write"]);
    await sendOk(app, a, [
      ...[1, 2, 3].map((n) => ({ name: "page_view", eventId: `chv-${n}`, identityId: "visitor-1" })),
      {
        name: "purchase",
        eventId: "chp-1",
        identityId: "visitor-1",
        eventProperties: { value: 42.5, currency: "EUR" },
      },
    ]);
    await insertMarkers(app.stores.warehouse, b.pixelId, "B");
    client = createClient({ url: app.url, pathname: "/clickhouse", username: a.pixelId, password: a.key });
    ownPort = clickhouseApp(app.services.clickhouse, createLogger("silent")).listen(0, "127.0.0.1");
    await new Promise((resolve) => ownPort.once("listening", resolve));
    ownUrl = `http://127.0.0.1:${(ownPort.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    ownPort?.close();
    await app?.close();
  });

  const curl = async (args: string[]) => {
    const { stdout } = await run("curl", ["-s", "-S", "-D", "-", ...args], {
      encoding: "buffer",
      maxBuffer: 1 << 26,
    });
    const text = stdout.toString("latin1");
    const split = text.indexOf("\r\n\r\n");
    const head = text.slice(0, split);
    const status = Number(/^HTTP\/[\d.]+ (\d+)/.exec(head)?.[1]);
    const headers = Object.fromEntries(
      head
        .split("\r\n")
        .slice(1)
        .map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
    );
    return { status, headers, body: stdout.subarray(split + 4) };
  };

  describe("@clickhouse/client at /clickhouse", () => {
    it("pings", async () => {
      expect((await client.ping()).success).toBe(true);
    });

    it("queries in JSONEachRow, JSON (with meta), CSV and as a stream — the pixel's rows only", async () => {
      const rows = await (
        await client.query({
          query: "SELECT name, count() AS n FROM events GROUP BY name ORDER BY name",
          format: "JSONEachRow",
        })
      ).json<{ name: string; n: string }>();
      expect(rows).toEqual([
        { name: "page_view", n: "3" },
        { name: "purchase", n: "1" },
      ]);
      const json = await (
        await client.query({ query: "SELECT event_id FROM events ORDER BY event_id", format: "JSON" })
      ).json<{ event_id: string }>();
      expect(json.meta).toEqual([{ name: "event_id", type: "String" }]);
      expect(json.data.map((r) => r.event_id)).toEqual(["chp-1", "chv-1", "chv-2", "chv-3"]);
      const csv = await (
        await client.query({
          query: "SELECT event_id, name FROM events ORDER BY event_id",
          format: "CSVWithNames",
        })
      ).text();
      expect(csv).toBe(
        '"event_id","name"\n"chp-1","purchase"\n"chv-1","page_view"\n"chv-2","page_view"\n"chv-3","page_view"\n',
      );
      const streamed: string[] = [];
      const rs = await client.query({
        query: "SELECT event_id FROM events ORDER BY event_id",
        format: "JSONEachRow",
      });
      for await (const batch of rs.stream())
        for (const row of batch) streamed.push(row.json<{ event_id: string }>().event_id);
      expect(streamed).toEqual(["chp-1", "chv-1", "chv-2", "chv-3"]);
    });

    it("answers the metadata clients ask for from the analyst tables", async () => {
      const [meta] = await (
        await client.query({
          query: "SELECT version() AS v, timezone() AS tz, currentDatabase() AS d",
          format: "JSONEachRow",
        })
      ).json<{ v: string; tz: string; d: string }>();
      expect(meta!.v).toMatch(/^\d+\.\d+/);
      expect(meta).toMatchObject({ tz: "UTC", d: db });
      const databases = await (
        await client.query({ query: "SELECT name FROM system.databases", format: "JSONEachRow" })
      ).json();
      expect(databases).toEqual([{ name: db }]);
      const tables = await (
        await client.query({
          query: `SELECT name FROM system.tables WHERE database = '${db}' ORDER BY name`,
          format: "JSONEachRow",
        })
      ).json<{ name: string }>();
      expect(tables.map((t) => t.name)).toEqual([
        "ad_entities",
        "ad_metrics",
        "events",
        "fx_rates",
        "identities",
        "order_costs",
        "order_lines",
        "orders",
        "refunds",
      ]);
      const columns = await (
        await client.query({
          query: `SELECT name, type FROM system.columns WHERE database = '${db}' AND table = 'events' AND name IN ('event_id', 'value')`,
          format: "JSONEachRow",
        })
      ).json();
      expect(columns).toEqual([
        { name: "event_id", type: "String" },
        { name: "value", type: "Nullable(Decimal(18, 4))" },
      ]);
      // The exposed database's name may qualify a table.
      const [qualified] = await (
        await client.query({ query: `SELECT count() AS n FROM ${db}.events`, format: "JSONEachRow" })
      ).json<{ n: string }>();
      expect(qualified!.n).toBe("4");
    });

    it("refuses an insert and DDL with ClickHouse's READONLY error", async () => {
      const insert = await client
        .insert({ table: "events", values: [{ event_id: "x" }], format: "JSONEachRow" })
        .catch((e) => e);
      expect(insert).toBeInstanceOf(ClickHouseError);
      expect((insert as ClickHouseError).code).toBe("164");
      const ddl = await client.command({ query: "CREATE TABLE t (x UInt8) ENGINE = Memory" }).catch((e) => e);
      expect((ddl as ClickHouseError).code).toBe("164");
      expect(
        await client
          .query({ query: "SELECT count() FROM events", format: "JSONEachRow" })
          .then((r) => r.json()),
      ).toEqual([{ "count()": "4" }]);
    });

    it("surfaces a wrong key and a key without analytics:read as errors the client reports", async () => {
      const wrong = createClient({
        url: app.url,
        pathname: "/clickhouse",
        username: a.pixelId,
        password: "pxh_wrong",
      });
      const err = await wrong.query({ query: "SELECT 1", format: "JSONEachRow" }).catch((e) => e);
      expect((err as ClickHouseError).code).toBe("516");
      await wrong.close();
      const noScope = createClient({
        url: app.url,
        pathname: "/clickhouse",
        username: writer.pixelId,
        password: writer.key,
      });
      const denied = await noScope.query({ query: "SELECT 1", format: "JSONEachRow" }).catch((e) => e);
      expect((denied as ClickHouseError).code).toBe("497");
      expect((denied as Error).message).toMatch(/analytics:read/);
      await noScope.close();
    });

    it("refuses settings that would change what is read, and engine errors keep their codes", async () => {
      const err = await client
        .query({ query: "SELECT 1", format: "JSONEachRow", clickhouse_settings: { readonly: "0" } })
        .catch((e) => e);
      expect((err as ClickHouseError).code).toBe("164");
      const table = await client
        .query({
          query: "SELECT 1",
          format: "JSONEachRow",
          clickhouse_settings: { additional_table_filters: "{}" } as never,
        })
        .catch((e) => e);
      expect((table as ClickHouseError).code).toBe("164");
      const syntax = await client.query({ query: "SELEC 1", format: "JSONEachRow" }).catch((e) => e);
      expect((syntax as ClickHouseError).code).toBe("62");
    });
  });

  describe("the `clickhouse` npm package on the interface's own port", () => {
    it("queries with Basic auth and the database set", async () => {
      const ch = new ClickHouse({
        url: "http://127.0.0.1",
        port: Number(new URL(ownUrl).port),
        basicAuth: { username: a.pixelId, password: a.key },
        format: "json",
        config: { database: db, session_timeout: 60, output_format_json_quote_64bit_integers: 0 },
      });
      const rows = (await ch
        .query("SELECT name, count() AS n FROM events GROUP BY name ORDER BY name")
        .toPromise()) as {
        name: string;
        n: number;
      }[];
      expect(rows).toEqual([
        { name: "page_view", n: 3 },
        { name: "purchase", n: 1 },
      ]);
      const refused = await ch
        .query("DROP TABLE events")
        .toPromise()
        .catch((e: Error) => e);
      expect(String(refused)).toMatch(/READONLY|readonly/);
    });
  });

  describe("curl", () => {
    it("GET /ping, and a query with user/password parameters in TabSeparated (the default format)", async () => {
      const ping = await curl([`${ownUrl}/ping`]);
      expect(ping.body.toString()).toBe("Ok.\n");
      const q = encodeURIComponent("SELECT event_id FROM events ORDER BY event_id");
      const res = await curl([`${app.url}/clickhouse/?user=${a.pixelId}&password=${a.key}&query=${q}`]);
      expect(res.status).toBe(200);
      expect(res.headers["x-clickhouse-format"]).toBe("TabSeparated");
      expect(res.body.toString()).toBe("chp-1\nchv-1\nchv-2\nchv-3\n");
    });

    it("POST with X-ClickHouse-User/Key, gzip when asked, query_id echoed", async () => {
      const res = await curl([
        "--compressed",
        "-H",
        `X-ClickHouse-User: ${a.pixelId}`,
        "-H",
        `X-ClickHouse-Key: ${a.key}`,
        "--data-binary",
        "SELECT name FROM events ORDER BY name LIMIT 1 FORMAT TSVWithNames",
        `${ownUrl}/?enable_http_compression=1&query_id=my-query-1`,
      ]);
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(res.headers["x-clickhouse-query-id"]).toBe("my-query-1");
      expect(res.body.toString()).toBe("name\npage_view\n");
    });

    it("writes binary formats (Parquet, RowBinary) as the engine does", async () => {
      const parquet = await curl([
        "-u",
        `${a.pixelId}:${a.key}`,
        "--data-binary",
        "SELECT event_id FROM events ORDER BY event_id FORMAT Parquet",
        `${ownUrl}/`,
      ]);
      expect(parquet.status).toBe(200);
      expect(parquet.body.subarray(0, 4).toString()).toBe("PAR1");
      const rowBinary = await curl([
        "-u",
        `${a.pixelId}:${a.key}`,
        "--data-binary",
        "SELECT toUInt8(7) AS x FORMAT RowBinary",
        `${ownUrl}/`,
      ]);
      expect([...rowBinary.body]).toEqual([7]);
    });

    it("answers errors with a status, X-ClickHouse-Exception-Code and ClickHouse's message shape", async () => {
      const res = await curl([
        "-u",
        `${a.pixelId}:${a.key}`,
        "--data-binary",
        "SELECT * FROM system.processes",
        `${ownUrl}/`,
      ]);
      expect(res.status).toBe(403);
      expect(res.headers["x-clickhouse-exception-code"]).toBe("497");
      expect(res.body.toString()).toMatch(
        /^Code: 497\. DB::Exception: system\.processes is not available on this endpoint\. \(ACCESS_DENIED\) \(version .+\)\n$/,
      );
      const format = await curl([
        "-u",
        `${a.pixelId}:${a.key}`,
        "--data-binary",
        "SELECT 1 FORMAT Template",
        `${ownUrl}/`,
      ]);
      expect(format.status).toBe(400);
      expect(format.headers["x-clickhouse-exception-code"]).toBe("73");
      const db2 = await curl(["-u", `${a.pixelId}:${a.key}`, `${ownUrl}/?database=other&query=SELECT%201`]);
      expect(db2.headers["x-clickhouse-exception-code"]).toBe("81");
    });
  });

  describe("the console's escapes through this endpoint (pixel A against pixel B's markers)", () => {
    it("never returns B's rows or pixel id, never a 5xx, and confined queries see A's data", async () => {
      expect(escapes(db).length).toBeGreaterThanOrEqual(40);
      for (const e of escapes(db)) {
        const res = await fetch(`${ownUrl}/?default_format=JSONCompact`, {
          method: "POST",
          headers: { authorization: `Basic ${Buffer.from(`${a.pixelId}:${a.key}`).toString("base64")}` },
          body: e.sql,
        });
        const text = await res.text();
        expect(text, e.sql).not.toContain("MARKB");
        expect(text, e.sql).not.toContain(b.pixelId);
        expect(res.status, `${e.sql}\n${text.slice(0, 300)}`).toBeLessThan(500);
        if (e.expect === "confined") expect(res.status, `${e.sql}\n${text.slice(0, 300)}`).toBe(200);
      }
    }, 300_000);
  });
}
