import type { SqlExecutor } from "../stores/sql/port.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import type { CostInputs } from "./evaluate.js";
import type { QueryPlan } from "./plan.js";
import type { RateTable, ReportCostLine } from "./report-costs.js";

/**
 * What report-time costs (variable and fixed lines of the account) need beside the plan's rows: the
 * lines themselves, from the SQL store, and the rates of every currency involved up to the plan's
 * last day, from the warehouse.
 */
export async function readCostInputs(
  stores: { sql: SqlExecutor; warehouse: WarehouseStore },
  accountId: string,
  plan: QueryPlan,
): Promise<CostInputs> {
  const { rows } = await stores.sql.query<{
    cost_type: "variable" | "fixed";
    line: ReportCostLine["line"];
    effective_start: string | null;
    effective_end: string | null;
  }>(
    `SELECT cost_type, line, to_char(effective_start, 'YYYY-MM-DD') AS effective_start,
            to_char(effective_end, 'YYYY-MM-DD') AS effective_end
     FROM cost_lines WHERE account_id = $1 AND cost_type IN ('variable', 'fixed') ORDER BY id`,
    [accountId],
  );
  const lines: ReportCostLine[] = rows.map((r) => ({
    costType: r.cost_type,
    line: r.line,
    effectiveStart: r.effective_start,
    effectiveEnd: r.effective_end,
  }));
  const currencies = [
    ...new Set([plan.currency, ...lines.map((l) => (l.line.currency ?? "USD").toUpperCase())]),
  ];
  const last =
    plan.compare && plan.compare.range.endDate > plan.primary.range.endDate
      ? plan.compare.range.endDate
      : plan.primary.range.endDate;
  const fx = await stores.warehouse.query<{ currency: string; day: string; rate: number }>(
    `SELECT currency, toString(date) AS day, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates
     WHERE currency IN {c:Array(String)} AND date <= {d:Date} GROUP BY currency, date ORDER BY currency, date`,
    { c: currencies, d: last },
  );
  const rates: RateTable = new Map();
  for (const r of fx) {
    if (!rates.has(r.currency)) rates.set(r.currency, []);
    rates.get(r.currency)!.push([r.day, Number(r.rate)]);
  }
  return { lines, rates };
}
