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
    const { ids, known } = this.assigner.assignGroups(pixelId, groups);
    // Repeat visitors whose aliases are all filed under the id they got add nothing to publish.
    const news = groups.map((g, i) => (known[i] ? [] : g));
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
