/**
 * npm run bench:recalc — per-order cost recalculation after one variant COG change.
 * BENCH_ORDERS (default 300,000) orders with 2 lines each are inserted straight into the warehouse
 * (benchmark data, not the demo); one variant appears in exactly 10 % of them. Every order first gets
 * its snapshot (a full recalculation, reported on stderr), then a COG line for that variant is added
 * through ProductService (which writes the `costs.changed` outbox row) and the scope the worker derives
 * from that payload is recalculated and timed. Baseline in the same run: INSERT of the same rewritten
 * snapshot rows alone (into a scratch copy of order_costs). Embedded stores: PGlite + chDB.
 */

import { performance } from "node:perf_hooks";
import { RecalcService, scopesOfCostsChanged } from "../src/costs/recalc.js";
import type { CostsChanged } from "../src/events/costs-changed.js";
import { loadVariantCostFacts } from "../src/products/facts.js";
import { ProductService } from "../src/products/service.js";
import { DataVersions } from "../src/shared/data-version.js";
import { MemoryKv } from "../src/stores/kv/memory.js";
import { migrate } from "../src/stores/migrations.js";
import { PgliteSqlStore } from "../src/stores/sql/pglite.js";
import { ChdbWarehouse } from "../src/stores/warehouse/chdb.js";
import { tempDir } from "../test/helpers/stores.js";

const ORDERS = Number(process.env.BENCH_ORDERS ?? 300_000);
const VARIANTS = 1000;
const PIXEL = "bench-recalc";
/** Orders per batch: the worker's own default unless BENCH_BATCH says otherwise. */
const batchOptions = process.env.BENCH_BATCH ? { batchSize: Number(process.env.BENCH_BATCH) } : {};
const log = (s: string) => process.stderr.write(`${s}\n`);

