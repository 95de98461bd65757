import { countedKinds } from "../derived/customer-hours.js";
import { formatDateTime, type Params } from "../stores/warehouse/port.js";
import type { AttributionModel } from "./attribution-models.js";
import { Binder } from "./binder.js";
import { FIELD_BY_NAME } from "./filters/fields.js";
import { printFilter } from "./filters/print.js";
import type { ResolvedFilter } from "./filters/resolve.js";
import { basesOf, type SourceName } from "./measures.js";
import {
  attributionChoice,
  LEVEL_FIELD,
  type Periods,
  type QueryEnvironment,
  type ResolvedAttribution,
  type ResolvedChannel,
  type ResolvedCohorts,
  type ResolvedGeneral,
  resolveAttribution,
  resolveGeneral,
} from "./resolve.js";
import type { AttributionQuery, CohortMeasure, GeneralQuery } from "./schemas.js";
import { type AttributionSpec, type DerivedTouches, emitAttribution } from "./sources/attribution.js";
import {
  COHORT_CUSTOMERS,
  COHORT_ORDERS,
  COHORT_ORDERS_FROM,
  COHORT_SLOT,
  cohortCellsAnswer,
  emitCohortCells,
  emitCohorts,
} from "./sources/cohorts.js";
import type { EmitContext } from "./sources/context.js";
import { creditShapeKey, creditShapeOf } from "./sources/credit-cells.js";
import { emitCustomersFromHours, type FreshCustomers } from "./sources/customers.js";
import { emitEntityPage } from "./sources/entities.js";
import {
  CUSTOMERS_BASE,
  convertsMoney,
  emitFactSource,
  emitFactSources,
  type FactSourceName,
  rollupServes,
} from "./sources/facts.js";
import { type Bucket, buckets, type Granularity, type Instants } from "./time.js";

/**
 * The plan step: a resolved query (`resolve.ts`) printed as one statement per fact source (both
 * periods in one when there is a compare period that does not overlap the range; the small
 * converting ones over the hourly rollups shared, see `sharedStatement`) and one per attribution part
 * and period. Nothing here refuses a request — resolution did — and nothing does I/O.
 */

/** What a derived form reads raw because it is past the watermark (`Fresh`, derived/fresh-ids.ts). */
export type FreshKind = "ids" | "hours" | "customers" | "refundHours" | "creditHours";

/** One SQL statement to run: plain data, so `?explain=true` can return it as is. */
export interface Statement {
  /** The fact source it answers; a statement shared by several names them all in `sources`. */
  source: SourceName;
  sources?: SourceName[];
  /**
   * A shared statement's sources each in a statement of its own, with their own derived forms: what
   * the service runs instead when the shared derived form cannot run (a fresh set unknown, or
   * `?derived=false`), so that raw reads of orders and refunds still run side by side.
   */
  split?: Statement[];
  /** `both`: the statement answers the range and the compare period; its rows carry `period` (0 | 1). */
  period: "primary" | "compare" | "both";
  sql: string;
  params: Params;
  /**
   * The same statement answered from the derived tables where they are current (docs/derived-tables.md):
   * the same rows, so the service may run either. `freshParam` names the parameter the service sets to
   * what is past the watermark (bound to [] here): the stored ids of identities (`ids`), the hours
   * with order rows (`hours`), the customers on such rows (`customers`, with the hours in
   * `moreFresh`), or the refund hours with refund or order rows (`refundHours`); a statement over
   * several rollups lists the others' in `moreFresh`. `current`, when present, is the derived form for
   * when every fresh set is empty: nothing past the watermark, so the derived tables alone, without
   * the raw branches.
   */
  derived?: {
    sql: string;
    params: Params;
    freshParam: string;
    fresh: FreshKind;
    /** Further fresh sets the form reads, each bound to its parameter (bound to [] here). */
    moreFresh?: { fresh: FreshKind; param: string }[];
    current?: { sql: string; params: Params };
  };
  /**
   * The same statement from a shape's credit cells (docs/derived-tables.md, "credit_cells"): `shape`,
   * its key, and the forms, run like `derived` once the shape is built (until then `derived` runs).
   */
  cells?: { shape: string; derived: NonNullable<Statement["derived"]> };
}

