import { z } from "zod";
import { Binder } from "./binder.js";
import { compileFilter } from "./filters/compile.js";
import { filterSchema } from "./filters/schema.js";
import { basesOf, MEASURE_BY_KEY } from "./measures.js";
import { issue, type QueryEnvironment, type QueryPlan, type Statement } from "./plan.js";
import {
  ATTRIBUTION_MODELS,
  attributionWindowSchema,
  currencySchema,
  dateRangeSchema,
  timezoneSchema,
} from "./schemas.js";
import { emitAttribution } from "./sources/attribution.js";
import type { EmitContext } from "./sources/context.js";
import { emitFactSource } from "./sources/facts.js";
import { buckets, resolveRange } from "./time.js";

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
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).default(0),
  sortBy: z.enum(["sourceUpdatedAt", "sourceCreatedAt", "resourceName"]).default("sourceUpdatedAt"),
  sortDirection: z.enum(["asc", "desc"]).default("desc"),
});
export type ChannelQuery = z.infer<typeof channelQuerySchema>;

/** The id column an entity of each level is known by in metrics and touches. */
const LEVEL_FIELD = {
  account: { channel: "channel.account_id", touch: null },
  campaign: { channel: "channel.campaign_id", touch: "attribution.campaign_id" },
  adset: { channel: "channel.adset_id", touch: "attribution.adset_id" },
  ad: { channel: "channel.ad_id", touch: "attribution.ad_id" },
} as const;

const SORT_COLUMN = {
  sourceUpdatedAt: "source_updated_at",
  sourceCreatedAt: "source_created_at",
  resourceName: "name",
};

export function validateChannelQuery(q: ChannelQuery): void {
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
}

/** The page of entities: statement over ad_entities with the channel filter, sorted and paged. */
export function entityStatement(
  q: ChannelQuery,
  timezone: string,
): { sql: string; params: Record<string, unknown> } {
  const b = new Binder();
  const where = compileFilter(q.filters, { binder: b, families: ["channel"], timezone, path: ["filters"] });
  const dir = q.sortDirection === "asc" ? "ASC" : "DESC";
  const sql = `SELECT c.entity_id AS id, c.name AS name, c.platform AS platform, toString(c.level) AS level, c.status AS status,
  if(c.level = 'account', c.entity_id, c.account_id) AS account_id, c.campaign_id AS campaign_id, c.adset_id AS adset_id,
  c.currency AS currency, toString(c.daily_budget) AS daily_budget, toString(c.budget_remaining) AS budget_remaining,
  toString(c.amount_spent) AS amount_spent, c.source_created_at AS source_created_at, c.source_updated_at AS source_updated_at,
  count() OVER () AS total
FROM (SELECT * FROM ad_entities FINAL WHERE pixel_id = ${b.bind(q.pixelId, "String")} AND level = ${b.bind(q.level ?? "account", "String")}) AS c
WHERE ${where}
ORDER BY ${SORT_COLUMN[q.sortBy]} ${dir}, platform ASC, id ASC
LIMIT ${b.bind(q.limit, "Int64")} OFFSET ${b.bind(q.offset, "Int64")}`;
  return { sql, params: b.params as Record<string, unknown> };
}

/** Measures of the page's entities: ads metrics by the level's id, attribution by the touch's id. */
export function planChannelMeasures(q: ChannelQuery, env: QueryEnvironment, entityIds: string[]): QueryPlan {
  const timezone = q.timezone ?? env.accountTimezone;
  const currency = q.currency ?? "USD";
  const level = q.level ?? "account";
  const measures = q.measures ?? [];
  const granularity = q.granularity === "second" || q.granularity === "minute" ? "none" : q.granularity;
  const primaryRange = resolveRange(q.dateRange!, timezone, env.now, "dateRange");
  const compareRange = q.compareDateRange
    ? resolveRange(q.compareDateRange, timezone, env.now, "compareDateRange")
    : undefined;
  const bases = basesOf(measures);
  const statements: Statement[] = [];
  for (const [period, range] of [
    ["primary", primaryRange],
    ["compare", compareRange],
  ] as const) {
    if (!range) continue;
    const ctx = (binder: Binder, dimension: string): EmitContext => ({
      binder,
      pixelId: q.pixelId,
      timezone,
      currency,
      granularity,
      range,
      orderSettings: env.storedOrderSettings,
      dimensions: [dimension],
      attribution: { model: q.attributionModel, window: q.attributionWindow },
      needsCustomerNumbering: false,
    });
    if (bases.has("ads")) {
      const b = new Binder();
      const where = compileFilter(
        {
          and: [
            ...(q.filters ? [q.filters] : []),
            { field: LEVEL_FIELD[level].channel, op: "in", value: entityIds },
          ],
        },
        { binder: b, families: ["channel"], timezone, path: ["filters"] },
      );
      const sql = emitFactSource("ads", [...bases.get("ads")!], ctx(b, LEVEL_FIELD[level].channel), where);
      statements.push({ source: "ads", period, sql, params: b.params as Record<string, unknown> });
    }
    const touch = LEVEL_FIELD[level].touch;
    if (bases.has("attribution") && touch) {
      const b = new Binder();
      const sql = emitAttribution(ctx(b, touch), {
        valueSource: "orders",
        eventName: "purchase",
        convWhere: "1",
        // Credit is decided over every touch (filtering touches to the page would move credit).
        touchWhere: "1",
      });
      statements.push({ source: "attribution", period, sql, params: b.params as Record<string, unknown> });
    }
  }
  return {
    measures,
    dimensions: [LEVEL_FIELD[level].channel],
    timezone,
    currency,
    granularity,
    primary: { range: primaryRange, buckets: buckets(primaryRange, granularity, timezone) },
    ...(compareRange
      ? { compare: { range: compareRange, buckets: buckets(compareRange, granularity, timezone) } }
      : {}),
    statements,
    reportCosts: false,
    limit: Number.MAX_SAFE_INTEGER,
    offset: 0,
  };
}
