import { type Command, InvalidArgumentError, Option } from "commander";
import { loadConfig } from "../config.js";
import { createLogger } from "../log.js";
import { type ConsumerVerdict, consumerReport } from "../metrics.js";
import { buildServices } from "../services.js";
import { DataDirLockedError } from "../stores/data-dir-lock.js";
import { openStores, type Stores } from "../stores/index.js";
import { type MigrationState, migrationStatus } from "../stores/migrations.js";
import { output } from "./context.js";

interface StoreCheck {
  adapter: string;
  ok: boolean;
  error?: string;
}

export interface StatusReport {
  ok: boolean;
  /** Where the figures came from: the stores themselves, or a running service's /readyz. */
  source: "stores" | "service";
  stores: Record<string, StoreCheck>;
  migrations?: { sql: MigrationState; warehouse: MigrationState };
  consumers: Record<string, ConsumerVerdict>;
  /**
   * Derived tables (docs/derived-tables.md): per table, how many pixels have rows past their watermark
   * and how old the oldest is. Empty when DERIVED_TABLES is off. A lag only slows answers down.
   */
  derivedTables: Record<string, { pixelsBehind: number | null; seconds: number | null }>;
  problems: string[];
}

const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1) throw new InvalidArgumentError("must be a number of seconds ≥ 1");
  return n;
};

async function check(ping: () => Promise<void>): Promise<string | undefined> {
  try {
    await ping();
    return undefined;
  } catch (err) {
    return (err as Error).message.split("\n")[0];
  }
}

async function fromStores(stores: Stores, maxLag: number, deadLetters: number): Promise<StatusReport> {
  const checks: [string, string, () => Promise<void>][] = [
    ["sql", stores.sql.kind, () => stores.sql.ping()],
    ["warehouse", stores.warehouse.kind, () => stores.warehouse.ping()],
    ["kv", stores.kv.kind, () => stores.kv.ping()],
  ];
  const storesOut: Record<string, StoreCheck> = {};
  for (const [name, adapter, ping] of checks) {
    const error = await check(ping);
    storesOut[name] = error ? { adapter, ok: false, error } : { adapter, ok: true };
  }
  const migrations = await migrationStatus(stores.sql, stores.warehouse);
  const consumers = await consumerReport(maxLag);
  return judge({ source: "stores", stores: storesOut, migrations, consumers }, maxLag, deadLetters);
}

/** The embedded stores are held by a running `serve`: ask it. */
async function fromService(url: string, maxLag: number, deadLetters: number): Promise<StatusReport> {
  const res = await fetch(`${url}/readyz`).catch((err: unknown) => {
    throw new Error(
      `the data directory is in use and its service at ${url} did not answer: ${(err as Error).message}`,
    );
  });
  const body = (await res.json()) as {
    stores: Record<string, StoreCheck>;
    consumers?: Record<string, ConsumerVerdict>;
  };
  return judge(
    { source: "service", stores: body.stores, consumers: body.consumers ?? {} },
    maxLag,
    deadLetters,
  );
}

function judge(
  r: Pick<StatusReport, "source" | "stores" | "migrations" | "consumers">,
  maxLag: number,
  maxDeadLetters: number,
): StatusReport {
  const problems: string[] = [];
  for (const [name, s] of Object.entries(r.stores))
    if (!s.ok) problems.push(`store ${name} (${s.adapter}) not reachable`);
  for (const [store, m] of Object.entries(r.migrations ?? {})) {
    if (m.pending.length) problems.push(`${store} migrations pending: ${m.pending.join(", ")}`);
  }
  for (const [name, c] of Object.entries(r.consumers)) {
    if (c.seconds === null) problems.push(`consumer ${name}: state unreadable`);
    else if (c.seconds > maxLag)
      problems.push(
        `consumer ${name} behind: ${c.messages} message(s), oldest ${c.seconds} s (limit ${maxLag} s)`,
      );
    if ((c.deadLetters ?? 0) > maxDeadLetters)
      problems.push(`consumer ${name}: ${c.deadLetters} dead letter(s) (limit ${maxDeadLetters})`);
  }
  const derived = r.consumers["derived-tables"];
  const derivedTables: StatusReport["derivedTables"] = derived
    ? { conversion_touches: { pixelsBehind: derived.messages, seconds: derived.seconds } }
    : {};
  return { ok: problems.length === 0, ...r, derivedTables, problems };
}

function lines(r: StatusReport): string[] {
  const out = [
    `pixelhouse status: ${r.ok ? "ok" : "PROBLEMS"} (from ${r.source === "stores" ? "the stores" : "the running service"})`,
  ];
  for (const [name, s] of Object.entries(r.stores))
    out.push(`  store ${name.padEnd(10)} ${s.adapter.padEnd(10)} ${s.ok ? "ok" : `DOWN: ${s.error ?? ""}`}`);
  for (const [store, m] of Object.entries(r.migrations ?? {})) {
    out.push(
      `  migrations ${store.padEnd(9)} ${m.applied} applied${m.pending.length ? `, PENDING ${m.pending.join(", ")}` : ""}`,
    );
  }
  for (const [name, c] of Object.entries(r.consumers)) {
    out.push(
      `  consumer ${name.padEnd(14)} ${c.seconds === null ? "unreadable" : `${c.messages} behind, oldest ${c.seconds} s`}${c.deadLetters !== undefined ? `, ${c.deadLetters} dead letters` : ""}${c.ok ? "" : "  <-"}`,
    );
  }
  const tables = Object.entries(r.derivedTables);
  if (tables.length === 0) out.push("  derived tables: off (queries read raw data)");
  for (const [name, t] of tables)
    out.push(
      `  derived table ${name}: ${t.seconds === null ? "unreadable" : `${t.pixelsBehind} pixel(s) past the watermark, oldest row ${t.seconds} s`}`,
    );
  for (const p of r.problems) out.push(`problem: ${p}`);
  return out;
}

export function registerStatusCommand(program: Command): void {
  program
    .command("status")
    .description(
      "stores, migrations and background consumers; exits 1 when a store is down, a migration is pending or a consumer is behind",
    )
    .option(
      "--max-lag-seconds <s>",
      "a consumer whose oldest message is older is behind (default CONSUMER_MAX_LAG_SECONDS)",
      seconds,
    )
    .option(
      "--max-dead-letters <n>",
      "more dead letters than this is a problem",
      (v) => Math.max(0, Number(v) || 0),
      0,
    )
    .addOption(new Option("--json", "print the report as JSON"))
    .action(async (opts: { maxLagSeconds?: number; maxDeadLetters: number; json?: boolean }) => {
      const config = loadConfig();
      const maxLag = opts.maxLagSeconds ?? config.CONSUMER_MAX_LAG_SECONDS;
      let report: StatusReport;
      let stores: Stores | undefined;
      try {
        stores = await openStores(config, "pixelhouse status", { lazyWarehouse: true });
      } catch (err) {
        if (!(err instanceof DataDirLockedError)) throw err;
      }
      if (stores) {
        try {
          // Building the services registers every background consumer whose state is read.
          buildServices(stores, config, createLogger("silent"));
          report = await fromStores(stores, maxLag, opts.maxDeadLetters);
        } finally {
          await stores.close();
        }
      } else {
        const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "127.0.0.1" : config.HOST;
        report = await fromService(`http://${host}:${config.PORT}`, maxLag, opts.maxDeadLetters);
      }
      output(opts.json, report, lines(report));
      process.exitCode = report.ok ? 0 : 1;
    });
}