/**
 * An attribution statement in all its forms: `emit` prints it with its own binder, over raw data or
 * (orders-valued conversions only) the derived tables.
 */
export function attributionStatement(
  period: "primary" | "compare",
  valueSource: "orders" | "events",
  emit: (binder: Binder, derived: DerivedTouches | undefined) => string,
): Statement {
  const raw = new Binder();
  const sql = emit(raw, undefined);
  if (valueSource !== "orders") return { source: "attribution", period, sql, params: raw.params };
  return {
    source: "attribution",
    period,
    sql,
    params: raw.params,
    derived: derivedForms("ids", (binder, fresh) => emit(binder, { fresh })),
  };
}

/**
 * The attribution aggregate (`emitAttribution`) in all its forms: those of `attributionStatement`
 * and, where a shape's credit cells can answer it (`creditShapeOf`), the cells' (`cells`; the
 * service runs that form once the shape is built).
 */
function attributionAggregate(
  period: "primary" | "compare",
  ctx: (binder: Binder) => EmitContext,
  spec: (binder: Binder) => AttributionSpec,
): Statement {
  const emit = (binder: Binder, options: Parameters<typeof emitAttribution>[2]) =>
    emitAttribution(ctx(binder), spec(binder), options);
  const probe = new Binder();
  const s = spec(probe);
  const statement = attributionStatement(period, s.valueSource, (binder, derived) =>
    emit(binder, derived ? { derived } : {}),
  );
  const shape = statement.derived ? creditShapeOf(ctx(probe), s) : null;
  return shape ? { ...statement, cells: cellForms(creditShapeKey(shape), emit) } : statement;
}

/**
 * The credit-cells forms of an attribution statement: with the hours credited conversion by
 * conversion (`creditHours`) and the fresh ids they read raw as parameters, and `current`, the cells
 * alone, for when nothing is past the watermark.
 */
function cellForms(
  shape: string,
  emit: (binder: Binder, options: Parameters<typeof emitAttribution>[2]) => string,
): NonNullable<Statement["cells"]> {
  const d = new Binder();
  const ids = d.bind([], "Array(String)");
  const hours = d.bind([], "Array(DateTime64(3, 'UTC'))");
  const sql = emit(d, { derived: { fresh: ids }, cells: { shape: d.bind(shape, "String"), hours } });
  const c = new Binder();
  const current = emit(c, {
    derived: { fresh: null },
    cells: { shape: c.bind(shape, "String"), hours: null },
  });
  return {
    shape,
    derived: {
      sql,
      params: d.params,
      freshParam: paramName(hours),
      fresh: "creditHours",
      moreFresh: [{ fresh: "ids", param: paramName(ids) }],
      current: { sql: current, params: c.params },
    },
  };
}

/**
 * A statement's derived forms, each printed by `emit` with its own binder: with the fresh ids or
 * hours as a parameter (bound empty here, set by the service), and `current`, printed with no fresh
 * placeholder (null) for when nothing is past the watermark.
 */
function derivedForms(
  fresh: "ids" | "hours" | "refundHours",
  emit: (binder: Binder, fresh: string | null) => string,
): NonNullable<Statement["derived"]> {
  const d = new Binder();
  const placeholder = d.bind([], fresh === "ids" ? "Array(String)" : "Array(DateTime64(3, 'UTC'))");
  const sql = emit(d, placeholder);
  const c = new Binder();
  const current = { sql: emit(c, null), params: c.params };
  return { sql, params: d.params, freshParam: paramName(placeholder), fresh, current };
}

/**
 * The derived forms of the distinct-customers statement: with the fresh customers and hours as
 * parameters (bound empty here, set by the service), and `current` for nothing past the watermark.
 */
