import { z } from "zod";
import { COHORT_MEASURES } from "./schemas.js";

/**
 * The answers of the four query endpoints, as zod schemas: the routes' `response` (so the OpenAPI
 * document describes them), the shaping functions' return types, and what the tests read.
 */

const dateRange = z.object({ start: z.string(), end: z.string() });

/** One time bucket of a result: `dt`, `start`, `end` and one value per measure (null: no value). */
export const bucketRowSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.null()]))
  .meta({ description: "dt, start, end (ISO instants) and one entry per measure key" });
export type BucketRow = z.infer<typeof bucketRowSchema>;

export const measureDetailSchema = z.object({
  measure: z.string(),
  isAverage: z.boolean(),
  isPercentage: z.boolean(),
  calculatedAverage: z.boolean(),
  hasPacing: z.boolean(),
  success: z.boolean(),
  preferredTrendDirection: z.string(),
  primarySum: z.number().nullable(),
  compareSum: z.number().nullable(),
  primaryAvg: z.number().nullable(),
  compareAvg: z.number().nullable(),
  percentDiff: z.number().nullable(),
});
export type MeasureDetail = z.infer<typeof measureDetailSchema>;

const seriesData = z.object({ primary: z.array(bucketRowSchema), compare: z.array(bucketRowSchema) });

/** One result of a general or attribution query: one per dimension value (one without dimensions). */
export const queryResultSchema = z.object({
  dateRange,
  compareDateRange: dateRange.optional(),
  dimension: z.string().optional(),
  dimensionValue: z.string().optional(),
  dimensionValues: z.record(z.string(), z.string()).optional(),
  data: seriesData,
  measureDetails: z.array(measureDetailSchema),
});
export type QueryResult = z.infer<typeof queryResultSchema>;

export const queryAnswerSchema = z.object({ results: z.array(queryResultSchema) });
export type QueryAnswerBody = z.infer<typeof queryAnswerSchema>;

export const basicDetailsSchema = z.object({
  id: z.string(),
  resourceName: z.string(),
  resourceSource: z.string(),
  level: z.string(),
  status: z.string(),
  accountId: z.string(),
  campaignId: z.string(),
  adsetId: z.string(),
  currency: z.string(),
  dailyBudget: z.number().nullable(),
  budgetRemaining: z.number().nullable(),
  amountSpent: z.number().nullable(),
  sourceCreatedAt: z.string().nullable(),
  sourceUpdatedAt: z.string().nullable(),
});

export const channelAnswerSchema = z.object({
  results: z.array(
    z.object({
      basicDetails: basicDetailsSchema,
      data: seriesData,
      measureDetails: z.array(measureDetailSchema).optional(),
    }),
  ),
  pagination: z.object({ limit: z.number(), offset: z.number(), total: z.number(), hasMore: z.boolean() }),
});
export type ChannelAnswerBody = z.infer<typeof channelAnswerSchema>;

const cohortPeriod = z
  .object({ period: z.number() })
  .catchall(z.number().nullable())
  .meta({ description: `period and one entry per asked measure (${COHORT_MEASURES.join(", ")})` });
export type CohortPeriod = z.infer<typeof cohortPeriod>;

export const cohortAnswerSchema = z.object({
  cohorts: z.array(
    z.object({
      cohort: z.string(),
      start: z.string(),
      end: z.string(),
      size: z.number(),
      periods: z.array(cohortPeriod),
    }),
  ),
  average: z.object({ periods: z.array(cohortPeriod.extend({ cohorts: z.number() })) }),
});
export type CohortAnswerBody = z.infer<typeof cohortAnswerSchema>;

export const explainAnswerSchema = z.object({
  explain: z.object({
    statements: z.array(
      z.object({
        source: z.string(),
        period: z.string(),
        sql: z.string(),
        params: z.record(z.string(), z.unknown()),
      }),
    ),
  }),
});

/** `format=rows`: the answer as one flat table (`format=csv` is the same table as text/csv). */
export const tableAnswerSchema = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))),
});

/**
 * What a query route answers: the result, its flat table with `format=rows`, `{explain}` with
 * `?explain=true`, or `{}` when the warehouse could not answer.
 */
export const answerOf = <T extends z.ZodType>(result: T) =>
  z.union([result, tableAnswerSchema, explainAnswerSchema, z.strictObject({})]);
