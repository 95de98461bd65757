/**
 * npm run bench:import — orders/s of `pixelhouse import orders` on BENCH_ORDERS (default 1,000,000)
 * generated realistic orders in a JSON Lines file, run as a child process on a fresh embedded store,
 * with its peak RSS; against a bare baseline in the same run: the same file read, JSON.parse'd, turned
 * into the same rows (orderRow / orderLineRows) and inserted straight into a fresh chDB warehouse in
 * batches of 5,000 (the import's own default), with no validation, versions, identity graph or bus
 * messages — run before and after the import, the ratio against the mean of the two. Again on
 * Postgres + Redis servers (chDB still the warehouse) when BENCH_DATABASE_URL / BENCH_REDIS_URL (or
 * TEST_DATABASE_URL / TEST_REDIS_URL) are set: there the identity graph lives in the Postgres server
 * instead of LevelDB on a thread of the command. One summary line on stdout; details on stderr.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { loadConfig } from "../src/config.js";
import { openStores } from "../src/stores/index.js";
import { migrate } from "../src/stores/migrations.js";
import type { OrderRecord } from "../src/sync/schemas.js";
import { orderLineRows, orderRow } from "../src/sync/warehouse-rows.js";
import { runCli } from "./child.js";
import { generateOrders } from "./orders-gen.js";
import { DATABASE_URL, freshDatabase, REDIS_URL, serverEnv } from "./servers.js";

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
const BATCH = process.env.BENCH_BATCH; // --batch of the import; its default when unset
// The import's default batch, loaded as fast as any size tried: alternated bare loads of 300,000
// orders took 9.0–10.3 s in batches of 5,000 or 10,000 and 12.6–14.3 s in batches of 100,000.
const BASELINE_BATCH = 5_000;
const PIXEL = "bench";

const log = (s: string) => process.stderr.write(`${s}\n`);
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

/** Runs a command, returning its stdout, stderr, wall time and peak RSS (kB). */
async function measured(args: string[], env: Record<string, string>) {
  const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
  const command = timeBin ?? process.execPath;
  const argv = timeBin ? ["-f", "BENCH_MAX_RSS_KB=%M", process.execPath, ...args] : args;
  const t0 = performance.now();
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    const text = c.toString();
    stderr += text;
    process.stderr.write(text.replace(/^BENCH_MAX_RSS_KB=\d+\s*$/m, ""));
  });
  // Without /usr/bin/time: poll the high-water mark of the node process itself.
  let polledKb = 0;
  const poll = timeBin
    ? null
    : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
          if (m) polledKb = Math.max(polledKb, Number(m[1]));
        } catch {
          // exited
        }
      }, 100);
  const [code] = (await once(child, "exit")) as [number | null];
  if (poll) clearInterval(poll);
  const wallMs = performance.now() - t0;
  const timed = /BENCH_MAX_RSS_KB=(\d+)/.exec(stderr);
  if (code !== 0) throw new Error(`pixelhouse ${args.join(" ")} exited ${code}`);
  return { stdout, wallMs, peakRssKb: timed ? Number(timed[1]) : polledKb };
}

