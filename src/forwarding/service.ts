import type { ForwardableEvent } from "../shared/event-row.js";
import type { SqlStore } from "../stores/sql/port.js";
import type { DestinationService } from "./destinations.js";
import { type DeadLetter, DeliveryQueue, type Hold, type QueueOptions, type ReplayFilter } from "./queue.js";
import { DeliveryWorker, type RunResult, type WorkerOptions } from "./worker.js";

export interface ForwarderOptions extends QueueOptions, WorkerOptions {}

/**
 * Forwarding as the rest of the app sees it: the pixel's destinations, the queue ingestion feeds
 * (`enqueue`, `release`, `cancel`: ingestion's `ForwardQueue`), the worker (`serve` starts it; the
 * CLI never does) and the dead letters. One instance per process, built in services.ts or by a CLI
 * command.
 */
export class Forwarder {
  readonly queue: DeliveryQueue;
  private readonly worker: DeliveryWorker;

  constructor(
    sql: SqlStore,
    readonly destinations: DestinationService,
    options: ForwarderOptions = {},
  ) {
    this.queue = new DeliveryQueue(sql, destinations, options);
    this.worker = new DeliveryWorker(this.queue, options);
  }

  enqueue(pixelId: string, events: readonly ForwardableEvent[], hold?: Hold): Promise<number> {
    return this.queue.enqueue(pixelId, events, hold);
  }

  release(token: string): Promise<void> {
    return this.queue.release(token);
  }

  cancel(token: string): Promise<void> {
    return this.queue.cancel(token);
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  get running(): boolean {
    return this.worker.running;
  }

  runOnce(): Promise<RunResult> {
    return this.worker.runOnce();
  }

  listDeadLetters(
    pixelId: string,
    options?: { includeReplayed?: boolean; limit?: number },
  ): Promise<DeadLetter[]> {
    return this.queue.listDeadLetters(pixelId, options);
  }

  replayDeadLetters(filter: ReplayFilter): Promise<number> {
    return this.queue.replayDeadLetters(filter);
  }
}
