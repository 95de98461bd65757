import type { OrderSettings } from "../accounts/schemas.js";
import { ValidationError } from "../errors.js";
import { Binder } from "./binder.js";
import { compileFilter, filterFields } from "./filters/compile.js";
import { type Family, FIELD_BY_NAME } from "./filters/fields.js";
import type { Filter } from "./filters/schema.js";
import { basesOf, MEASURE_BY_KEY, type SourceName } from "./measures.js";
import type { AttributionQuery, GeneralQuery } from "./schemas.js";
import { emitAttribution } from "./sources/attribution.js";
import { type EmitContext, SOURCE_FAMILIES } from "./sources/context.js";
import { emitFactSource } from "./sources/facts.js";
import { type Bucket, buckets, type Granularity, type Instants, resolveRange } from "./time.js";

/** What normalization needs from outside the request (read by the service, passed in: no I/O here). */
export interface QueryEnvironment {
  accountTimezone: string;
  storedOrderSettings: OrderSettings;
  now: Date;
}

/** One SQL statement to run: plain data, so `?explain=true` can return it as is. */
export interface Statement {
  source: SourceName;
  period: "primary" | "compare";
  sql: string;
  params: Record<string, unknown>;
}

/** The plan of a query: plain, serializable; the service runs the statements and shapes rows. */
export interface QueryPlan {
  measures: string[];
  dimensions: string[];
  timezone: string;
  currency: string;
  granularity: Granularity;
  primary: { range: Instants; buckets: Bucket[] };
  compare?: { range: Instants; buckets: Bucket[] };
  statements: Statement[];
  /** Account-level report-time costs need the cost lines (variable, fixed). */
  reportCosts: boolean;
  order?: { measure: string; direction: "asc" | "desc" };
  limit: number;
  offset: number;
}

/** A 400 naming the request field at `path`. */
export const issue = (path: (string | number)[], message: string) =>
  new ValidationError([{ message, key: String(path[0]), path: path.map(String) }], message);

function mergedSettings(env: QueryEnvironment, override: Partial<OrderSettings> | undefined): OrderSettings {
  return { ...env.storedOrderSettings, ...(override ?? {}) };
}

const CUSTOMER_MEASURES = new Set([
  "customers.new",
  "customers.returning",
  "customers.new_customer_orders",
  "customers.repeat_rate",
]);

function needsNumbering(
  measures: readonly string[],
  filter: Filter | undefined,
  dims: readonly string[],
): boolean {
  return (
    measures.some((m) => CUSTOMER_MEASURES.has(m)) ||
    [...filterFields(filter), ...dims].some((f) => f.startsWith("customers."))
  );
}

/**
 * Splits a filter into the part each side of an attribution join evaluates: top-level `and` branches
 * of attribution fields restrict touches, the others restrict conversions. A branch mixing both → 400.
 */
export function splitAttributionFilter(filter: Filter | undefined): {
  touch: Filter | undefined;
  conv: Filter | undefined;
} {
  if (!filter) return { touch: undefined, conv: undefined };
  const branches = "and" in filter ? filter.and : [filter];
  const touch: Filter[] = [];
  const conv: Filter[] = [];
  branches.forEach((branch, i) => {
    const fields = filterFields(branch);
    const onTouch = fields.filter((f) => f.startsWith("attribution."));
    if (onTouch.length && onTouch.length !== fields.length) {
      throw issue(
        ["filters", ...("and" in filter ? ["and", i] : [])],
        "a filter branch cannot mix attribution. fields with other fields; put them in separate and-branches",
      );
    }
    (onTouch.length ? touch : conv).push(branch);
  });
  return { touch: touch.length ? { and: touch } : undefined, conv: conv.length ? { and: conv } : undefined };
}

function checkDimensions(
  dims: readonly string[],
  sources: readonly SourceName[],
  allowed?: (s: SourceName) => readonly Family[],
) {
  dims.forEach((d, i) => {
    const def = FIELD_BY_NAME.get(d);
    if (!def)
      throw issue(["dimensions", i], `unknown dimension "${d}" (GET /db-mgmt/api/filters lists the fields)`);
    for (const s of sources) {
      const families = allowed?.(s) ?? SOURCE_FAMILIES[s];
      if (!families.includes(def.family))
        throw issue(["dimensions", i], `dimension "${d}" cannot split the ${s} measures of this query`);
    }
  });
  if (dims.filter((d) => d.startsWith("attribution.")).length > 1)
    throw issue(["dimensions"], "at most one attribution. dimension");
}

