import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { SQL_DIR, splitStatements } from "../../src/stores/migrations.js";

/** table → its column lines ("name Type"), from every CREATE TABLE with a column list. */
function columns(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const statement of splitStatements(readFileSync(file, "utf8"))) {
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
  const single = columns(join(SQL_DIR, "clickhouse", "001_init.sql"));
  const cluster = columns(join(SQL_DIR, "clickhouse", "cluster", "001_init.sql"));
  expect(single.size).toBeGreaterThan(5);
  expect([...cluster.keys()].sort()).toEqual([...single.keys()].sort());
  for (const [table, cols] of single) expect(cluster.get(table), table).toEqual(cols);
});