function customersForms(
  emit: (binder: Binder, fresh: FreshCustomers | null) => string,
): NonNullable<Statement["derived"]> {
  const d = new Binder();
  const customers = d.bind([], "Array(String)");
  const hours = d.bind([], "Array(DateTime64(3, 'UTC'))");
  const sql = emit(d, { customers, hours });
  const c = new Binder();
  const current = { sql: emit(c, null), params: c.params };
  return {
    sql,
    params: d.params,
    freshParam: paramName(customers),
    fresh: "customers",
    moreFresh: [{ fresh: "hours", param: paramName(hours) }],
    current,
  };
}

/** The name of a bound placeholder (`{p3:Array(String)}` → `p3`). */
const paramName = (placeholder: string) => placeholder.slice(1, placeholder.indexOf(":"));

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
  /**
   * Bases whose values over the dimension values partition one total (attributed orders and revenue
   * under a model that credits each conversion once in all): rounded by largest remainder so the
   * rounded rows add up to the rounded total.
   */
  apportion?: string[];
  order?: { measure: string; direction: "asc" | "desc" };
  limit: number;
  offset: number;
}

/** any_click credits every touched value in full, so its rows add up to more than the total. */
const apportioned = (dimensions: readonly string[], model: AttributionModel) =>
  model !== "any_click" && dimensions.some((d) => d.startsWith("attribution."))
    ? { apportion: ["attr_orders", "attr_revenue"] }
    : {};

const periodsOf = (p: Periods) =>
  [
    ["primary", p.primary],
    ["compare", p.compare],
  ] as const;

/** The time frame of a plan: each period's range and its buckets. */
function frame(periods: Periods, granularity: Granularity, timezone: string) {
  return {
    primary: { range: periods.primary, buckets: buckets(periods.primary, granularity, timezone) },
    ...(periods.compare
      ? { compare: { range: periods.compare, buckets: buckets(periods.compare, granularity, timezone) } }
      : {}),
  };
}

/**
 * Whether the fact sources answer both periods in one statement: each statement has a fixed cost
 * (its plan, the FINAL reads, the rate joins) that two periods then pay once. Overlapping periods
 * stay apart, since a row in both would have to count twice.
 */
const oneStatementForBoth = (p: Periods): p is Periods & { compare: Instants } =>
  p.compare !== undefined && (p.compare.end <= p.primary.start || p.compare.start >= p.primary.end);

/** A fact source's statement that may share one with others (see `sharedStatement`). */
interface SharedPart {
  source: FactSourceName;
  names: readonly string[];
  where: ResolvedFilter | undefined;
  /** Served by its hourly rollup (its derived form reads it). */
  rollup: boolean;
  /** Its statement on its own (in the plan until a shared one replaces it). */
  alone: Statement;
}

/**
 * The small converting statements of one period — over the hourly rollups, and ad spend — as one
 * (`emitFactSources`): each such statement spends most of its time being planned, which one statement
 * pays once. Its derived form reads each rollup with that rollup's fresh hours. Where that form cannot
 * run, the service runs the statements it replaces (`split`): raw reads of orders and refunds are
 * bound by their reads, not their plans, and run better side by side on the readers. Its own raw SQL
 * (every source from raw data in one statement, the same rows) is what `?explain=true` shows.
 */
function sharedStatement(
  parts: readonly SharedPart[],
  ctx: (binder: Binder) => EmitContext,
  period: Statement["period"],
): Statement {
  const raw = new Binder();
  const sql = emitFactSources(
    parts.map((x) => ({ source: x.source, bases: x.names, where: printFilter(x.where, raw) })),
    ctx(raw),
  );
  const form = (b: Binder, fresh: (x: SharedPart) => string | null) =>
    emitFactSources(
      parts.map((x) =>
        x.rollup
          ? { source: x.source, bases: x.names, where: "1", rollup: { freshHours: fresh(x) } }
          : { source: x.source, bases: x.names, where: printFilter(x.where, b) },
      ),
      ctx(b),
    );
  const d = new Binder();
  const placeholders = new Map<FactSourceName, { fresh: FreshKind; placeholder: string }>();
  for (const x of parts)
    if (x.rollup)
      placeholders.set(x.source, {
        fresh: x.source === "refunds" ? "refundHours" : "hours",
        placeholder: d.bind([], "Array(DateTime64(3, 'UTC'))"),
      });
  const derivedSql = form(d, (x) => placeholders.get(x.source)!.placeholder);
  const c = new Binder();
  const current = { sql: form(c, () => null), params: c.params };
  const [first, ...more] = [...placeholders.values()];
  return {
    source: parts[0]!.source,
    sources: parts.map((x) => x.source),
    split: parts.map((x) => x.alone),
    period,
    sql,
    params: raw.params,
    derived: {
      sql: derivedSql,
      params: d.params,
      freshParam: paramName(first!.placeholder),
      fresh: first!.fresh,
      ...(more.length
        ? { moreFresh: more.map((m) => ({ fresh: m.fresh, param: paramName(m.placeholder) })) }
        : {}),
      current,
    },
  };
}

