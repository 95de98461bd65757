import { z } from "zod";
import { exclusionFilterSchema } from "../accounts/schemas.js";
import { ATTRIBUTION_MODELS } from "./attribution-models.js";
import { filterSchema } from "./filters/schema.js";
import { GRANULARITIES, inQueryRange, QUERY_DATE_RANGE_MESSAGE } from "./time.js";

const isTimezone = (tz: string) => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

export const timezoneSchema = z.string().refine(isTimezone, "must be an IANA timezone such as Europe/Berlin");
export const currencySchema = z
  .string()
  .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code such as USD")
  .transform((c) => c.toUpperCase());
const dateToken = z
  .string()
  .regex(
    /^(\d{4}-\d{2}-\d{2}|today|yesterday|\d{1,4}daysAgo)$/,
    "must be YYYY-MM-DD, today, yesterday or NdaysAgo",
  )
  .refine((t) => !/^\d{4}-/.test(t) || inQueryRange(t), QUERY_DATE_RANGE_MESSAGE);
export const dateRangeSchema = z.strictObject({ start: dateToken, end: dateToken }).meta({
  description: "Inclusive local dates of the query timezone; relative tokens today, yesterday, NdaysAgo",
});

export const orderSettingsOverrideSchema = z
  .strictObject({
    countPendingOrders: z.boolean(),
    countVoidedOrders: z.boolean(),
    refundDateAttribution: z.enum(["refund_date", "order_date"]),
    exclusionFilters: z.array(exclusionFilterSchema),
  })
  .partial()
  .meta({ description: "Overrides of the account's stored order settings for this query" });

export const attributionHalfLifeSchema = z
  .number()
  .min(1)
  .max(90)
  .meta({ description: "time_decay: half-life in days (1–90, default 7)" });

export const ATTRIBUTION_WINDOWS = [1, 7, 14, 30, 60, 90, -1] as const;
export const attributionWindowSchema = z
  .number()
  .int()
  .refine(
    (w) => (ATTRIBUTION_WINDOWS as readonly number[]).includes(w),
    "must be one of 1, 7, 14, 30, 60, 90, -1",
  );

const common = {
  pixelId: z.string().min(1),
  timezone: timezoneSchema.optional(),
  currency: currencySchema.optional(),
  filters: filterSchema.optional(),
  orderSettings: orderSettingsOverrideSchema.optional(),
};

export const generalQuerySchema = z.strictObject({
  ...common,
  measures: z.array(z.string()).min(1).max(20),
  dimensions: z.array(z.string()).max(3).default([]),
  dateRange: dateRangeSchema,
  compareDateRange: dateRangeSchema.optional(),
  granularity: z.enum(GRANULARITIES).default("day"),
  attributionModel: z.enum(ATTRIBUTION_MODELS).default("last_click"),
  attributionWindow: attributionWindowSchema.default(30),
  attributionHalfLifeDays: attributionHalfLifeSchema.optional(),
  order: z
    .strictObject({ measure: z.string(), direction: z.enum(["asc", "desc"]).default("desc") })
    .optional()
    .meta({ description: "Order of dimension values; default the first measure, descending" }),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});
export type GeneralQuery = z.infer<typeof generalQuerySchema>;

export const attributionQuerySchema = z.strictObject({
  ...common,
  dimension: z.string(),
  dateRange: dateRangeSchema,
  compareDateRange: dateRangeSchema.optional(),
  attributionModel: z.enum(ATTRIBUTION_MODELS),
  attributionWindow: attributionWindowSchema,
  attributionHalfLifeDays: attributionHalfLifeSchema.optional(),
  valueSource: z.enum(["orders", "events"]).default("orders"),
  eventName: z.string().min(1).optional(),
  measures: z.array(z.string()).min(1).max(20).optional(),
  granularity: z.enum(GRANULARITIES).default("none"),
});
export type AttributionQuery = z.infer<typeof attributionQuerySchema>;

/** The orders behind one row of an attribution answer: its query's fields, the row's value, a page. */
export const creditedOrdersQuerySchema = attributionQuerySchema
  .omit({ compareDateRange: true, valueSource: true, eventName: true, measures: true, granularity: true })
  .extend({
    // Event conversions have no order to list; the key is taken so a body copied from an attribution
    // query of orders still fits.
    valueSource: z.literal("orders", "only orders are listed (valueSource must be orders)").optional(),
    dimensionValue: z.string().meta({
      description:
        'The row\'s value as the attribution answer gives it: "paid_social", "(none)", "(not set)"',
    }),
    limit: z.number().int().min(1).max(100).default(20),
    offset: z.number().int().min(0).default(0),
  });
export type CreditedOrdersQuery = z.infer<typeof creditedOrdersQuerySchema>;

export const explainQuerySchema = z.object({
  explain: z
    .enum(["true", "false"])
    .optional()
    .meta({ description: "true: answer the generated SQL and parameters without running them" }),
  derived: z.enum(["true", "false"]).optional().meta({
    description:
      "false: answer attribution from raw touches only, not from the derived tables (the same numbers; for checking and for timing the raw path)",
  }),
  format: z.enum(["json", "rows", "csv"]).optional().meta({
    description:
      "json (default): the nested answer; rows: {columns, rows} one flat row per bucket × dimension value; csv: the same table as text/csv. `Accept: text/csv` also selects csv.",
  }),
});

export const CHANNEL_LEVELS = ["campaign", "adset", "ad"] as const;

export const channelQuerySchema = z.strictObject({
  pixelId: z.string().min(1),
  level: z
    .enum(CHANNEL_LEVELS)
    .optional()
    .meta({ description: "campaign | adset | ad; omitted = ad accounts" }),
  granularity: z
    .enum(["none", "second", "minute", "hour", "day", "week", "month", "quarter", "year"])
    .default("none"),
  measures: z.array(z.string()).min(1).max(20).optional(),
  dateRange: dateRangeSchema.optional(),
  compareDateRange: dateRangeSchema.optional(),
  filters: filterSchema.optional(),
  timezone: timezoneSchema.optional(),
  currency: currencySchema.optional(),
  attributionModel: z.enum(ATTRIBUTION_MODELS).default("last_click"),
  attributionWindow: attributionWindowSchema.default(30),
  attributionHalfLifeDays: attributionHalfLifeSchema.optional(),
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).default(0),
  sortBy: z.enum(["sourceUpdatedAt", "sourceCreatedAt", "resourceName"]).default("sourceUpdatedAt"),
  sortDirection: z.enum(["asc", "desc"]).default("desc"),
});
export type ChannelQuery = z.infer<typeof channelQuerySchema>;

export const COHORT_MEASURES = [
  "customers.retained",
  "customers.retention_rate",
  "orders.count",
  "orders.total_revenue",
  "customers.ltv",
] as const;
export type CohortMeasure = (typeof COHORT_MEASURES)[number];

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
