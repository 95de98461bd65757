import { storeErrors } from "../metrics.js";

/**
 * A circuit breaker per store connection. While a store is down, every call would wait out a
 * connect or command timeout before failing; after `failures` outage errors in a row (no success in
 * between) the breaker opens and calls are refused at once, without touching the store, for
 * `cooldownMs`. Then one call at a time goes through as a probe: a success closes the breaker, an
 * outage opens it again for another cool-down.
 */
export interface BreakerOptions {
  /** Consecutive outage errors that open the breaker. */
  failures: number;
  /** How long an open breaker refuses calls before it lets a probe through. */
  cooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { failures: 5, cooldownMs: 2000 };

/** An outage error that knows how long the caller should wait (the breaker's remaining cool-down). */
export interface RetryHint {
  retryAfterMs?: number;
}

export type BreakerState = "closed" | "open" | "half-open";

export class CircuitBreaker {
  private consecutive = 0;
  private openUntil = 0;
  /** When the probe now under way started (0: none); a probe that never settles frees its slot. */
  private probeSince = 0;

  constructor(
    private readonly options: BreakerOptions = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
    /** The store it guards, as the label of pixelhouse_store_errors_total. */
    private readonly store?: "sql" | "warehouse" | "kv",
  ) {}

  get state(): BreakerState {
    if (this.consecutive < this.options.failures) return "closed";
    return this.now() < this.openUntil ? "open" : "half-open";
  }

  /**
   * Runs `fn` unless the breaker is open. `isOutage` tells which of its errors count against the
   * store (a bad statement is the caller's problem and counts as the store answering). A refused
   * call throws `refused(ms until the next probe)`.
   */
  async run<T>(
    fn: () => Promise<T>,
    isOutage: (err: unknown) => boolean,
    refused: (retryAfterMs: number) => Error,
  ): Promise<T> {
    const ticket = this.admit();
    if (ticket.waitMs > 0) {
      if (this.store) storeErrors.inc({ store: this.store, kind: "refused" });
      throw refused(ticket.waitMs);
    }
    try {
      const result = await fn();
      this.settle(true, ticket.probe);
      return result;
    } catch (err) {
      const outage = isOutage(err);
      if (outage && this.store) storeErrors.inc({ store: this.store, kind: "outage" });
      this.settle(!outage, ticket.probe);
      throw err;
    }
  }

  /** The store answered by other means (a connection became ready): close at once. */
  reset(): void {
    this.consecutive = 0;
    this.openUntil = 0;
    this.probeSince = 0;
  }

  private admit(): { waitMs: number; probe: boolean } {
    if (this.consecutive < this.options.failures) return { waitMs: 0, probe: false };
    const now = this.now();
    if (now < this.openUntil) return { waitMs: this.openUntil - now, probe: false };
    if (this.probeSince !== 0 && now - this.probeSince < this.options.cooldownMs) {
      return { waitMs: Math.max(1, this.probeSince + this.options.cooldownMs - now), probe: false };
    }
    this.probeSince = now;
    return { waitMs: 0, probe: true };
  }

  private settle(ok: boolean, probe: boolean): void {
    if (probe) this.probeSince = 0;
    if (ok) {
      this.consecutive = 0;
      this.openUntil = 0;
      return;
    }
    this.consecutive++;
    if (this.consecutive >= this.options.failures) this.openUntil = this.now() + this.options.cooldownMs;
  }
}
