import { z } from "zod";
import { amountSchema, daySchema } from "../shared/schemas.js";

/** The catalog (docs/products.md) as the cost endpoints read and edit it. */

const id = z.string().min(1).max(255);
export const variantParams = z.strictObject({ productId: id, variantId: id });
export const cogParams = z.strictObject({ productId: id, variantId: id, cogId: z.string().min(1).max(200) });

export const SEARCH_DEFAULT_LIMIT = 25;
export const searchQuery = z.strictObject({
  q: z
    .string()
    .max(200)
    .optional()
    .transform((q) => (q ?? "").trim())
    .describe("matched, case-insensitively, inside product titles, variant titles and SKUs; empty = all"),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, "must be an integer from 1 to 100")
    .transform(Number)
    .pipe(z.number().int().min(1, "must be at least 1").max(100, "must be at most 100"))
    .optional()
    .describe(`page size, 1..100 (default ${SEARCH_DEFAULT_LIMIT})`),
  cursor: z.string().max(2000).optional().describe("`nextCursor` of the previous page of the same search"),
});

export const costQuery = z
  .strictObject({
    resolved: z
      .enum(["true", "false"])
      .optional()
      .describe("true: the effective cost and its source (Form B); otherwise the stored record (Form A)"),
    at: daySchema.optional().describe("with resolved=true: resolve for this day of the account timezone"),
  })
  .superRefine((q, ctx) => {
    if (q.at !== undefined && q.resolved !== "true")
      ctx.addIssue({ code: "custom", path: ["at"], message: "needs resolved=true" });
  });

function datesInOrder(
  v: { effectiveStartDate?: string | undefined; effectiveEndDate?: string | null | undefined },
  ctx: z.RefinementCtx,
) {
  if (v.effectiveStartDate && v.effectiveEndDate && v.effectiveEndDate < v.effectiveStartDate)
    ctx.addIssue({
      code: "custom",
      path: ["effectiveEndDate"],
      message: "must not be before effectiveStartDate",
    });
}

const description = z.string().max(1000);
export const cogBody = z
  .strictObject({
    cost: amountSchema,
    effectiveStartDate: daySchema,
    effectiveEndDate: daySchema.nullable().optional().describe("null or absent = open-ended"),
    description: description.optional(),
  })
  .superRefine(datesInOrder);
export type CogInput = z.output<typeof cogBody>;

export const cogUpdateBody = z
  .strictObject({
    cost: amountSchema,
    effectiveStartDate: daySchema,
    effectiveEndDate: daySchema.nullable().describe("null = open-ended"),
    description: description.nullable().describe("null removes the note"),
  })
  .partial()
  .refine((u) => Object.keys(u).length > 0, {
    message: "must change at least one field",
    // An update of unknown fields only is reported by those fields, not as empty as well.
    when: (payload) => payload.issues.length === 0,
  })
  .superRefine(datesInOrder);
export type CogUpdate = z.output<typeof cogUpdateBody>;

export const handlingFeeBody = z.strictObject({ handlingFee: amountSchema });

export const costHistoryEntrySchema = z.object({
  id: z.string().describe("ULID"),
  cost: z.number(),
  effectiveStartDate: z.string(),
  effectiveEndDate: z.string().nullable(),
  description: z.string().optional(),
});
export type CostHistoryEntry = z.infer<typeof costHistoryEntrySchema>;

export const variantSummarySchema = z.object({
  id: z.string(),
  productId: z.string(),
  sku: z.string(),
  title: z.string(),
  handlingFee: z.number().describe("per unit, account currency"),
  manualCostHistory: z.array(costHistoryEntrySchema).describe("chronological"),
});
export type VariantSummary = z.infer<typeof variantSummarySchema>;

export const productVariantSchema = z
  .object({
    productId: z.string(),
    variantId: z.string(),
    sku: z.string(),
    variantTitle: z.string(),
    productTitle: z.string(),
    handle: z.string(),
    vendor: z.string(),
    productType: z.string(),
    status: z.string(),
    tags: z.array(z.string()),
    imageUrls: z.array(z.string()),
    currency: z.string(),
    currentPrice: z.number(),
    handlingFee: z.number(),
    storeCostHistory: z.array(costHistoryEntrySchema),
    manualCostHistory: z.array(costHistoryEntrySchema),
    variant: z.record(z.string(), z.unknown()).describe("raw store payload plus inventoryQuantity"),
    pixelId: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ description: "Form A: the stored variant record with its product's details" });
export type ProductVariant = z.infer<typeof productVariantSchema>;

export const resolvedCostSchema = z
  .object({
    effectiveCost: z.number(),
    handlingFee: z.number(),
    currency: z.string().describe("currency of effectiveCost"),
    handlingFeeCurrency: z.string(),
    source: z.enum(["variant_cog", "store_cost", "global_override", "default"]),
    activeCogLine: costHistoryEntrySchema.nullable(),
    date: z.string().describe("the day resolved, in the account timezone"),
  })
  .meta({ description: "Form B: the effective per-unit cost and the tier that supplied it" });

export const productSchema = z.object({
  id: z.string(),
  title: z.string(),
  vendor: z.string(),
  variants: z.array(variantSummarySchema),
});
export type Product = z.infer<typeof productSchema>;

export const searchResponse = z.object({
  items: z.array(productSchema),
  nextCursor: z.string().optional().describe("absent on the last page"),
});
