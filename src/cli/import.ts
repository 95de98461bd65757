import { once } from "node:events";
import { createReadStream, createWriteStream, statSync, type WriteStream } from "node:fs";
import { unlink } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import cliProgress from "cli-progress";
import { Argument, type Command, InvalidArgumentError, Option } from "commander";
import { BadRequestError } from "../errors.js";
import { formatFromName, type RecordFormat, readRecords } from "../sync/read-records.js";
import { SYNC_KINDS } from "../sync/routes.js";
import type { RecordKind, SyncResult } from "../sync/schemas.js";
import type { SyncService } from "../sync/service.js";
import { output, whileFilingIdentities, withContext } from "./context.js";

/**
 * `pixelhouse import <kind> <file>` and `pixelhouse fx import <file>`: stream a JSON Lines or CSV file
 * through the same SyncService as the HTTP sync endpoints, one batch at a time (memory stays flat
 * whatever the file size), with progress on stderr, a summary, and a reject file of the lines that
 * could not be read or were rejected, each with its line number.
 */
export interface ImportSummary {
  kind: RecordKind;
  file: string;
  format: RecordFormat;
  pixelId: string | null;
  read: number;
  accepted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  elapsedMs: number;
  recordsPerSecond: number;
  rejectsFile: string | null;
}

interface ImportJob {
  kind: RecordKind;
  file: string;
  format: RecordFormat;
  pixelId: string | null;
  batch: number;
  rejects: string;
}

interface CommandOptions {
  format?: RecordFormat;
  batch: number;
  rejects?: string;
  json?: boolean;
  /** false with --no-wait. */
  wait?: boolean;
}

const MAX_BATCH = 100_000;

const batchSize = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_BATCH)
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_BATCH}`);
  return n;
};

const json = () => new Option("--json", "print the summary as one JSON document");
const common = (cmd: Command) =>
  cmd
    .addOption(
      new Option("--format <format>", "jsonl or csv (default: from the file name, .csv → csv)").choices([
        "jsonl",
        "csv",
      ]),
    )
    .option("--batch <n>", "records per SyncService call", batchSize, 5000)
    .option("--rejects <file>", "where bad lines go (default: <file>.rejects.jsonl)")
    .option(
      "--no-wait",
      "do not wait for the identity worker to file the imported orders (the service does it)",
    )
    .addOption(json());

export function registerImportCommands(program: Command): void {
  common(
    program
      .command("import")
      .description(
        "import products, orders, refunds, ad entities or ad metrics from a JSON Lines or CSV file (docs/data-formats.md)",
      )
      .addArgument(new Argument("<kind>", "record kind").choices(SYNC_KINDS))
      .argument("<file>", "a .jsonl or .csv file (.gz too)")
      .requiredOption("--pixel <id>", "the pixel the records belong to"),
  ).action(async (kind: RecordKind, file: string, opts: CommandOptions & { pixel: string }) => {
    await importCommand(kind, file, opts.pixel, opts);
  });

  const fx = program.command("fx").description("foreign-exchange rates (units of a currency per 1 USD)");
  common(
    fx
      .command("import")
      .description("import daily FX rates from a CSV file with date,currency,unitsPerUsd columns")
      .argument("<file>", "a .csv file (or .jsonl)"),
  ).action(async (file: string, opts: CommandOptions) => {
    await importCommand("fx-rates", file, null, opts);
  });
}

async function importCommand(
  kind: RecordKind,
  file: string,
  pixelId: string | null,
  opts: CommandOptions,
): Promise<void> {
  // Checked before the stores open, so a typo costs no start-up.
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(file);
  } catch {
    throw new BadRequestError(`file ${file} not found`);
  }
  if (!stat.isFile()) throw new BadRequestError(`${file} is not a file`);
  const format = opts.format ?? formatFromName(file) ?? (kind === "fx-rates" ? "csv" : "jsonl");
  const rejects = opts.rejects ?? `${file}.rejects.jsonl`;
  if (resolve(rejects) === resolve(file))
    throw new BadRequestError("--rejects must not be the file being imported");
  const purpose = kind === "fx-rates" ? "pixelhouse fx import" : "pixelhouse import";
  const summary = await withContext(purpose, async ({ services }) => {
    if (pixelId !== null && !(await services.pixels.get(pixelId)))
      throw new BadRequestError(`pixel ${pixelId} not found`);
    const { result, lag } = await whileFilingIdentities(services, opts.wait !== false, () =>
      runImport(services.sync, { kind, file, format, pixelId, batch: opts.batch, rejects }),
    );
    if (lag.messages > 0) {
      process.stderr.write(
        `pixelhouse: ${lag.messages} identity message(s) left for the service's identity worker\n`,
      );
    }
    return result;
  });
  output(opts.json, summary, summaryLines(summary));
}

