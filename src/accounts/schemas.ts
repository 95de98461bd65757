import { z } from "zod";
import { ACCOUNT_NAME_MAX, ACCOUNT_NAME_MIN, accountNameProblem } from "./account-name.js";

export const exclusionConditionSchema = z.strictObject({
  id: z.uuid(),
  field: z.string().min(1),
  operator: z.string().min(1),
  value: z.string(),
});

export const exclusionFilterSchema = z.strictObject({
  id: z.uuid(),
  name: z.string(),
  enabled: z.boolean(),
  conditionGroups: z.array(
    z.strictObject({ id: z.uuid(), logic: z.string().min(1), conditions: z.array(exclusionConditionSchema) }),
  ),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
});

export const orderSettingsSchema = z
  .object({
    countPendingOrders: z.boolean(),
    countVoidedOrders: z.boolean(),
    refundDateAttribution: z.enum(["refund_date", "order_date"]),
    exclusionFilters: z.array(exclusionFilterSchema),
  })
  .meta({ description: "Which orders count, how refunds are dated, which orders are excluded" });
export type OrderSettings = z.infer<typeof orderSettingsSchema>;

/** Order-settings defaults (docs/query.md, "Order settings"); the stored object may hold any subset. */
export const DEFAULT_ORDER_SETTINGS: OrderSettings = {
  countPendingOrders: false,
  countVoidedOrders: false,
  refundDateAttribution: "refund_date",
  exclusionFilters: [],
};

const personSchema = z.object({ email: z.email(), firstName: z.string(), lastName: z.string() });

export const subscriptionSchema = z
  .object({
    plan: z
      .object({
        name: z.string(),
        billingFrequency: z.string(),
        displayPrice: z.string(),
        currency: z.string(),
        discountedDisplayPrice: z.string(),
        discount: z
          .object({
            code: z.string(),
            type: z.string(),
            value: z.number(),
            appliesUntil: z.string(),
            appliesForBillingIntervals: z.number().int(),
          })
          .partial(),
      })
      .partial(),
    status: z.string(),
    trialEndsOn: z.string(),
    currentPeriodEnd: z.string(),
    cancelAtPeriodEnd: z.boolean(),
  })
  .partial();

export const accountSchema = z
  .object({
    accountName: z.string(),
    createdAt: z.string(),
    owners: z.array(personSchema),
    admins: z.array(personSchema),
    subscription: subscriptionSchema.optional(),
  })
  .meta({ description: "Public projection of the account" });
export type Account = z.infer<typeof accountSchema>;

export const renameAccountSchema = z.strictObject({
  accountName: z
    .string()
    .superRefine((name, ctx) => {
      const problem = accountNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    // JSON Schema counts string length in code points, as the rule does.
    .meta({
      minLength: ACCOUNT_NAME_MIN,
      maxLength: ACCOUNT_NAME_MAX,
      description:
        "1-100 characters (code points). Leading or trailing whitespace is refused, not trimmed; " +
        "control, zero-width / format and bidirectional-control characters and lone surrogates are " +
        "refused; letters, marks, digits, punctuation, symbols and emoji (ZWJ sequences, variation " +
        "selectors, tag sequences) are accepted.",
    }),
});
export type RenameAccount = z.infer<typeof renameAccountSchema>;
