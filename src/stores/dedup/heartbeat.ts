import { randomBytes } from "node:crypto";
import { HEARTBEATS_PER_TTL } from "./port.js";

/** A new owner id per process start: a restarted process never inherits the leases of its past self. */
export function newOwnerId(): string {
  return randomBytes(8).toString("hex");
}

/**
 * Beats `beat` every TTL / HEARTBEATS_PER_TTL while the process lives. A failed beat is not fatal: the
 * store is down then, and no lease of this process can be taken while nobody can reach the store.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly beat: () => Promise<unknown>,
    ttlSeconds: number,
  ) {
    this.timer = setInterval(() => this.tick(), (ttlSeconds * 1000) / HEARTBEATS_PER_TTL);
    this.timer.unref();
    this.tick();
  }

  /** Resolves once the first beat (or the latest) is done, so a reservation never precedes it. */
  ready(): Promise<void> {
    return this.last;
  }

  private tick(): void {
    this.last = this.beat().then(
      () => {},
      () => {},
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.last;
  }
}
