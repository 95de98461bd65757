/**
 * The table of requests whose compiled SQL is pinned in test/golden/query/*.sql, and how a case is
 * compiled and rendered. Shared by the golden test (test/unit/query-golden.test.ts) and the engine
 * check (test/integration/query-golden-engine.test.ts), so both always see the same statements.
 *
 * Every case runs the pure planning functions the service calls, with the request parsed by the
 * endpoint's schema (defaults applied) and a fixed environment, so the output depends on the
 * compiler only.
 */
import { DEFAULT_ORDER_SETTINGS, type OrderSettings } from "../../src/accounts/schemas.js";
import {
  cohortStatement,
  planAttribution,
  planChannelMeasures,
  planCohorts,
  planEntityPage,
  planGeneral,
} from "../../src/query/plan.js";
import {
  type QueryEnvironment,
  resolveAttribution,
  resolveChannel,
  resolveCohorts,
  resolveGeneral,
} from "../../src/query/resolve.js";
import {
  attributionQuerySchema,
  channelQuerySchema,
  cohortQuerySchema,
  generalQuerySchema,
} from "../../src/query/schemas.js";

type Json = Record<string, unknown>;

export const GOLDEN_PIXEL = "px_golden";

/** A Sunday afternoon in March, before the US and EU clocks change. */
export const GOLDEN_ENV: QueryEnvironment = {
  accountTimezone: "UTC",
  storedOrderSettings: DEFAULT_ORDER_SETTINGS,
  now: new Date("2026-03-15T12:00:00Z"),
};

export interface GoldenCase {
  /** File name (without .sql) under test/golden/query/; groups by prefix. */
  name: string;
  /** What the case pins, for the reader of the golden file. */
  title: string;
  endpoint: "query" | "query-attribution" | "query-channel-details" | "query-cohort-analysis";
  /** The request body without pixelId, as a client sends it. */
  request: Json;
  /** Changes to GOLDEN_ENV (account timezone, stored order settings). */
  env?: Partial<QueryEnvironment>;
  /** Channel details: ids of the page's entities the measures are computed for. */
  entityIds?: string[];
}

export interface GoldenStatement {
  source: string;
  period: string;
  /** A statement shared by several sources names them all. */
  sources?: string[];
  sql: string;
  params: Record<string, unknown>;
  /**
   * A derived-tables form of the statement before it (docs/derived-tables.md): with fresh rows read
   * raw, or (`current`) for when nothing is past the watermark.
   */
  derivedForm?: "fresh" | "current" | "cells" | "cells-current";
}

interface DerivedForms {
  sql: string;
  params: Record<string, unknown>;
  current?: { sql: string; params: Record<string, unknown> };
}

/**
 * Each statement, followed by its derived-tables forms when it has them (and its credit-cells forms
 * when a shape's cells can answer it): all are pinned.
 */
function withDerived(
  statements: readonly (GoldenStatement & { derived?: DerivedForms; cells?: { derived: DerivedForms } })[],
): GoldenStatement[] {
  return statements.flatMap(({ derived, cells, ...s }) => {
    if (!derived) return [s];
    const named = { source: s.source, ...(s.sources ? { sources: s.sources } : {}), period: s.period };
    const forms: GoldenStatement[] = [s];
    const add = (d: DerivedForms, fresh: "fresh" | "cells", current: "current" | "cells-current") => {
      forms.push({ ...named, sql: d.sql, params: d.params, derivedForm: fresh });
      if (d.current) forms.push({ ...named, ...d.current, derivedForm: current });
    };
    add(derived, "fresh", "current");
    if (cells) add(cells.derived, "cells", "cells-current");
    return forms;
  });
}

const WEEK = { start: "2026-03-01", end: "2026-03-07" };
const PREVIOUS_WEEK = { start: "2026-02-22", end: "2026-02-28" };
const NY = "America/New_York";