/** Plans `POST /db-mgmt/api/query`. Pure: the same resolved query gives the same plan. */
export function planGeneral(r: ResolvedGeneral): QueryPlan {
  const statements: Statement[] = [];
  const both = oneStatementForBoth(r.periods);
  for (const [period, range] of periodsOf(r.periods)) {
    if (!range) continue;
    // Small converting statements (over the hourly rollups, and ad spend) that may share one.
    const shared: SharedPart[] = [];
    let sharedCtx: { ctx: (binder: Binder) => EmitContext; period: Statement["period"] } | undefined;
    for (const part of r.parts) {
      // The compare period of a fact source is answered by the primary's statement.
      if (both && period === "compare" && part.source !== "attribution") continue;
      const compareRange = both && part.source !== "attribution" ? { compareRange: r.periods.compare } : {};
      const ctx = (binder: Binder): EmitContext => ({
        binder,
        pixelId: r.pixelId,
        timezone: r.timezone,
        currency: r.currency,
        granularity: r.granularity,
        range,
        orderSettings: r.settings,
        dimensions: r.dimensions,
        attribution: r.attribution,
        needsCustomerNumbering: r.numbering,
        ...compareRange,
      });
      if (part.source === "attribution") {
        statements.push(
          attributionAggregate(period, ctx, (binder) => ({
            valueSource: "orders",
            eventName: "purchase",
            convWhere: printFilter(part.conv, binder),
            touchWhere: printFilter(part.touch, binder),
          })),
        );
        continue;
      }
      const statementPeriod = "compareRange" in compareRange ? "both" : period;
      const raw = (names: readonly string[]): Statement => {
        const binder = new Binder();
        const sql = emitFactSource(part.source, names, ctx(binder), printFilter(part.where, binder));
        return { source: part.source, period: statementPeriod, sql, params: binder.params };
      };
      sharedCtx = { ctx, period: statementPeriod };
      if (!rollupServes(part.source, part.names, ctx(new Binder()), part.where !== undefined)) {
        const alone = raw(part.names);
        statements.push(alone);
        if (part.source === "ads" && convertsMoney("ads", part.names))
          shared.push({ source: part.source, names: part.names, where: part.where, rollup: false, alone });
        continue;
      }
      // Served by the derived tables: distinct customers from customer_hours in a statement of their
      // own (a count there, a hash set over the rollup's hours), the rest from the source's hourly rollup.
      const sums = part.names.filter((n) => n !== CUSTOMERS_BASE);
      if (sums.length > 0) {
        const alone: Statement = {
          ...raw(sums),
          derived: derivedForms(part.source === "refunds" ? "refundHours" : "hours", (b, freshHours) =>
            emitFactSource(part.source, sums, ctx(b), "1", { freshHours }),
          ),
        };
        statements.push(alone);
        if (convertsMoney(part.source, sums))
          shared.push({ source: part.source, names: sums, where: part.where, rollup: true, alone });
      }
      if (sums.length < part.names.length) {
        statements.push({
          ...raw([CUSTOMERS_BASE]),
          derived: customersForms((b, fresh) => emitCustomersFromHours(ctx(b), fresh)),
        });
      }
    }
    // The shared statement takes the place of the first it replaces.
    if (shared.some((x) => x.rollup) && shared.length > 1 && sharedCtx) {
      const at = statements.indexOf(shared[0]!.alone);
      const replaced = new Set(shared.map((x) => x.alone));
      const kept = statements.filter((st) => !replaced.has(st));
      kept.splice(at, 0, sharedStatement(shared, sharedCtx.ctx, sharedCtx.period));
      statements.splice(0, statements.length, ...kept);
    }
  }
  return {
    measures: r.measures,
    dimensions: r.dimensions,
    timezone: r.timezone,
    currency: r.currency,
    granularity: r.granularity,
    ...frame(r.periods, r.granularity, r.timezone),
    statements,
    reportCosts: r.reportCosts,
    ...apportioned(r.dimensions, r.attribution.model),
    ...(r.order ? { order: r.order } : {}),
    limit: r.limit,
    offset: r.offset,
  };
}

