/**
 * docs/examples/* parse with the record schemas of src/sync/schemas.ts, and the field tables of
 * docs/data-formats.md list exactly the schemas' fields, with the right "Required" and "Default".
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  adEntitySchema,
  adMetricsSchema,
  costLineSchema,
  fxRateSchema,
  orderLineSchema,
  orderSchema,
  productSchema,
  RECORD_SCHEMAS,
  type RecordKind,
  refundSchema,
  variantSchema,
} from "../../src/sync/schemas.js";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

type AnyObject = z.ZodObject<Record<string, z.ZodType>>;
const shapeOf = (schema: unknown) => (schema as AnyObject).shape;

function jsonLines(path: string): unknown[] {
  return read(path)
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (err) {
        throw new Error(`${path}:${i + 1}: ${(err as Error).message}`);
      }
    });
}

/** A CSV without quoted cells: header, then rows; `#` lines and blank lines skipped. */
function simpleCsv(path: string): Record<string, string>[] {
  const lines = read(path)
    .split("\n")
    .map((l) => l.replace(/\r$/, ""))
    .filter((l) => l.trim() !== "" && !l.startsWith("#"));
  const [header, ...rows] = lines;
  const names = header!.split(",");
  return rows.map((r) => Object.fromEntries(r.split(",").map((v, i) => [names[i]!, v])));
}

function expectValid(kind: RecordKind, records: unknown[], file: string) {
  records.forEach((record, i) => {
    const r = RECORD_SCHEMAS[kind].safeParse(record);
    expect(r.success, `${file} record ${i + 1}: ${JSON.stringify(r.error?.issues)}`).toBe(true);
  });
}

const JSONL: { kind: Exclude<RecordKind, "fx-rates">; file: string }[] = [
  { kind: "products", file: "docs/examples/products.jsonl" },
  { kind: "orders", file: "docs/examples/orders.jsonl" },
  { kind: "refunds", file: "docs/examples/refunds.jsonl" },
  { kind: "ad-entities", file: "docs/examples/ad-entities.jsonl" },
  { kind: "ad-metrics", file: "docs/examples/ad-metrics.jsonl" },
];

describe("docs/examples", () => {
  it.each(JSONL)(
    "$file: 3–5 records, each valid, every top-level field used at least once",
    ({ kind, file }) => {
      const records = jsonLines(file);
      expect(records.length).toBeGreaterThanOrEqual(3);
      expect(records.length).toBeLessThanOrEqual(5);
      expectValid(kind, records, file);
      const used = new Set(records.flatMap((r) => Object.keys(r as object)));
      expect([...used].sort()).toEqual(Object.keys(shapeOf(RECORD_SCHEMAS[kind])).sort());
    },
  );

  it("ids are unique per file (examples do not rely on in-batch duplicates)", () => {
    for (const { kind, file } of JSONL) {
      const keys = jsonLines(file).map((r) => {
        const x = r as Record<string, unknown>;
        return kind === "ad-entities"
          ? `${x.platform}|${x.level}|${x.id}`
          : kind === "ad-metrics"
            ? `${x.platform}|${x.level}|${x.entityId}|${x.date}`
            : String(x.id);
      });
      expect(new Set(keys).size, file).toBe(keys.length);
    }
  });

  it("docs/examples/fx-rates.csv: date,currency,unitsPerUsd rows, each valid", () => {
    const file = "docs/examples/fx-rates.csv";
    const header = read(file)
      .split("\n")
      .find((l) => l.trim() !== "" && !l.startsWith("#"));
    expect(header?.trim()).toBe("date,currency,unitsPerUsd");
    const rows = simpleCsv(file);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expectValid(
      "fx-rates",
      rows.map((r) => ({ ...r, unitsPerUsd: Number(r.unitsPerUsd) })),
      file,
    );
  });
});

/** Field tables of docs/data-formats.md, by the `### heading` they follow. */
function docTables(): Map<string, Map<string, { required: string; default: string }>> {
  const tables = new Map<string, Map<string, { required: string; default: string }>>();
  let current: string | null = null;
  for (const line of read("docs/data-formats.md").split("\n")) {
    const heading = /^(#{2,3}) (.+?)\s*$/.exec(line);
    if (heading) {
      current = heading[1] === "###" ? heading[2]! : null;
      continue;
    }
    const row = /^\|\s*`([A-Za-z]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (!current || !row) continue;
    // Cells split on `|` not escaped (`\|` separates enum values inside a cell).
    const cells = row[2]!.split(/(?<!\\)\|/).map((c) => c.trim());
    const [, required, dflt] = cells;
    if (!tables.has(current)) tables.set(current, new Map());
    tables.get(current)!.set(row[1]!, { required: required!, default: dflt! });
  }
  return tables;
}

const unwrapDefault = (s: unknown) => (s as { unwrap(): unknown }).unwrap();
const SECTIONS: Record<string, unknown> = {
  product: productSchema,
  "product variant": variantSchema,
  "store cost line": costLineSchema,
  order: orderSchema,
  customer: unwrapDefault(orderSchema.shape.customer),
  "order line item": orderLineSchema,
  refund: refundSchema,
  "refund line item": (unwrapDefault(refundSchema.shape.lineItems) as { element: unknown }).element,
  "ad entity": adEntitySchema,
  "ad metrics": adMetricsSchema,
  "fx rate": fxRateSchema,
};

describe("docs/data-formats.md field tables match src/sync/schemas.ts", () => {
  const tables = docTables();

  it("has a table for every record and nested object, and no other", () => {
    expect([...tables.keys()].sort()).toEqual(Object.keys(SECTIONS).sort());
  });

  it.each(Object.keys(SECTIONS))("### %s: the same fields, required and defaults", (section) => {
    const shape = shapeOf(SECTIONS[section]);
    const table = tables.get(section);
    expect(table, `no table under "### ${section}"`).toBeDefined();
    expect([...table!.keys()].sort()).toEqual(Object.keys(shape).sort());
    for (const [field, schema] of Object.entries(shape)) {
      const absent = schema.safeParse(undefined);
      const doc = table!.get(field)!;
      expect(doc.required === "yes", `${section}.${field} Required = ${doc.required}`).toBe(!absent.success);
      if (absent.success && absent.data !== undefined) {
        expect(doc.default, `${section}.${field} Default`).toBe(`\`${JSON.stringify(absent.data)}\``);
      } else {
        expect(doc.default, `${section}.${field} Default`).toBe("—");
      }
    }
  });
});
