import { BadRequestError } from "../errors.js";
import { addDays } from "../shared/days.js";
import { MEASURE_BY_KEY } from "./measures.js";
import type { QueryPlan, Statement } from "./plan.js";
import { type RateTable, type ReportCostLine, reportCost } from "./report-costs.js";
import type { BucketRow, QueryAnswerBody } from "./responses.js";
import { roundAddingUp, roundHalfAway } from "./rounding.js";
import type { Bucket } from "./time.js";

export type BaseValues = Record<string, number>;

/** A statement's rows as the engine returned them. */
export interface StatementRows {
  statement: Statement;
  rows: Record<string, unknown>[];
}

interface Series {
  values: string[];
  buckets: Map<number, BaseValues>;
  total: BaseValues;
  /** Apportioned bases already rounded (plan.apportion): per bucket, and the range total. */
  rounded?: { buckets: Map<number, BaseValues>; total: BaseValues };
}
type Period = Map<string, Series>;

const RESERVED = new Set(["bucket", "period", "fx_missing", "is_total"]);

/** Raises the 400 the interface asks for when an amount had no rate on or before its day. */
export function checkRates(rows: Record<string, unknown>[]): void {
  // Rows arrive in no particular order: name the earliest day ("YYYY-MM-DD CUR" sorts by day).
  const missing = rows
    .map((r) => (typeof r.fx_missing === "string" ? r.fx_missing : ""))
    .filter((m) => m !== "")
    .sort()[0];
  if (!missing) return;
  const [day, currency] = missing.split(" ");
  throw new BadRequestError(
    `no exchange rate for ${currency} on or before ${day}; load rates with pixelhouse fx import`,
  );
}

function collect(plan: QueryPlan, results: StatementRows[], period: "primary" | "compare"): Period {
  const out: Period = new Map();
  const dims = plan.dimensions.length;
  // A statement of both periods tells each row's: 0 the range, 1 the compare period.
  const wanted = period === "primary" ? 0 : 1;
  for (const result of results) {
    const { statement } = result;
    if (statement.period !== period && statement.period !== "both") continue;
    const rows =
      statement.period === "both" ? result.rows.filter((r) => Number(r.period) === wanted) : result.rows;
    checkRates(rows);
    for (const r of rows) {
      const values = Array.from({ length: dims }, (_, i) => String(r[`d${i}`] ?? ""));
      const key = values.join("\u0000");
      let series = out.get(key);
      if (!series) {
        series = { values, buckets: new Map(), total: {} };
        out.set(key, series);
      }
      // is_total: 0 a bucket row, 1 the range total, 2 both (granularity none).
      const kind = Number(r.is_total);
      const targets =
        kind === 1
          ? [series.total]
          : kind === 2
            ? [series.total, bucketOf(series, 0)]
            : [bucketOf(series, Number(r.bucket))];
      for (const [k, v] of Object.entries(r)) {
        if (RESERVED.has(k) || /^d\d$/.test(k)) continue;
        for (const target of targets) target[k] = (target[k] ?? 0) + Number(v ?? 0);
      }
    }
  }
  if (plan.apportion) apportion(out, plan.apportion, plan.measures);
  return out;
}

/**
 * Rounds each apportioned base so that, per bucket and for the range total, the rounded values of
 * the dimension values add up to the rounded sum of them all (largest remainder): a conversion
 * split 1/3 three ways is 0.3333 + 0.3333 + 0.3334, never 0.9999. Ties go to the dimension values
 * that sort first, so the answer depends neither on row order nor on float noise.
 */
