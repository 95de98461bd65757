/**
 * npm run bench:query — p50/p95 of the query API on a demo store (BENCH_DATA_DIR, pixel "demo"; load
 * one with `pixelhouse demo --scale large` first), each shape against hand-written floor SQL for the
 * same answer run in the same process (bench/query-floors.ts), with the ratio; the cached p50; the
 * process's peak RSS while serving the shapes (read before the floors run) and after. Shapes: attribution (3 models × windows 7/30/unlimited), a 90-day daily series
 * of 6 measures in EUR with a compare period, channel details at ad level with measures, a 12-month
 * cohort. Service calls go over HTTP with `Cache-Control: no-cache` (the cached p50 without it).
 * One summary line on stdout; per-shape figures on stderr.
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { buildServices } from "../src/services.js";
import { openStores } from "../src/stores/index.js";
import { migrate } from "../src/stores/migrations.js";
import { percentile } from "./load-client.js";
import {
  attributionFloor,
  channelFloors,
  cohortFloor,
  type Floor,
  type FloorRange,
  timeSeriesFloors,
} from "./query-floors.js";

if (process.argv.includes("--synthetic")) {
  // Builds synthetic stores and runs this benchmark on each (bench/query-synthetic.ts).
  await import("./query-synthetic.js");
  process.exit(0);
}

const DATA_DIR = process.env.BENCH_DATA_DIR;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const PIXEL = process.env.BENCH_PIXEL ?? "demo";
if (!DATA_DIR || !existsSync(DATA_DIR)) {
  process.stderr.write(
    "BENCH_DATA_DIR must name a data dir holding a demo store (pixelhouse demo --scale large)\n",
  );
  process.exit(2);
}
const log = (s: string) => process.stderr.write(`${s}\n`);

// No margin: this process is the store's only writer and its loads are done, so every row is
// visible when the derived tables are built below (with one, a cohort build right after a load would
// still treat the load's last seconds of orders as new until `serve`'s worker replaced it a minute later).
const config = loadConfig({ DATA_DIR, LOG_LEVEL: "silent", DERIVED_MARGIN_MS: "0" });
const stores = await openStores(config, "bench:query");
await migrate(stores.sql, stores.warehouse);
const services = buildServices(stores, config, createLogger("silent"));
// As `serve` would by now: the derived tables built (a no-op when they are current).
{
  const t = performance.now();
  const refreshed = await services.derivedWorker.runOnce(0);
  log(
    `derived tables: ${((performance.now() - t) / 1000).toFixed(1)} s (${refreshed.filter((r) => r.full).length} full, ${refreshed.filter((r) => r.refreshed && !r.full).length} incremental); peak RSS so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
}
const server = createApp({ config, stores, services, log: createLogger("silent") }).listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const { key } = await services.keys.create({
  pixelId: PIXEL,
  scopes: ["analytics:read"],
  name: "bench:query",
});

const [{ events, orders, last }] = (await stores.warehouse.query<{
  events: string;
  orders: string;
  last: string;
}>(
  `SELECT (SELECT count() FROM events WHERE pixel_id = {p:String}) AS events,
          (SELECT count() FROM orders FINAL WHERE pixel_id = {p:String}) AS orders,
          (SELECT toString(toDate(max(created_at))) FROM orders WHERE pixel_id = {p:String}) AS last`,
  { p: PIXEL },
)) as [{ events: string; orders: string; last: string }];
const day = (d: string, n: number) =>
  new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const end = last;
const start = day(end, -89);
const range = (s: string, e: string): FloorRange => ({
  pixel: PIXEL,
  start: new Date(`${s}T00:00:00Z`),
  end: new Date(`${day(e, 1)}T00:00:00Z`),
});
log(
  `store: ${Number(events).toLocaleString("en-US")} events, ${Number(orders).toLocaleString("en-US")} orders; range ${start}..${end}`,
);

async function call(path: string, body: object, cache = false): Promise<{ ms: number; body: unknown }> {
  const t0 = performance.now();
  const res = await fetch(url + path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": key,
      "x-pixel-id": PIXEL,
      ...(cache ? {} : { "cache-control": "no-cache" }),
    },
    body: JSON.stringify({ pixelId: PIXEL, ...body }),
  });
  const parsed = (await res.json()) as unknown;
  if (res.status !== 200) throw new Error(`${path} ${res.status}: ${JSON.stringify(parsed).slice(0, 300)}`);
  return { ms: performance.now() - t0, body: parsed };
}

async function floor(statements: Floor[]): Promise<{ ms: number; rows: Record<string, unknown>[][] }> {
  const t0 = performance.now();
  const rows = await Promise.all(statements.map((f) => stores.warehouse.query(f.sql, f.params as never)));
  return { ms: performance.now() - t0, rows };
}

interface Shape {
  name: string;
  path: string;
  body: object;
  floor: () => Promise<Floor[]>;
}

const shapes: Shape[] = [];
// Fractional models are named apart ("fractional …") so the single-touch figures stay comparable.
for (const model of ["first_click", "last_click", "any_click", "linear", "time_decay", "position_based"]) {
  const fractional = !["first_click", "last_click", "any_click"].includes(model);
  for (const window of fractional ? [30, -1] : [7, 30, -1]) {
    shapes.push({
      name: `${fractional ? "fractional" : "attribution"} ${model} ${window < 0 ? "unlimited" : `${window}d`}`,
      path: "/db-mgmt/api/query-attribution",
      body: {
        dimension: "attribution.channel",
        dateRange: { start, end },
        attributionModel: model,
        attributionWindow: window,
        timezone: "UTC",
        measures: ["attribution.orders", "attribution.revenue"],
      },
      floor: async () => [attributionFloor(range(start, end), model, window)],
    });
  }
}
// The same attribution over a month and over a year (the 90-day range above is the third).
for (const [label, from] of [
  ["30-day", day(end, -29)],
  ["365-day", day(end, -364)],
] as const) {
  shapes.push({
    name: `attribution last_click 30d, ${label} range`,
    path: "/db-mgmt/api/query-attribution",
    body: {
      dimension: "attribution.channel",
      dateRange: { start: from, end },
      attributionModel: "last_click",
      attributionWindow: 30,
      timezone: "UTC",
      measures: ["attribution.orders", "attribution.revenue"],
    },
    floor: async () => [attributionFloor(range(from, end), "last_click", 30)],
  });
}
const compareStart = day(start, -90);
const compareEnd = day(start, -1);
shapes.push({
  name: "time series 90d daily, 6 measures, EUR, compare",
  path: "/db-mgmt/api/query",
  body: {
    measures: [
      "orders.count",
      "orders.total_revenue",
      "orders.refunds",
      "orders.net_revenue",
      "ads.spend",
      "customers.count",
    ],
    dateRange: { start, end },
    compareDateRange: { start: compareStart, end: compareEnd },
    granularity: "day",
    currency: "EUR",
    timezone: "UTC",
  },
  floor: async () => [
    ...timeSeriesFloors(range(start, end)),
    ...timeSeriesFloors(range(compareStart, compareEnd)),
  ],
});
shapes.push({
  name: "channel details, ad level, 50 ads with measures",
  path: "/db-mgmt/api/query-channel-details",
  body: {
    level: "ad",
    measures: [
      "ads.spend",
      "ads.clicks",
      "ads.ctr",
      "attribution.orders",
      "attribution.revenue",
      "attribution.roas",
    ],
    dateRange: { start, end },
    timezone: "UTC",
    limit: 50,
  },
  floor: async () => {
    const page = await stores.warehouse.query<{ entity_id: string }>(
      channelFloors(range(start, end), [])[0]!.sql,
      { p: PIXEL },
    );
    return channelFloors(
      range(start, end),
      page.map((p) => p.entity_id),
    ).slice(1);
  },
});
const cohortStart = day(end, -364).slice(0, 8) + "01";
shapes.push({
  name: "cohorts, 12 months",
  path: "/db-mgmt/api/query-cohort-analysis",
  body: {
    dateRange: { start: cohortStart, end },
    cohortGranularity: "month",
    periods: 12,
    timezone: "UTC",
    currency: "USD",
  },
  floor: async () => [cohortFloor(range(cohortStart, end), 12)],
});

// The service's shapes first, then their floors: the peak RSS read in between is the service's own
// (the floors' hand-written joins are heavier than the service's SQL and would set the process peak).
const measured = new Map<string, number[]>();
const rawP50 = new Map<string, number>();
// The process peak after each shape: the shape that raises it is the one that sets the peak RSS.
const peakAfter = new Map<string, number>();
// A dashboard's first look at its shapes asks for the credit cells of their attribution shapes, and
// the worker's next round builds them (as `serve`'s would): measured as a dashboard asking them all
// day sees them.
for (const s of shapes) await call(s.path, s.body);
{
  const t = performance.now();
  await services.derivedWorker.runOnce(0);
  log(`credit cells of the shapes asked: built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
for (const s of shapes) {
  await call(s.path, s.body);
  const svc: number[] = [];
  for (let i = 0; i < RUNS; i++) svc.push((await call(s.path, s.body)).ms);
  measured.set(s.name, svc);
  peakAfter.set(s.name, process.resourceUsage().maxRSS / 1024);
}
const cachedShape = shapes[4]!; // attribution last_click 30d
await call(cachedShape.path, cachedShape.body, true);
const cached: number[] = [];
for (let i = 0; i < 30; i++) cached.push((await call(cachedShape.path, cachedShape.body, true)).ms);
const cachedP50 = percentile(cached, 50);
const rssMb = process.resourceUsage().maxRSS / 1024;
// The service and its floor must agree, or the run fails. Checked once the service's peak RSS is
// read: the floors' hand-written joins would otherwise set it (they did, before).
{
  const svc = (await call(shapes[1]!.path, shapes[1]!.body)).body as {
    results: { dimensionValue: string; measureDetails: { measure: string; primarySum: number }[] }[];
  };
  const base = (await floor(await shapes[1]!.floor())).rows[0]!;
  const total = (rows: number[]) => rows.reduce((a, b) => a + b, 0);
  const svcOrders = total(
    svc.results.map((r) => r.measureDetails.find((d) => d.measure === "attribution.orders")!.primarySum),
  );
  const floorOrders = total(base.map((r) => Number(r.orders)));
  if (svcOrders !== floorOrders)
    throw new Error(`attribution disagrees: service ${svcOrders} orders, floor ${floorOrders}`);
  log(`check: last_click 7d attributed orders service ${svcOrders} = floor ${floorOrders}`);
  // A fractional model: each channel's share of orders, to the 4 decimals the service reports.
  const linear = shapes.find((s) => s.name === "fractional linear 30d")!;
  const svcLinear = (await call(linear.path, linear.body)).body as typeof svc;
  const floorLinear = new Map(
    (await floor(await linear.floor())).rows[0]!.map((r) => [String(r.dim), Number(r.orders)]),
  );
  for (const r of svcLinear.results) {
    const orders = r.measureDetails.find((d) => d.measure === "attribution.orders")!.primarySum;
    const expected = floorLinear.get(r.dimensionValue) ?? 0;
    if (Math.abs(orders - expected) > 0.00015)
      throw new Error(`linear disagrees on ${r.dimensionValue}: service ${orders}, floor ${expected}`);
  }
  log(
    `check: linear 30d attributed orders per channel agree with the floor (${svcLinear.results.length} values)`,
  );
}

// The shapes the derived tables answer (attribution, channel details, the time series' orders,
// cohorts), from raw data only, for comparison, after the service's peak RSS was read (the raw path's
// joins hold more memory). Each must answer alike both ways.
for (const s of shapes) {
  const raw: number[] = [];
  for (let i = 0; i < RUNS; i++) raw.push((await call(`${s.path}?derived=false`, s.body)).ms);
  rawP50.set(s.name, percentile(raw, 50));
  const [derived, fromRaw] = [await call(s.path, s.body), await call(`${s.path}?derived=false`, s.body)];
  if (JSON.stringify(derived.body) !== JSON.stringify(fromRaw.body))
    throw new Error(`${s.name}: the derived answer differs from the raw one`);
  log(`check: ${s.name} answers alike from the derived tables and from raw data`);
}

const summary: { name: string; p50: number; p95: number; f50: number; ratio: number }[] = [];
for (const s of shapes) {
  const statements = await s.floor();
  await floor(statements);
  const flo: number[] = [];
  for (let i = 0; i < RUNS; i++) flo.push((await floor(statements)).ms);
  const svc = measured.get(s.name)!;
  const row = {
    name: s.name,
    p50: percentile(svc, 50),
    p95: percentile(svc, 95),
    f50: percentile(flo, 50),
    ratio: 0,
  };
  row.ratio = row.p50 / row.f50;
  summary.push(row);
  const raw = rawP50.get(s.name);
  log(
    `${s.name}: service p50 ${row.p50.toFixed(0)} ms, p95 ${row.p95.toFixed(0)} ms${raw === undefined ? "" : ` (raw data p50 ${raw.toFixed(0)} ms)`} | floor p50 ${row.f50.toFixed(0)} ms | ratio ${row.ratio.toFixed(2)} | peak RSS after it ${peakAfter.get(s.name)!.toFixed(0)} MB`,
  );
}
const rssWithFloorsMb = process.resourceUsage().maxRSS / 1024;
log(
  `cached p50 ${cachedP50.toFixed(1)} ms; peak RSS ${rssMb.toFixed(0)} MB serving the shapes, ${rssWithFloorsMb.toFixed(0)} MB once the floors ran too`,
);

const worst = summary.reduce((a, b) => (b.ratio > a.ratio ? b : a));
const lc30 = summary.find((s) => s.name === "attribution last_click 30d")!;
process.stdout.write(
  `bench:query worst service p50 ${worst.p50.toFixed(0)} ms (${worst.name}) | floor ${worst.f50.toFixed(0)} ms | ratio ${worst.ratio.toFixed(2)} | ` +
    `last_click 30d p50 ${lc30.p50.toFixed(0)} ms | cached p50 ${cachedP50.toFixed(1)} ms | peak RSS ${rssMb.toFixed(0)} MB | ` +
    `${Number(events).toLocaleString("en-US")} events, ${Number(orders).toLocaleString("en-US")} orders\n`,
);
if (process.env.BENCH_JSON) {
  process.stdout.write(
    `${JSON.stringify({ events: Number(events), orders: Number(orders), rssMb: Math.round(rssMb), rssWithFloorsMb: Math.round(rssWithFloorsMb), shapes: summary })}\n`,
  );
}
server.closeAllConnections();
server.close();
await stores.close();
