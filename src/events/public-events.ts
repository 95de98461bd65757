import { z } from "zod";

/*
 * Events published on the public stream (`events`, Redis key `<REDIS_KEY_PREFIX>events`, by default
 * `pixelhouse:events`). The payload is exactly this object: no envelope, so a consumer parses the
 * `payload` field of a stream entry and gets what docs/events.md shows.
 */

export const accountUpdatedEventSchema = z
  .object({
    type: z.literal("accountUpdated"),
    accountId: z.string(),
    pixelId: z.string().describe("the pixel of the key that made the change"),
    actor: z.string().regex(/^cli:/).describe("`cli:<apiKeyPk>`: the id of the API key that made the change"),
    changes: z.object({
      accountName: z.object({ from: z.string(), to: z.string() }),
    }),
    occurredAt: z.iso.datetime().describe("when the change committed (UTC, milliseconds)"),
  })
  .meta({ description: "An account was renamed through the API" });
export type AccountUpdatedEvent = z.infer<typeof accountUpdatedEventSchema>;

export const publicEventSchema = z.discriminatedUnion("type", [accountUpdatedEventSchema]);
export type PublicEvent = z.infer<typeof publicEventSchema>;

/** The outbox topic of public events; the relay sends it to the public stream. */
export const PUBLIC_EVENTS_TOPIC = "events";
export const PUBLIC_EVENTS_STREAM = "events";

/**
 * The outbox keeps payloads as jsonb, which reorders keys; rebuilding the event through its schema
 * gives consumers the documented key order. A payload that does not match is passed on untouched
 * rather than held back, so one bad row never blocks the ones behind it.
 */
export function canonicalPublicEvent(payload: unknown): unknown {
  const parsed = publicEventSchema.safeParse(payload);
  return parsed.success ? parsed.data : payload;
}
