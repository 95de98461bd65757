/**
 * npm run bench:insert — what one chDB INSERT of 1,000 `events` rows costs in each input format the
 * Node API takes (JSONEachRow, JSONCompactEachRow, TabSeparated, CSV) and with settings that cut
 * parsing, split into the JS encoding (main thread) and the engine's INSERT (parse + write + the
 * touchpoints view); the same payloads into an `ENGINE = Null` copy give the parse alone. RowBinary
 * cannot go through Session.insert (text formats only), so it is measured through `FROM INFILE`
 * with an engine-written file, next to TabSeparated through the same path. Rows are what ingestion
 * writes: bench/events-gen.ts bodies through validateEvents + normalizeEvent.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "chdb";
import { normalizeEvent } from "../src/ingest/normalize.js";
import { validateEvents } from "../src/ingest/validate.js";
import { migrate } from "../src/stores/migrations.js";
import { PgliteSqlStore } from "../src/stores/sql/pglite.js";
import { ChdbWarehouse } from "../src/stores/warehouse/chdb.js";
import { compactRows } from "../src/stores/warehouse/settings.js";
import { makeBatches } from "./events-gen.js";
import { parseColumnType, tsvRows } from "./tsv-rows.js";

const PER_INSERT = Number(process.env.BENCH_ROWS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const BATCHES = 20;
const log = (s: string) => process.stderr.write(`${s}\n`);

type Row = Record<string, unknown>;
const batches: Row[][] = [];
const now = Date.parse("2026-11-20T12:00:00Z");
for (const [b, body] of makeBatches(BATCHES * (PER_INSERT / 100), 100, 1).entries()) {
  const valid = validateEvents((JSON.parse(body) as { events: unknown[] }).events, now + b);
  const rows = valid.map((v, i) => {
    const ctx = {
      pixelId: "bench",
      origin: "server" as const,
      requestId: `req-${b}`,
      receivedAtMs: now + b * 10 + i,
      ipPrefix: { v4PrefixBits: 24, v6PrefixBits: 48 },
    };
    const { row } = normalizeEvent(v, ctx, v.event.eventId ?? `srv-${b}-${i}`, true);
    row.canonical_id = `01J${String(b * 100 + i).padStart(23, "0")}`;
    return row as unknown as Row;
  });
  const k = Math.floor(b / (PER_INSERT / 100));
  batches[k] ??= [];
  batches[k]!.push(...rows);
}

const dir = mkdtempSync(join(tmpdir(), "pxh-bench-insert-"));
// The tables as the service has them: every migration, through the migration runner.
const pg = await PgliteSqlStore.open();
const warehouse = await ChdbWarehouse.open(join(dir, "ch"), "b");
await migrate(pg, warehouse);
await pg.close();
// A session of its own on the same engine, to pick each INSERT's format and settings.
const session = new Session(join(dir, "ch"));
const run = (sql: string) => session.queryAsync(sql, { format: "TSV" });
await run("USE b");
await run("CREATE TABLE events_null AS events ENGINE = Null");
// Merges would run in the engine's background threads during later inserts and count as their CPU.
await run("SYSTEM STOP MERGES");
const described = (
  await session.queryAsync(
    "SELECT name, type FROM system.columns WHERE database = 'b' AND table = 'events' ORDER BY position",
    { format: "JSONEachRow" },
  )
)
  .text()
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as { name: string; type: string });
const columns = described.map((c) => ({ name: c.name, type: parseColumnType(c.type) }));
const names = columns.map((c) => c.name);

/** JSONEachRow without the keys whose value is the column's default ('' , [], {}, null, false). */
function sparseJson(rows: Row[]): string {
  let out = "";
  for (const row of rows) {
    const o: Row = {};
    for (const [k, v] of Object.entries(row)) {
      if (v === "" || v === null || v === false) continue;
      if (Array.isArray(v) && v.length === 0) continue;
      if (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0) continue;
      o[k] = v;
    }
    out += `${JSON.stringify(o)}\n`;
  }
  return out;
}

