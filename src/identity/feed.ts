import { ulidFactory } from "../shared/random.js";
import type { Bus } from "../stores/bus/port.js";
import type { IdentityAssigner } from "./assign.js";
import { IDENTITY_STREAM, sightingsPayload } from "./messages.js";
import type { Alias } from "./union.js";

export type SightingsPayload = NonNullable<ReturnType<typeof sightingsPayload>>;

/**
 * The write paths' entry to identity: ids assigned in memory, sightings published for the worker.
 * Ingest and sync publish straight to the bus, before their warehouse write (their change is not in
 * SQL, so an outbox row would buy nothing); a sighting of a write that then fails files aliases nobody stored,
 * which is harmless, whereas one published after the write could be lost with the process.
 */
export class IdentityFeed {
  private readonly key = ulidFactory();

  constructor(
    private readonly bus: Bus,
    readonly assigner: IdentityAssigner,
    /** Called after a publish (wakes this process's worker). */
    private readonly onPublished?: () => void,
  ) {}

  /** Ids for the groups and the payload announcing them (null when no group has aliases). */
  assign(
    pixelId: string,
    groups: readonly (readonly Alias[])[],
  ): { ids: string[]; payload: SightingsPayload | null } {
    const { ids, news } = this.assigner.assignGroups(pixelId, groups);
    // Only what the graph does not hold yet: a returning customer's order brings its order id, and
    // a repeat visitor whose aliases are all filed under the id it got brings nothing.
    return { ids, payload: sightingsPayload(pixelId, news, ids) };
  }

  async publish(payloads: readonly SightingsPayload[]): Promise<void> {
    if (payloads.length === 0) return;
    await this.bus.publish(
      IDENTITY_STREAM,
      payloads.map((payload) => ({ key: this.key(), payload })),
    );
    this.onPublished?.();
  }
}