const dir = tempDir("pixelhouse-bench-recalc-");
const sql = await PgliteSqlStore.open();
const warehouse = await ChdbWarehouse.open(dir.path, "bench_recalc");
try {
  await migrate(sql, warehouse);
  await sql.exec(`
    INSERT INTO accounts (id, name) VALUES ('bench-account', 'Bench');
    INSERT INTO pixels (id, account_id, name) VALUES ('${PIXEL}', 'bench-account', 'Bench');
    INSERT INTO products (pixel_id, product_id, title) VALUES ('${PIXEL}', 'p', 'Bench product');
    INSERT INTO variants (pixel_id, product_id, variant_id, current_price, handling_fee)
      SELECT '${PIXEL}', 'p', 'v' || lpad(n::text, 4, '0'), 40, 0.5 FROM generate_series(0, ${VARIANTS - 1}) AS n;
    INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start)
      SELECT '01BENCH' || lpad(n::text, 19, '0'), '${PIXEL}', 'p', 'v' || lpad(n::text, 4, '0'), 'manual',
        5 + n % 20, '2025-01-01' FROM generate_series(0, ${VARIANTS - 1}) AS n;
    INSERT INTO cost_lines (id, account_id, cost_type, line, effective_start, effective_end) VALUES
      ('01BENCHGW', 'bench-account', 'gateway', '{"name":"Stripe","currency":"USD","gateway":"stripe","percentRate":2.9,"fixedFee":0.3}', NULL, NULL),
      ('01BENCHSH', 'bench-account', 'shipping', '{"name":"Ship","currency":"USD","costPerOrder":4,"costPerItem":0.5}', NULL, NULL),
      ('01BENCHOL', 'bench-account', 'order', '{"name":"Box","currency":"USD","amount":1.2}', '2026-01-01', NULL);`);
  // Orders over Jan–Mar 2026; line 0 is v0000 in every tenth order (n % 10 = 0) and never otherwise.
  const t0 = performance.now();
  await warehouse.command(`INSERT INTO orders (pixel_id, order_id, created_at, currency, total_price, subtotal_price,
      total_shipping, total_tax, total_discounts, financial_status, source_name, gateway, tags, discount_codes, country,
      customer_id, customer_email_hash, canonical_id, version, updated_at)
    SELECT '${PIXEL}', concat('o', leftPad(toString(number), 7, '0')),
      toDateTime64('2026-01-01 00:00:00', 3, 'UTC') + toIntervalSecond(number * 7776000 / ${ORDERS}),
      'USD', 100, 100, 0, 0, 0, 'paid', 'web', 'stripe', [], [], 'DE', '', '', '', 1, now64(3)
    FROM numbers(${ORDERS})`);
  await warehouse.command(`INSERT INTO order_lines (pixel_id, order_id, line_index, product_id, variant_id, sku, quantity, price, version)
    SELECT '${PIXEL}', concat('o', leftPad(toString(intDiv(number, 2)), 7, '0')), number % 2, 'p',
      if(number % 2 = 0 AND intDiv(number, 2) % 10 = 0, 'v0000',
         concat('v', leftPad(toString(1 + (number * 7919) % ${VARIANTS - 1}), 4, '0'))),
      '', 1 + number % 3, 30, 1
    FROM numbers(${ORDERS * 2})`);
  log(`seeded ${ORDERS} orders in ${Math.round(performance.now() - t0)} ms`);

  const service = new RecalcService(
    sql,
    warehouse,
    new MemoryKv(),
    new DataVersions(new MemoryKv()),
    (pixelId, keys) => loadVariantCostFacts(sql, pixelId, keys),
  );
  const t1 = performance.now();
  const full = await service.recalc({ pixelId: PIXEL, mode: "missing" }, batchOptions);
  const fullMs = performance.now() - t1;
  log(
    `initial snapshots: ${full.written} orders in ${Math.round(fullMs)} ms (${Math.round(full.written / (fullMs / 1000))}/s)`,
  );

  // The change: v0000 costs 17 from 2026-01-01 (the open-ended 2025 line is closed the day before).
  await new ProductService(sql).addCog(
    { accountId: "bench-account", pixelId: PIXEL, productId: "p", variantId: "v0000" },
    { cost: 17, effectiveStartDate: "2026-01-01", effectiveEndDate: null },
    "bench",
  );
  const { rows } = await sql.query<{ payload: CostsChanged }>(
    "SELECT payload FROM outbox WHERE topic = 'costs.changed' ORDER BY id DESC LIMIT 1",
  );
  const scopes = await scopesOfCostsChanged(service, rows[0]!.payload);
  const before = performance.now();
  const runStartedMs = Date.now();
  let written = 0;
  let scanned = 0;
  for (const scope of scopes) {
    const r = await service.recalc(scope, batchOptions);
    written += r.written;
    scanned += r.scanned;
  }
  const recalcMs = performance.now() - before;
  const again = await service.recalc(scopes[0]!, batchOptions);

  // Baseline: the same rewritten rows, INSERT alone.
  // The rows the timed run wrote: their versions are its clock (ms), later than any before it.
  const latest = await warehouse.query<Record<string, unknown>>(
    `SELECT pixel_id, order_id, version, toString(computed_at) AS computed_at, currency, toString(cogs) AS cogs,
       toString(handling) AS handling, toString(shipping) AS shipping, toString(gateway) AS gateway,
       toString(order_level) AS order_level, details
     FROM order_costs FINAL WHERE pixel_id = {p:String} AND version >= {since:UInt64}`,
    { p: PIXEL, since: runStartedMs },
  );
  await warehouse.command("CREATE TABLE order_costs_baseline AS order_costs");
  const b0 = performance.now();
  await warehouse.insert("order_costs_baseline", latest);
  const baseMs = performance.now() - b0;

  const affected = ORDERS / 10;
  const rate = Math.round(written / (recalcMs / 1000));
  const baseRate = Math.round(latest.length / (baseMs / 1000));
  log(`scope: ${JSON.stringify(scopes[0])}; scanned ${scanned}; second run wrote ${again.written}`);
  process.stdout.write(
    `bench:recalc ${ORDERS} orders, 1 variant COG change: ${written} rewritten in ${Math.round(recalcMs)} ms = ${rate} affected orders/s | baseline (INSERT of the same ${latest.length} rows alone) ${Math.round(baseMs)} ms = ${baseRate} rows/s | ratio ${(rate / baseRate).toFixed(2)} | rewritten fraction ${(written / ORDERS).toFixed(4)} (affected ${(affected / ORDERS).toFixed(4)})${written === affected && again.written === 0 ? "" : " MISMATCH"}\n`,
  );
} finally {
  await warehouse.close();
  await sql.close();
  dir.remove();
}
