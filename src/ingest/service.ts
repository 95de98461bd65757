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
    const valid = validateEvents(raw, ctx.receivedAtMs, { clampFuture: ctx.origin === "browser" });
    const batch = normalizeStep(valid, ctx);
    await this.group.submit(batch);
    const kept = batch.drop.filter((d) => d === "").length;
    return { eventsIngested: kept, duplicatesSkipped: batch.events.length - kept };
  }
}