function apportion(period: Period, bases: readonly string[], measures: readonly string[]): void {
  const series = [...period.values()];
  for (const base of bases) {
    const measure = measures.find((m) => {
      const def = MEASURE_BY_KEY.get(m)?.definition;
      return def?.kind === "base" && def.base === base;
    });
    const places = measure ? placesOf(measure) : 4;
    const groups = new Map<number | "total", { key: string; value: number; into: BaseValues }[]>();
    for (const s of series) {
      s.rounded ??= { buckets: new Map(), total: {} };
      const add = (k: number | "total", value: number | undefined, into: BaseValues) => {
        if (value === undefined) return;
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k)!.push({ key: s.values.join("\u0000"), value, into });
      };
      add("total", s.total[base], s.rounded.total);
      for (const [k, b] of s.buckets) {
        let into = s.rounded.buckets.get(k);
        if (!into) {
          into = {};
          s.rounded.buckets.set(k, into);
        }
        add(k, b[base], into);
      }
    }
    for (const items of groups.values()) {
      const rounded = roundAddingUp(
        items.map((i) => i.value),
        places,
        (a, b) => (items[a]!.key < items[b]!.key ? -1 : items[a]!.key > items[b]!.key ? 1 : 0),
      );
      items.forEach((item, i) => {
        item.into[base] = rounded[i]!;
      });
    }
  }
}

function bucketOf(s: Series, key: number): BaseValues {
  let b = s.buckets.get(key);
  if (!b) {
    b = {};
    s.buckets.set(key, b);
  }
  return b;
}

export interface CostInputs {
  lines: ReportCostLine[];
  rates: RateTable;
}

/** A measure's value from base aggregates; ratios of sums, null when the denominator is 0. */
export function measureValue(
  key: string,
  bases: BaseValues,
  report: (cost: "variable" | "fixed", bases: BaseValues) => number,
): number | null {
  const def = MEASURE_BY_KEY.get(key)?.definition;
  if (!def) return null;
  switch (def.kind) {
    case "base":
      return bases[def.base] ?? 0;
    case "ratio": {
      const den = measureValue(def.den, bases, report);
      const num = measureValue(def.num, bases, report);
      if (!den || num === null) return null;
      return (num / den) * (def.scale ?? 1);
    }
    case "sum":
      return def.terms.reduce((acc, t) => acc + t.sign * (measureValue(t.key, bases, report) ?? 0), 0);
    case "report_cost":
      return report(def.cost, bases);
  }
}

/** `average`: a per-bucket average of a count is a fraction (2 orders over 3 days = 0.67 a day). */
const placesOf = (key: string, average = false): number => {
  const type = MEASURE_BY_KEY.get(key)?.valueType;
  return type === "count" ? (average ? 2 : 0) : type === "ratio" || type === "number" ? 4 : 2;
};

const round = (key: string, v: number | null, average = false): number | null =>
  v === null || !Number.isFinite(v) ? null : roundHalfAway(v, placesOf(key, average));

const dayOf = (iso: string) => iso.slice(0, 10);

/** A base measure's value as apportioned (already rounded), when it was. */
function apportioned(m: string, rounded: BaseValues | undefined): number | undefined {
  const def = MEASURE_BY_KEY.get(m)?.definition;
  return def?.kind === "base" && rounded ? rounded[def.base] : undefined;
}

function rowsOf(
  plan: QueryPlan,
  series: Series | undefined,
  buckets: Bucket[],
  report: (b: Bucket) => (cost: "variable" | "fixed", bases: BaseValues) => number,
) {
  return buckets.map((b) => {
    const bases = series?.buckets.get(b.key) ?? {};
    const rounded = series?.rounded?.buckets.get(b.key);
    const row: BucketRow = { dt: b.dt, start: b.start, end: b.end };
    for (const m of plan.measures)
      row[m] = apportioned(m, rounded) ?? round(m, measureValue(m, bases, report(b)));
    return row;
  });
}

