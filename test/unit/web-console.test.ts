/**
 * The console page's logic that needs no browser: the request it sends, the CSV count, how a result
 * reads in the grid and its stats line, how it becomes chart series, and the schema's filter and
 * completion source (web/console/*.ts files without DOM use, imported as they are).
 */
import { describe, expect, it } from "vitest";
import { chartData } from "../../web/console/chart-data.js";
import {
  csvRecords,
  csvStatus,
  isBadLimit,
  LIMIT_MESSAGE,
  parseLimit,
  type SqlResult,
  sqlRequest,
} from "../../web/console/query.js";
import {
  cellOf,
  cellText,
  formatBytes,
  isNumericType,
  resultStats,
} from "../../web/console/result-format.js";
import { completionSchema, filterSchema, type SchemaTable } from "../../web/console/schema.js";

const result = (over: Partial<SqlResult> = {}): SqlResult => ({
  columns: [],
  rows: [],
  rowCount: 0,
  truncated: false,
  elapsedMs: 1.234,
  rowsRead: 0,
  bytesRead: 0,
  limit: 1000,
  ...over,
});

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name] ?? null });

describe("the request", () => {
  it("parseLimit takes whole numbers from 1 to 50,000 only", () => {
    expect(parseLimit("1")).toBe(1);
    expect(parseLimit("50000")).toBe(50_000);
    for (const bad of ["", "0", "-3", "2.5", "50001", "abc"]) expect(parseLimit(bad)).toBeUndefined();
  });

  it("an empty field is the API's default; anything else unusable stops the run", () => {
    expect(isBadLimit("")).toBe(false);
    expect(isBadLimit("20")).toBe(false);
    expect(isBadLimit("0")).toBe(true);
    expect(isBadLimit("60000")).toBe(true);
    expect(LIMIT_MESSAGE).toBe("The limit must be a whole number from 1 to 50,000.");
  });

  it("sqlRequest sends the text as typed, a limit only when usable, and the format when asked", () => {
    expect(sqlRequest("px", " SELECT 1 ", "20")).toEqual({ pixelId: "px", sql: " SELECT 1 ", limit: 20 });
    expect(sqlRequest("px", "SELECT 1", "")).toEqual({ pixelId: "px", sql: "SELECT 1" });
    expect(sqlRequest("px", "SELECT 1", "0", "csv")).toEqual({
      pixelId: "px",
      sql: "SELECT 1",
      format: "csv",
    });
  });
});

describe("the CSV count", () => {
  it("csvRecords counts lines outside quoted fields", () => {
    expect(csvRecords("")).toBe(0);
    expect(csvRecords('"a","b"\n1,2\n')).toBe(2);
    expect(csvRecords('"a"\n"two\nlines"\n"a ""quoted"" word"\n')).toBe(3);
  });

  it("states the count from the headers when the answer has them", async () => {
    const unused = () => Promise.reject(new Error("the body is not read"));
    expect(await csvStatus(headers({ "x-row-count": "1234", "x-truncated": "false" }), unused)).toBe(
      "CSV: 1,234 rows",
    );
    expect(await csvStatus(headers({ "x-row-count": "20", "x-truncated": "true" }), unused)).toBe(
      "CSV: 20 rows (truncated at the limit)",
    );
  });

  it("counts the body of a streamed CSV, less its header line, and says when it reached the limit", async () => {
    const body = async () => '"country","orders"\n"DE",7\n"FR",7\n';
    expect(await csvStatus(headers({ "x-row-limit": "1000" }), body)).toBe("CSV: 2 rows");
    expect(await csvStatus(headers({ "x-row-limit": "2" }), body)).toBe(
      "CSV: 2 rows (the limit: there may be more)",
    );
  });
});