async function baseline(file: string): Promise<{ ms: number; rows: number }> {
  const dir = tmp("pxh-bench-import-base-");
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" });
  const stores = await openStores(config, "bench:import baseline");
  try {
    await migrate(stores.sql, stores.warehouse);
    const t0 = performance.now();
    let orders: Record<string, unknown>[] = [];
    let lines: Record<string, unknown>[] = [];
    let rows = 0;
    const flush = async () => {
      await Promise.all([
        stores.warehouse.insert("orders", orders),
        stores.warehouse.insert("order_lines", lines),
      ]);
      rows += orders.length;
      orders = [];
      lines = [];
    };
    const input = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const text of input) {
      const o = JSON.parse(text) as OrderRecord;
      orders.push(orderRow(PIXEL, o, ""));
      for (const l of orderLineRows(PIXEL, o)) lines.push(l);
      if (orders.length >= BASELINE_BATCH) await flush();
    }
    if (orders.length) await flush();
    const ms = performance.now() - t0;
    const [count] = await stores.warehouse.query<{ n: string }>(
      "SELECT count() AS n FROM orders FINAL WHERE pixel_id = {p:String}",
      { p: PIXEL },
    );
    if (Number(count?.n) !== rows) throw new Error(`baseline stored ${count?.n} of ${rows} orders`);
    return { ms, rows };
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `pixelhouse import orders` of the file into a new pixel on the stores of `env`, timed. */
async function importInto(file: string, env: Record<string, string>, label: string) {
  await runCli(["pixel", "create", "--name", "Bench", "--id", PIXEL, "--json"], env);
  const args = ["bin/pixelhouse.mjs", "import", "orders", file, "--pixel", PIXEL, "--json"];
  if (BATCH) args.push("--batch", BATCH);
  const run = await measured(args, env);
  const summary = JSON.parse(run.stdout) as Summary;
  if (summary.accepted !== ORDERS || summary.rejected !== 0)
    throw new Error(
      `${label}: import stored ${summary.accepted} of ${ORDERS} (rejected ${summary.rejected})`,
    );
  const rate = (ORDERS * 1000) / summary.elapsedMs;
  log(
    `${label}: ${(summary.elapsedMs / 1000).toFixed(1)} s importing (${Math.round(rate)} orders/s), ` +
      `${(run.wallMs / 1000).toFixed(1)} s for the whole command with start-up (${Math.round((ORDERS * 1000) / run.wallMs)} orders/s), ` +
      `peak RSS ${Math.round(run.peakRssKb / 1024)} MB`,
  );
  return { rate, peakRssKb: run.peakRssKb };
}

interface Summary {
  read: number;
  accepted: number;
  rejected: number;
  elapsedMs: number;
}

const work = tmp("pxh-bench-import-");
try {
  const file = join(work, "orders.jsonl");
  const t = performance.now();
  await generateOrders(file, ORDERS);
  const size = statSync(file).size;
  log(
    `generated ${ORDERS} orders (${(size / 1024 / 1024).toFixed(0)} MB) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );

  // This machine's speed drifts by 2-3x within minutes: the baseline runs on both sides of the
  // import, and the ratio is against the mean of the two.
  const before = await baseline(file);
  log(
    `baseline (before the import): ${(before.ms / 1000).toFixed(1)} s (${Math.round((before.rows * 1000) / before.ms)} orders/s)`,
  );
  const env = { DATA_DIR: join(work, "data"), LOG_LEVEL: "silent" };
  const run = await importInto(file, env, "import");
  const importRate = run.rate;

  // The floor every command on the embedded stores pays (chDB's library, PGlite's WebAssembly heap).
  const idle = await measured(["bin/pixelhouse.mjs", "migrate", "--json"], env);
  log(
    `peak RSS: import ${Math.round(run.peakRssKb / 1024)} MB; an idle command on the same stores ` +
      `(pixelhouse migrate) ${Math.round(idle.peakRssKb / 1024)} MB`,
  );

  let servers: Awaited<ReturnType<typeof importInto>> | undefined;
  if (DATABASE_URL && REDIS_URL) {
    const db = await freshDatabase(DATABASE_URL);
    try {
      const serverDir = { DATA_DIR: join(work, "data-servers"), LOG_LEVEL: "silent" };
      servers = await importInto(file, { ...serverDir, ...serverEnv(db.url, REDIS_URL) }, "servers");
    } finally {
      await db.drop();
    }
  }

  const after = await baseline(file);
  const rateOf = (b: { ms: number; rows: number }) => (b.rows * 1000) / b.ms;
  log(
    `baseline (after the import): ${(after.ms / 1000).toFixed(1)} s (${Math.round(rateOf(after))} orders/s)`,
  );
  const baseRate = (rateOf(before) + rateOf(after)) / 2;
  const onServers = servers
    ? ` | servers ${Math.round(servers.rate)} orders/s ratio ${(servers.rate / baseRate).toFixed(2)} peak RSS ${Math.round(servers.peakRssKb / 1024)} MB`
    : "";
  process.stdout.write(
    `bench:import import ${Math.round(importRate)} orders/s | baseline ${Math.round(baseRate)} orders/s (before ${Math.round(rateOf(before))}, after ${Math.round(rateOf(after))}) | ` +
      `ratio ${(importRate / baseRate).toFixed(2)} | peak RSS ${Math.round(run.peakRssKb / 1024)} MB${onServers}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
