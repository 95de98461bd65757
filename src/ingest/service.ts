import { UnavailableError } from "../errors.js";
import {
  eventsAccepted,
  eventsDuplicate,
  eventsRejected,
  ingestAckSeconds,
  ingestRequests,
  since,
} from "../metrics.js";
import type { GroupCommitter } from "./group.js";
import type { IngestContext } from "./normalize.js";
import { normalizeStep } from "./steps.js";
import { validateEvents } from "./validate.js";

export interface IngestResult {
  eventsIngested: number;
  duplicatesSkipped: number;
}

/**
 * One pipeline for the server API and the browser collector: validate → normalize/enrich (per
 * request), then per group of concurrent requests dedup → identity → forwarding queued (held) →
 * durable write → held deliveries released → acknowledge. Nothing is acknowledged before the
 * warehouse INSERT holding it succeeded.
 */
export class IngestService {
  constructor(private readonly group: GroupCommitter) {}

  async ingest(ctx: IngestContext, raw: readonly unknown[]): Promise<IngestResult> {
    const started = performance.now();
    const origin = ctx.origin;
    try {
      const valid = validateEvents(raw, ctx.receivedAtMs, { clampFuture: origin === "browser" });
      const batch = normalizeStep(valid, ctx);
      await this.group.submit(batch);
      const kept = batch.drop.filter((d) => d === "").length;
      ingestRequests.inc({ origin, outcome: "accepted" });
      eventsAccepted.inc({ origin }, kept);
      eventsDuplicate.inc({ origin }, batch.events.length - kept);
      ingestAckSeconds.observe({ origin }, since(started));
      return { eventsIngested: kept, duplicatesSkipped: batch.events.length - kept };
    } catch (err) {
      const unavailable = err instanceof UnavailableError || (err as { status?: number })?.status === 503;
      ingestRequests.inc({ origin, outcome: unavailable ? "unavailable" : "rejected" });
      eventsRejected.inc({ reason: unavailable ? "unavailable" : "invalid" }, raw.length);
      throw err;
    }
  }
}
