import { z } from "zod";
import { type AttributionModel, DEFAULT_HALF_LIFE_DAYS } from "../query/attribution-models.js";
import { ATTRIBUTION_WINDOWS, attributionHalfLifeSchema, currencySchema } from "../query/schemas.js";

/** An order's journey (docs/journeys.md): the request and the answer, as the route and OpenAPI see them. */

export const DEFAULT_WINDOW = 30;

export const journeyParams = z.strictObject({
  orderId: z.string().min(1).describe("the order's id as the store platform sent it"),
});

/**
 * Query strings carry text: a number is parsed from it, then held to the same rules as the query
 * API's body fields, so `window` and `halfLifeDays` accept exactly what `attributionWindow` and
 * `attributionHalfLifeDays` do.
 */
const numberText = (what: string) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, `must be ${what}`)
    .transform(Number);

export const journeyQuery = z.strictObject({
  currency: currencySchema
    .optional()
    .describe("ISO 4217 code the order's value is converted to (default USD)"),
  // An enum of the texts, so the OpenAPI document lists the windows a client may send.
  window: z
    .enum(ATTRIBUTION_WINDOWS.map(String) as [string, ...string[]], {
      error: "must be one of 1, 7, 14, 30, 60, 90, -1",
    })
    .transform(Number)
    .optional()
    .describe(
      `attribution window in days: 1, 7, 14, 30, 60, 90, or -1 for unlimited (default ${DEFAULT_WINDOW})`,
    ),
  halfLifeDays: numberText("a number of days from 1 to 90")
    .pipe(attributionHalfLifeSchema)
    .optional()
    .describe(`time_decay half-life in days, 1–90 (default ${DEFAULT_HALF_LIFE_DAYS})`),
});
export type JourneyQuery = z.infer<typeof journeyQuery>;

/** One row of identity_links as it stands now (the highest version of the alias). */
export const identityLinkSchema = z.object({
  aliasType: z.string().describe("identity | email | user | store | customer | order | canonical"),
  aliasValue: z.string(),
  canonicalId: z.string(),
  firstSeen: z
    .string()
    .describe("first_seen of the alias's current row: when it was filed under this identity"),
});
export type IdentityLink = z.infer<typeof identityLinkSchema>;

// Spelled out (not built from ATTRIBUTION_MODELS) so the type names each model; `satisfies` keeps
// the two lists the same.
const modelNumbers = {
  first_click: z.number(),
  last_click: z.number(),
  any_click: z.number(),
  linear: z.number(),
  time_decay: z.number(),
  position_based: z.number(),
} satisfies Record<AttributionModel, z.ZodNumber>;
const perModel = (what: string) => z.object(modelNumbers).meta({ description: what });

export const journeyTouchSchema = z.object({
  eventId: z.string(),
  time: z.string().describe("ISO instant (UTC)"),
  channel: z.string().nullable(),
  source: z.string().nullable(),
  medium: z.string().nullable(),
  campaign: z.string().nullable(),
  campaignId: z.string().nullable(),
  adsetId: z.string().nullable(),
  adId: z.string().nullable(),
  clickIdType: z.string().nullable(),
  landingPage: z.string().nullable().describe("page_url of the touch's event; null when it is not found"),
  inWindow: z.boolean(),
  identity: z.object({
    identityId: z.string().nullable().describe("the identityId (cookie) the touch's event carried"),
    canonicalId: z.string().describe("the identity id stored on the touch"),
    merges: z
      .array(identityLinkSchema)
      .describe(
        "the canonical links crossed to reach the order's identity; empty when both rows carry one id",
      ),
  }),
  credit: perModel("the touch's share of the order per model (0 outside the window), 4 decimals"),
  revenue: perModel("credit × the order's net value in the requested currency, 2 decimals"),
});
export type JourneyTouch = z.infer<typeof journeyTouchSchema>;

export const journeyResponse = z.object({
  order: z.object({
    orderId: z.string(),
    createdAt: z.string().describe("ISO instant (UTC)"),
    status: z
      .string()
      .describe(
        "financial status as stored: pending | authorized | paid | partially_paid | partially_refunded | refunded | voided",
      ),
    currency: z.string().describe("the order's own currency"),
    totalPrice: z.number().describe("the order's total in its own currency"),
    value: z.object({
      currency: z.string(),
      total: z.number().describe("the total at the rate of the order's UTC day"),
      refunds: z.number().describe("every refund at the rate of its own UTC day"),
      net: z.number().describe("total − refunds: the revenue attribution credits"),
    }),
    identity: z.object({
      storedId: z.string().describe("the identity id stored on the order"),
      canonicalId: z.string().describe("the identity it resolves to (one canonical hop)"),
      merge: identityLinkSchema.nullable().describe("the canonical link of storedId, when it has one"),
    }),
  }),
  attribution: z.object({
    window: z.number(),
    halfLifeDays: z.number(),
    touchesInWindow: z.number(),
    olderTouchesOmitted: z.number().describe("touches before the window left out of `touches` (the oldest)"),
  }),
  touches: z.array(journeyTouchSchema),
  identityLinks: z.array(identityLinkSchema),
  identityLinksOmitted: z.number(),
});
export type Journey = z.infer<typeof journeyResponse>;