/** Resolve then plan `POST /db-mgmt/api/query`. */
export const planGeneralQuery = (q: GeneralQuery, env: QueryEnvironment): QueryPlan =>
  planGeneral(resolveGeneral(q, env));

/** Plans `POST /db-mgmt/api/query-attribution`: the attribution statement, plus spend for ad-entity dimensions. */
export function planAttribution(r: ResolvedAttribution): QueryPlan {
  const statements: Statement[] = [];
  for (const [period, range] of periodsOf(r.periods)) {
    if (!range) continue;
    const base = (binder: Binder, dimensions: string[]): EmitContext => ({
      binder,
      pixelId: r.pixelId,
      timezone: r.timezone,
      currency: r.currency,
      granularity: r.granularity,
      range,
      orderSettings: r.settings,
      dimensions,
      attribution: r.attribution,
      needsCustomerNumbering: r.numbering,
    });
    statements.push(
      attributionAggregate(
        period,
        (binder) => base(binder, [r.dimension]),
        (binder) => ({
          valueSource: r.valueSource,
          eventName: r.eventName,
          convWhere: printFilter(r.conv, binder),
          touchWhere: printFilter(r.touch, binder),
        }),
      ),
    );
    if (r.spend && r.entity) {
      const sb = new Binder();
      const spendSql = emitFactSource("ads", r.spend, base(sb, [r.entity]), "1");
      statements.push({ source: "ads", period, sql: spendSql, params: sb.params });
    }
  }
  return {
    measures: r.measures,
    dimensions: [r.dimension],
    timezone: r.timezone,
    currency: r.currency,
    granularity: r.granularity,
    ...frame(r.periods, r.granularity, r.timezone),
    statements,
    reportCosts: false,
    ...apportioned([r.dimension], r.attribution.model),
    limit: 1000,
    offset: 0,
  };
}

/** Resolve then plan `POST /db-mgmt/api/query-attribution`. */
export const planAttributionQuery = (q: AttributionQuery, env: QueryEnvironment): QueryPlan =>
  planAttribution(resolveAttribution(q, env));

/** The page of ad entities: one statement over ad_entities with the channel filter, sorted and paged. */
export function planEntityPage(r: ResolvedChannel): { sql: string; params: Params } {
  const b = new Binder();
  const where = printFilter(r.where, b);
  return { sql: emitEntityPage(b, r.query, r.level, where), params: b.params };
}

