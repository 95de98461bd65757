import cliProgress from "cli-progress";
import { type Command, InvalidArgumentError, Option } from "commander";
import { loadDemo, SCALES, type Scale } from "../demo/load.js";
import { SCOPES } from "../keys/scopes.js";
import { output, whileFilingIdentities, withContext } from "./context.js";

/** Percent done per phase: a bar on a terminal, a line per phase step otherwise. On stderr. */
function demoProgress(): { update(phase: string, done: number): void; stop(): void } {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: "demo {phase} [{bar}] {percentage}% | ETA {eta_formatted}",
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(100, 0, { phase: "" });
    return { update: (phase, done) => bar.update(Math.round(done * 100), { phase }), stop: () => bar.stop() };
  }
  let last = "";
  return {
    update: (phase, done) => {
      const line = `demo: ${phase} ${Math.floor(done * 10) * 10}%`;
      if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    },
    stop: () => {},
  };
}

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a whole number ≥ 1");
  return n;
};

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "generate a believable demo store (catalog, ads, visitors, orders) and load it through ingestion and sync",
    )
    .option("--pixel <id>", "pixel to fill (created with its account when missing)", "demo")
    .addOption(
      new Option("--scale <scale>", "small ≈ 20k events, medium ≈ 300k, large ≥ 10M")
        .choices(Object.keys(SCALES))
        .default("small"),
    )
    .option("--days <n>", "days of history ending yesterday (default: by scale)", positiveInt)
    .option("--seed <n>", "seed: the same seed makes the same store", positiveInt, 42)
    .addOption(new Option("--json", "print the summary as JSON"))
    .action(async (opts: { pixel: string; scale: Scale; days?: number; seed: number; json?: boolean }) => {
      await withContext("pixelhouse demo", async ({ stores, services }) => {
        if (!(await services.pixels.get(opts.pixel))) {
          await services.pixels.create({ id: opts.pixel, name: "Demo Store", accountName: "Demo Store" });
        }
        const progress = demoProgress();
        const started = performance.now();
        const { result: summary } = await whileFilingIdentities(services, true, () =>
          loadDemo(services, stores, {
            pixelId: opts.pixel,
            scale: opts.scale,
            seed: opts.seed,
            ...(opts.days ? { days: opts.days } : {}),
            progress: progress.update,
          }),
        );
        progress.stop();
        const { key } = await services.keys.create({
          pixelId: opts.pixel,
          scopes: [...SCOPES],
          name: "demo (all scopes)",
        });
        const seconds = (performance.now() - started) / 1000;
        output(opts.json, { ...summary, seconds, key }, [
          `demo store loaded into pixel ${summary.pixelId} in ${seconds.toFixed(1)} s (${opts.scale}, ${summary.days} days, seed ${opts.seed}):`,
          `  ${summary.products} products / ${summary.variants} variants, ${summary.adEntities} ad entities, ${summary.adMetricDays} ad-day metrics`,
          `  ${summary.visitors} visitors → ${summary.eventsIngested} events (${summary.eventsSent - summary.eventsIngested} browser/server duplicates skipped)`,
          `  ${summary.orders} orders, ${summary.refunds} refunds, ${summary.fxRates} FX rates, ${summary.costLines} cost lines`,
          "an all-scopes key for it (shown once):",
          `  ${key}`,
        ]);
      });
    });
}
