import type { Readable } from "node:stream";
import { pipeline } from "node:stream";
import { parse as parseCsv } from "csv-parse";
import type { z } from "zod";
import { BadRequestError } from "../errors.js";
import { parseJsonBody } from "../shared/json.js";
import { RECORD_SCHEMAS, type RecordKind } from "./schemas.js";

/**
 * Reads sync records from a file stream, one at a time, in constant memory: JSON Lines split by hand
 * on the bytes, CSV through csv-parse's streaming parser. Every data line yields either a record (not
 * yet validated: the SyncService judges it) or the reason it could not be read, with its 1-based line
 * number in the file. Blank lines, and CSV lines starting with `#`, are skipped.
 */
export type RecordFormat = "jsonl" | "csv";
export type ReadItem =
  | { line: number; record: unknown }
  /** `field`: the CSV column whose cell could not be read, when it was one cell. */
  | { line: number; error: string; raw: string; field?: string };

/** A JSON line longer than this is rejected (and skipped without being held in memory). */
export const MAX_JSON_LINE_BYTES = 16 * 1024 * 1024;
const RAW_SHOWN = 2000;

/** The file cannot be read as the format at all (bad CSV header, unreadable stream). */
export class RecordFileError extends BadRequestError {}

/** jsonl for .jsonl / .ndjson / .json (also gzipped), csv for .csv; null when the name does not say. */
export function formatFromName(path: string): RecordFormat | null {
  const name = path.toLowerCase().replace(/\.gz$/, "");
  if (/\.(jsonl|ndjson|json)$/.test(name)) return "jsonl";
  if (name.endsWith(".csv")) return "csv";
  return null;
}

export function readRecords(
  input: Readable,
  format: RecordFormat,
  kind: RecordKind,
): AsyncGenerator<ReadItem, void, undefined> {
  return format === "csv" ? readCsv(input, kind) : readJsonLines(input);
}

const shorten = (s: string) => (s.length > RAW_SHOWN ? `${s.slice(0, RAW_SHOWN)}…` : s);

async function* readJsonLines(input: AsyncIterable<Buffer>): AsyncGenerator<ReadItem, void, undefined> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overlongHead: string | null = null; // start of a line too long to keep, until its end
  let line = 0;
  const finish = (piece: Buffer): ReadItem | null => {
    line++;
    if (overlongHead !== null) {
      const raw = overlongHead;
      overlongHead = null;
      return { line, error: `line longer than ${MAX_JSON_LINE_BYTES} bytes`, raw: shorten(raw) };
    }
    let buf = pendingBytes ? Buffer.concat([...pending, piece]) : piece;
    pending = [];
    pendingBytes = 0;
    if (line === 1 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    return parseJsonLine(line, buf);
  };
  try {
    for await (const chunk of input) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        const item = finish(chunk.subarray(start, nl));
        start = nl + 1;
        if (item) yield item;
      }
      if (start < chunk.length && overlongHead === null) {
        const rest = chunk.subarray(start);
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > MAX_JSON_LINE_BYTES) {
          overlongHead = Buffer.concat(pending).subarray(0, RAW_SHOWN).toString("utf8");
          pending = [];
          pendingBytes = 0;
        }
      }
    }
  } catch (err) {
    throw new RecordFileError(`cannot read the file: ${(err as Error).message}`, { cause: err });
  }
  if (pendingBytes || overlongHead !== null) {
    const item = finish(Buffer.alloc(0));
    if (item) yield item;
  }
}

function parseJsonLine(line: number, buf: Buffer): ReadItem | null {
  const end = buf.length && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length;
  const text = buf.subarray(0, end);
  try {
    // The HTTP body parser: depth limit, `__proto__` / `constructor` keys removed.
    const record = parseJsonBody(text);
    return record === undefined ? null : { line, record };
  } catch (err) {
    return { line, error: (err as Error).message, raw: shorten(text.toString("utf8")) };
  }
}

/** How a CSV cell becomes a field: a number, JSON text (arrays and objects), or the text itself. */
type CellKind = "number" | "json" | "text";

interface ZodNode {
  def: { type: string; innerType?: ZodNode; in?: ZodNode; options?: ZodNode[] };
}

