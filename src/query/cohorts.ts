import { z } from "zod";
import { Binder } from "./binder.js";
import { checkRates } from "./evaluate.js";
import { compileFilter, filterFields } from "./filters/compile.js";
import { filterSchema } from "./filters/schema.js";
import { issue, type QueryEnvironment } from "./plan.js";
import { currencySchema, dateRangeSchema, orderSettingsOverrideSchema, timezoneSchema } from "./schemas.js";
import { countedOrdersCte, fxCtes, fxJoin } from "./sources/common.js";
import { type Bucket, buckets, type Instants, resolveRange } from "./time.js";

export const COHORT_MEASURES = [
  "customers.retained",
  "customers.retention_rate",
  "orders.count",
  "orders.total_revenue",
  "customers.ltv",
] as const;
type CohortMeasure = (typeof COHORT_MEASURES)[number];

export const cohortQuerySchema = z.strictObject({
  pixelId: z.string().min(1),
  dateRange: dateRangeSchema.meta({
    description: "Acquisition range: customers whose first counted order falls in it",
  }),
  cohortGranularity: z.enum(["week", "month"]).default("month"),
  periods: z.number().int().min(1).max(24).default(12),
  measures: z
    .array(z.enum(COHORT_MEASURES))
    .min(1)
    .max(5)
    .default([...COHORT_MEASURES]),
  currency: currencySchema.optional(),
  timezone: timezoneSchema.optional(),
  filters: filterSchema.optional(),
  orderSettings: orderSettingsOverrideSchema.optional(),
});
export type CohortQuery = z.infer<typeof cohortQuerySchema>;

export interface CohortPlan {
  range: Instants;
  cohorts: Bucket[];
  periods: number;
  granularity: "week" | "month";
  measures: CohortMeasure[];
  now: string;
  sql: string;
  params: Record<string, unknown>;
}

/**
 * Cohorts (docs/query.md): a customer enters the cohort of their first counted order (all time, filters
 * applied) when it falls in the range; period k of a cohort is the k-th calendar week or month
 * from the cohort's start, in the query timezone (period 0 = the acquisition period).
 */
export function planCohorts(q: CohortQuery, env: QueryEnvironment): CohortPlan {
  for (const [i, f] of filterFields(q.filters).entries()) {
    if (!f.startsWith("orders.")) {
      throw issue(["filters", i], `cohorts take orders. filter fields; got "${f}"`);
    }
  }
  const timezone = q.timezone ?? env.accountTimezone;
  const currency = q.currency ?? "USD";
  const range = resolveRange(q.dateRange, timezone, env.now, "dateRange");
  const b = new Binder();
  const pixel = b.bind(q.pixelId, "String");
  const tz = b.bind(timezone, "String");
  const target = b.bind(currency, "String");
  const settings = { ...env.storedOrderSettings, ...(q.orderSettings ?? {}) };
  const where = compileFilter(q.filters, { binder: b, families: ["orders"], timezone, path: ["filters"] });
  const start = (col: string) =>
    q.cohortGranularity === "month" ? `toStartOfMonth(${col}, ${tz})` : `toMonday(${col}, ${tz})`;
  const periodOf =
    q.cohortGranularity === "month"
      ? "dateDiff('month', f.cohort, toStartOfMonth(f.created_at, " + tz + "))"
      : "intDiv(dateDiff('day', f.cohort, toMonday(f.created_at, " + tz + ")), 7)";
  const fx = fxJoin("r", target);
  const sql = `WITH ${fxCtes(target)},
${countedOrdersCte(pixel, settings, b, timezone, false)},
f0 AS (SELECT * FROM co AS o WHERE ${where}),
firsts AS (SELECT customer_key, min(created_at) AS first_at FROM f0 GROUP BY customer_key),
cohorted AS (
  SELECT customer_key, ${start("first_at")} AS cohort FROM firsts
  WHERE first_at >= ${b.bind(range.start, "DateTime64(3, 'UTC')")} AND first_at < ${b.bind(range.end, "DateTime64(3, 'UTC')")}
)
SELECT toUnixTimestamp(toDateTime(r.cohort, ${tz})) AS cohort_key, r.period AS period,
  toFloat64(uniqExact(r.customer_key)) AS retained, toFloat64(count()) AS orders,
  sum(toFloat64(r.total_price) * ${fx.factor}) AS revenue, ${fx.missing} AS fx_missing
FROM (
  SELECT f.customer_key AS customer_key, f.cohort AS cohort, ${periodOf} AS period, f.total_price AS total_price,
    f.currency AS cur, toDate(f.created_at) AS fx_day, toUInt8(1) AS fx_k
  FROM (SELECT f0.*, c.cohort AS cohort FROM f0 INNER JOIN cohorted AS c ON c.customer_key = f0.customer_key) AS f
  WHERE ${periodOf} < ${b.bind(q.periods, "Int64")}
) AS r
${fx.joins}
GROUP BY cohort_key, period
ORDER BY cohort_key, period`;
  return {
    range,
    cohorts: buckets(range, q.cohortGranularity, timezone),
    periods: q.periods,
    granularity: q.cohortGranularity,
    measures: q.measures,
    now: env.now.toISOString(),
    sql,
    params: b.params as Record<string, unknown>,
  };
}

interface Cell {
  retained: number;
  orders: number;
  revenue: number;
}

const r2 = (v: number) => (Math.sign(v) * Math.round(Math.abs(v) * 100 + 1e-9)) / 100;

/** Rows → cohorts with per-period measures, and the pooled average of cohorts that reached each period. */
export function shapeCohorts(plan: CohortPlan, rows: Record<string, unknown>[]) {
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
) {
  const out: Record<string, number | null> = { period: k };
  for (const m of plan.measures) {
    if (m === "customers.retained") out[m] = retained;
    else if (m === "customers.retention_rate") out[m] = size ? r2((retained / size) * 100) : null;
    else if (m === "orders.count") out[m] = orders;
    else if (m === "orders.total_revenue") out[m] = r2(revenue);
    else out[m] = size ? r2(cumulative / size) : null;
  }
  return out;
}
