import { z } from "zod";
import { HOLDS_CENTS_MESSAGE, holdsCents, MONEY_LIMIT, roundMoney } from "../shared/money.js";
import { amountSchema, currencySchema, daySchema, percentSchema, required } from "../shared/schemas.js";

/**
 * Cost lines (docs/costs.md): one strict shape per cost type. Amounts are JSON numbers
 * in major units, ≥ 0, rounded to 4 decimals (money.ts); rates are percent (2.9 = 2.9 %), 0..100,
 * rounded the same way. Effective dates are days of the account's timezone, both inclusive;
 * null or absent = unbounded on that side.
 */

export const LINE_COST_TYPES = ["order", "gateway", "shipping", "variable", "fixed"] as const;
export type LineCostType = (typeof LINE_COST_TYPES)[number];
/** Cost types whose lines enter the per-order cost snapshot; variable and fixed apply at report time. */
export const PER_ORDER_COST_TYPES: readonly LineCostType[] = ["order", "gateway", "shipping"];
export const CONFIG_TYPES = [...LINE_COST_TYPES, "global_product_override"] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

const text = (max: number) =>
  z
    .string({ error: required("must be a string") })
    .min(1)
    .max(max);

const common = {
  name: text(200),
  currency: currencySchema,
  effectiveStartDate: daySchema.nullable().optional(),
  effectiveEndDate: daySchema.nullable().optional(),
};

const orderShape = { ...common, amount: amountSchema };
const gatewayShape = { ...common, gateway: text(100), percentRate: percentSchema, fixedFee: amountSchema };
const shippingShape = {
  ...common,
  countries: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 code")
        .transform((c) => c.toUpperCase()),
    )
    .min(1, "must name at least one country; leave it out for every country")
    .max(300)
    .optional(),
  costPerOrder: amountSchema,
  costPerItem: amountSchema,
};
const variableCommon = { ...common, category: text(100), channel: text(100) };
const fixedShape = {
  ...common,
  amount: amountSchema,
  frequency: z.enum(["daily", "weekly", "monthly", "yearly"]),
  category: text(100),
};

/** A line whose end precedes its start is refused, naming effectiveEndDate. */
function datesInOrder(
  v: { effectiveStartDate?: string | null | undefined; effectiveEndDate?: string | null | undefined },
  ctx: z.RefinementCtx,
) {
  if (v.effectiveStartDate && v.effectiveEndDate && v.effectiveEndDate < v.effectiveStartDate) {
    ctx.addIssue({
      code: "custom",
      path: ["effectiveEndDate"],
      message: "must not be before effectiveStartDate",
    });
  }
}

export const orderLineSchema = z.strictObject(orderShape).superRefine(datesInOrder);
export const gatewayLineSchema = z.strictObject(gatewayShape).superRefine(datesInOrder);
export const shippingLineSchema = z.strictObject(shippingShape).superRefine(datesInOrder);
export const variableLineSchema = z
  .discriminatedUnion("type", [
    z.strictObject({ ...variableCommon, type: z.literal("pct_ad_spend"), percentRate: percentSchema }),
    z.strictObject({ ...variableCommon, type: z.literal("pct_revenue"), percentRate: percentSchema }),
    z.strictObject({ ...variableCommon, type: z.literal("per_order"), amount: amountSchema }),
  ])
  .superRefine(datesInOrder);
export const fixedLineSchema = z.strictObject(fixedShape).superRefine(datesInOrder);

export const LINE_SCHEMAS = {
  order: orderLineSchema,
  gateway: gatewayLineSchema,
  shipping: shippingLineSchema,
  variable: variableLineSchema,
  fixed: fixedLineSchema,
} as const;
export type LineInput = z.output<(typeof LINE_SCHEMAS)[LineCostType]>;

