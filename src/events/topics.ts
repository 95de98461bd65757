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
  // Internal: per-order cost recalculation. Written by SyncService (orders arrive or change) and by
  // cost changes; consumed by the recalculation worker.
  "orders.changed": { stream: "orders.changed" },
  "costs.changed": { stream: "costs.changed" },
  // Internal: aliases seen on orders, for the identity worker (ingest publishes its own directly).
  "identity.observed": { stream: "identity.observed" },
};