let ids = 0;
/** Stored exclusion filters carry uuids; fixed ones keep the golden requests stable. */
const uuid = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`;

/** An exclusion filter in the stored shape: groups of [field, operator, value] with their logic. */
function exclusion(
  name: string,
  groups: { logic: string; conditions: [string, string, string][] }[],
  enabled = true,
) {
  return {
    id: uuid(),
    name,
    enabled,
    conditionGroups: groups.map((g) => ({
      id: uuid(),
      logic: g.logic,
      conditions: g.conditions.map(([field, operator, value]) => ({ id: uuid(), field, operator, value })),
    })),
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
  };
}

const DRAFTS = exclusion("Drafts and tests", [
  {
    logic: "and",
    conditions: [
      ["source_name", "equals", "draft_orders"],
      ["tags", "contains", "test"],
    ],
  },
  {
    logic: "or",
    conditions: [
      ["orders.gateway", "in", "manual, cash"],
      ["totalPrice", "lt", "1"],
    ],
  },
]);
const DISABLED = exclusion(
  "Wholesale (off)",
  [{ logic: "AND", conditions: [["tags", "equals", "wholesale"]] }],
  false,
);
const NO_COUNTRY = exclusion("No country", [{ logic: "or", conditions: [["country", "is_not_set", ""]] }]);

const STORED_SETTINGS: OrderSettings = {
  countPendingOrders: true,
  countVoidedOrders: false,
  refundDateAttribution: "order_date",
  exclusionFilters: [NO_COUNTRY],
};

const ORDERS = ["orders.count", "orders.total_revenue"];

const general = (
  name: string,
  title: string,
  request: Json,
  extra: Partial<GoldenCase> = {},
): GoldenCase => ({
  name,
  title,
  endpoint: "query",
  request: { dateRange: WEEK, timezone: "UTC", granularity: "day", ...request },
  ...extra,
});

const attribution = (
  name: string,
  title: string,
  request: Json,
  extra: Partial<GoldenCase> = {},
): GoldenCase => ({
  name,
  title,
  endpoint: "query-attribution",
  request: { dimension: "attribution.source", dateRange: WEEK, timezone: "UTC", ...request },
  ...extra,
});

const channel = (
  name: string,
  title: string,
  request: Json,
  extra: Partial<GoldenCase> = {},
): GoldenCase => ({
  name,
  title,
  endpoint: "query-channel-details",
  request,
  entityIds: ["e1", "e2"],
  ...extra,
});

const cohorts = (
  name: string,
  title: string,
  request: Json,
  extra: Partial<GoldenCase> = {},
): GoldenCase => ({
  name,
  title,
  endpoint: "query-cohort-analysis",
  request: { dateRange: { start: "2025-10-01", end: "2026-03-31" }, timezone: "UTC", ...request },
  ...extra,
});

const MODELS = ["first_click", "last_click", "any_click"] as const;
const WINDOWS = [
  [7, "7d"],
  [30, "30d"],
  [-1, "unlimited"],
] as const;

export const GOLDEN_CASES: GoldenCase[] = [
  // Every fact source of the general query.
  general("source-orders-amounts", "orders: every amount base, by day, USD", {
    measures: [
      "orders.count",
      "orders.total_revenue",
      "orders.subtotal",
      "orders.discounts",
      "orders.gross_sales",
      "orders.shipping",
      "orders.tax",
      "orders.aov",
    ],
  }),
  general("source-orders-units", "orders: units join the current version's lines", {
    measures: ["orders.units", "orders.units_per_order"],
  }),
  general("source-orders-customers", "orders: customer measures number each customer's counted orders", {
    measures: [
      "customers.count",
      "customers.new",
      "customers.returning",
      "customers.repeat_rate",
      "customers.new_customer_orders",
      "customers.revenue_per_customer",
    ],
  }),
  general("source-orders-rollup-counts", "orders: counts only, served by the hourly rollup without a rate", {
    measures: ["orders.count", "customers.count"],
    granularity: "none",
  }),
  general(
    "source-orders-rollup-week",
    "orders: sums and distinct customers per week from the hourly rollup",
    {
      measures: ["orders.count", "orders.aov", "orders.gross_sales", "customers.count"],
      granularity: "week",
      timezone: "Europe/Berlin",
      currency: "EUR",
    },
  ),
  general("source-refunds", "refunds: amount and count, booked on the refund's day", {
    measures: ["orders.refunds", "orders.refund_count"],
  }),
  general(
    "source-orders-and-refunds",
    "net revenue: orders and refunds (both from their rollups) in one statement",
    {
      measures: ["orders.net_revenue"],
    },
  ),
  general("source-order-costs", "order_costs: every cost base", {
    measures: ["costs.cogs", "costs.handling", "costs.shipping", "costs.gateway", "costs.order_level"],
  }),
  general("source-ads", "ads: every ad metric, each account at its deepest level", {
    measures: [
      "ads.spend",
      "ads.impressions",
      "ads.clicks",
      "ads.ctr",
      "ads.cpc",
      "ads.cpm",
      "ads.platform_conversions",
      "ads.platform_conversion_value",
      "ads.platform_roas",
    ],
  }),
  general("source-events", "events: every event base, identities through merges", {
    measures: [
      "events.count",
      "events.unique_identities",
      "events.page_views",
      "events.purchases",
      "events.purchasers",
      "events.conversion_rate",
      "events.value",
    ],
  }),
  general("source-attribution", "attribution measures in the general query (defaults: last_click, 30 days)", {
    measures: ["attribution.orders", "attribution.revenue", "attribution.aov"],
  }),
  general("source-profit-report-costs", "profit and total costs: four sources, report-time costs", {
    measures: ["profit.net_profit", "profit.mer", "costs.total"],
    granularity: "none",
  }),

  // Granularities (the bucket key expression and the GROUPING SETS).
  general("granularity-none", "no buckets: rows are the totals", { measures: ORDERS, granularity: "none" }),
  general("granularity-hour", "hours of one day", {
    measures: ORDERS,
    granularity: "hour",
    dateRange: { start: "2026-03-02", end: "2026-03-02" },
  }),
  general("granularity-day", "days", { measures: ORDERS, granularity: "day" }),
  general("granularity-week", "weeks from Monday", {
    measures: ORDERS,
    granularity: "week",
    dateRange: { start: "2026-02-01", end: "2026-03-14" },
  }),
  general("granularity-month", "months", {
    measures: ORDERS,
    granularity: "month",
    dateRange: { start: "2025-10-01", end: "2026-03-14" },
  }),
  general("granularity-quarter", "quarters", {
    measures: ORDERS,
    granularity: "quarter",
    dateRange: { start: "2025-01-01", end: "2026-03-14" },
  }),
  general("granularity-year", "years", {
    measures: ORDERS,
    granularity: "year",
    dateRange: { start: "2024-01-01", end: "2026-03-14" },
  }),

  // Timezones and dates.
  general("timezone-new-york-day", "days of America/New_York: range from local midnights", {
    measures: ORDERS,
    timezone: NY,
  }),
  general("timezone-new-york-dst-hour", "hours of the 23-hour day (2026-03-08 in New York)", {
    measures: ORDERS,
    timezone: NY,
    granularity: "hour",
    dateRange: { start: "2026-03-08", end: "2026-03-08" },
  }),
  general(
    "timezone-account-default",
    "no timezone in the request: the account's (Asia/Kolkata, +05:30)",
    { measures: ORDERS, timezone: undefined, granularity: "week" },
    { env: { accountTimezone: "Asia/Kolkata" } },
  ),
  general("dates-relative", "7daysAgo … yesterday, compared with 14daysAgo … 8daysAgo, at the fixed now", {
    measures: ORDERS,
    timezone: "Europe/Berlin",
    dateRange: { start: "7daysAgo", end: "yesterday" },
    compareDateRange: { start: "14daysAgo", end: "8daysAgo" },
  }),

  // Currency: the same currency (no rate read) and a converted one.
  general("currency-usd-same", "an explicit USD target (given in lower case)", {
    measures: ["orders.net_revenue"],
    currency: "usd",
  }),
  general("currency-eur-orders-refunds", "EUR target: orders and refunds convert per row", {
    measures: ["orders.net_revenue"],
    currency: "EUR",
  }),
  general(
    "currency-eur-other-sources",
    "EUR target: ads, events, order costs and attribution convert per row",
    {
      measures: ["ads.spend", "events.value", "costs.order_costs", "attribution.revenue"],
      currency: "EUR",
    },
  ),

  // Compare period.
  general("compare-orders-refunds", "a compare period: each source answers both periods in one statement", {
    measures: ["orders.count", "orders.net_revenue", "customers.repeat_rate"],
    compareDateRange: PREVIOUS_WEEK,
  }),
  general(
    "compare-rollup-ads",
    "a compare period of the daily series: the hourly rollup and ad spend, both periods per statement",
    {
      measures: ["orders.count", "orders.total_revenue", "customers.count", "ads.spend"],
      compareDateRange: PREVIOUS_WEEK,
      currency: "EUR",
    },
  ),
  general("compare-overlapping", "a compare range overlapping the range: each source once per period", {
    measures: ["orders.count", "ads.spend"],
    compareDateRange: { start: "2026-03-04", end: "2026-03-10" },
  }),

  // Dimensions.
  general("dimensions-orders-three", "three dimensions, one of them a customers. field", {
    measures: ["orders.total_revenue", "orders.count"],
    dimensions: ["orders.country", "orders.source_name", "customers.is_returning"],
    order: { measure: "orders.count", direction: "asc" },
    limit: 20,
    offset: 40,
  }),
  general("dimensions-ads", "ads by campaign id and platform", {
    measures: ["ads.spend", "ads.clicks"],
    dimensions: ["channel.campaign_id", "channel.resource_source"],
  }),
  general("dimensions-events", "events by utm_source and device", {
    measures: ["events.count", "events.unique_identities"],
    dimensions: ["events.utm_source", "events.device"],
  }),
  general("dimensions-attribution-and-orders", "attribution by a touch dimension and an order one", {
    measures: ["attribution.orders", "attribution.revenue"],
    dimensions: ["attribution.channel", "orders.country"],
    attributionModel: "first_click",
    attributionWindow: 7,
    granularity: "none",
  }),

  // Filters of each family and type.
  general("filter-orders-text", "text operators on orders fields", {
    measures: ["orders.count"],
    filters: {
      and: [
        { field: "orders.country", op: "equals", value: "US" },
        { field: "orders.currency", op: "not_equals", value: "JPY" },
        { field: "orders.source_name", op: "in", value: ["web", "pos"] },
        { field: "orders.gateway", op: "not_in", value: ["manual"] },
        { field: "orders.order_id", op: "contains", value: "A-" },
        { field: "orders.financial_status", op: "not_contains", value: "refund" },
        { field: "orders.customer_id", op: "starts_with", value: "cus_" },
        { field: "orders.gateway", op: "ends_with", value: "pay" },
        { field: "orders.customer_id", op: "is_set" },
        { field: "orders.country", op: "is_not_set" },
      ],
    },
  }),
  general("filter-orders-number-datetime", "number and datetime operators; dates are New York days", {
    measures: ["orders.count"],
    timezone: NY,
    filters: {
      and: [
        { field: "orders.total_price", op: "gt", value: 10 },
        { field: "orders.total_price", op: "lte", value: 500.5 },
        { field: "orders.subtotal_price", op: "between", value: [5, 50] },
        { field: "orders.subtotal_price", op: "in", value: [9.99, 19.99] },
        { field: "orders.total_price", op: "not_in", value: [0] },
        { field: "orders.total_price", op: "is_set" },
        { field: "orders.created_at", op: "equals", value: "2026-03-02" },
        { field: "orders.created_at", op: "gt", value: "2026-03-01" },
        { field: "orders.created_at", op: "lte", value: "2026-03-06T18:30:00Z" },
        { field: "orders.created_at", op: "between", value: ["2026-03-01", "2026-03-05"] },
        {
          field: "orders.created_at",
          op: "between",
          value: ["2026-03-01T05:00:00Z", "2026-03-05T12:00:00Z"],
        },
      ],
    },
  }),
  general("filter-orders-lists", "list fields: an element matches", {
    measures: ["orders.count"],
    filters: {
      and: [
        { field: "orders.tags", op: "equals", value: "vip" },
        { field: "orders.tags", op: "not_equals", value: "test" },
        { field: "orders.tags", op: "in", value: ["wholesale", "b2b"] },
        { field: "orders.discount_codes", op: "not_in", value: ["STAFF"] },
        { field: "orders.discount_codes", op: "contains", value: "spring" },
        { field: "orders.discount_codes", op: "starts_with", value: "WELCOME" },
        { field: "orders.tags", op: "ends_with", value: "-eu" },
        { field: "orders.discount_codes", op: "is_set" },
        { field: "orders.tags", op: "is_not_set" },
      ],
    },
  }),
  general("filter-logic", "nested and / or / not, empty and / or, empty in / not_in", {
    measures: ["orders.count"],
    filters: {
      or: [
        {
          and: [
            { field: "orders.country", op: "equals", value: "US" },
            { not: { or: [{ field: "orders.tags", op: "equals", value: "test" }, { and: [] }] } },
          ],
        },
        { and: [{ field: "orders.country", op: "in", value: [] }, { or: [] }] },
        { field: "orders.source_name", op: "not_in", value: [] },
      ],
    },
  }),
  general("filter-customers", "customers. fields: numbering is computed for the filter", {
    measures: ["orders.count"],
    filters: {
      and: [
        { field: "customers.is_returning", op: "equals", value: true },
        { field: "customers.order_number", op: "lte", value: 3 },
        { field: "customers.id", op: "not_in", value: ["c:staff"] },
      ],
    },
  }),
  general("filter-channel", "channel. fields on ads measures", {
    measures: ["ads.spend", "ads.impressions"],
    filters: {
      and: [
        { field: "channel.resource_source", op: "equals", value: "facebook" },
        { field: "channel.account_id", op: "in", value: ["act_1", "act_2"] },
        { field: "channel.campaign_id", op: "not_equals", value: "c9" },
        { field: "channel.adset_id", op: "starts_with", value: "as_" },
        { field: "channel.ad_id", op: "is_set" },
        { field: "channel.level", op: "not_equals", value: "account" },
      ],
    },
  }),
  general("filter-events", "events. fields on event measures", {
    measures: ["events.count", "events.value"],
    filters: {
      and: [
        { field: "events.name", op: "in", value: ["purchase", "add_to_cart"] },
        { field: "events.origin", op: "equals", value: "server" },
        { field: "events.utm_source", op: "starts_with", value: "goo" },
        { field: "events.page_path", op: "contains", value: "/checkout" },
        { field: "events.value", op: "gte", value: 10 },
        { field: "events.currency", op: "is_set" },
      ],
    },
  }),
  general("filter-attribution-split", "attribution measures: touch branches and conversion branches", {
    measures: ["attribution.orders", "attribution.revenue"],
    filters: {
      and: [
        { field: "attribution.source", op: "equals", value: "google" },
        { field: "orders.country", op: "equals", value: "US" },
        {
          or: [
            { field: "attribution.medium", op: "equals", value: "cpc" },
            { field: "attribution.click_id_type", op: "is_set" },
          ],
        },
      ],
    },
  }),

  // Order settings: the counted-orders definition.
  general("order-settings-count-all", "pending and voided orders counted: no status condition", {
    measures: ["orders.count", "orders.refunds"],
    orderSettings: { countPendingOrders: true, countVoidedOrders: true },
  }),
  general(
    "order-settings-exclusions",
    "exclusion filters: and / or groups, camelCase fields, a disabled one",
    {
      measures: ["orders.count", "orders.refunds"],
      orderSettings: { exclusionFilters: [DRAFTS, DISABLED] },
    },
  ),
  general(
    "order-settings-stored",
    "stored settings (pending counted, refunds on the order's day, an exclusion) under a request override",
    { measures: ["orders.net_revenue"], orderSettings: { countPendingOrders: false } },
    { env: { storedOrderSettings: STORED_SETTINGS } },
  ),
  general("order-settings-refund-order-date", "refunds booked on their order's day", {
    measures: ["orders.refunds", "orders.refund_count"],
    orderSettings: { refundDateAttribution: "order_date" },
  }),

  // Attribution query: every model × window.
  ...MODELS.flatMap((model) =>
    WINDOWS.map(([window, label]) =>
      attribution(`attribution-${model.replace("_", "-")}-${label}`, `${model}, window ${label}, by source`, {
        attributionModel: model,
        attributionWindow: window,
      }),
    ),
  ),
  // Fractional models: the touch path in rank order and each touch's share.
  ...(["linear", "time_decay", "position_based"] as const).map((model) =>
    attribution(`attribution-${model.replace("_", "-")}-30d`, `${model}, window 30, by source`, {
      attributionModel: model,
      attributionWindow: 30,
    }),
  ),
  attribution("attribution-time-decay-half-life", "time_decay with a 2-day half-life, unlimited, by ad id", {
    dimension: "attribution.ad_id",
    attributionModel: "time_decay",
    attributionWindow: -1,
    attributionHalfLifeDays: 2,
  }),
  general(
    "attribution-linear-no-touch-dimension",
    "a fractional model without a touch dimension: has a touch",
    {
      measures: ["attribution.orders", "attribution.revenue"],
      attributionModel: "linear",
    },
  ),
  attribution("attribution-campaign-spend", "an ad-entity dimension adds the spend statement (ROAS, CPA)", {
    dimension: "attribution.campaign_id",
    attributionModel: "last_click",
    attributionWindow: 30,
  }),
  attribution("attribution-ad-measures", "ad ids with chosen measures, a one-day window", {
    dimension: "attribution.ad_id",
    attributionModel: "first_click",
    attributionWindow: 1,
    measures: ["attribution.orders", "ads.spend"],
  }),
  attribution("attribution-events", "events as conversions: eventName, events. and touch filters", {
    dimension: "attribution.medium",
    attributionModel: "last_click",
    attributionWindow: 7,
    valueSource: "events",
    eventName: "add_to_cart",
    filters: {
      and: [
        { field: "events.currency", op: "is_set" },
        { field: "attribution.channel", op: "not_equals", value: "direct" },
      ],
    },
  }),
  attribution("attribution-filters", "touch filter and conversion filters (customers. needs numbering)", {
    dimension: "attribution.channel",
    attributionModel: "any_click",
    attributionWindow: 30,
    filters: {
      and: [
        { field: "attribution.channel", op: "in", value: ["paid_social", "paid_search"] },
        { field: "orders.country", op: "equals", value: "DE" },
        { field: "customers.is_returning", op: "equals", value: false },
      ],
    },
  }),
  attribution("attribution-compare-day", "by day, with a compare period", {
    dimension: "attribution.channel",
    attributionModel: "first_click",
    attributionWindow: 7,
    granularity: "day",
    compareDateRange: PREVIOUS_WEEK,
  }),
  attribution("attribution-eur-new-york-week", "EUR, America/New_York weeks, a 14-day window", {
    dimension: "attribution.campaign",
    attributionModel: "any_click",
    attributionWindow: 14,
    granularity: "week",
    timezone: NY,
    currency: "EUR",
    dateRange: { start: "2026-02-02", end: "2026-03-01" },
  }),
  attribution("attribution-order-settings", "attribution counts only counted orders (exclusions, pending)", {
    attributionModel: "last_click",
    attributionWindow: 30,
    orderSettings: { countPendingOrders: true, exclusionFilters: [DRAFTS] },
  }),

  // Channel details: the page of entities, then measures of its entities.
  channel("channel-accounts", "ad accounts, default sort, no measures", {}),
  channel("channel-accounts-measures", "ad accounts with ads measures (no attribution at account level)", {
    measures: ["ads.spend", "ads.clicks", "ads.ctr"],
    dateRange: WEEK,
    timezone: "UTC",
  }),
  channel("channel-campaign", "campaigns: platform filter, sort by name, ads and attribution measures", {
    level: "campaign",
    measures: ["ads.spend", "attribution.orders", "attribution.roas"],
    dateRange: WEEK,
    timezone: "UTC",
    sortBy: "resourceName",
    sortDirection: "asc",
    filters: { field: "channel.resource_source", op: "equals", value: "facebook" },
  }),
  channel("channel-adset-day", "ad sets by day in EUR, first_click 7 days, paged", {
    level: "adset",
    granularity: "day",
    measures: ["ads.impressions", "attribution.revenue"],
    dateRange: WEEK,
    timezone: "UTC",
    currency: "EUR",
    attributionModel: "first_click",
    attributionWindow: 7,
    sortBy: "sourceCreatedAt",
    limit: 10,
    offset: 20,
    filters: { field: "channel.campaign_id", op: "in", value: ["c1", "c2"] },
  }),
  channel("channel-ad-compare", "ads by hour in New York with a compare period, any_click unlimited", {
    level: "ad",
    granularity: "hour",
    measures: ["ads.spend", "attribution.cpa"],
    dateRange: { start: "2026-03-02", end: "2026-03-02" },
    compareDateRange: { start: "2026-02-23", end: "2026-02-23" },
    timezone: NY,
    attributionModel: "any_click",
    attributionWindow: -1,
    filters: { field: "channel.adset_id", op: "equals", value: "as_1" },
  }),
  channel(
    "channel-campaign-explain",
    "what ?explain=true answers: measures planned before the page is known (no entity ids)",
    {
      level: "campaign",
      measures: ["ads.spend", "attribution.orders"],
      dateRange: WEEK,
      timezone: "UTC",
    },
    { entityIds: [] },
  ),

  // Cohorts.
  cohorts("cohorts-month", "monthly cohorts with every measure (defaults)", {}),
  cohorts("cohorts-week-new-york-eur", "weekly cohorts in America/New_York, EUR, 8 periods", {
    cohortGranularity: "week",
    periods: 8,
    timezone: NY,
    currency: "EUR",
    dateRange: { start: "2026-01-05", end: "2026-03-01" },
    measures: ["customers.retained", "orders.total_revenue", "customers.ltv"],
  }),
  cohorts("cohorts-week-cells", "weekly cohorts in America/New_York to today, from the cohort cells", {
    cohortGranularity: "week",
    periods: 6,
    timezone: NY,
    dateRange: { start: "2026-01-05", end: "2026-03-15" },
  }),
  cohorts("cohorts-filters-order-settings", "orders. filters and order settings decide the first order", {
    filters: {
      and: [
        { field: "orders.country", op: "in", value: ["US", "CA"] },
        { field: "orders.tags", op: "not_contains", value: "test" },
      ],
    },
    orderSettings: { countVoidedOrders: true, exclusionFilters: [DRAFTS] },
  }),
];

/** Plans a case as the endpoint would and returns its statements in the order `?explain=true` lists them. */
export function compileCase(c: GoldenCase): GoldenStatement[] {
  const env: QueryEnvironment = { ...GOLDEN_ENV, ...c.env };
  const body = { pixelId: GOLDEN_PIXEL, ...c.request };
  switch (c.endpoint) {
    case "query":
      return withDerived(planGeneral(resolveGeneral(generalQuerySchema.parse(body), env)).statements);
    case "query-attribution":
      return withDerived(
        planAttribution(resolveAttribution(attributionQuerySchema.parse(body), env)).statements,
      );
    case "query-channel-details": {
      const resolved = resolveChannel(channelQuerySchema.parse(body), env);
      const page = planEntityPage(resolved);
      const measures = resolved.query.measures
        ? withDerived(planChannelMeasures(resolved, c.entityIds ?? []).statements)
        : [];
      return [{ source: "ad_entities", period: "primary", ...page }, ...measures];
    }
    case "query-cohort-analysis": {
      const plan = planCohorts(resolveCohorts(cohortQuerySchema.parse(body), env));
      return withDerived([cohortStatement(plan)]);
    }
  }
}

const PLACEHOLDER = /\{(p\d+|rates_from):([^}]+)\}/g;

/** Each placeholder of a statement with its declared type, in order of first use. */
export function placeholderTypes(sql: string): Map<string, string[]> {
  const types = new Map<string, string[]>();
  for (const [, name, type] of sql.matchAll(PLACEHOLDER)) {
    const seen = types.get(name!) ?? [];
    if (!seen.includes(type!)) seen.push(type!);
    types.set(name!, seen);
  }
  return types;
}

function envLine(c: GoldenCase): string {
  const env = { ...GOLDEN_ENV, ...c.env };
  const settings =
    JSON.stringify(env.storedOrderSettings) === JSON.stringify(DEFAULT_ORDER_SETTINGS)
      ? "default stored order settings"
      : `stored order settings ${JSON.stringify(env.storedOrderSettings)}`;
  const ids =
    c.endpoint === "query-channel-details" ? `, page entity ids ${JSON.stringify(c.entityIds ?? [])}` : "";
  return `-- environment: now ${env.now.toISOString()}, account timezone ${env.accountTimezone}, ${settings}${ids}`;
}

/**
 * The golden text of a case: a header naming the request, then each statement exactly as emitted
 * followed by its parameters as a comment block (name, type from the placeholder, value as JSON), one
 * per line with fixed column widths so a changed value is a one-line diff.
 */
const FORM_NOTES: Record<string, string> = {
  fresh: ", from the derived tables",
  current: ", from the derived tables alone (nothing past the watermark)",
  cells: ", from the credit cells (the fresh hours' conversions credited one by one)",
  "cells-current": ", from the credit cells alone (nothing past the watermark)",
};

export function renderGolden(c: GoldenCase, statements: readonly GoldenStatement[]): string {
  const out = [
    `-- ${c.name}: ${c.title}`,
    `-- POST /db-mgmt/api/${c.endpoint} ${JSON.stringify({ pixelId: GOLDEN_PIXEL, ...c.request })}`,
    envLine(c),
  ];
  statements.forEach((s, i) => {
    const types = placeholderTypes(s.sql);
    out.push(
      "",
      `-- statement ${i + 1} of ${statements.length}: ${s.sources?.join(" + ") ?? s.source}, ${s.period}${FORM_NOTES[s.derivedForm ?? ""] ?? ""}`,
      s.sql,
      "",
      "-- parameters:",
    );
    // Positional names in order, then the named ones (the rates' first day).
    const position = (n: string) => (/^p\d+$/.test(n) ? Number(n.slice(1)) : Number.MAX_SAFE_INTEGER);
    const names = Object.keys(s.params).sort((a, b) => position(a) - position(b));
    for (const name of names) {
      const type = types.get(name)?.join(" | ") ?? "(not referenced)";
      out.push(`--   ${name.padEnd(4)} ${type.padEnd(21)} ${JSON.stringify(s.params[name])}`);
    }
  });
  return `${out.join("\n")}\n`;
}
