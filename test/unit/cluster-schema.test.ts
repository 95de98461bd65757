import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { SQL_DIR, splitStatements } from "../../src/stores/migrations.js";

/**
 * table → its column lines ("name Type"), from every CREATE TABLE with a column list in the files,
 * in order; `EXCHANGE TABLES a AND b` swaps the two names, as a migration that rebuilds a table does;
 * `ADD COLUMN` appends a line and `MODIFY COLUMN` replaces one, as a migration that alters a table does.
 */
function columns(...files: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const statement of files.flatMap((f) => splitStatements(readFileSync(f, "utf8")))) {
    const swap = /^EXCHANGE TABLES (\w+) AND (\w+)$/.exec(statement);
    if (swap) {
      const [a, b] = [out.get(swap[1]!), out.get(swap[2]!)];
      if (a && b) out.set(swap[1]!, b).set(swap[2]!, a);
      continue;
    }
    const alter = /^ALTER TABLE (\w+) (ADD|MODIFY) COLUMN (?:IF NOT EXISTS )?(\w+) ([\s\S]+)$/.exec(
      statement,
    );
    if (alter) {
      const [, table, verb, name, rest] = alter;
      const cols = out.get(table!) ?? [];
      const line = `${name} ${rest!.trim().replace(/\s+/g, " ")}`;
      const at = cols.findIndex((c) => c.startsWith(`${name} `));
      if (verb === "ADD" && at < 0) cols.push(line);
      if (verb === "MODIFY" && at >= 0) cols[at] = line;
      out.set(table!, cols);
      continue;
    }
    const m = /^CREATE TABLE IF NOT EXISTS (\w+)(?: ON CLUSTER '\{cluster\}')? \(([\s\S]*?)\n\)/.exec(
      statement,
    );
    if (!m) continue;
    const cols = m[2]!
      .split("\n")
      .map((l) => l.replace(/--.*$/, "").trim().replace(/,$/, "").replace(/\s+/g, " "))
      .filter((l) => l && !l.startsWith("INDEX "));
    out.set(m[1]!.replace(/_local$/, ""), cols);
  }
  return out;
}

// The cluster schema is applied by hand (docs/clickhouse-cluster.md); it must not drift from the
// single-node schema the app migrates, or a cluster would lack columns the code writes.
it("the cluster schema has the same tables and columns as the single-node schema", () => {
  const dir = join(SQL_DIR, "clickhouse");
  const single = columns(
    ...readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort()
      .map((f) => join(dir, f)),
  );
  // A rebuild's scratch table is dropped by the same migration.
  single.delete("orders_by_month");
  const cluster = columns(join(SQL_DIR, "clickhouse", "cluster", "001_init.sql"));
  expect(single.size).toBeGreaterThan(5);
  expect([...cluster.keys()].sort()).toEqual([...single.keys()].sort());
  for (const [table, cols] of single) expect(cluster.get(table), table).toEqual(cols);
});
