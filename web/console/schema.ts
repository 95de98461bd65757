/**
 * The analyst tables of GET /db-mgmt/api/sql/schema, as the sidebar lists them (filtered) and as the
 * editor completes them. No DOM: the unit tests import this file directly.
 */
import type { Completion } from "@codemirror/autocomplete";
import type { SQLNamespace } from "@codemirror/lang-sql";

export interface SchemaTable {
  name: string;
  description: string;
  columns: { name: string; type: string; description?: string }[];
}

export interface ListedTable {
  table: SchemaTable;
  /** All columns when the table's name matches, else the matching ones. */
  columns: SchemaTable["columns"];
  /** Opened in the tree: a filter is typed, so its hits are visible without a click. */
  open: boolean;
}

/** The tables and columns whose names contain the filter text (any case); all of them without one. */
export function filterSchema(tables: SchemaTable[], filter: string): ListedTable[] {
  const q = filter.trim().toLowerCase();
  const listed: ListedTable[] = [];
  for (const table of tables) {
    const tableHit = !q || table.name.toLowerCase().includes(q);
    const columns = table.columns.filter((c) => tableHit || c.name.toLowerCase().includes(q));
    if (tableHit || columns.length > 0) listed.push({ table, columns, open: q !== "" });
  }
  return listed;
}

/** The schema as lang-sql's completion wants it: each table (with its description) and its typed columns. */
export function completionSchema(tables: SchemaTable[]): SQLNamespace {
  return Object.fromEntries(
    tables.map((table) => [
      table.name,
      {
        self: {
          label: table.name,
          type: "type",
          detail: "table",
          info: table.description,
        } satisfies Completion,
        children: table.columns.map(
          (c): Completion => ({
            label: c.name,
            type: "property",
            detail: c.type,
            ...(c.description ? { info: c.description } : {}),
          }),
        ),
      },
    ]),
  );
}
