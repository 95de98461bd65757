import { checkRates } from "./evaluate.js";
import type { CohortPlan } from "./plan.js";
import type { CohortAnswerBody, CohortPeriod } from "./responses.js";
import type { Bucket } from "./time.js";

interface Cell {
  retained: number;
  orders: number;
  revenue: number;
}

const r2 = (v: number) => (Math.sign(v) * Math.round(Math.abs(v) * 100 + 1e-9)) / 100;

/** Rows → cohorts with per-period measures, and the pooled average of cohorts that reached each period. */
export function shapeCohorts(plan: CohortPlan, rows: Record<string, unknown>[]): CohortAnswerBody {
  checkRates(rows);
  const cells = new Map<number, Map<number, Cell>>();
  for (const row of rows) {
    const key = Number(row.cohort_key);
    if (!cells.has(key)) cells.set(key, new Map());
    cells.get(key)!.set(Number(row.period), {
      retained: Number(row.retained),
      orders: Number(row.orders),
      revenue: Number(row.revenue),
    });
  }
  const now = Date.parse(plan.now);
  const stepMs = (c: Bucket, k: number) => {
    const d = new Date(c.key * 1000);
    if (plan.granularity === "week") return c.key * 1000 + k * 7 * 86_400_000;
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, d.getUTCDate(), d.getUTCHours());
  };
  const pooled = Array.from({ length: plan.periods }, () => ({
    size: 0,
    retained: 0,
    orders: 0,
    revenue: 0,
    cumulative: 0,
    cohorts: 0,
  }));
  const cohorts = plan.cohorts.map((c) => {
    const per = cells.get(c.key) ?? new Map<number, Cell>();
    const size = per.get(0)?.retained ?? 0;
    let cumulative = 0;
    const periods = [];
    for (let k = 0; k < plan.periods; k++) {
      // A period a cohort has not reached yet is not reported (and not pooled).
      if (stepMs(c, k) > now) break;
      const cell = per.get(k) ?? { retained: 0, orders: 0, revenue: 0 };
      cumulative += cell.revenue;
      const p = pooled[k]!;
      p.size += size;
      p.retained += cell.retained;
      p.orders += cell.orders;
      p.revenue += cell.revenue;
      p.cumulative += cumulative;
      p.cohorts++;
      periods.push(periodValues(plan, k, size, cell.retained, cell.orders, cell.revenue, cumulative));
    }
    return { cohort: c.dt, start: c.start, end: c.end, size, periods };
  });
  const average = {
    periods: pooled
      .map((p, k) =>
        p.cohorts
          ? {
              ...periodValues(plan, k, p.size, p.retained, p.orders, p.revenue, p.cumulative),
              cohorts: p.cohorts,
            }
          : null,
      )
      .filter((x) => x !== null),
  };
  return { cohorts, average };
}

function periodValues(
  plan: CohortPlan,
  k: number,
  size: number,
  retained: number,
  orders: number,
  revenue: number,
  cumulative: number,
): CohortPeriod {
  const out: CohortPeriod = { period: k };
  for (const m of plan.measures) {
    if (m === "customers.retained") out[m] = retained;
    else if (m === "customers.retention_rate") out[m] = size ? r2((retained / size) * 100) : null;
    else if (m === "orders.count") out[m] = orders;
    else if (m === "orders.total_revenue") out[m] = r2(revenue);
    else out[m] = size ? r2(cumulative / size) : null;
  }
  return out;
}
