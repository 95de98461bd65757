import { z } from "zod";
import { HOLDS_CENTS_MESSAGE, holdsCents } from "../shared/money.js";

/** Arrays of identifiers, traits and items hold at most this many entries (docs/ingestion.md, "Known limits"). */
export const MAX_ARRAY = 100;
export const MAX_EVENTS = 100;
/** Raw body limit of the events API: 128 KB on the bytes, before parsing. */
export const EVENTS_BODY_LIMIT = 131_072;
/** How far ahead of the server clock an event timestamp may be. */
export const MAX_FUTURE_MS = 10 * 60 * 1000;

const idList = z.array(z.string()).max(MAX_ARRAY);
/**
 * Money fits the warehouse's Decimal(18, 4): |amount| < 10^14. It is stored from its decimal text
 * (normalize.ts), so it must be a number that stands for one amount to the cent (holdsCents).
 */
const money = z.number().superRefine((v, ctx) => {
  if (!(Math.abs(v) < 1e14))
    ctx.addIssue({ code: "custom", message: "must be less than 10^14 in magnitude" });
  else if (!holdsCents(v)) ctx.addIssue({ code: "custom", message: HOLDS_CENTS_MESSAGE });
});
/**
 * Event names are the keys reports group and filter by: an invisible character would split one event
 * into two that look alike, so control characters (C0, DEL, C1) are refused rather than stored.
 */
const eventName = z
  .string()
  .min(1, "must be a non-empty string")
  .superRefine((name, ctx) => {
    const at = name.search(/\p{Cc}/u);
    if (at < 0) return;
    const code = name.charCodeAt(at).toString(16).toUpperCase().padStart(4, "0");
    ctx.addIssue({
      code: "custom",
      message: `must not contain control characters (U+${code} at character ${at + 1})`,
    });
  });
/** Widths and heights are UInt32 columns; quantities Int32. */
const nonNegInt = z.number().int().min(0).max(4_294_967_295);
const quantity = z.number().int().min(-2_147_483_648).max(2_147_483_647);
/** The warehouse stores event times from 1970 to 2149. */
const storableTime = (v: string) => {
  const year = Number(v.slice(0, 4));
  return !/^\d{4}-/.test(v) || (year >= 1970 && year <= 2149);
};

const itemSchema = z.looseObject({
  id: z.union([z.string(), z.number().transform(String)]).optional(),
  name: z.string().optional(),
  price: money.optional(),
  quantity: quantity.optional(),
});

/**
 * One event of the events API (docs/ingestion.md). Every known field is typed as written; unknown keys pass through
 * (they are stored as properties). `timestamp` is pixelhouse's addition: when the event happened.
 */
export const eventSchema = z.looseObject({
  name: eventName,
  eventId: z.string().min(1).optional(),
  identityId: z.string().optional(),
  timestamp: z.iso
    .datetime({ offset: true, message: "must be ISO-8601 with a time zone offset" })
    .refine(storableTime, "must be between 1970 and 2149")
    .optional(),
  userProperties: z
    .looseObject({ emails: idList.optional(), userIds: idList.optional(), storeYIds: idList.optional() })
    .superRefine((props, ctx) => {
      // Any other trait or address array is bounded too.
      for (const [key, value] of Object.entries(props)) {
        if (Array.isArray(value) && value.length > MAX_ARRAY) {
          ctx.addIssue({ code: "custom", path: [key], message: `at most ${MAX_ARRAY} entries` });
        }
      }
    })
    .optional(),
  ipAddress: z.string().optional(),
  userAgent: z.string().optional(),
  locale: z.string().optional(),
  referrer: z.string().optional(),
  page: z.looseObject({ url: z.string().optional(), referrer: z.string().optional() }).optional(),
  click: z
    .looseObject({
      fbc: z.string().optional(),
      gclid: z.string().optional(),
      fbclid: z.string().optional(),
      fbp: z.string().optional(),
    })
    .optional(),
  viewport: z
    .looseObject({
      viewportWidth: nonNegInt.optional(),
      viewportHeight: nonNegInt.optional(),
      pageHeight: nonNegInt.optional(),
      devicePixelRatio: z.number().positive().optional(),
    })
    .optional(),
  eventProperties: z
    .looseObject({
      orderId: z.union([z.string(), z.number().transform(String)]).optional(),
      value: money.optional(),
      currency: z
        .string()
        .regex(/^[A-Za-z]{3}$/, "currency must be an ISO 4217 code")
        .transform((c) => c.toUpperCase())
        .optional(),
      items: z.array(itemSchema).max(MAX_ARRAY).optional(),
    })
    .optional(),
});
export type IncomingEvent = z.infer<typeof eventSchema>;

/** Envelope check only; events are validated one by one so every problem is reported with its index. */
export const eventsEnvelopeSchema = z.strictObject({
  /** Optional; when present it must name the x-pixel-id pixel (403 otherwise). */
  pixelId: z.string().optional(),
  events: z
    .array(z.unknown())
    .min(1, "events must hold at least 1 event")
    .max(MAX_EVENTS, `at most ${MAX_EVENTS} events`),
});

export const ingestResponseSchema = z.object({
  requestId: z.uuid(),
  eventsIngested: z.number().int(),
  duplicatesSkipped: z.number().int(),
});

/** The browser collector's body: the pixel id travels in the body (sendBeacon cannot set headers). */
export const collectEnvelopeSchema = eventsEnvelopeSchema.extend({ pixelId: z.string().min(1).max(64) });
