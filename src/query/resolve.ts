import type { OrderSettings } from "../accounts/schemas.js";
import { ValidationError } from "../errors.js";
import { DEFAULT_HALF_LIFE_DAYS } from "./attribution-models.js";
import { filterFields } from "./filters/compile.js";
import { type Family, FIELD_BY_NAME, type FieldDef } from "./filters/fields.js";
import { type ResolvedFilter, resolveFilter } from "./filters/resolve.js";
import type { Filter } from "./filters/schema.js";
import { basesOf, MEASURE_BY_KEY, type SourceName } from "./measures.js";
import type {
  AttributionQuery,
  ChannelQuery,
  CohortMeasure,
  CohortQuery,
  CreditedOrdersQuery,
  GeneralQuery,
} from "./schemas.js";
import { type AttributionChoice, SOURCE_FAMILIES } from "./sources/context.js";
import { type Granularity, type Instants, resolveRange } from "./time.js";

/**
 * The resolve step of every query endpoint: the request checked against the catalogs (measures,
 * dimensions, filter fields and operators) and normalized (timezone, currency, order settings,
 * relative dates → instants), with no SQL written. Every 400 a query can cause comes from here, so
 * `plan.ts` only prints what was resolved. The pipeline: schemas → resolve → plan (SQL per source)
 * → run (service) → shape.
 */

/** What normalization needs from outside the request (read by the service, passed in: no I/O here). */
export interface QueryEnvironment {
  accountTimezone: string;
  storedOrderSettings: OrderSettings;
  now: Date;
}

/** A 400 naming the request field at `path`. */
export const issue = (path: (string | number)[], message: string) =>
  new ValidationError([{ message, key: String(path[0]), path: path.map(String) }], message);

export interface Periods {
  primary: Instants;
  compare?: Instants;
}

export type { AttributionChoice };

/** The attribution choice of any query that takes one; the half-life defaults for every model. */
export function attributionChoice(q: {
  attributionModel: AttributionChoice["model"];
  attributionWindow: number;
  attributionHalfLifeDays?: number | undefined;
}): AttributionChoice {
  return {
    model: q.attributionModel,
    window: q.attributionWindow,
    halfLifeDays: q.attributionHalfLifeDays ?? DEFAULT_HALF_LIFE_DAYS,
  };
}

/** What every resolved query carries. */
interface Resolved {
  pixelId: string;
  timezone: string;
  currency: string;
  settings: OrderSettings;
  periods: Periods;
}

/** A fact source of a general query with its base aggregates and its part of the filter. */
export type SourcePart =
  | { source: Exclude<SourceName, "attribution">; names: string[]; where: ResolvedFilter | undefined }
  | {
      source: "attribution";
      names: string[];
      conv: ResolvedFilter | undefined;
      touch: ResolvedFilter | undefined;
    };

export interface ResolvedGeneral extends Resolved {
  measures: string[];
  dimensions: string[];
  granularity: Granularity;
  attribution: AttributionChoice;
  numbering: boolean;
  parts: SourcePart[];
  reportCosts: boolean;
  order?: { measure: string; direction: "asc" | "desc" };
  limit: number;
  offset: number;
}

export interface ResolvedAttribution extends Resolved {
  measures: string[];
  dimension: string;
  /** The `channel.` field spend is joined on, for ad-entity dimensions. */
  entity: string | undefined;
  granularity: Granularity;
  attribution: AttributionChoice;
  numbering: boolean;
  valueSource: "orders" | "events";
  eventName: string;
  conv: ResolvedFilter | undefined;
  touch: ResolvedFilter | undefined;
  /** Base aggregates of spend when a measure needs it (ad-entity dimensions only). */
  spend: string[] | null;
}

export interface ResolvedCreditedOrders extends Resolved {
  dimension: string;
  attribution: AttributionChoice;
  numbering: boolean;
  conv: ResolvedFilter | undefined;
  touch: ResolvedFilter | undefined;
  /** The dimension value whose orders are listed (`(none)`, `(not set)` included). */
  value: string;
  limit: number;
  offset: number;
}