/** Updates: every field optional; a date may be set to null (unbounded). Checked whole after merging. */
export const LINE_UPDATE_SCHEMAS = {
  order: z.strictObject(orderShape).partial(),
  gateway: z.strictObject(gatewayShape).partial(),
  // null clears the country list: the line then applies to every country.
  shipping: z
    .strictObject({ ...shippingShape, countries: shippingShape.countries.unwrap().nullable() })
    .partial(),
  variable: z
    .strictObject({
      ...variableCommon,
      type: z.enum(["pct_ad_spend", "pct_revenue", "per_order"]),
      percentRate: percentSchema,
      amount: amountSchema,
    })
    .partial(),
  fixed: z.strictObject(fixedShape).partial(),
} as const;

export const createLineBody = z.discriminatedUnion("costType", [
  z.strictObject({ costType: z.literal("order"), line: orderLineSchema }),
  z.strictObject({ costType: z.literal("gateway"), line: gatewayLineSchema }),
  z.strictObject({ costType: z.literal("shipping"), line: shippingLineSchema }),
  z.strictObject({ costType: z.literal("variable"), line: variableLineSchema }),
  z.strictObject({ costType: z.literal("fixed"), line: fixedLineSchema }),
]);
export type CreateLineBody = z.output<typeof createLineBody>;

const someChange = <T extends z.ZodType<Record<string, unknown>>>(s: T) =>
  s.refine((u) => Object.keys(u).length > 0, {
    message: "must change at least one field",
    // An update of unknown fields only is reported by those fields, not as empty as well.
    when: (payload) => payload.issues.length === 0,
  });

export const updateLineBody = z.discriminatedUnion("costType", [
  z.strictObject({ costType: z.literal("order"), updates: someChange(LINE_UPDATE_SCHEMAS.order) }),
  z.strictObject({ costType: z.literal("gateway"), updates: someChange(LINE_UPDATE_SCHEMAS.gateway) }),
  z.strictObject({ costType: z.literal("shipping"), updates: someChange(LINE_UPDATE_SCHEMAS.shipping) }),
  z.strictObject({ costType: z.literal("variable"), updates: someChange(LINE_UPDATE_SCHEMAS.variable) }),
  z.strictObject({ costType: z.literal("fixed"), updates: someChange(LINE_UPDATE_SCHEMAS.fixed) }),
]);
export type UpdateLineBody = z.output<typeof updateLineBody>;

export const overrideSchema = z.strictObject({
  type: z.enum(["percent_of_price", "fixed"]),
  value: z
    .number({ error: required("must be a number") })
    .min(0, "must be ≥ 0")
    .lt(MONEY_LIMIT, "must be below 10^14")
    .refine(holdsCents, { message: HOLDS_CENTS_MESSAGE, when: (payload) => payload.issues.length === 0 })
    .transform(roundMoney),
});
export type OverrideInput = z.output<typeof overrideSchema>;

export const configQuery = z.strictObject({ type: z.enum(CONFIG_TYPES).optional() });
export const deleteLineQuery = z.strictObject({ costType: z.enum(LINE_COST_TYPES) });
export const lineParams = z.strictObject({ lineId: z.string().min(1).max(200) });

/** A stored line as answered: the line's fields, its id, and both dates (null = unbounded). */
export const storedLineSchema = z
  .object({
    id: z.string().describe("ULID"),
    name: z.string(),
    currency: z.string(),
    effectiveStartDate: z.string().nullable(),
    effectiveEndDate: z.string().nullable(),
  })
  .catchall(z.unknown());
export type StoredLine = z.infer<typeof storedLineSchema>;

export const overrideOutSchema = z.object({
  type: z.enum(["percent_of_price", "fixed"]),
  value: z.number(),
  updatedAt: z.string(),
});
export type StoredOverride = z.infer<typeof overrideOutSchema>;

export const configSchema = z
  .object({
    order: z.array(storedLineSchema),
    gateway: z.array(storedLineSchema),
    shipping: z.array(storedLineSchema),
    variable: z.array(storedLineSchema),
    fixed: z.array(storedLineSchema),
    global_product_override: overrideOutSchema.nullable(),
  })
  .meta({ description: "The account's cost configuration, keyed by cost type; lines in creation order" });
export type CostConfig = z.infer<typeof configSchema>;
