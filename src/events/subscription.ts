import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { consumerProcessed, consumerRetries } from "../metrics.js";
import type { Bus, BusMessage } from "../stores/bus/port.js";
import { PollingLoop } from "./loop.js";

export interface SubscriptionOptions {
  stream: string;
  /** Consumer group: every group gets every message; consumers of one group share them. */
  group: string;
  /** This consumer's name within the group (default host-pid-random, unique per subscription). */
  consumer?: string;
  /** Handles one message. Resolving acknowledges it; throwing leaves it pending for redelivery. */
  handler: (message: BusMessage) => Promise<void>;
  /** Messages read per poll (default 100). */
  batchSize?: number;
  /** A message pending this long (its consumer died or failed) is delivered again (default 30 s). */
  claimIdleMs?: number;
  /** Sleep between polls when nothing came (default 1 s). */
  pollIntervalMs?: number;
  /** Read failures and handler failures (the message is named for the latter). */
  onError?: (err: unknown, message?: BusMessage) => void;
}

export interface PollResult {
  delivered: number;
  acked: number;
  failed: number;
  /** Handed back unhandled because the subscription was stopping. */
  released: number;
}

/** Default consumer name: unique per process and subscription, within the bus name alphabet. */
export function defaultConsumerName(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.:-]/g, "-")
      .slice(0, 60) || "host";
  return `${/^[A-Za-z0-9]/.test(host) ? host : `h${host}`}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * A consumer-group subscription to one bus stream, at-least-once: a message is acknowledged after
 * its handler resolved, so a crash or a throwing handler means it comes again (to this or another
 * consumer of the group) once idle for `claimIdleMs`. Handlers must be idempotent; `message.key`
 * is the same on every copy.
 */
export class Subscription {
  readonly consumer: string;
  private readonly loop: PollingLoop;

  constructor(
    private readonly bus: Bus,
    private readonly options: SubscriptionOptions,
  ) {
    this.consumer = options.consumer ?? defaultConsumerName();
    this.loop = new PollingLoop(
      async () => (await this.runOnce()).delivered >= (options.batchSize ?? 100),
      Math.max(1, options.pollIntervalMs ?? 1_000),
      (err) => this.report(err),
    );
  }

  start(): this {
    this.loop.start();
    return this;
  }

  /**
   * Stops after the message in hand: the rest of the batch is handed back to the group unhandled
   * (taken over at once by the next read), so a stop never waits for a whole batch.
   */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Reads one batch, hands each message to the handler in order, acknowledges the ones handled. */
  async runOnce(): Promise<PollResult> {
    const { stream, group } = this.options;
    const messages = await this.bus.read(stream, group, this.consumer, {
      count: this.options.batchSize ?? 100,
      claimIdleMs: this.options.claimIdleMs ?? 30_000,
    });
    const done: string[] = [];
    const left: string[] = [];
    let failed = 0;
    for (const message of messages) {
      if (this.loop.stopRequested) {
        left.push(message.id);
        continue;
      }
      try {
        await this.options.handler(message);
        done.push(message.id);
      } catch (err) {
        failed++;
        this.report(err, message);
      }
    }
    const acked = done.length > 0 ? await this.bus.ack(stream, group, done) : 0;
    consumerProcessed.inc({ consumer: group }, acked);
    if (failed > 0) consumerRetries.inc({ consumer: group }, failed);
    const released = left.length > 0 ? await this.bus.release(stream, group, this.consumer, left) : 0;
    return { delivered: messages.length, acked, failed, released };
  }

  private report(err: unknown, message?: BusMessage): void {
    try {
      this.options.onError?.(err, message);
    } catch {
      // A failing error callback must not stop the subscription.
    }
  }
}

/** Starts a subscription; stop it with `await subscription.stop()`. */
export function subscribe(bus: Bus, options: SubscriptionOptions): Subscription {
  return new Subscription(bus, options).start();
}