export interface ResolvedChannel extends Omit<Resolved, "periods"> {
  /** Present with measures only: a page of entities alone has no range. */
  periods?: Periods;
  query: ChannelQuery;
  level: "account" | "campaign" | "adset" | "ad";
  /** The channel filter of the entity page (and of the ads measures). */
  where: ResolvedFilter | undefined;
}

export interface ResolvedCohorts extends Resolved {
  granularity: "week" | "month";
  periodsAhead: number;
  measures: CohortMeasure[];
  where: ResolvedFilter | undefined;
  now: Date;
}

const mergedSettings = (
  env: QueryEnvironment,
  override: Partial<OrderSettings> | undefined,
): OrderSettings => ({
  ...env.storedOrderSettings,
  ...(override ?? {}),
});

/** The primary range and the compare range (when asked), in the query timezone. */
export function resolvePeriods(
  q: {
    dateRange: { start: string; end: string };
    compareDateRange?: { start: string; end: string } | undefined;
  },
  timezone: string,
  now: Date,
): Periods {
  const primary = resolveRange(q.dateRange, timezone, now, "dateRange");
  const compare = q.compareDateRange
    ? resolveRange(q.compareDateRange, timezone, now, "compareDateRange")
    : undefined;
  return compare ? { primary, compare } : { primary };
}