/** CSV: the TabSeparated field text, re-quoted CSV-style (the nested forms are the same). */
function csvRows(rows: Row[]): string {
  return tsvRows(rows, columns)
    .split("\n")
    .map((line) =>
      line
        .split("\t")
        .map((f) => {
          if (f === "\\N") return f;
          const raw = f.replace(/\\t/g, "\t").replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
          return /[",'\n\r\t]|^\s|\s$/.test(raw) ? `"${raw.replace(/"/g, '""')}"` : raw;
        })
        .join(","),
    )
    .join("\n");
}

interface Variant {
  name: string;
  format: "JSONEachRow" | "JSONCompactEachRow" | "TSV" | "CSV";
  encode: (rows: Row[]) => string;
  columns?: string[];
  lean?: boolean;
  settings?: Record<string, string | number>;
}
const compact = (rows: Row[]) => compactRows(rows).payload;
const tsv = (rows: Row[]) => tsvRows(rows, columns);
const isDefault = (v: unknown) =>
  v === null ||
  v === "" ||
  v === false ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Date) &&
    Object.keys(v).length === 0);
/** JSONCompactEachRow under only the columns some row of the batch sets (the rest take their default). */
function compactLean(rows: Row[]): { columns: string[]; payload: string } {
  const kept = names.filter((c) => rows.some((r) => !isDefault(r[c])));
  return compactRows(rows.map((r) => Object.fromEntries(kept.map((c) => [c, r[c]]))));
}
const TSV_EXACT = { input_format_tsv_detect_header: 0 };
const variants: Variant[] = [
  {
    name: "JSONEachRow (objects)",
    format: "JSONEachRow",
    encode: (rs) => rs.map((r) => JSON.stringify(r)).join("\n"),
  },
  { name: "JSONEachRow, default-valued keys omitted", format: "JSONEachRow", encode: sparseJson },
  {
    name: "JSONEachRow, skip_unknown_fields=0",
    format: "JSONEachRow",
    encode: (rs) => rs.map((r) => JSON.stringify(r)).join("\n"),
    settings: { input_format_skip_unknown_fields: 0 },
  },
  { name: "JSONCompactEachRow (current)", format: "JSONCompactEachRow", encode: compact, columns: names },
  {
    name: "JSONCompactEachRow, date_time_input_format=basic",
    format: "JSONCompactEachRow",
    encode: compact,
    columns: names,
    settings: { date_time_input_format: "basic" },
  },
  {
    name: "JSONCompactEachRow, parallel_parsing=0",
    format: "JSONCompactEachRow",
    encode: compact,
    columns: names,
    settings: { input_format_parallel_parsing: 0 },
  },
  {
    name: "JSONCompactEachRow, all-default columns left out",
    format: "JSONCompactEachRow",
    encode: (rs) => compactLean(rs).payload,
    lean: true,
  },
  {
    name: "JSONCompactEachRow, optimize_on_insert=0",
    format: "JSONCompactEachRow",
    encode: compact,
    columns: names,
    settings: { optimize_on_insert: 0 },
  },
  { name: "TabSeparated", format: "TSV", encode: tsv, columns: names, settings: TSV_EXACT },
  {
    name: "TabSeparated, date_time_input_format=basic",
    format: "TSV",
    encode: tsv,
    columns: names,
    settings: { ...TSV_EXACT, date_time_input_format: "basic" },
  },
  {
    name: "CSV",
    format: "CSV",
    encode: csvRows,
    columns: names,
    settings: { input_format_csv_detect_header: 0 },
  },
];

// Every variant must store what the current format stores, or its timing means nothing.
const stored = async (v: Variant) => {
  await run("CREATE OR REPLACE TABLE check_t AS events ENGINE = Memory");
  const rows = batches[0]!;
  const cols = v.columns ?? (v.lean ? compactLean(rows).columns : undefined);
  await session.insert({
    table: "check_t",
    values: Buffer.from(v.encode(rows)),
    format: v.format,
    ...(cols ? { columns: cols } : {}),
    ...(v.settings ? { settings: v.settings } : {}),
  });
  return (
    await session.queryAsync("SELECT * FROM check_t ORDER BY event_id", { format: "JSONCompactEachRow" })
  ).text();
};
const reference = await stored(variants.find((v) => v.name.endsWith("(current)"))!);
for (const v of variants)
  if ((await stored(v)) !== reference) throw new Error(`${v.name} stores other values`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// CPU time of the whole process (the engine's threads included): steadier than wall time when other
// work shares the cores.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const results = new Map<
  string,
  { enc: number[]; ins: number[]; cpu: number[]; parse: number[]; bytes: number }
>();
for (let round = 0; round < ROUNDS; round++) {
  const rows = batches[round % BATCHES]!;
  const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
  for (const v of order) {
    const t0 = performance.now();
    const payload = Buffer.from(v.encode(rows));
    const t1 = performance.now();
    for (const table of ["events", "events_null"]) {
      const t2 = performance.now();
      const c2 = cpuMs();
      await session.insert({
        table,
        values: payload,
        format: v.format,
        ...(v.columns ? { columns: v.columns } : v.lean ? { columns: compactLean(rows).columns } : {}),
        ...(v.settings ? { settings: v.settings } : {}),
      });
      const wall = performance.now() - t2;
      const cpu = cpuMs() - c2;
      const r = results.get(v.name) ?? { enc: [], ins: [], cpu: [], parse: [], bytes: payload.length };
      if (table === "events") r.ins.push(wall);
      (table === "events" ? r.cpu : r.parse).push(cpu);
      if (table === "events") r.enc.push(t1 - t0);
      results.set(v.name, r);
    }
  }
}

// RowBinary: only through a file. The engine writes each batch in both formats; both go in by INFILE.
const infile: Record<string, number[]> = { RowBinary: [], TabSeparated: [], JSONCompactEachRow: [] };
for (let round = 0; round < ROUNDS; round++) {
  const rows = batches[round % BATCHES]!;
  await run("CREATE OR REPLACE TABLE src AS events ENGINE = Memory");
  await session.insert({
    table: "src",
    values: Buffer.from(tsv(rows)),
    format: "TSV",
    columns: names,
    settings: TSV_EXACT,
  });
  for (const fmt of Object.keys(infile)) {
    const file = join(dir, `batch.${fmt}`);
    writeFileSync(file, (await session.queryAsync("SELECT * FROM src", { format: fmt })).bytes());
    const c = cpuMs();
    await run(`INSERT INTO events FROM INFILE '${file}' FORMAT ${fmt}`);
    infile[fmt]!.push(cpuMs() - c);
  }
}
session.close();
await warehouse.close();
rmSync(dir, { recursive: true, force: true });

const base = results.get("JSONCompactEachRow (current)")!;
const total = (r: { enc: number[]; cpu: number[] }) => median(r.enc) + median(r.cpu);
log(`bench:insert: ${ROUNDS} rounds of ${PER_INSERT} events rows per INSERT, median ms per INSERT`);
log(
  "format | encode (JS) | INSERT events (+ touchpoints) wall / CPU | parse only (Null table) CPU | payload | encode+INSERT CPU vs current",
);
for (const [name, r] of results)
  log(
    `${name} | ${median(r.enc).toFixed(2)} | ${median(r.ins).toFixed(2)} / ${median(r.cpu).toFixed(2)} | ${median(r.parse).toFixed(2)} | ${(r.bytes / 1024).toFixed(0)} KiB | ${(total(r) / total(base)).toFixed(2)}`,
  );
log(
  `FROM INFILE, engine-written file, CPU: ${Object.entries(infile)
    .map(([f, xs]) => `${f} ${median(xs).toFixed(2)} ms`)
    .join(", ")}`,
);
const best = [...results].sort((a, b) => total(a[1]) - total(b[1]))[0]!;
process.stdout.write(
  `bench:insert ${best[0]} ${total(best[1]).toFixed(1)} ms CPU per ${PER_INSERT} rows | baseline JSONCompactEachRow ${total(base).toFixed(1)} ms | ratio ${(total(best[1]) / total(base)).toFixed(2)}\n`,
);