function cellKind(schema: ZodNode): CellKind {
  const { def } = schema;
  if (def.innerType) return cellKind(def.innerType); // optional, nullable, default, catch, readonly
  if (def.type === "pipe" && def.in) return cellKind(def.in);
  if (def.type === "number" || def.type === "int") return "number";
  if (["array", "object", "record", "tuple", "map", "set"].includes(def.type)) return "json";
  if (def.type === "union" && def.options) {
    const kinds = def.options.map(cellKind);
    if (kinds.every((k) => k === "number")) return "number";
    if (kinds.includes("json")) return "json";
  }
  return "text";
}

/** Column name → cell kind, from the record schema's top-level fields. */
export function csvCellKinds(kind: RecordKind): Map<string, CellKind> {
  const shape = RECORD_SCHEMAS[kind].shape as unknown as Record<string, z.ZodType>;
  return new Map(Object.entries(shape).map(([name, field]) => [name, cellKind(field as unknown as ZodNode)]));
}

/** Cells → record: '' is an absent field, numbers where the schema wants one, JSON text for nested values. */
export function csvRecord(
  cells: Record<string, string>,
  kinds: Map<string, CellKind>,
): { record: Record<string, unknown> } | { error: string; field: string } {
  const record: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(cells)) {
    if (value === "") continue;
    const kind = kinds.get(name) ?? "text";
    if (kind === "number") {
      const n = Number(value);
      // Anything that is not a number stays text, so the record's errors say what was wrong.
      record[name] = value.trim() !== "" && Number.isFinite(n) ? n : value;
    } else if (kind === "json") {
      try {
        record[name] = parseJsonBody(Buffer.from(value, "utf8"));
      } catch (err) {
        return { error: `column ${name}: ${(err as Error).message}`, field: name };
      }
    } else record[name] = value;
  }
  return { record };
}

function checkHeader(header: string[]): string[] {
  const names = header.map((h) => h.trim());
  const seen = new Set<string>();
  for (const name of names) {
    if (name === "") throw new RecordFileError("the CSV header has an empty column name");
    if (seen.has(name)) throw new RecordFileError(`the CSV header names column "${name}" twice`);
    seen.add(name);
  }
  return names;
}

/** csv-parse's raw text of a record carries the blank and comment lines before it: not the record's. */
const recordText = (raw: string) => raw.replace(/^(?:#[^\n]*\n|\r?\n)+/, "").replace(/[\r\n]+$/, "");

/** csv-parse reports the line a record ends on; a record spanning lines starts that many lines earlier. */
function startLine(endLine: number, raw: string): number {
  const body = recordText(raw);
  let newlines = 0;
  for (let i = body.indexOf("\n"); i !== -1; i = body.indexOf("\n", i + 1)) newlines++;
  return Math.max(1, endLine - newlines);
}

const trimRaw = (raw: string) => shorten(recordText(raw));

interface CsvRow {
  record: Record<string, string>;
  info: { lines: number };
  raw: string;
}

async function* readCsv(input: Readable, kind: RecordKind): AsyncGenerator<ReadItem, void, undefined> {
  const kinds = csvCellKinds(kind);
  // Rows csv-parse could not read arrive through on_skip, possibly ahead of the rows before them
  // that are still buffered: they wait here and are yielded in line order.
  const skipped: ReadItem[] = [];
  let lastLine = 0;
  const parser = parseCsv({
    columns: checkHeader,
    comment: "#",
    comment_no_infix: true,
    skip_empty_lines: true,
    bom: true,
    info: true,
    raw: true,
    skip_records_with_error: true,
    on_skip: (err, raw) => {
      const line = typeof err?.lines === "number" ? err.lines : lastLine + 1;
      skipped.push({
        line: startLine(line, raw ?? ""),
        error: err?.message ?? "unreadable CSV record",
        raw: trimRaw(raw ?? ""),
      });
      return undefined;
    },
  });
  pipeline(input, parser, () => {});
  const drainBefore = function* (line: number) {
    while (skipped.length && (skipped[0]?.line ?? 0) < line) yield skipped.shift()!;
  };
  try {
    for await (const row of parser as AsyncIterable<CsvRow>) {
      const line = startLine(row.info.lines, row.raw);
      lastLine = row.info.lines;
      yield* drainBefore(line);
      const r = csvRecord(row.record, kinds);
      yield "error" in r
        ? { line, error: r.error, raw: trimRaw(row.raw), field: r.field }
        : { line, record: r.record };
    }
  } catch (err) {
    if (err instanceof RecordFileError) throw err;
    throw new RecordFileError(`cannot read the CSV file: ${(err as Error).message}`, { cause: err });
  }
  yield* drainBefore(Number.POSITIVE_INFINITY);
}
