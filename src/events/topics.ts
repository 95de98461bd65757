import { canonicalPublicEvent, PUBLIC_EVENTS_STREAM, PUBLIC_EVENTS_TOPIC } from "./public-events.js";

/** Where the relay sends the rows of one outbox topic. */
export interface TopicRoute {
  stream: string;
  /** Reshapes a stored payload before it is published (default: as stored). */
  shape?: (payload: unknown) => unknown;
}

/*
 * Outbox topic → bus stream. The relay moves exactly these topics and leaves every other outbox row
 * untouched. A producer of a new topic adds it here and writes its outbox row in the transaction of
 * its change; a consumer subscribes to the stream (src/events/CONTEXT.md).
 */
export const TOPIC_STREAMS: Readonly<Record<string, TopicRoute>> = {
  [PUBLIC_EVENTS_TOPIC]: { stream: PUBLIC_EVENTS_STREAM, shape: canonicalPublicEvent },
  // Internal: per-order cost recalculation after cost changes; consumed by the recalculation worker.
  "costs.changed": { stream: "costs.changed" },
  // Orders and their sightings are published on the bus directly by SyncService; these two routes
  // still deliver rows that a version writing them to the outbox left unpublished, and they are how
  // the relay's housekeeping knows to trim the two streams: keep them.
  "orders.changed": { stream: "orders.changed" },
  "identity.observed": { stream: "identity.observed" },
};
