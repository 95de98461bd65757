/**
 * npm run bench:query -- --synthetic 10000000,100000000
 *
 * For each size: builds a synthetic store of that many events inside the warehouse (bench/synthetic.ts,
 * its own process) and runs bench:query on it (its own process: one embedded engine per process),
 * then prints per shape the service p50, its hand-written floor and the growth against the smallest
 * size (stderr), and as the last line the figures of the largest size:
 *
 *   bench:query synthetic N | attribution max p50 X ms | timeseries p50 X ms | cohorts p50 X ms |
 *   channel p50 X ms | growth max G | peak RSS R MB
 *
 * growth = the largest ratio, over every shape, of its p50 at the largest size to its p50 at the
 * smallest. Stores live in BENCH_SYNTHETIC_DIR (default: the system temp dir) and are deleted after.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const log = (s: string) => process.stderr.write(`${s}\n`);
const arg = process.argv[process.argv.indexOf("--synthetic") + 1] ?? "";
const sizes = arg
  .split(",")
  .map((s) => Number(s.replace(/_/g, "")))
  .filter((n) => Number.isInteger(n) && n >= 1000)
  .sort((a, b) => a - b);
if (sizes.length === 0) {
  log("usage: npm run bench:query -- --synthetic N[,M…] (event counts ≥ 1000, e.g. 10000000,100000000)");
  process.exit(2);
}

interface ShapeFigure {
  name: string;
  p50: number;
  f50: number;
}
interface Measured {
  events: number;
  /** Peak RSS while serving the shapes, before the floors ran in the same process. */
  rssMb: number;
  rssWithFloorsMb: number;
  buildSeconds: number;
  shapes: ShapeFigure[];
}

const root = mkdtempSync(join(process.env.BENCH_SYNTHETIC_DIR ?? tmpdir(), "pxh-synthetic-"));
const results: Measured[] = [];
try {
  for (const n of sizes) {
    const dir = join(root, String(n));
    const built = await run(process.execPath, ["--import", "tsx", "bench/synthetic.ts", String(n), dir], {
      maxBuffer: 1 << 24,
    });
    process.stderr.write(built.stderr);
    const { seconds } = JSON.parse(built.stdout.trim()) as { seconds: number };
    const measured = await run(process.execPath, ["--import", "tsx", "bench/query.ts"], {
      env: {
        ...process.env,
        BENCH_DATA_DIR: dir,
        BENCH_JSON: "1",
        BENCH_RUNS: process.env.BENCH_RUNS ?? "5",
      },
      maxBuffer: 1 << 24,
    });
    process.stderr.write(measured.stderr);
    const lines = measured.stdout.trim().split("\n");
    const json = JSON.parse(lines[lines.length - 1]!) as Omit<Measured, "buildSeconds">;
    results.push({ ...json, buildSeconds: seconds });
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const first = results[0]!;
const last = results[results.length - 1]!;
const p50Of = (m: Measured, name: string) => m.shapes.find((s) => s.name === name)?.p50 ?? Number.NaN;
log("");
log(`shape | ${results.map((r) => `${r.events.toLocaleString("en-US")} p50 (floor)`).join(" | ")} | growth`);
let growth = 0;
for (const s of last.shapes) {
  const g = s.p50 / p50Of(first, s.name);
  if (Number.isFinite(g) && !s.name.startsWith("fractional")) growth = Math.max(growth, g);
  const cells = results.map((r) => {
    const x = r.shapes.find((y) => y.name === s.name);
    return x ? `${x.p50.toFixed(0)} ms (${x.f50.toFixed(0)})` : "—";
  });
  log(`${s.name} | ${cells.join(" | ")} | ${g.toFixed(2)}×`);
}
for (const r of results) {
  log(
    `${r.events.toLocaleString("en-US")} events: built in ${r.buildSeconds} s, service peak RSS ${r.rssMb} MB (${r.rssWithFloorsMb} MB once the floors ran)`,
  );
}
const max = (pred: (name: string) => boolean) =>
  Math.max(...last.shapes.filter((s) => pred(s.name)).map((s) => s.p50));
const fractionalGrowth = Math.max(
  ...last.shapes.filter((s) => s.name.startsWith("fractional")).map((s) => s.p50 / p50Of(first, s.name)),
);
log(
  `fractional models (linear, time_decay, position_based; 90 days, windows 30 and unlimited): max p50 ${max((n) => n.startsWith("fractional")).toFixed(0)} ms, growth max ${fractionalGrowth.toFixed(2)}`,
);
process.stdout.write(
  `bench:query synthetic ${last.events} | attribution max p50 ${max((n) => n.startsWith("attribution")).toFixed(0)} ms` +
    ` | timeseries p50 ${max((n) => n.startsWith("time series")).toFixed(0)} ms` +
    ` | cohorts p50 ${max((n) => n.startsWith("cohorts")).toFixed(0)} ms` +
    ` | channel p50 ${max((n) => n.startsWith("channel")).toFixed(0)} ms` +
    ` | growth max ${growth.toFixed(2)} | peak RSS ${last.rssMb} MB\n`,
);
