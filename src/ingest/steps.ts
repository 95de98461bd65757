import { setTimeout as delay } from "node:timers/promises";
import type { IdentityFeed, SightingsPayload } from "../identity/feed.js";
import { ulidFactory } from "../shared/random.js";
import { type DedupLease, type DedupStore, ReservationUncertainError } from "../stores/dedup/port.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
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

const serverId = ulidFactory();

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

export interface DedupWait {
  /** How long ids held by another live writer are waited for before the warehouse is asked. */
  inflightWaitMs: number;
  /** Pauses between polls while waiting (grows to the last value). */
  pollMs?: readonly number[];
}

export type DedupStepResult = (
  | { ok: true }
  | { ok: false; retry: string; cause: unknown; retryAfterSeconds?: number }
) & {
  /** Every lease taken (to commit after the write, or release on failure). */
  leases: DedupLease[];
  /** Short claims of unconfirmed digests, released on failure. */
  claims: (() => Promise<void>)[];
};

/** A writer elsewhere holds ids past the wait and the warehouse does not hold them yet. */
export class InflightError extends Error {
  constructor(readonly count: number) {
    super(`${count} eventId(s) are being stored by another request`);
  }
}

const POLL_MS = [10, 20, 40, 80, 160, 250] as const;

/**
 * First copy wins: within the requests (in arrival order), then against the dedup set, which also
 * sees requests being processed elsewhere. A copy is marked `duplicate` only when its first copy is
 * durably stored: acknowledged in the set, or found in the warehouse. Ids another live writer holds
 * are waited for; if that writer neither stores nor releases them in time, the group fails with a
 * 503 (the client retries) rather than guess.
 */
export async function dedupStep(
  pixelId: string,
  batches: readonly Batch[],
  dedup: DedupStore,
  warehouse: WarehouseStore,
  wait: DedupWait,
): Promise<DedupStepResult> {
  const leases: DedupLease[] = [];
  const claims: (() => Promise<void>)[] = [];
  const first = new Map<string, Slot>();
  for (const batch of batches) {
    batch.events.forEach((e, index) => {
      // Already settled: an earlier group of this process is storing its first copy.
      if (!e.row.client_event_id || batch.drop[index] !== "") return;
      if (first.has(e.row.event_id)) batch.drop[index] = "duplicate";
      else first.set(e.row.event_id, { batch, index });
    });
  }
  const duplicate = (id: string) => {
    const slot = first.get(id)!;
    slot.batch.drop[slot.index] = "duplicate";
  };
  let pending = [...first.keys()];
  const deadline = Date.now() + wait.inflightWaitMs;
  const polls = wait.pollMs ?? POLL_MS;
  let step = "the dedup store";
  try {
    for (let round = 0; pending.length > 0; round++) {
      step = "the dedup store";
      const { status, lease } = await dedup.reserve(pixelId, pending);
      leases.push(lease);
      const confirm: string[] = [];
      const digests: string[] = [];
      const held: string[] = [];
      pending.forEach((id, k) => {
        const s = status[k];
        if (s === "duplicate") duplicate(id);
        else if (s === "reclaimed") confirm.push(id);
        else if (s === "unconfirmed") digests.push(id);
        else if (s === "inflight") held.push(id);
      });
      step = "the warehouse";
      const stored = await storedIds(warehouse, pixelId, [...confirm, ...digests]);
      for (const id of [...confirm, ...digests]) if (stored.has(id)) duplicate(id);
      const open = digests.filter((id) => !stored.has(id));
      if (open.length && dedup.claimUnconfirmed) {
        step = "the dedup store";
        const c = await dedup.claimUnconfirmed(pixelId, open);
        claims.push(c.release);
        // An unclaimed one is being stored by the copy that holds the claim: wait for it like a lease.
        open.forEach((id, i) => {
          if (!c.claimed[i]) held.push(id);
        });
      }
      if (held.length === 0) break;
      if (Date.now() >= deadline) {
        step = "the warehouse";
        const done = await storedIds(warehouse, pixelId, held);
        for (const id of done) duplicate(id);
        const left = held.length - done.size;
        if (left > 0) return { ok: false, retry: step, cause: new InflightError(left), leases, claims };
        break;
      }
      await delay(Math.min(polls[Math.min(round, polls.length - 1)]!, Math.max(1, deadline - Date.now())));
      pending = held;
    }
    return { ok: true, leases, claims };
  } catch (err) {
    // A reservation that failed part-way may hold leases all the same: they are released with the rest.
    if (err instanceof ReservationUncertainError) leases.push(err.lease);
    return {
      ok: false,
      retry: step,
      cause: err instanceof ReservationUncertainError ? err.cause : err,
      leases,
      claims,
    };
  }
}

async function storedIds(warehouse: WarehouseStore, pixelId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await warehouse.query<{ event_id: string }>(
    "SELECT DISTINCT event_id FROM events WHERE pixel_id = {pixel:String} AND event_id IN {ids:Array(String)}",
    { pixel: pixelId, ids },
  );
  return new Set(found.map((r) => r.event_id));
}

/**
 * Every event, duplicates included, contributes its identifiers to the identity graph: each kept row
 * gets its identity id now (in memory), and the sightings go to the identity worker.
 */
export function identityStep(
  pixelId: string,
  batches: readonly Batch[],
  feed: IdentityFeed,
): SightingsPayload | null {
  const events = batches.flatMap((b) => b.events);
  const { ids, payload } = feed.assign(
    pixelId,
    events.map((e) => e.aliases),
  );
  events.forEach((e, i) => {
    e.row.canonical_id = ids[i] ?? "";
  });
  return payload;
}
