import { z } from "zod";
import { HOLDS_CENTS_MESSAGE, holdsCents } from "../shared/money.js";

/**
 * Record formats a store-platform or ads-platform connector pushes (docs/data-formats.md).
 * camelCase; money as numbers in the record's own currency; times ISO-8601 with an offset.
 * Every record has a natural id and a version: an older version never overwrites a newer one.
 */
// The warehouse holds times and dates from 1970 to 2149 (versions are ms since 1970).
const inRange = (v: string) => {
  // A value that is no date at all was reported by the format check already.
  if (!/^\d{4}-\d{2}-\d{2}/.test(v)) return true;
  const year = Number(v.slice(0, 4));
  return year >= 1970 && year <= 2149;
};
const required = (what: string) => (iss: { input?: unknown }) =>
  iss.input === undefined ? "is required" : what;
const isoTime = z.iso
  .datetime({ offset: true, error: required("must be ISO-8601 with a time zone offset") })
  .refine(inRange, "must be between 1970 and 2149");
const isoDate = z.iso
  .date({ error: required("must be a date YYYY-MM-DD") })
  .refine(inRange, "must be between 1970 and 2149");
const int32 = z.number().int().max(2_147_483_647);
const currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code")
  .transform((c) => c.toUpperCase());
const money = z
  .number()
  .refine((v) => Number.isFinite(v) && Math.abs(v) < 1e14, "must be a finite amount below 10^14")
  .refine(holdsCents, {
    message: HOLDS_CENTS_MESSAGE,
    when: (payload) => payload.issues.length === 0,
  });
const id = z.union([z.string().min(1), z.number().int().transform(String)]);

export const costLineSchema = z.strictObject({
  cost: money.refine((v) => v >= 0, "must be ≥ 0"),
  effectiveStartDate: isoDate,
  effectiveEndDate: isoDate.nullable().optional(),
});

export const variantSchema = z.strictObject({
  id,
  sku: z.string().default(""),
  title: z.string().default(""),
  currency: currency.default("USD"),
  currentPrice: money.default(0),
  inventory: int32.min(-2_147_483_648).nullable().optional(),
  storeCostHistory: z.array(costLineSchema).max(1000).default([]),
  raw: z.record(z.string(), z.unknown()).default({}),
});

export const productSchema = z.strictObject({
  id,
  title: z.string().default(""),
  handle: z.string().default(""),
  vendor: z.string().default(""),
  productType: z.string().default(""),
  status: z.string().default("ACTIVE"),
  tags: z.array(z.string()).default([]),
  imageUrls: z.array(z.string()).default([]),
  variants: z.array(variantSchema).max(1000).default([]),
  raw: z.record(z.string(), z.unknown()).default({}),
  updatedAt: isoTime,
});

export const FINANCIAL_STATUSES = [
  "pending",
  "authorized",
  "paid",
  "partially_paid",
  "partially_refunded",
  "refunded",
  "voided",
] as const;

export const orderLineSchema = z.strictObject({
  productId: id.optional(),
  variantId: id.optional(),
  sku: z.string().default(""),
  quantity: int32.min(0),
  price: money,
});

export const orderSchema = z.strictObject({
  id,
  createdAt: isoTime,
  processedAt: isoTime.nullable().optional(),
  cancelledAt: isoTime.nullable().optional(),
  currency,
  totalPrice: money,
  subtotalPrice: money.default(0),
  totalShipping: money.default(0),
  totalTax: money.default(0),
  totalDiscounts: money.default(0),
  financialStatus: z.enum(FINANCIAL_STATUSES),
  sourceName: z.string().default(""),
  gateway: z.string().default(""),
  tags: z.array(z.string()).default([]),
  discountCodes: z.array(z.string()).default([]),
  country: z.string().default(""),
  customer: z.strictObject({ id: id.optional(), email: z.string().optional() }).default({}),
  lineItems: z.array(orderLineSchema).max(1000).default([]),
  updatedAt: isoTime,
});

export const refundSchema = z.strictObject({
  id,
  orderId: id,
  createdAt: isoTime,
  amount: money,
  currency,
  lineItems: z
    .array(z.strictObject({ variantId: id, quantity: int32.min(0), amount: money }))
    .max(1000)
    .default([]),
  /** Refunds rarely change; when absent the version is createdAt. */
  updatedAt: isoTime.optional(),
});

export const AD_LEVELS = ["account", "campaign", "adset", "ad"] as const;
const platform = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,31}$/, "must be a lowercase platform name such as facebook, google, tiktok");

export const adEntitySchema = z
  .strictObject({
    platform,
    level: z.enum(AD_LEVELS),
    id,
    accountId: id,
    campaignId: id.optional(),
    adsetId: id.optional(),
    name: z.string().default(""),
    status: z.string().default(""),
    currency,
    dailyBudget: money.nullable().optional(),
    budgetRemaining: money.nullable().optional(),
    amountSpent: money.nullable().optional(),
    sourceCreatedAt: isoTime,
    sourceUpdatedAt: isoTime,
  })
  .superRefine(requireParents);

export const adMetricsSchema = z
  .strictObject({
    platform,
    level: z.enum(AD_LEVELS),
    entityId: id,
    accountId: id,
    campaignId: id.optional(),
    adsetId: id.optional(),
    date: isoDate,
    currency,
    spend: money,
    impressions: z.number().int().min(0).default(0),
    clicks: z.number().int().min(0).default(0),
    conversions: z.number().min(0).max(1e13).default(0),
    conversionValue: money.default(0),
    /** When the platform reported these figures; absent = the time of the sync (a later report wins). */
    updatedAt: isoTime.optional(),
  })
  .superRefine(requireParents);

export const fxRateSchema = z.strictObject({
  date: isoDate,
  currency,
  /** Units of `currency` per 1 USD. */
  unitsPerUsd: z.number().min(1e-6, "must be at least 0.000001").max(1e9, "must be at most 10^9"),
});

/** Ad sets name their campaign; ads name their campaign and ad set. */
function requireParents(
  v: { level: (typeof AD_LEVELS)[number]; campaignId?: string | undefined; adsetId?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if ((v.level === "adset" || v.level === "ad") && !v.campaignId) {
    ctx.addIssue({ code: "custom", path: ["campaignId"], message: `an ${v.level} needs campaignId` });
  }
  if (v.level === "ad" && !v.adsetId)
    ctx.addIssue({ code: "custom", path: ["adsetId"], message: "an ad needs adsetId" });
}

export const RECORD_SCHEMAS = {
  products: productSchema,
  orders: orderSchema,
  refunds: refundSchema,
  "ad-entities": adEntitySchema,
  "ad-metrics": adMetricsSchema,
  "fx-rates": fxRateSchema,
} as const;
export type RecordKind = keyof typeof RECORD_SCHEMAS;
export const RECORD_KINDS = Object.keys(RECORD_SCHEMAS) as RecordKind[];

export type ProductRecord = z.infer<typeof productSchema>;
export type OrderRecord = z.infer<typeof orderSchema>;
export type RefundRecord = z.infer<typeof refundSchema>;
export type AdEntityRecord = z.infer<typeof adEntitySchema>;
export type AdMetricsRecord = z.infer<typeof adMetricsSchema>;
export type FxRateRecord = z.infer<typeof fxRateSchema>;

export interface SyncResult {
  /** New records stored. */
  accepted: number;
  /** Records that replaced an older version. */
  updated: number;
  /** Records whose stored version is the same or newer (nothing written). */
  unchanged: number;
  rejected: { index: number; errors: { field: string; message: string }[] }[];
}