/** Plans `POST /db-mgmt/api/query`. Pure: the same request and environment give the same plan. */
export function planGeneralQuery(q: GeneralQuery, env: QueryEnvironment): QueryPlan {
  q.measures.forEach((m, i) => {
    if (!MEASURE_BY_KEY.has(m))
      throw issue(["measures", i], `unknown measure "${m}" (GET /db-mgmt/api/measures lists them)`);
  });
  if (q.order && !q.measures.includes(q.order.measure))
    throw issue(["order", "measure"], `order.measure must be one of the query's measures`);
  const timezone = q.timezone ?? env.accountTimezone;
  const currency = q.currency ?? "USD";
  const settings = mergedSettings(env, q.orderSettings);
  const bases = basesOf(q.measures);
  const sources = [...bases.keys()];
  checkDimensions(q.dimensions, sources);
  const reportCosts = q.measures.some((m) => {
    const seen = new Set<string>();
    const walk = (k: string): boolean => {
      if (seen.has(k)) return false;
      seen.add(k);
      const d = MEASURE_BY_KEY.get(k)?.definition;
      if (!d) return false;
      if (d.kind === "report_cost") return true;
      if (d.kind === "ratio") return walk(d.num) || walk(d.den);
      if (d.kind === "sum") return d.terms.some((t) => walk(t.key));
      return false;
    };
    return walk(m);
  });
  if (reportCosts && q.dimensions.length)
    throw issue(
      ["dimensions"],
      "variable and fixed costs belong to the account and cannot be split by a dimension",
    );

  const primaryRange = resolveRange(q.dateRange, timezone, env.now, "dateRange");
  const compareRange = q.compareDateRange
    ? resolveRange(q.compareDateRange, timezone, env.now, "compareDateRange")
    : undefined;
  const statements: Statement[] = [];
  const numbering = needsNumbering(q.measures, q.filters, q.dimensions);
  for (const [period, range] of [
    ["primary", primaryRange],
    ["compare", compareRange],
  ] as const) {
    if (!range) continue;
    for (const source of sources) {
      const binder = new Binder();
      const ctx: EmitContext = {
        binder,
        pixelId: q.pixelId,
        timezone,
        currency,
        granularity: q.granularity,
        range,
        filter: q.filters,
        orderSettings: settings,
        dimensions: q.dimensions,
        attribution: { model: q.attributionModel, window: q.attributionWindow },
        needsCustomerNumbering: numbering,
      };
      const names = [...bases.get(source)!];
      const measureOf = q.measures.find((m) => basesOf([m]).has(source)) ?? source;
      let sql: string;
      if (source === "attribution") {
        const { touch, conv } = splitAttributionFilter(q.filters);
        const refusal = (families: readonly Family[]) => (f: { field: string }) =>
          `filter field "${f.field}" cannot apply to attribution measures; fields of ${families.map((x) => `${x}.`).join(", ")} can`;
        sql = emitAttribution(ctx, {
          valueSource: "orders",
          eventName: "purchase",
          convWhere: compileFilter(conv, {
            binder,
            families: ["orders", "customers"],
            timezone,
            path: ["filters"],
            refusal: refusal(["orders", "customers"]),
          }),
          touchWhere: compileFilter(touch, {
            binder,
            families: ["attribution"],
            timezone,
            path: ["filters"],
          }),
        });
      } else {
        const families = SOURCE_FAMILIES[source];
        const where = compileFilter(q.filters, {
          binder,
          families,
          timezone,
          path: ["filters"],
          refusal: (f) =>
            `filter field "${f.field}" cannot apply to measure "${measureOf}"; it takes fields of ${families.map((x) => `${x}.`).join(", ")}`,
        });
        sql = emitFactSource(source, names, ctx, where);
      }
      statements.push({ source, period, sql, params: binder.params as Record<string, unknown> });
    }
  }
  return {
    measures: q.measures,
    dimensions: q.dimensions,
    timezone,
    currency,
    granularity: q.granularity,
    primary: { range: primaryRange, buckets: buckets(primaryRange, q.granularity, timezone) },
    ...(compareRange
      ? { compare: { range: compareRange, buckets: buckets(compareRange, q.granularity, timezone) } }
      : {}),
    statements,
    reportCosts,
    ...(q.order ? { order: q.order } : {}),
    limit: q.limit,
    offset: q.offset,
  };
}

