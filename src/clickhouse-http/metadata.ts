import { type Token, tokenize } from "../console/lexer.js";
import type { SchemaTable } from "../console/service.js";
import { chErrors } from "./errors.js";

/**
 * What clients ask on connect and in their schema browsers — `version()`, `timezone()`,
 * `currentDatabase()`, `system.databases`, `system.tables`, `system.columns`, settings look-ups — is
 * answered by emulation: the query reads tables the service writes as constants (one database, the
 * analyst tables), bound under private names beside the analyst tables, and never the engine's own
 * system tables. The rewrite works on the engine's canonical text (no comments, one spelling).
 */
export interface Emulation {
  /** The exposed database's name (the warehouse database). */
  database: string;
  /** The analyst tables with their columns. */
  tables: readonly SchemaTable[];
  /** The engine's version, as `version()` answers it. */
  version: string;
  /** The caller (the pixel id), as `currentUser()` answers it. */
  user: string;
}

const quote = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
const ident = (s: string) => `\`${s.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;

type Cell = string | number;
/** A SELECT over constants: `values('c1 T1, …', (…), …)`. */
function constants(columns: readonly [string, string][], rows: readonly Cell[][]): string {
  const structure = columns.map(([n, t]) => `${n} ${t}`).join(", ");
  if (rows.length === 0) {
    const nulls = columns.map(([n, t]) => `CAST(NULL, 'Nullable(${t})') AS ${n}`).join(", ");
    return `SELECT * FROM (SELECT ${nulls}) WHERE 0`;
  }
  const body = rows.map(
    (r) => `(${r.map((v) => (typeof v === "number" ? String(v) : quote(v))).join(", ")})`,
  );
  return `SELECT * FROM values(${quote(structure)}, ${body.join(", ")})`;
}

function emulatedTables(e: Emulation): Record<string, string> {
  const tables = e.tables;
  const databases = constants(
    [
      ["name", "String"],
      ["engine", "String"],
      ["data_path", "String"],
      ["metadata_path", "String"],
      ["uuid", "String"],
      ["comment", "String"],
    ],
    [[e.database, "Atomic", "", "", "00000000-0000-0000-0000-000000000000", "pixelhouse analyst tables"]],
  );
  const systemTables = constants(
    [
      ["database", "String"],
      ["name", "String"],
      ["uuid", "String"],
      ["engine", "String"],
      ["is_temporary", "UInt8"],
      ["data_paths", "String"],
      ["metadata_path", "String"],
      ["create_table_query", "String"],
      ["engine_full", "String"],
      ["partition_key", "String"],
      ["sorting_key", "String"],
      ["primary_key", "String"],
      ["total_rows", "UInt64"],
      ["total_bytes", "UInt64"],
      ["comment", "String"],
    ],
    tables.map((t) => [
      e.database,
      t.name,
      "",
      "View",
      0,
      "",
      "",
      "",
      "View",
      "",
      "",
      "",
      0,
      0,
      t.description,
    ]),
  );
  const columnRows = tables.flatMap((t) =>
    t.columns.map((c, i) => [
      e.database,
      t.name,
      c.name,
      c.type,
      i + 1,
      "",
      "",
      c.description ?? "",
      0,
      0,
      0,
      0,
      "",
    ]),
  );
  const columns = constants(
    [
      ["database", "String"],
      ["table", "String"],
      ["name", "String"],
      ["type", "String"],
      ["position", "UInt64"],
      ["default_kind", "String"],
      ["default_expression", "String"],
      ["comment", "String"],
      ["is_in_partition_key", "UInt8"],
      ["is_in_sorting_key", "UInt8"],
      ["is_in_primary_key", "UInt8"],
      ["is_in_sampling_key", "UInt8"],
      ["compression_codec", "String"],
    ],
    columnRows,
  );
  const settings = constants(
    [
      ["name", "String"],
      ["value", "String"],
      ["changed", "UInt8"],
      ["description", "String"],
      ["type", "String"],
      ["readonly", "UInt8"],
    ],
    [
      ["readonly", "2", 1, "Queries here only read (analyst tables of one pixel).", "UInt64", 1],
      ["max_execution_time", "", 0, "Set by the service (CONSOLE_MAX_EXECUTION_SECONDS).", "Seconds", 1],
      ["session_timezone", "UTC", 0, "Times are UTC.", "Timezone", 1],
    ],
  );
  const schemata = constants(
    [
      ["catalog_name", "String"],
      ["schema_name", "String"],
      ["schema_owner", "String"],
    ],
    [[e.database, e.database, "default"]],
  );
  const infoTables = constants(
    [
      ["table_catalog", "String"],
      ["table_schema", "String"],
      ["table_name", "String"],
      ["table_type", "String"],
      ["table_comment", "String"],
    ],
    tables.map((t) => [e.database, e.database, t.name, "VIEW", t.description]),
  );
  const infoColumns = constants(
    [
      ["table_catalog", "String"],
      ["table_schema", "String"],
      ["table_name", "String"],
      ["column_name", "String"],
      ["ordinal_position", "UInt64"],
      ["data_type", "String"],
      ["is_nullable", "String"],
      ["column_comment", "String"],
    ],
    tables.flatMap((t) =>
      t.columns.map((c, i) => [
        e.database,
        e.database,
        t.name,
        c.name,
        i + 1,
        c.type,
        c.type.startsWith("Nullable(") ? "YES" : "NO",
        c.description ?? "",
      ]),
    ),
  );
  return {
    "system.databases": databases,
    "system.tables": systemTables,
    "system.columns": columns,
    "system.settings": settings,
    "information_schema.schemata": schemata,
    "information_schema.tables": infoTables,
    "information_schema.columns": infoColumns,
  };
}

/** Calls answered with a constant, under the call's own column name. */
function functionValues(e: Emulation): Record<string, string> {
  return {
    version: e.version,
    timezone: "UTC",
    timeZone: "UTC",
    serverTimezone: "UTC",
    serverTimeZone: "UTC",
    currentDatabase: e.database,
    DATABASE: e.database,
    currentUser: e.user,
    user: e.user,
    hostName: "pixelhouse",
  };
}

const isName = (t: Token | undefined) => t !== undefined && (t.kind === "word" || t.kind === "quoted");
const isPunct = (t: Token | undefined, p: string) => t !== undefined && t.kind === "punct" && t.value === p;

/**
 * The canonical query with metadata references replaced, and the emulated tables it now reads (bound
 * name → SELECT). `db.table` of the exposed database reads the analyst table; `system.x` and
 * `information_schema.x` read their emulation when there is one and are refused otherwise.
 */
export function emulate(canonical: string, e: Emulation): { sql: string; tables: Record<string, string> } {
  const tokens = tokenize(canonical);
  const all = emulatedTables(e);
  const calls = functionValues(e);
  const used: Record<string, string> = {};
  const edits: { start: number; end: number; text: string }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (isName(t) && isPunct(next, ".") && isName(tokens[i + 2])) {
      const db = t.value;
      const table = tokens[i + 2]!;
      const lowerDb = db.toLowerCase();
      if (db === e.database || db === "default") {
        edits.push({ start: t.start, end: next!.end, text: "" });
      } else if (db === "system" || lowerDb === "information_schema") {
        const key = `${lowerDb}.${lowerDb === "system" ? table.value : table.value.toLowerCase()}`;
        const select = all[key];
        if (!select) throw chErrors.accessDenied(`${db}.${table.value} is not available on this endpoint`);
        const bound = `pxh_${key.replace(".", "_")}`;
        used[bound] = select;
        edits.push({ start: t.start, end: table.end, text: ident(bound) });
      }
      i += 2;
      continue;
    }
    if (
      t.kind === "word" &&
      isPunct(next, "(") &&
      isPunct(tokens[i + 2], ")") &&
      !isPunct(tokens[i - 1], ".")
    ) {
      const value =
        calls[t.value] ??
        calls[Object.keys(calls).find((k) => k.toLowerCase() === t.value.toLowerCase()) ?? ""];
      if (value !== undefined) {
        edits.push({
          start: t.start,
          end: tokens[i + 2]!.end,
          text: `(${quote(value)} AS ${ident(`${t.value}()`)})`,
        });
        i += 2;
      }
    }
  }
  let sql = canonical;
  for (const edit of edits.reverse()) sql = sql.slice(0, edit.start) + edit.text + sql.slice(edit.end);
  return { sql, tables: used };
}