export async function runImport(sync: SyncService, job: ImportJob): Promise<ImportSummary> {
  const started = performance.now();
  const source = createReadStream(job.file, { highWaterMark: 256 * 1024 });
  const input: Readable = job.file.toLowerCase().endsWith(".gz") ? source.pipe(createGunzip()) : source;
  if (input !== source) source.on("error", (err) => input.destroy(err));
  const totals = { read: 0, accepted: 0, updated: 0, unchanged: 0, rejected: 0 };
  const progress = progressReporter(`${job.kind} ${basename(job.file)}`, statSync(job.file).size);
  const rejects = await RejectFile.open(job.rejects);
  let records: unknown[] = [];
  let lines: number[] = [];
  let lastLine = 0;

  // Lines that could not be read wait for their batch, so the reject file is in line order.
  let unreadable: RejectEntry[] = [];

  // One batch is stored while the next is read and parsed: the engines work in their own threads,
  // so reading overlaps them. Batches still commit one after another, in file order, so a later
  // version in the next batch is judged against the stored earlier one.
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    const batch = { records, lines, unreadable };
    records = [];
    lines = [];
    unreadable = [];
    await inFlight;
    inFlight = store(batch);
    // Surfaces a failure of this batch at the next flush (or the final await) without an unhandled rejection.
    inFlight.catch(() => {});
  };
  const store = async (batch: { records: unknown[]; lines: number[]; unreadable: RejectEntry[] }) => {
    const { records, lines, unreadable } = batch;
    const result: SyncResult = records.length
      ? await sync.upsert(job.kind, job.pixelId, records)
      : { accepted: 0, updated: 0, unchanged: 0, rejected: [] };
    totals.accepted += result.accepted;
    totals.updated += result.updated;
    totals.unchanged += result.unchanged;
    totals.rejected += unreadable.length + result.rejected.length;
    const entries: RejectEntry[] = [
      ...unreadable,
      ...result.rejected.map((r) => ({
        line: lines[r.index] ?? 0,
        record: records[r.index],
        errors: r.errors,
      })),
    ].sort((a, b) => a.line - b.line);
    for (const entry of entries) await rejects.write(entry);
    progress.update(source.bytesRead, totals.read);
  };

  try {
    for await (const item of readRecords(input, job.format, job.kind)) {
      totals.read++;
      lastLine = item.line;
      if ("error" in item)
        unreadable.push({
          line: item.line,
          raw: item.raw,
          errors: [{ field: item.field ?? "", message: item.error }],
        });
      else {
        records.push(item.record);
        lines.push(item.line);
      }
      if (records.length >= job.batch || unreadable.length >= job.batch) await flush();
    }
    if (records.length || unreadable.length) await flush();
    await inFlight;
  } catch (err) {
    await inFlight.catch(() => {});
    progress.stop();
    const stored = totals.accepted + totals.updated;
    if (lastLine > 0)
      process.stderr.write(
        `pixelhouse: import stopped near line ${lastLine} of ${job.file} after ${stored} records were stored; ` +
          "importing the file again is safe (stored versions are skipped)\n",
      );
    await rejects.close().catch(() => {});
    input.destroy();
    throw err;
  }
  progress.stop();
  const rejectsFile = await rejects.close();
  const elapsedMs = Math.round(performance.now() - started);
  return {
    kind: job.kind,
    file: job.file,
    format: job.format,
    pixelId: job.pixelId,
    ...totals,
    elapsedMs,
    recordsPerSecond: elapsedMs > 0 ? Math.round((totals.read * 1000) / elapsedMs) : totals.read,
    rejectsFile,
  };
}