const ENTITY_DIMENSIONS: Record<string, string> = {
  "attribution.campaign_id": "channel.campaign_id",
  "attribution.adset_id": "channel.adset_id",
  "attribution.ad_id": "channel.ad_id",
};

/** Plans `POST /db-mgmt/api/query-attribution`: the attribution statement, plus spend for ad-entity dimensions. */
export function planAttributionQuery(q: AttributionQuery, env: QueryEnvironment): QueryPlan {
  const def = FIELD_BY_NAME.get(q.dimension);
  if (def?.family !== "attribution")
    throw issue(
      ["dimension"],
      `dimension must be an attribution. field (attribution.channel, .source, .medium, .campaign, .campaign_id, .adset_id, .ad_id); got "${q.dimension}"`,
    );
  if (q.valueSource === "events" && !q.eventName)
    throw issue(["eventName"], "eventName is required when valueSource is events");
  const entity = ENTITY_DIMENSIONS[q.dimension];
  const measures =
    q.measures ??
    (entity
      ? ["attribution.orders", "attribution.revenue", "ads.spend", "attribution.roas", "attribution.cpa"]
      : ["attribution.orders", "attribution.revenue"]);
  measures.forEach((m, i) => {
    const known = MEASURE_BY_KEY.get(m);
    if (!known) throw issue(["measures", i], `unknown measure "${m}" (GET /db-mgmt/api/measures lists them)`);
    const sources = [...basesOf([m]).keys()];
    if (sources.some((s) => s !== "attribution" && !(s === "ads" && entity)))
      throw issue(
        ["measures", i],
        `measure "${m}" is not available in attribution queries by ${q.dimension}`,
      );
  });
  const timezone = q.timezone ?? env.accountTimezone;
  const currency = q.currency ?? "USD";
  const settings = mergedSettings(env, q.orderSettings);
  const primaryRange = resolveRange(q.dateRange, timezone, env.now, "dateRange");
  const compareRange = q.compareDateRange
    ? resolveRange(q.compareDateRange, timezone, env.now, "compareDateRange")
    : undefined;
  const { touch, conv } = splitAttributionFilter(q.filters);
  const convFamilies: Family[] = q.valueSource === "orders" ? ["orders", "customers"] : ["events"];
  const needsSpend = [...basesOf(measures).keys()].includes("ads");
  const statements: Statement[] = [];
  const numbering = needsNumbering(measures, q.filters, []);
  for (const [period, range] of [
    ["primary", primaryRange],
    ["compare", compareRange],
  ] as const) {
    if (!range) continue;
    const base = (binder: Binder, dimensions: string[]): EmitContext => ({
      binder,
      pixelId: q.pixelId,
      timezone,
      currency,
      granularity: q.granularity,
      range,
      orderSettings: settings,
      dimensions,
      attribution: { model: q.attributionModel, window: q.attributionWindow },
      needsCustomerNumbering: numbering,
    });
    const binder = new Binder();
    const sql = emitAttribution(base(binder, [q.dimension]), {
      valueSource: q.valueSource,
      eventName: q.eventName ?? "purchase",
      convWhere: compileFilter(conv, {
        binder,
        families: convFamilies,
        timezone,
        path: ["filters"],
        refusal: (f) =>
          `filter field "${f.field}" is not valid here; attribution queries take attribution. and ${convFamilies.map((x) => `${x}.`).join(", ")} fields`,
      }),
      touchWhere: compileFilter(touch, { binder, families: ["attribution"], timezone, path: ["filters"] }),
    });
    statements.push({ source: "attribution", period, sql, params: binder.params as Record<string, unknown> });
    if (needsSpend && entity) {
      const sb = new Binder();
      const spendSql = emitFactSource(
        "ads",
        [...(basesOf(measures).get("ads") ?? [])],
        base(sb, [entity]),
        "1",
      );
      statements.push({ source: "ads", period, sql: spendSql, params: sb.params as Record<string, unknown> });
    }
  }
  return {
    measures,
    dimensions: [q.dimension],
    timezone,
    currency,
    granularity: q.granularity,
    primary: { range: primaryRange, buckets: buckets(primaryRange, q.granularity, timezone) },
    ...(compareRange
      ? { compare: { range: compareRange, buckets: buckets(compareRange, q.granularity, timezone) } }
      : {}),
    statements,
    reportCosts: false,
    limit: 1000,
    offset: 0,
  };
}