describe("the grid and its stats", () => {
  it("numeric types are the integer, float and decimal ones, nullable or low-cardinality", () => {
    for (const t of [
      "UInt64",
      "Int8",
      "Float64",
      "Decimal(38, 4)",
      "Nullable(Int32)",
      "LowCardinality(UInt8)",
    ]) {
      expect(isNumericType(t), t).toBe(true);
    }
    for (const t of ["String", "Date", "DateTime64(3, 'UTC')", "Array(UInt8)", "LowCardinality(String)"]) {
      expect(isNumericType(t), t).toBe(false);
    }
  });

  it("cells: NULL marked, objects as JSON, long text with a title", () => {
    expect(cellText(null)).toBe("NULL");
    expect(cellText(undefined)).toBe("NULL");
    expect(cellText([1, "a"])).toBe('[1,"a"]');
    expect(cellText(12.5)).toBe("12.5");
    expect(cellOf(null, true)).toEqual({ text: "NULL", class: "num null" });
    expect(cellOf("x", false)).toEqual({ text: "x", class: "" });
    const long = "y".repeat(61);
    expect(cellOf(long, false)).toEqual({ text: long, class: "", title: long });
    expect(cellOf("y".repeat(60), false).title).toBeUndefined();
  });

  it("formatBytes", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(5 * 1024 ** 3)).toBe("5 GB");
    expect(formatBytes(3 * 1024 ** 5)).toBe("3,072 TB");
  });

  it("the stats line: count, applied limit, time, read; the badge only when truncated", () => {
    const r = result({ rowCount: 1, elapsedMs: 6.54, rowsRead: 30, bytesRead: 780 });
    expect(resultStats(r).map((s) => [s.id, s.text])).toEqual([
      ["row-count", "1 row"],
      ["applied-limit", "limit 1,000"],
      ["elapsed", "6.5 ms"],
      ["read", "read 30 rows, 780 B"],
    ]);
    const cut = resultStats(result({ rowCount: 2, limit: 2, truncated: true }));
    expect(cut[0]!.text).toBe("2 rows");
    expect(cut.at(-1)).toMatchObject({ id: "truncated", class: "badge warn", text: "truncated at 2 rows" });
  });
});

describe("chartData", () => {
  const columns = [
    { name: "day", type: "Date" },
    { name: "orders", type: "UInt64" },
    { name: "label", type: "String" },
    { name: "revenue", type: "Decimal(38, 4)" },
  ];

  it("x is the first column, each later numeric column a series (decimals come as strings)", () => {
    const data = chartData(
      result({
        columns,
        rows: [
          ["2026-03-01", "3", "a", "30.5"],
          ["2026-03-02", "0", "b", null],
        ],
      }),
    );
    expect(data).toEqual({
      note: "orders, revenue by day",
      xLabel: "day",
      labels: ["2026-03-01", "2026-03-02"],
      integer: true,
      series: [
        { label: "orders", values: [3, 0] },
        { label: "revenue", values: [30.5, null] },
      ],
    });
  });

  it("a column of another type charts when every value is a JSON number; one column is charted by row", () => {
    const data = chartData(result({ columns: [{ name: "n", type: "Dynamic" }], rows: [[4], [null]] }));
    expect(data).toMatchObject({
      note: "n by row",
      xLabel: "row",
      labels: ["1", "2"],
      integer: false,
      series: [{ label: "n", values: [4, null] }],
    });
  });

  it("nothing to chart: no columns, no rows, or no numbers after the first column", () => {
    expect(chartData(result())).toBeNull();
    expect(chartData(result({ columns }))).toEqual({ empty: "No rows to chart." });
    expect(
      chartData(result({ columns: [columns[0]!, columns[2]!], rows: [["2026-03-01", "a"]] })),
    ).toMatchObject({ empty: expect.stringMatching(/^Nothing to chart/) });
  });
});

describe("the schema", () => {
  const tables: SchemaTable[] = [
    {
      name: "orders",
      description: "Store orders",
      columns: [
        { name: "order_id", type: "String" },
        { name: "total_price", type: "Decimal(18, 4)", description: "order total" },
      ],
    },
    { name: "events", description: "Tracked events", columns: [{ name: "event_name", type: "String" }] },
  ];

  it("filterSchema: every table closed without a filter; a table's name match keeps all its columns", () => {
    expect(filterSchema(tables, "  ").map((t) => [t.table.name, t.columns.length, t.open])).toEqual([
      ["orders", 2, false],
      ["events", 1, false],
    ]);
    expect(filterSchema(tables, "ORD").map((t) => [t.table.name, t.columns.length, t.open])).toEqual([
      ["orders", 2, true],
    ]);
  });

  it("filterSchema: a column match lists its table with the matching columns only", () => {
    const listed = filterSchema(tables, "price");
    expect(listed.map((t) => [t.table.name, t.columns.map((c) => c.name)])).toEqual([
      ["orders", ["total_price"]],
    ]);
    expect(filterSchema(tables, "nothing")).toEqual([]);
  });

  it("completionSchema: tables with their descriptions, columns with their types", () => {
    expect(completionSchema(tables)).toEqual({
      orders: {
        self: { label: "orders", type: "type", detail: "table", info: "Store orders" },
        children: [
          { label: "order_id", type: "property", detail: "String" },
          { label: "total_price", type: "property", detail: "Decimal(18, 4)", info: "order total" },
        ],
      },
      events: {
        self: { label: "events", type: "type", detail: "table", info: "Tracked events" },
        children: [{ label: "event_name", type: "property", detail: "String" }],
      },
    });
  });
});