/** Shapes the engine's rows into the query response (docs/query.md). */
export function shapeResults(
  plan: QueryPlan,
  results: StatementRows[],
  costs: CostInputs | null,
): QueryAnswerBody {
  const primary = collect(plan, results, "primary");
  const compare = plan.compare ? collect(plan, results, "compare") : null;
  const reportFor =
    (firstDay: string, lastDay: string) =>
    (cost: "variable" | "fixed", bases: BaseValues): number => {
      if (!costs) return 0;
      return reportCost(
        cost,
        costs.lines,
        { firstDay, lastDay },
        {
          spend: bases.ads_spend ?? 0,
          netRevenue: measureValue("orders.net_revenue", bases, () => 0) ?? 0,
          orders: bases.orders_count ?? 0,
        },
        plan.currency,
        costs.rates,
      );
    };
  // A bucket's local days: its clipped start day to the day before its clipped end.
  const bucketReport = (b: Bucket) => reportFor(dayOf(b.start), addDays(dayOf(b.end), -1));
  const totalReport = (range: { startDate: string; endDate: string }) =>
    reportFor(range.startDate, range.endDate);

  const keys = new Set<string>([...primary.keys(), ...(compare?.keys() ?? [])]);
  if (plan.dimensions.length === 0) keys.add("");
  const totalOf = (
    period: Period | null,
    key: string,
    m: string,
    range: { startDate: string; endDate: string },
  ) => measureValue(m, period?.get(key)?.total ?? {}, totalReport(range));

  let entries = [...keys].map((key) => {
    const p = primary.get(key);
    const c = compare?.get(key);
    return { key, values: (p ?? c)?.values ?? [], p, c };
  });
  if (plan.dimensions.length) {
    const by = plan.order?.measure ?? plan.measures[0]!;
    const dir = plan.order?.direction === "asc" ? 1 : -1;
    entries.sort((a, b) => {
      const va = totalOf(primary, a.key, by, plan.primary.range) ?? Number.NEGATIVE_INFINITY;
      const vb = totalOf(primary, b.key, by, plan.primary.range) ?? Number.NEGATIVE_INFINITY;
      return va === vb ? a.key.localeCompare(b.key) : (va - vb) * dir;
    });
    entries = entries.slice(plan.offset, plan.offset + plan.limit);
  }

  const shaped = entries.map(({ key, values, p, c }) => {
    const measureDetails = plan.measures.map((m) => {
      const meta = MEASURE_BY_KEY.get(m)!;
      const pSum = totalOf(primary, key, m, plan.primary.range);
      const cSum = plan.compare ? totalOf(compare, key, m, plan.compare.range) : null;
      const avg = (sum: number | null, n: number) =>
        meta.isAverage ? sum : sum === null || n === 0 ? null : sum / n;
      const primaryAvg = avg(pSum, plan.primary.buckets.length);
      const compareAvg = plan.compare ? avg(cSum, plan.compare.buckets.length) : null;
      const percentDiff =
        plan.compare && pSum !== null && cSum !== null && cSum !== 0
          ? ((pSum - cSum) / Math.abs(cSum)) * 100
          : null;
      return {
        measure: m,
        isAverage: meta.isAverage,
        isPercentage: meta.isPercentage,
        calculatedAverage: meta.isAverage,
        hasPacing: !meta.isAverage && (meta.valueType === "count" || meta.valueType === "currency"),
        success: true,
        preferredTrendDirection: meta.preferredTrendDirection,
        primarySum: apportioned(m, p?.rounded?.total) ?? round(m, pSum),
        compareSum: plan.compare ? (apportioned(m, c?.rounded?.total) ?? round(m, cSum)) : round(m, cSum),
        primaryAvg: round(m, primaryAvg, true),
        compareAvg: round(m, compareAvg, true),
        percentDiff: percentDiff === null ? null : Math.round(percentDiff * 100) / 100,
      };
    });
    return {
      dateRange: { start: plan.primary.range.startDate, end: plan.primary.range.endDate },
      ...(plan.compare
        ? { compareDateRange: { start: plan.compare.range.startDate, end: plan.compare.range.endDate } }
        : {}),
      ...(plan.dimensions.length
        ? {
            dimension: plan.dimensions.join(", "),
            dimensionValue: values.join(", "),
            dimensionValues: Object.fromEntries(plan.dimensions.map((d, i) => [d, values[i] ?? ""])),
          }
        : {}),
      data: {
        primary: rowsOf(plan, p, plan.primary.buckets, bucketReport),
        compare: plan.compare ? rowsOf(plan, c, plan.compare.buckets, bucketReport) : [],
      },
      measureDetails,
    };
  });
  return { results: shaped };
}
