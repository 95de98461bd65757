import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportSummary } from "../../src/cli/import.js";
import { loadConfig } from "../../src/config.js";
import { openStores, type Stores } from "../../src/stores/index.js";
import { MAX_JSON_LINE_BYTES, type ReadItem, readRecords } from "../../src/sync/read-records.js";
import { tempDir } from "../helpers/stores.js";

/**
 * `pixelhouse import` and `pixelhouse fx import` as a user runs them: the real CLI in a child process
 * on embedded stores in a temp DATA_DIR, on hand-written files. What landed is read back by opening
 * the same stores in this process between CLI runs (the data dir is locked by whoever holds it).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEMO_RATES = join(ROOT, "data/fx/demo-rates.csv");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The `--json` summary is the command's own ImportSummary. */
type Summary = ImportSummary;

interface Reject {
  line: number;
  record?: Record<string, unknown>;
  raw?: string;
  errors: { field: string; message: string }[];
}

function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (
      /^(DATABASE_URL|CLICKHOUSE_|REDIS_|KEY_SECRET|PORT|HOST|LOG_LEVEL|DATA_DIR|DEMO_ON_FIRST_START)/.test(
        name,
      )
    )
      delete env[name];
  }
  return { ...env, LOG_LEVEL: "silent", ...extra };
}