/** What every resolved query shares. It resolves the ranges, so it runs after the catalog checks. */
function shared(
  q: {
    pixelId: string;
    currency?: string | undefined;
    orderSettings?: Partial<OrderSettings> | undefined;
    dateRange: { start: string; end: string };
    compareDateRange?: { start: string; end: string } | undefined;
  },
  timezone: string,
  env: QueryEnvironment,
): Resolved {
  return {
    pixelId: q.pixelId,
    timezone,
    currency: q.currency ?? "USD",
    settings: mergedSettings(env, q.orderSettings),
    periods: resolvePeriods(q, timezone, env.now),
  };
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

function checkDimensions(dims: readonly string[], sources: readonly SourceName[]) {
  dims.forEach((d, i) => {
    const def = FIELD_BY_NAME.get(d);
    if (!def)
      throw issue(["dimensions", i], `unknown dimension "${d}" (GET /db-mgmt/api/filters lists the fields)`);
    for (const s of sources) {
      if (!SOURCE_FAMILIES[s].includes(def.family))
        throw issue(["dimensions", i], `dimension "${d}" cannot split the ${s} measures of this query`);
    }
  });
  if (dims.filter((d) => d.startsWith("attribution.")).length > 1)
    throw issue(["dimensions"], "at most one attribution. dimension");
}

/** Whether a measure needs the account's variable or fixed cost lines (report-time costs). */
function needsReportCosts(measure: string): boolean {
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
  return walk(measure);
}

const familyList = (families: readonly Family[]) => families.map((x) => `${x}.`).join(", ");

/** Resolves `POST /db-mgmt/api/query`. Pure: the same request and environment resolve the same. */
export function resolveGeneral(q: GeneralQuery, env: QueryEnvironment): ResolvedGeneral {
  q.measures.forEach((m, i) => {
    if (!MEASURE_BY_KEY.has(m))
      throw issue(["measures", i], `unknown measure "${m}" (GET /db-mgmt/api/measures lists them)`);
  });
  if (q.order && !q.measures.includes(q.order.measure))
    throw issue(["order", "measure"], `order.measure must be one of the query's measures`);
  const timezone = q.timezone ?? env.accountTimezone;
  const bases = basesOf(q.measures);
  const sources = [...bases.keys()];
  checkDimensions(q.dimensions, sources);
  const reportCosts = q.measures.some(needsReportCosts);
  if (reportCosts && q.dimensions.length)
    throw issue(
      ["dimensions"],
      "variable and fixed costs belong to the account and cannot be split by a dimension",
    );
  const base = shared(q, timezone, env);
  const parts = sources.map((source): SourcePart => {
    const names = [...bases.get(source)!];
    if (source === "attribution")
      return {
        source,
        names,
        ...attributionSides(
          q.filters,
          "orders",
          timezone,
          (field, families) =>
            `filter field "${field}" cannot apply to attribution measures; fields of ${families} can`,
        ),
      };
    const families = SOURCE_FAMILIES[source];
    const measureOf = q.measures.find((m) => basesOf([m]).has(source)) ?? source;
    return {
      source,
      names,
      where: resolveFilter(q.filters, {
        families,
        timezone,
        path: ["filters"],
        refusal: (f: FieldDef) =>
          `filter field "${f.field}" cannot apply to measure "${measureOf}"; it takes fields of ${familyList(families)}`,
      }),
    };
  });
  return {
    ...base,
    measures: q.measures,
    dimensions: q.dimensions,
    granularity: q.granularity,
    attribution: attributionChoice(q),
    numbering: needsNumbering(q.measures, q.filters, q.dimensions),
    parts,
    reportCosts,
    ...(q.order ? { order: q.order } : {}),
    limit: q.limit,
    offset: q.offset,
  };
}

/** `attribution.<entity>_id` dimensions → the `channel.` field their spend is grouped by. */
const ENTITY_DIMENSIONS: Record<string, string> = {
  "attribution.campaign_id": "channel.campaign_id",
  "attribution.adset_id": "channel.adset_id",
  "attribution.ad_id": "channel.ad_id",
};

function checkAttributionDimension(dimension: string) {
  if (FIELD_BY_NAME.get(dimension)?.family !== "attribution")
    throw issue(
      ["dimension"],
      `dimension must be an attribution. field (attribution.channel, .source, .medium, .campaign, .campaign_id, .adset_id, .ad_id); got "${dimension}"`,
    );
}

/** An attribution filter split into the conversions' side and the touches' side, each resolved. */
function attributionSides(
  filters: Filter | undefined,
  valueSource: "orders" | "events",
  timezone: string,
  refusal = (field: string, families: string) =>
    `filter field "${field}" is not valid here; attribution queries take attribution. and ${families} fields`,
): { conv: ResolvedFilter | undefined; touch: ResolvedFilter | undefined } {
  const { touch, conv } = splitAttributionFilter(filters);
  const convFamilies: Family[] = valueSource === "orders" ? ["orders", "customers"] : ["events"];
  return {
    conv: resolveFilter(conv, {
      families: convFamilies,
      timezone,
      path: ["filters"],
      refusal: (f) => refusal(f.field, familyList(convFamilies)),
    }),
    touch: resolveFilter(touch, { families: ["attribution"], timezone, path: ["filters"] }),
  };
}

/** Resolves `POST /db-mgmt/api/query-attribution`. */
export function resolveAttribution(q: AttributionQuery, env: QueryEnvironment): ResolvedAttribution {
  checkAttributionDimension(q.dimension);
  if (q.valueSource === "events" && !q.eventName)
    throw issue(["eventName"], "eventName is required when valueSource is events");
  const entity = ENTITY_DIMENSIONS[q.dimension];
  const measures =
    q.measures ??
    (entity
      ? ["attribution.orders", "attribution.revenue", "ads.spend", "attribution.roas", "attribution.cpa"]
      : ["attribution.orders", "attribution.revenue"]);
  measures.forEach((m, i) => {
    if (!MEASURE_BY_KEY.has(m))
      throw issue(["measures", i], `unknown measure "${m}" (GET /db-mgmt/api/measures lists them)`);
    const sources = [...basesOf([m]).keys()];
    if (sources.some((s) => s !== "attribution" && !(s === "ads" && entity)))
      throw issue(
        ["measures", i],
        `measure "${m}" is not available in attribution queries by ${q.dimension}`,
      );
  });
  const timezone = q.timezone ?? env.accountTimezone;
  const base = shared(q, timezone, env);
  const bases = basesOf(measures);
  return {
    ...base,
    measures,
    dimension: q.dimension,
    entity,
    granularity: q.granularity,
    attribution: attributionChoice(q),
    numbering: needsNumbering(measures, q.filters, []),
    valueSource: q.valueSource,
    eventName: q.eventName ?? "purchase",
    ...attributionSides(q.filters, q.valueSource, timezone),
    spend: bases.has("ads") && entity ? [...(bases.get("ads") ?? [])] : null,
  };
}

/** Resolves `POST /db-mgmt/api/query-attribution/orders`: an attribution query of orders, and a page. */
export function resolveCreditedOrders(q: CreditedOrdersQuery, env: QueryEnvironment): ResolvedCreditedOrders {
  checkAttributionDimension(q.dimension);
  const timezone = q.timezone ?? env.accountTimezone;
  return {
    ...shared(q, timezone, env),
    dimension: q.dimension,
    attribution: attributionChoice(q),
    numbering: needsNumbering([], q.filters, []),
    ...attributionSides(q.filters, "orders", timezone),
    value: q.dimensionValue,
    limit: q.limit,
    offset: q.offset,
  };
}

/** The id column an entity of each level is known by in metrics and touches. */
export const LEVEL_FIELD = {
  account: { channel: "channel.account_id", touch: null },
  campaign: { channel: "channel.campaign_id", touch: "attribution.campaign_id" },
  adset: { channel: "channel.adset_id", touch: "attribution.adset_id" },
  ad: { channel: "channel.ad_id", touch: "attribution.ad_id" },
} as const;

/** Resolves `POST /db-mgmt/api/query-channel-details`. */
export function resolveChannel(q: ChannelQuery, env: QueryEnvironment): ResolvedChannel {
  if (q.compareDateRange && !q.measures) throw issue(["compareDateRange"], "compareDateRange needs measures");
  if (q.measures && !q.dateRange) throw issue(["dateRange"], "dateRange is required with measures");
  if (q.measures && (q.granularity === "second" || q.granularity === "minute"))
    throw issue(["granularity"], "measures are bucketed by hour at the finest; use hour or coarser");
  const level = q.level ?? "account";
  q.measures?.forEach((m, i) => {
    if (!MEASURE_BY_KEY.has(m)) throw issue(["measures", String(i)], `unknown measure "${m}"`);
    const sources = [...basesOf([m]).keys()];
    const ok = sources.every((s) => s === "ads" || (s === "attribution" && LEVEL_FIELD[level].touch));
    if (!ok) throw issue(["measures", String(i)], `measure "${m}" is not available per ${level}`);
  });
  const timezone = q.timezone ?? env.accountTimezone;
  const where = resolveFilter(q.filters, { families: ["channel"], timezone, path: ["filters"] });
  return {
    pixelId: q.pixelId,
    timezone,
    currency: q.currency ?? "USD",
    settings: env.storedOrderSettings,
    ...(q.measures && q.dateRange
      ? {
          periods: resolvePeriods(
            { dateRange: q.dateRange, compareDateRange: q.compareDateRange },
            timezone,
            env.now,
          ),
        }
      : {}),
    query: q,
    level,
    where,
  };
}

/** Resolves `POST /db-mgmt/api/query-cohort-analysis`. */
export function resolveCohorts(q: CohortQuery, env: QueryEnvironment): ResolvedCohorts {
  for (const [i, f] of filterFields(q.filters).entries()) {
    if (!f.startsWith("orders.")) {
      throw issue(["filters", i], `cohorts take orders. filter fields; got "${f}"`);
    }
  }
  const timezone = q.timezone ?? env.accountTimezone;
  return {
    ...shared(q, timezone, env),
    granularity: q.cohortGranularity,
    periodsAhead: q.periods,
    measures: q.measures,
    where: resolveFilter(q.filters, { families: ["orders"], timezone, path: ["filters"] }),
    now: env.now,
  };
}
