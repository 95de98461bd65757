/**
 * One group's claim on the eventIds it stores, and the outcome of its write: `true` once its events
 * are stored and its requests acknowledged, `false` if the group failed (nothing of it counts).
 */
export class Holding {
  readonly keys: string[] = [];
  readonly written: Promise<boolean>;
  private settle!: (stored: boolean) => void;

  constructor() {
    this.written = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  done(stored: boolean): void {
    this.settle(stored);
  }
}

/**
 * The eventIds this process's groups are storing right now. A copy of such an id arriving in a later
 * group of the same process waits for the earlier group's outcome in memory, instead of asking the
 * dedup store about a lease this very process holds — the store would answer `inflight` until the
 * lease is committed, and the later group would poll it, pausing 10–250 ms between rounds. Copies
 * sent by a browser and by a server (the same eventId in two requests, arriving close together) met
 * that wait all the time. Copies arriving in other processes still go through the store.
 *
 * An entry lives from the moment its group is formed until the group's leases are settled (committed
 * or released): while it lives, the store's lease is this process's, and after it the store knows.
 */
export class LocalHolders {
  private readonly byKey = new Map<string, Holding>();

  /**
   * Claims `eventId` for `holding` unless an earlier group holds it: then returns that group's holding
   * (the copy here is the second one). The same group meeting its own id again gets nothing back (the
   * dedup step marks copies within a group).
   */
  claim(pixelId: string, eventId: string, holding: Holding): Holding | undefined {
    const key = `${pixelId}\u0000${eventId}`;
    const earlier = this.byKey.get(key);
    if (earlier) return earlier === holding ? undefined : earlier;
    this.byKey.set(key, holding);
    holding.keys.push(key);
    return undefined;
  }

  /** Forgets what `holding` claimed (its leases are settled, or it failed). */
  release(holding: Holding): void {
    for (const key of holding.keys) if (this.byKey.get(key) === holding) this.byKey.delete(key);
    holding.keys.length = 0;
  }

  get size(): number {
    return this.byKey.size;
  }
}
