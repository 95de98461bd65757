import type { Logger } from "../log.js";
import type { ForwardableEvent } from "./event-row.js";
import type { GroupCommitter } from "./group.js";
import type { IngestContext } from "./normalize.js";
import { normalizeStep } from "./steps.js";
import { validateEvents } from "./validate.js";

export interface IngestResult {
  eventsIngested: number;
  duplicatesSkipped: number;
}

export interface ForwardQueue {
  enqueue(pixelId: string, events: ForwardableEvent[]): Promise<number>;
}

export interface IngestDeps {
  group: GroupCommitter;
  forwarder?: ForwardQueue;
  log: Logger;
}

/**
 * One pipeline for the server API and the browser collector: validate → normalize/enrich (per
 * request) → dedup → identity → durable write (per group of concurrent requests) → acknowledge →
 * queue for forwarding. Nothing is acknowledged before the warehouse INSERT holding it succeeded.
 */
export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  async ingest(ctx: IngestContext, raw: readonly unknown[]): Promise<IngestResult> {
    const valid = validateEvents(raw, ctx.receivedAtMs, { clampFuture: ctx.origin === "browser" });
    const batch = normalizeStep(valid, ctx);
    await this.deps.group.submit(batch);
    const kept = batch.events.filter((_, i) => batch.drop[i] === "");
    if (this.deps.forwarder && kept.length) {
      // Awaited so an acknowledged event is queued too; a queue failure is logged, not answered with a
      // 503: the ids are already remembered, so a client retry would only be skipped as duplicates.
      await this.deps.forwarder
        .enqueue(
          ctx.pixelId,
          kept.map((e) => ({ row: e.row, originalIp: e.originalIp })),
        )
        .catch((err: unknown) => {
          this.deps.log.error(
            { err, pixelId: ctx.pixelId, events: kept.length },
            "events stored but not queued for forwarding",
          );
        });
    }
    return { eventsIngested: kept.length, duplicatesSkipped: batch.events.length - kept.length };
  }
}
