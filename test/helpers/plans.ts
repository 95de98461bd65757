import type { SqlExecutor, SqlValue } from "../../src/stores/sql/port.js";

/** A node of a Postgres `EXPLAIN (FORMAT JSON)` plan, the fields the plan tests look at. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
export const planNodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(planNodes)];

/**
 * The nodes of a statement's plan (`analyze` runs it: do that inside a transaction to roll back when
 * it writes). PGlite hands the JSON plan back parsed, Postgres as text.
 */
export async function explainNodes(
  sql: SqlExecutor,
  text: string,
  params: SqlValue[],
  analyze = false,
): Promise<PlanNode[]> {
  const { rows } = await sql.query<{ "QUERY PLAN": [{ Plan: PlanNode }] | string }>(
    `EXPLAIN (${analyze ? "ANALYZE, " : ""}FORMAT JSON) ${text}`,
    params,
  );
  const raw = rows[0]!["QUERY PLAN"];
  return planNodes((typeof raw === "string" ? JSON.parse(raw) : raw)[0].Plan as PlanNode);
}

/** Rows a plan's nodes on the given tables (or their indexes) produced, over all their loops. */
export const rowsOn = (nodes: PlanNode[], ...tables: string[]): number[] =>
  nodes
    .filter((n) => tables.some((t) => n["Relation Name"] === t || n["Index Name"]?.startsWith(`${t}_`)))
    .map((n) => (n["Actual Rows"] ?? 0) * (n["Actual Loops"] ?? 1));
