/**
 * npm run bench:search — catalog search (GET /accounts/api/products/search) on BENCH_VARIANTS
 * (default 100,000) variants: 4 per product, with a second pixel holding a tenth as many as noise.
 * Each term's first page is timed (median of BENCH_RUNS, default 20) with the trigram indexes, and in
 * the same run without them (bitmap and index scans disabled: the sequential scan the indexes avoid).
 * Prints the plans on stderr and one summary line per SQL store: PGlite always, plus PostgreSQL when
 * BENCH_DATABASE_URL names a server (a scratch database is created there and dropped).
 */
import { performance } from "node:perf_hooks";
import { containsPattern, SEARCH_IDS_SQL, searchProducts } from "../src/products/search.js";
import { readMigrations, SQL_DIR } from "../src/stores/migrations.js";
import { PgSqlStore } from "../src/stores/sql/pg.js";
import { PgliteSqlStore } from "../src/stores/sql/pglite.js";
import type { SqlExecutor, SqlStore } from "../src/stores/sql/port.js";
import { createTestDatabase } from "../test/helpers/stores.js";

const VARIANTS = Number(process.env.BENCH_VARIANTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PIXEL = "bench-search";
const log = (s: string) => process.stderr.write(`${s}\n`);

/** Terms from selective to broad; `hits` is filled in from the data. */
const TERMS = [
  { label: "sku", q: "SKU-0042424" },
  { label: "title words + number", q: "denim jacket 1234" },
  { label: "variant title", q: "olive / xl" },
  { label: "broad word", q: "linen" },
];

async function seed(sql: SqlStore): Promise<void> {
  for (const m of readMigrations(`${SQL_DIR}/postgres`)) await sql.transaction((tx) => tx.exec(m.sql));
  await sql.exec(`
    INSERT INTO accounts (id, name) VALUES ('bench-account', 'Bench');
    INSERT INTO pixels (id, account_id, name) VALUES ('${PIXEL}', 'bench-account', 'Bench'), ('noise', 'bench-account', 'Noise');`);
  const products = Math.ceil(VARIANTS / 4);
  for (const [pixel, count] of [
    [PIXEL, products],
    ["noise", Math.ceil(products / 10)],
  ] as const) {
    // Titles combine 10 materials × 12 kinds with a number; SKUs are unique; variants are colour / size.
    await sql.exec(`
      INSERT INTO products (pixel_id, product_id, title, vendor)
      SELECT '${pixel}', 'prod-' || lpad(n::text, 7, '0'),
        (ARRAY['Linen','Wool','Merino','Canvas','Denim','Leather','Cotton','Silk','Cashmere','Nylon'])[1 + n % 10]
        || ' ' || (ARRAY['Shirt','Tote','Beanie','Jacket','Wallet','Scarf','Trousers','Tee','Bag','Socks','Belt','Cap'])[1 + (n / 10) % 12]
        || ' ' || n, 'Vendor ' || (n % 50)
      FROM generate_series(1, ${count}) AS n;
      INSERT INTO variants (pixel_id, product_id, variant_id, sku, title, current_price)
      SELECT '${pixel}', 'prod-' || lpad(n::text, 7, '0'), 'var-' || lpad((n * 4 + v)::text, 8, '0'),
        'SKU-' || lpad((n * 4 + v)::text, 7, '0'),
        (ARRAY['Sand','Navy','Olive','Black','Rust'])[1 + (n + v) % 5] || ' / ' || (ARRAY['S','M','L','XL'])[1 + v],
        10 + (n % 90)
      FROM generate_series(1, ${count}) AS n, generate_series(0, 3) AS v;`);
  }
  await sql.exec("ANALYZE products; ANALYZE variants;");
}

async function explain(sql: SqlExecutor, q: string, indexes: boolean): Promise<string> {
  if (!indexes) await sql.query("SET LOCAL enable_bitmapscan = off");
  if (!indexes) await sql.query("SET LOCAL enable_indexscan = off");
  const { rows } = await sql.query<Record<string, string>>(`EXPLAIN (ANALYZE, COSTS OFF) ${SEARCH_IDS_SQL}`, [
    PIXEL,
    "",
    containsPattern(q),
    26,
  ]);
  return rows.map((r) => Object.values(r)[0]).join("\n");
}

/** Median ms of the service's first page of `q` (ids, then products, variants and COG lines). */
async function time(sql: SqlStore, q: string, indexes: boolean): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await sql.transaction(async (tx) => {
      if (!indexes) await tx.query("SET LOCAL enable_bitmapscan = off");
      if (!indexes) await tx.query("SET LOCAL enable_indexscan = off");
      await searchProducts(tx, PIXEL, { q, limit: 25 });
    });
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

async function run(name: string, sql: SqlStore): Promise<string> {
  const t0 = performance.now();
  await seed(sql);
  log(`${name}: seeded ${VARIANTS} variants in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const parts: string[] = [];
  for (const term of TERMS) {
    const hits = (await searchProducts(sql, PIXEL, { q: term.q, limit: 100 })).items.length;
    const plan = await sql.transaction((tx) => explain(tx, term.q, true));
    log(
      `\n${name} — "${term.q}" (${term.label}, ${hits}${hits === 100 ? "+" : ""} products on page 1 of 100):\n${plan}`,
    );
    const indexed = await time(sql, term.q, true);
    const scan = await time(sql, term.q, false);
    parts.push(
      `${term.label} ${indexed.toFixed(1)} ms vs scan ${scan.toFixed(1)} ms (×${(scan / indexed).toFixed(1)})`,
    );
  }
  return `bench:search ${name} ${VARIANTS} variants | ${parts.join(" | ")}`;
}

const lines: string[] = [];
const lite = await PgliteSqlStore.open();
try {
  lines.push(await run("pglite", lite));
} finally {
  await lite.close();
}
const server = process.env.BENCH_DATABASE_URL;
if (server) {
  const db = await createTestDatabase("pxh_bench_search", server);
  const store = new PgSqlStore(db.url);
  try {
    lines.push(await run("postgres", store));
  } finally {
    await store.close();
    await db.drop();
  }
}
for (const l of lines) process.stdout.write(`${l}\n`);