describe("pixelhouse import on one data directory", { timeout: 180_000 }, () => {
  const dir = tempDir("pixelhouse-import-");
  const dataDir = join(dir.path, "data");
  const file = (name: string, text: string) => {
    const path = join(dir.path, name);
    writeFileSync(path, text);
    return path;
  };

  const cli = (args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ["bin/pixelhouse.mjs", ...args],
        { cwd: ROOT, env: cliEnv({ DATA_DIR: dataDir }), timeout: 120_000, maxBuffer: 10 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const e = err as (Error & { code?: number | string }) | null;
          resolve({
            code: e ? (typeof e.code === "number" ? e.code : null) : 0,
            stdout: String(stdout),
            stderr: String(stderr),
          });
        },
      );
    });

  const importJson = async (args: string[]): Promise<Summary> => {
    const run = await cli([...args, "--json"]);
    expect({ code: run.code, stderr: run.stderr }).toStrictEqual({ code: 0, stderr: "" });
    return JSON.parse(run.stdout) as Summary;
  };
  const counts = (s: Summary) => ({
    read: s.read,
    accepted: s.accepted,
    updated: s.updated,
    unchanged: s.unchanged,
    rejected: s.rejected,
  });
  const rejectsOf = (path: string): Reject[] =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Reject);

  /** Opens the CLI's stores in this process, runs `fn`, closes them (releasing the data-dir lock). */
  async function readBack<T>(fn: (stores: Stores) => Promise<T>): Promise<T> {
    const stores = await openStores(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent" }), "import test");
    try {
      return await fn(stores);
    } finally {
      await stores.close();
    }
  }
  /** Current orders of the pixel (FINAL), each with the number of lines of its current version. */
  const orders = (stores: Stores) =>
    stores.warehouse.query<{ id: string; total: string; status: string; lines: string }>(
      `SELECT o.order_id AS id, toString(o.total_price) AS total, o.financial_status AS status,
         toString(l.n) AS lines
       FROM (SELECT * FROM orders FINAL WHERE pixel_id = 'shop') AS o
       LEFT JOIN (SELECT order_id, version, count() AS n FROM order_lines FINAL WHERE pixel_id = 'shop'
         GROUP BY order_id, version) AS l ON l.order_id = o.order_id AND l.version = o.version
       ORDER BY id`,
    );

  const order = (id: string, updatedAt: string, totalPrice: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id,
      createdAt: "2025-03-01T10:00:00Z",
      currency: "usd",
      totalPrice,
      financialStatus: "paid",
      customer: { id: `cust-${id}`, email: `Buyer.${id}@Example.com` },
      lineItems: [
        { productId: "p1", variantId: "v1", sku: "TEE-S", quantity: 2, price: 20 },
        { productId: "p2", variantId: "v2", sku: "CAP", quantity: 1, price: totalPrice - 40 },
      ],
      updatedAt,
      ...extra,
    });
  const V1 = "2025-03-01T10:00:00Z";
  const V2 = "2025-03-02T10:00:00+02:00";
  const V0 = "2025-02-28T10:00:00Z";

  beforeAll(async () => {
    const run = await cli(["pixel", "create", "--name", "Shop", "--id", "shop", "--json"]);
    expect(run.code, run.stderr).toBe(0);
  });
  afterAll(() => dir.remove());

  const good = () =>
    file(
      "orders.jsonl",
      [order("1001", V1, 55), order("1002", V1, 60.5), order("1003", V1, 99.99)].join("\n"),
    );

  it("imports good JSON Lines orders and leaves no reject file", async () => {
    const path = good();
    const s = await importJson(["import", "orders", path, "--pixel", "shop"]);
    expect(counts(s)).toStrictEqual({ read: 3, accepted: 3, updated: 0, unchanged: 0, rejected: 0 });
    expect(s).toMatchObject({ kind: "orders", format: "jsonl", pixelId: "shop", rejectsFile: null });
    expect(existsSync(`${path}.rejects.jsonl`)).toBe(false);
    const rows = await readBack(orders);
    expect(rows.map((r) => [r.id, Number(r.total), r.lines])).toStrictEqual([
      ["1001", 55, "2"],
      ["1002", 60.5, "2"],
      ["1003", 99.99, "2"],
    ]);
  });

  it("a partly bad file: counts, a reject file with line numbers, the good lines stored", async () => {
    const path = file(
      "mixed.jsonl",
      [
        order("2001", V1, 70), // 1
        '{"id": "2002", "createdAt": ', // 2: malformed JSON
        order("2003", V1, 70).replace(/,"updatedAt":"[^"]+"/, ""), // 3: no updatedAt
        "", // 4: blank, skipped
        order("2004", V1, 80), // 5
        order("2005", V1, 80, { financialStatus: "shipped" }), // 6: not a status
        "", // trailing blank
      ].join("\n"),
    );
    const s = await importJson(["import", "orders", path, "--pixel", "shop"]);
    expect(counts(s)).toStrictEqual({ read: 5, accepted: 2, updated: 0, unchanged: 0, rejected: 3 });
    expect(s.rejectsFile).toBe(`${path}.rejects.jsonl`);
    const rejects = rejectsOf(`${path}.rejects.jsonl`);
    expect(rejects.map((r) => r.line)).toStrictEqual([2, 3, 6]);
    expect(rejects[0]).toMatchObject({ raw: '{"id": "2002", "createdAt": ' });
    expect(rejects[0]?.errors[0]?.message).toMatch(/JSON/);
    expect(rejects[1]?.record).toMatchObject({ id: "2003" });
    expect(rejects[1]?.errors.map((e) => e.field)).toStrictEqual(["updatedAt"]);
    expect(rejects[2]?.errors.map((e) => e.field)).toStrictEqual(["financialStatus"]);
    const ids = (await readBack(orders)).map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(["2001", "2004"]));
    expect(ids).not.toContain("2003");
    expect(ids).not.toContain("2005");
  });

  it("re-importing the same file changes nothing; newer versions update; older ones do not", async () => {
    const again = await importJson(["import", "orders", good(), "--pixel", "shop"]);
    expect(counts(again)).toStrictEqual({ read: 3, accepted: 0, updated: 0, unchanged: 3, rejected: 0 });

    const newer = file(
      "newer.jsonl",
      `${[order("1001", V2, 155, { financialStatus: "refunded" }), order("1002", V2, 160.5), order("1003", V2, 199.99)].join("\n")}\n`,
    );
    const up = await importJson(["import", "orders", newer, "--pixel", "shop"]);
    expect(counts(up)).toStrictEqual({ read: 3, accepted: 0, updated: 3, unchanged: 0, rejected: 0 });

    const older = file(
      "older.jsonl",
      [order("1001", V0, 1), order("1002", V0, 2), order("1003", V1, 3)].join("\n"),
    );
    const old = await importJson(["import", "orders", older, "--pixel", "shop"]);
    expect(counts(old)).toStrictEqual({ read: 3, accepted: 0, updated: 0, unchanged: 3, rejected: 0 });

    const rows = (await readBack(orders)).filter((r) => r.id.startsWith("100"));
    expect(rows.map((r) => [r.id, Number(r.total), r.status, r.lines])).toStrictEqual([
      ["1001", 155, "refunded", "2"],
      ["1002", 160.5, "paid", "2"],
      ["1003", 199.99, "paid", "2"],
    ]);
  });

  const csvHeader =
    "id,createdAt,currency,totalPrice,subtotalPrice,financialStatus,customer,tags,lineItems,updatedAt";
  const csvOrder = (id: string, updatedAt: string, total: string) =>
    `${id},2025-04-01T09:30:00Z,EUR,${total},${total},paid,"{""id"":""c-${id}"",""email"":""csv.${id}@example.com""}","[""csv"",""vip""]","[{""sku"":""MUG"",""quantity"":3,""price"":4.5}]",${updatedAt}`;

  it("CSV orders: lineItems as JSON text, numbers converted, bad rows rejected by line", async () => {
    const path = file(
      "orders.csv",
      [
        csvHeader, // 1
        "# hand-written test orders", // 2: comment
        csvOrder("3001", V1, "13.5"), // 3
        csvOrder("3002", V1, "not-a-number"), // 4: rejected by the service
        "3003,2025-04-01T09:30:00Z,EUR", // 5: too few columns
        csvOrder("3004", V1, "20").replace('"[{""sku', '"[{sku'), // 6: lineItems not JSON
        "", // 7: blank
        csvOrder("3005", V1, "7"), // 8
      ].join("\r\n"),
    );
    const rejects = join(dir.path, "csv-rejects.jsonl");
    const s = await importJson(["import", "orders", path, "--pixel", "shop", "--rejects", rejects]);
    expect(counts(s)).toStrictEqual({ read: 5, accepted: 2, updated: 0, unchanged: 0, rejected: 3 });
    expect(s).toMatchObject({ format: "csv", rejectsFile: rejects });
    const r = rejectsOf(rejects);
    expect(r.map((x) => x.line)).toStrictEqual([4, 5, 6]);
    expect(r[0]?.record).toMatchObject({ id: "3002", totalPrice: "not-a-number" });
    expect(r[0]?.errors.map((e) => e.field)).toStrictEqual(["totalPrice", "subtotalPrice"]);
    expect(r[1]?.raw).toBe("3003,2025-04-01T09:30:00Z,EUR");
    expect(r[2]?.errors[0]?.field).toBe("lineItems");

    const same = await importJson(["import", "orders", path, "--pixel", "shop", "--rejects", rejects]);
    expect(counts(same)).toMatchObject({ accepted: 0, updated: 0, unchanged: 2, rejected: 3 });
    const newer = file(
      "newer.csv",
      `${csvHeader}\n${csvOrder("3001", V2, "14")}\n${csvOrder("3005", V0, "8")}\n`,
    );
    const up = await importJson(["import", "orders", newer, "--pixel", "shop"]);
    expect(counts(up)).toStrictEqual({ read: 2, accepted: 0, updated: 1, unchanged: 1, rejected: 0 });

    const rows = await readBack(async (stores) => {
      const o = (await orders(stores)).filter((x) => x.id.startsWith("300"));
      const lines = await stores.warehouse.query<{
        id: string;
        sku: string;
        quantity: number;
        price: string;
      }>(
        `SELECT order_id AS id, sku, quantity, toString(price) AS price FROM order_lines FINAL
         WHERE pixel_id = 'shop' AND order_id = '3001'`,
      );
      const tags = await stores.warehouse.query<{ tags: string[]; hash: string }>(
        "SELECT tags, customer_email_hash AS hash FROM orders FINAL WHERE pixel_id = 'shop' AND order_id = '3001'",
      );
      return { o, lines, tags };
    });
    expect(rows.o.map((x) => [x.id, Number(x.total)])).toStrictEqual([
      ["3001", 14],
      ["3005", 7],
    ]);
    expect(rows.lines.map((l) => [l.sku, Number(l.quantity), Number(l.price)])).toStrictEqual([
      ["MUG", 3, 4.5],
    ]);
    expect(rows.tags[0]?.tags).toStrictEqual(["csv", "vip"]);
    expect(rows.tags[0]?.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("products CSV with variants as JSON text land in Postgres", async () => {
    const variants = (price: number) =>
      JSON.stringify([
        {
          id: "v-1",
          sku: "TEE-S",
          title: "Small",
          currency: "USD",
          currentPrice: price,
          inventory: 12,
          storeCostHistory: [{ cost: 7.5, effectiveStartDate: "2025-01-01" }],
        },
        { id: 2002, sku: "TEE-M", currentPrice: price },
      ]).replaceAll('"', '""');
    const path = file(
      "products.csv",
      [
        "id,title,handle,vendor,productType,status,tags,imageUrls,variants,updatedAt",
        `p-1,Linen tee,linen-tee,Acme,Shirts,ACTIVE,"[""linen""]","[""https://img.example/tee.jpg""]","${variants(25)}",${V1}`,
        `p-2,Cap,cap,Acme,Hats,,,,,${V1}`,
        `p-3,Broken,broken,Acme,Hats,ACTIVE,,,"[{""id"":""v""}]",`,
      ].join("\n"),
    );
    const s = await importJson(["import", "products", path, "--pixel", "shop"]);
    expect(counts(s)).toStrictEqual({ read: 3, accepted: 2, updated: 0, unchanged: 0, rejected: 1 });
    expect(rejectsOf(`${path}.rejects.jsonl`).map((r) => r.line)).toStrictEqual([4]);
    const { products, variantRows, costs } = await readBack(async (stores) => {
      const products = (
        await stores.sql.query<{ product_id: string; status: string; tags: string[] }>(
          "SELECT product_id, status, tags FROM products WHERE pixel_id = 'shop' ORDER BY product_id",
        )
      ).rows;
      const variantRows = (
        await stores.sql.query<{
          variant_id: string;
          sku: string;
          current_price: string;
          inventory: number | null;
        }>(
          "SELECT variant_id, sku, current_price::text, inventory FROM variants WHERE pixel_id = 'shop' ORDER BY variant_id",
        )
      ).rows;
      const costs = (
        await stores.sql.query<{ variant_id: string; cost: string }>(
          "SELECT variant_id, cost::text FROM variant_cost_lines WHERE pixel_id = 'shop' AND source = 'store'",
        )
      ).rows;
      return { products, variantRows, costs };
    });
    expect(products).toStrictEqual([
      { product_id: "p-1", status: "ACTIVE", tags: ["linen"] },
      { product_id: "p-2", status: "ACTIVE", tags: [] },
    ]);
    expect(variantRows.map((v) => [v.variant_id, v.sku, Number(v.current_price), v.inventory])).toStrictEqual(
      [
        ["2002", "TEE-M", 25, null],
        ["v-1", "TEE-S", 25, 12],
      ],
    );
    expect(costs.map((c) => [c.variant_id, Number(c.cost)])).toStrictEqual([["v-1", 7.5]]);
  });

  it("fx import of the shipped demo rates: every line accepted, then unchanged", async () => {
    const lines = readFileSync(DEMO_RATES, "utf8").split("\n");
    expect(lines[0]).toMatch(/^# GENERATED DEMO DATA, NOT MARKET DATA/);
    const dataLines = lines.filter((l) => l && !l.startsWith("#")).length - 1; // less the header
    expect(dataLines).toBe(7 * 730);
    const rejects = join(dir.path, "fx-rejects.jsonl");
    const s = await importJson(["fx", "import", DEMO_RATES, "--rejects", rejects]);
    expect(counts(s)).toStrictEqual({
      read: dataLines,
      accepted: dataLines,
      updated: 0,
      unchanged: 0,
      rejected: 0,
    });
    expect(s).toMatchObject({ kind: "fx-rates", pixelId: null, format: "csv", rejectsFile: null });
    const again = await importJson(["fx", "import", DEMO_RATES, "--rejects", rejects]);
    expect(counts(again)).toStrictEqual({
      read: dataLines,
      accepted: 0,
      updated: 0,
      unchanged: dataLines,
      rejected: 0,
    });
    const stored = await readBack((stores) =>
      stores.warehouse.query<{ n: string; currencies: string; usd: string }>(
        `SELECT toString(count()) AS n, toString(uniqExact(currency)) AS currencies,
           toString(sumIf(usd_rate, currency = 'USD')) AS usd FROM fx_rates FINAL`,
      ),
    );
    expect(stored[0]).toMatchObject({ n: String(dataLines), currencies: "7" });
    expect(Number(stored[0]?.usd)).toBe(730);
  });

  it("prints a human summary without --json", async () => {
    const run = await cli(["import", "orders", good(), "--pixel", "shop"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/3 read in [\d.]+ s/);
    expect(run.stdout).toContain("accepted 0 · updated 0 · unchanged 3 · rejected 0");
  });

  it("fatal errors exit 1 with one line: missing file, unknown pixel, unknown kind", async () => {
    const missing = await cli(["import", "orders", join(dir.path, "nope.jsonl"), "--pixel", "shop"]);
    expect(missing).toStrictEqual({
      code: 1,
      stdout: "",
      stderr: `pixelhouse: file ${join(dir.path, "nope.jsonl")} not found\n`,
    });
    const fxMissing = await cli(["fx", "import", join(dir.path, "nope.csv")]);
    expect(fxMissing.code).toBe(1);
    expect(fxMissing.stderr.trim().split("\n")).toHaveLength(1);
    const pixel = await cli(["import", "orders", good(), "--pixel", "nobody"]);
    expect(pixel).toMatchObject({ code: 1, stdout: "", stderr: "pixelhouse: pixel nobody not found\n" });
    const kind = await cli(["import", "widgets", good(), "--pixel", "shop"]);
    expect(kind.code).toBe(1);
    expect(kind.stderr).toMatch(/^pixelhouse: .*'widgets' is invalid/);
  });

  it("an identity graph LevelDB cannot open stops the import before it reads a line, in one line", async () => {
    const current = join(dataDir, "identity", "CURRENT");
    const kept = readFileSync(current);
    writeFileSync(current, "MANIFEST-gone\n");
    try {
      const run = await cli(["import", "orders", good(), "--pixel", "shop", "--json"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(
        /^pixelhouse: could not reach the identity graph \(LevelDB in DATA_DIR\/identity\): cannot open .*identity/,
      );
    } finally {
      writeFileSync(current, kept);
    }
    // Readable again: the same import runs.
    expect((await importJson(["import", "orders", good(), "--pixel", "shop"])).read).toBe(3);
  });
});

describe("readRecords (the reader under the import command)", () => {
  const read = async (chunks: (string | Buffer)[], format: "jsonl" | "csv", kind: "orders" | "fx-rates") => {
    const out: ReadItem[] = [];
    const input = Readable.from(chunks.map((c) => (typeof c === "string" ? Buffer.from(c) : c)));
    for await (const item of readRecords(input, format, kind)) out.push(item);
    return out;
  };

  it("JSON Lines: BOM, CRLF, lines split across chunks, blank lines, a line too long to keep", async () => {
    const long = `{"x":"${"a".repeat(MAX_JSON_LINE_BYTES)}"}`;
    const items = await read(
      ['\uFEFF{"id":1}\r\n\r\n{"id":', "2}\n", long.slice(0, 10), long.slice(10), '\n{"id":"\u00e9', '3"}'],
      "jsonl",
      "orders",
    );
    expect(items.map((i) => ("record" in i ? [i.line, i.record] : [i.line, i.error]))).toStrictEqual([
      [1, { id: 1 }],
      [3, { id: 2 }],
      [4, `line longer than ${MAX_JSON_LINE_BYTES} bytes`],
      [5, { id: "\u00e93" }],
    ]);
  });

  it("CSV: a quoted value over two lines keeps the line numbers right; # inside a value is not a comment", async () => {
    const items = await read(
      [
        "# demo\ndate,currency,unitsPerUsd\n2025-01-01,EUR,0.9\n",
        '2025-01-02,"EU\nR",0.9\n2025-01-03,#EUR,1e0\n2025-01-04,EUR,\n2025-01-05,EUR,x',
      ],
      "csv",
      "fx-rates",
    );
    expect(items).toStrictEqual([
      { line: 3, record: { date: "2025-01-01", currency: "EUR", unitsPerUsd: 0.9 } },
      { line: 4, record: { date: "2025-01-02", currency: "EU\nR", unitsPerUsd: 0.9 } },
      { line: 6, record: { date: "2025-01-03", currency: "#EUR", unitsPerUsd: 1 } },
      { line: 7, record: { date: "2025-01-04", currency: "EUR" } },
      { line: 8, record: { date: "2025-01-05", currency: "EUR", unitsPerUsd: "x" } },
    ]);
  });

  it("CSV: a header naming a column twice stops the file", async () => {
    await expect(read(["date,date\n1,2\n"], "csv", "fx-rates")).rejects.toThrow(/names column "date" twice/);
  });
});
