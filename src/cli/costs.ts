import cliProgress from "cli-progress";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { RecalcMode, RecalcProgress } from "../costs/recalc.js";
import { NotFoundError } from "../errors.js";
import { output, withContext } from "./context.js";

/**
 * `pixelhouse costs recalc --pixel P [--from D --to D] [--mode missing|all]`: the per-order cost
 * snapshots of a pixel's orders recomputed by hand, through the same RecalcService as the worker.
 * Only orders whose snapshot changed get a new version. Progress on stderr: a bar on a TTY, one line
 * per batch otherwise.
 */
const day = (value: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw new InvalidArgumentError("must be a date YYYY-MM-DD");
  return value;
};

function reporter(): { update(p: RecalcProgress): void; stop(): void } {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format:
          "recalc {bar} {value}/{total} orders | written {written} | unchanged {unchanged} | {eta_formatted}",
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p) {
        if (!started) {
          bar.start(p.total, 0, { written: 0, unchanged: 0 });
          started = true;
        }
        bar.setTotal(Math.max(p.total, p.scanned));
        bar.update(p.scanned, { written: p.written, unchanged: p.unchanged });
      },
      stop: () => started && bar.stop(),
    };
  }
  return {
    update: (p) =>
      process.stderr.write(
        `recalc ${p.pixelId}: ${p.scanned}/${p.total} orders, ${p.written} written, ${p.unchanged} unchanged\n`,
      ),
    stop: () => {},
  };
}

export function registerCostsCommands(program: Command): void {
  const costs = program.command("costs").description("cost configuration and per-order cost snapshots");
  costs
    .command("recalc")
    .description("recompute per-order cost snapshots (writes a new version only where a snapshot changed)")
    .requiredOption("--pixel <id>", "pixel id")
    .option("--from <day>", "first order day (account timezone), inclusive", day)
    .option("--to <day>", "last order day (account timezone), inclusive", day)
    .addOption(
      new Option("--mode <mode>", "missing: only orders without a snapshot; all: every order in range")
        .choices(["missing", "all"])
        .default("all"),
    )
    .option("--batch <n>", "orders per batch", (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new InvalidArgumentError("must be 1..100000");
      return n;
    })
    .option("--json", "print the summary as one JSON document")
    .action(
      async (o: {
        pixel: string;
        from?: string;
        to?: string;
        mode: RecalcMode;
        batch?: number;
        json?: boolean;
      }) =>
        withContext("costs recalc", async ({ services }) => {
          if (!(await services.recalc.accountOf(o.pixel)))
            throw new NotFoundError(`Pixel ${o.pixel} not found`);
          const t0 = performance.now();
          const bar = reporter();
          let result: RecalcProgress;
          try {
            result = await services.recalc.recalc(
              { pixelId: o.pixel, from: o.from ?? null, to: o.to ?? null, mode: o.mode },
              { onProgress: (p) => bar.update(p), ...(o.batch ? { batchSize: o.batch } : {}) },
            );
          } finally {
            bar.stop();
          }
          const elapsedMs = Math.round(performance.now() - t0);
          output(o.json, { ...result, mode: o.mode, elapsedMs }, [
            `${result.scanned} orders recalculated for ${o.pixel} (${o.mode}): ${result.written} written, ${result.unchanged} unchanged, ${elapsedMs} ms`,
          ]);
        }),
    );
}