const n = (v: number) => v.toLocaleString("en-US");

function summaryLines(s: ImportSummary): string[] {
  const target = s.pixelId ? ` into pixel ${s.pixelId}` : "";
  return [
    `imported ${s.kind} from ${s.file}${target}: ${n(s.read)} read in ${(s.elapsedMs / 1000).toFixed(1)} s (${n(s.recordsPerSecond)} records/s)`,
    `accepted ${n(s.accepted)} · updated ${n(s.updated)} · unchanged ${n(s.unchanged)} · rejected ${n(s.rejected)}`,
    s.rejectsFile
      ? `rejected lines with their line numbers and errors: ${s.rejectsFile}`
      : "no rejected lines",
  ];
}

/** A line of the reject file: the record when it was read but rejected, the raw text when unreadable. */
interface RejectEntry {
  line: number;
  record?: unknown;
  raw?: string;
  errors: { field: string; message: string }[];
}

/** The reject file: truncated when the import starts, removed at the end when nothing was rejected. */
class RejectFile {
  private count = 0;
  private failure: Error | null = null;

  private constructor(
    private readonly path: string,
    private readonly stream: WriteStream,
  ) {
    stream.on("error", (err) => {
      this.failure = err;
    });
  }

  static async open(path: string): Promise<RejectFile> {
    const stream = createWriteStream(path, { flags: "w" });
    try {
      await once(stream, "open");
    } catch (err) {
      throw new BadRequestError(`cannot write the reject file ${path}: ${(err as Error).message}`);
    }
    return new RejectFile(path, stream);
  }

  async write(entry: RejectEntry): Promise<void> {
    if (this.failure) throw this.failure;
    this.count++;
    if (!this.stream.write(`${JSON.stringify(entry)}\n`)) await once(this.stream, "drain");
  }

  /** The path when something was rejected, else null (and no file is left behind). */
  async close(): Promise<string | null> {
    if (!this.stream.closed) {
      this.stream.end();
      await once(this.stream, "close");
    }
    if (this.failure) throw this.failure;
    if (this.count > 0) return this.path;
    await unlink(this.path).catch(() => {});
    return null;
  }
}

interface Progress {
  update(bytes: number, records: number): void;
  stop(): void;
}

/** A bar on a terminal (by bytes of the file); a plain line every ~5 s otherwise. On stderr. */
function progressReporter(label: string, totalBytes: number): Progress {
  const started = performance.now();
  const rate = (records: number) => {
    const s = (performance.now() - started) / 1000;
    return s > 0 ? Math.round(records / s) : 0;
  };
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {mb}/{totalMb} MB | {records} records | {rate}/s | ETA {eta_formatted}`,
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(Math.max(totalBytes, 1), 0, { mb: mb(0), totalMb: mb(totalBytes), records: 0, rate: 0 });
    return {
      update: (bytes, records) =>
        bar.update(Math.min(bytes, totalBytes), {
          mb: mb(bytes),
          totalMb: mb(totalBytes),
          records: n(records),
          rate: n(rate(records)),
        }),
      stop: () => bar.stop(),
    };
  }
  let last = started;
  return {
    update: (bytes, records) => {
      const now = performance.now();
      if (now - last < 5000) return;
      last = now;
      const pct = totalBytes > 0 ? ((100 * Math.min(bytes, totalBytes)) / totalBytes).toFixed(1) : "100.0";
      process.stderr.write(
        `${label}: ${pct}% (${mb(bytes)}/${mb(totalBytes)} MB), ${n(records)} records read, ${n(rate(records))} records/s\n`,
      );
    },
    stop: () => {},
  };
}