/** Measures of the page's entities: ads metrics by the level's id, attribution by the touch's id. */
export function planChannelMeasures(r: ResolvedChannel, entityIds: string[]): QueryPlan {
  const q = r.query;
  const measures = q.measures ?? [];
  const granularity = q.granularity === "second" || q.granularity === "minute" ? "none" : q.granularity;
  const periods = r.periods!;
  const bases = basesOf(measures);
  const idField = LEVEL_FIELD[r.level].channel;
  // The page's ids join the request's channel filter (as its last and-branch).
  const ids: ResolvedFilter = {
    field: FIELD_BY_NAME.get(idField)!,
    op: "in",
    negated: false,
    value: { kind: "text_list", values: entityIds },
  };
  const adsWhere: ResolvedFilter = { and: [...(r.where ? [r.where] : []), ids] };
  const statements: Statement[] = [];
  for (const [period, range] of periodsOf(periods)) {
    if (!range) continue;
    const ctx = (binder: Binder, dimension: string): EmitContext => ({
      binder,
      pixelId: r.pixelId,
      timezone: r.timezone,
      currency: r.currency,
      granularity,
      range,
      orderSettings: r.settings,
      dimensions: [dimension],
      attribution: attributionChoice(q),
      needsCustomerNumbering: false,
    });
    if (bases.has("ads")) {
      const b = new Binder();
      const where = printFilter(adsWhere, b);
      const sql = emitFactSource("ads", [...bases.get("ads")!], ctx(b, idField), where);
      statements.push({ source: "ads", period, sql, params: b.params });
    }
    const touch = LEVEL_FIELD[r.level].touch;
    if (bases.has("attribution") && touch) {
      statements.push(
        attributionAggregate(
          period,
          (b) => ctx(b, touch),
          () => ({
            valueSource: "orders",
            eventName: "purchase",
            convWhere: "1",
            // Credit is decided over every touch (filtering touches to the page would move credit).
            touchWhere: "1",
            // The rows are ad entities: conversions credited to none are never read.
            touchedOnly: true,
          }),
        ),
      );
    }
  }
  return {
    measures,
    dimensions: [idField],
    timezone: r.timezone,
    currency: r.currency,
    granularity,
    ...frame(periods, granularity, r.timezone),
    statements,
    reportCosts: false,
    limit: Number.MAX_SAFE_INTEGER,
    offset: 0,
  };
}

export interface CohortPlan {
  range: Instants;
  cohorts: Bucket[];
  periods: number;
  granularity: "week" | "month";
  measures: CohortMeasure[];
  now: string;
  sql: string;
  params: Params;
  /**
   * Where the cohort cells can answer (docs/derived-tables.md, "cohort_cells"): their form with the
   * correction (`sql`, run with the build's slot, cutoff and customers bound) and without (`current`,
   * the slot alone), for the timezone and counted kinds the build must cover.
   */
  derived?: { sql: string; current: string; params: Params; timezone: string; mask: number; end: string };
}

/** A cohort plan as one statement with its derived forms, as `?explain=true` lists statements. */
export function cohortStatement(plan: CohortPlan): {
  source: "orders";
  period: "primary";
  sql: string;
  params: Params;
  derived?: { sql: string; params: Params; current: { sql: string; params: Params } };
} {
  const d = plan.derived;
  return {
    source: "orders",
    period: "primary",
    sql: plan.sql,
    params: plan.params,
    ...(d
      ? { derived: { sql: d.sql, params: d.params, current: { sql: d.current, params: d.params } } }
      : {}),
  };
}

/**
 * Cohorts (docs/query.md): a customer enters the cohort of their first counted order (all time,
 * filters applied) when it falls in the range; period k of a cohort is the k-th calendar week or
 * month from the cohort's start, in the query timezone (period 0 = the acquisition period).
 */
export function planCohorts(r: ResolvedCohorts): CohortPlan {
  const b = new Binder();
  const range = r.periods.primary;
  const sql = emitCohorts(b, r, range);
  let derived: CohortPlan["derived"];
  if (cohortCellsAnswer(r, range, r.now)) {
    const d = new Binder();
    const forms = emitCohortCells(d, r, range);
    derived = {
      ...forms,
      // Placeholders until the service binds the build's: the explained forms run as they are.
      params: {
        ...d.params,
        [COHORT_SLOT]: 0,
        [COHORT_CUSTOMERS]: [],
        [COHORT_ORDERS]: [],
        [COHORT_ORDERS_FROM]: formatDateTime(new Date(0)),
      },
      timezone: r.timezone,
      mask: countedKinds(r.settings),
      end: formatDateTime(range.end),
    };
  }
  return {
    range,
    cohorts: buckets(range, r.granularity, r.timezone),
    periods: r.periodsAhead,
    granularity: r.granularity,
    measures: r.measures,
    now: r.now.toISOString(),
    sql,
    params: b.params,
    ...(derived ? { derived } : {}),
  };
}
