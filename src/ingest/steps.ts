import { monotonicFactory } from "ulid";
import type { DedupLease, DedupStore } from "../stores/dedup/port.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import type { IdentityResolver } from "./identity.js";
import { type IngestContext, type NormalizedEvent, normalizeEvent } from "./normalize.js";
import type { ValidEvent } from "./validate.js";

/**
 * Pipeline steps return results instead of throwing: `ok`, or `retry` when a store failed and the
 * client should send the request again (503). Per-event drops (duplicates) are marked on the batch.
 */
export type StepResult = { ok: true } | { ok: false; retry: string; cause: unknown };

/** One request's events on their way through the pipeline. */
export interface Batch {
  ctx: IngestContext;
  events: NormalizedEvent[];
  /** Index-aligned with events: why an event is not written ('' = it is written). */
  drop: ("" | "duplicate")[];
}

const retry = (what: string, cause: unknown) => ({ ok: false as const, retry: what, cause });
const serverId = monotonicFactory();

/** Events without an eventId get a server ULID and are never deduplicated. */
export function normalizeStep(valid: ValidEvent[], ctx: IngestContext): Batch {
  const events = valid.map((v) =>
    v.event.eventId
      ? normalizeEvent(v, ctx, v.event.eventId, true)
      : normalizeEvent(v, ctx, serverId(v.eventTimeMs), false),
  );
  return { ctx, events, drop: events.map(() => "") };
}

type Slot = { batch: Batch; index: number };

/**
 * First copy wins: within the requests (in arrival order), then against the dedup set, which also
 * sees requests being processed elsewhere. Returns the ids a digest store could not decide alone.
 */
export async function dedupStep(
  pixelId: string,
  batches: readonly Batch[],
  dedup: DedupStore,
): Promise<
  ({ ok: true } | { ok: false; retry: string; cause: unknown }) & { lease?: DedupLease; unconfirmed: Slot[] }
> {
  const first = new Map<string, Slot>();
  for (const batch of batches) {
    batch.events.forEach((e, index) => {
      if (!e.row.client_event_id) return;
      if (first.has(e.row.event_id)) batch.drop[index] = "duplicate";
      else first.set(e.row.event_id, { batch, index });
    });
  }
  const ids = [...first.keys()];
  if (ids.length === 0) return { ok: true, unconfirmed: [] };
  try {
    const { status, lease } = await dedup.reserve(pixelId, ids);
    const unconfirmed: Slot[] = [];
    ids.forEach((id, k) => {
      const slot = first.get(id)!;
      if (status[k] === "duplicate") slot.batch.drop[slot.index] = "duplicate";
      else if (status[k] === "unconfirmed") unconfirmed.push(slot);
    });
    return { ok: true, lease, unconfirmed };
  } catch (err) {
    return { ...retry("the dedup store", err), unconfirmed: [] };
  }
}

/**
 * A digest match is a duplicate only if the warehouse holds the id: a collision never drops an event.
 * Ids it does not hold are claimed, so concurrent copies of one of them are still stored once.
 */
export async function confirmStep(
  pixelId: string,
  slots: readonly Slot[],
  warehouse: WarehouseStore,
  dedup: DedupStore,
): Promise<StepResult & { release?: () => Promise<void> }> {
  if (slots.length === 0) return { ok: true };
  const idOf = (s: Slot) => s.batch.events[s.index]!.row.event_id;
  try {
    const found = await warehouse.query<{ event_id: string }>(
      "SELECT DISTINCT event_id FROM events WHERE pixel_id = {pixel:String} AND event_id IN {ids:Array(String)}",
      { pixel: pixelId, ids: slots.map(idOf) },
    );
    const stored = new Set(found.map((r) => r.event_id));
    const open: Slot[] = [];
    for (const s of slots) {
      if (stored.has(idOf(s))) s.batch.drop[s.index] = "duplicate";
      else open.push(s);
    }
    if (open.length === 0 || !dedup.claimUnconfirmed) return { ok: true };
    const { claimed, release } = await dedup.claimUnconfirmed(pixelId, open.map(idOf));
    open.forEach((s, i) => {
      if (!claimed[i]) s.batch.drop[s.index] = "duplicate";
    });
    return { ok: true, release };
  } catch (err) {
    return retry("the warehouse", err);
  }
}

/** Every event, duplicates included, contributes its identifiers to the identity graph. */
export async function identityStep(
  pixelId: string,
  batches: readonly Batch[],
  identity: IdentityResolver,
): Promise<{ ok: true; links: Record<string, unknown>[] } | { ok: false; retry: string; cause: unknown }> {
  const events = batches.flatMap((b) => b.events);
  try {
    const { canonical, links } = await identity.resolve(
      pixelId,
      events.map((e) => e.aliases),
    );
    events.forEach((e, i) => {
      e.row.canonical_id = canonical[i] ?? "";
    });
    return { ok: true, links: links as unknown as Record<string, unknown>[] };
  } catch (err) {
    return retry("the identity store", err);
  }
}
