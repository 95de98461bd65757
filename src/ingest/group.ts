import { randomUUID } from "node:crypto";
import { AppError, UnavailableError } from "../errors.js";
import type { IdentityFeed, SightingsPayload } from "../identity/feed.js";
import type { Logger } from "../log.js";
import { ingestGroupEvents, storeUnavailable } from "../metrics.js";
import type { ForwardableEvent } from "../shared/event-row.js";
import type { DedupLease, DedupStore } from "../stores/dedup/port.js";
import { SqlError } from "../stores/sql/port.js";
import { WarehouseParameterError, type WarehouseStore } from "../stores/warehouse/port.js";
import { Holding, LocalHolders } from "./holders.js";
import {
  type Batch,
  type DedupWait,
  dedupStep,
  InflightError,
  identityStep,
  type StepResult,
} from "./steps.js";

/**
 * The store refused the data itself (a value it cannot parse or hold), as opposed to an outage, a
 * missing table or a lost race: retrying the same request would fail again.
 */
function isDataError(err: unknown): boolean {
  return err instanceof WarehouseParameterError || (err instanceof SqlError && !!err.code?.startsWith("22"));
}

/** A store refused this request's data: retrying it as is would fail again, so it is not a 503. */
export class StoreRefusedError extends AppError {
  readonly status = 500;
  override readonly code = "STORE_REFUSED";
  constructor() {
    super("Internal Server Error: a store refused this request's data; report the request id");
  }
}

/** The step names a failed group reports, as the store label of pixelhouse_store_unavailable_total. */
const STORE_LABELS: Record<string, string> = {
  "the dedup store": "dedup",
  "the warehouse": "warehouse",
  "the event bus": "bus",
  "the forwarding queue": "sql",
};

/** A request carried a copy of an event whose first copy, in an earlier group, failed to be stored. */
function firstCopyLost(): AppError {
  return new UnavailableError(
    "Service Unavailable: an event of this request was being stored by an earlier request whose write failed; retry the request",
    1,
  );
}

function failure(result: { retry: string; cause: unknown }): AppError {
  if (isDataError(result.cause)) return new StoreRefusedError();
  if (result.cause instanceof InflightError) {
    return new UnavailableError(
      `Service Unavailable: ${result.cause.message} that has not finished; nothing of this request was stored — retry it`,
      2,
    );
  }
  storeUnavailable.inc({ store: STORE_LABELS[result.retry] ?? "other" });
  // A store's breaker knows how long its cool-down still runs; without it, a second is enough.
  const ms = (result.cause as { retryAfterMs?: number } | null)?.retryAfterMs;
  const seconds = typeof ms === "number" ? Math.max(1, Math.ceil(ms / 1000)) : 1;
  return new UnavailableError(
    `Service Unavailable: ${result.retry} did not answer; retry the request`,
    seconds,
  );
}

export interface GroupOptions {
  /** Start a group at once when this many events are waiting. */
  maxRows: number;
  /** Otherwise start it at the latest this long after its first request arrived. */
  maxDelayMs: number;
  /** Groups processed at the same time (one is enough for embedded stores). */
  concurrency: number;
  /** How ids held by another writer are waited for (see `dedupStep`). */
  dedupWait: DedupWait;
}

/** The forwarding queue as the group sees it: held rows, released or cancelled with the write. */
export interface ForwardQueue {
  enqueue(pixelId: string, events: ForwardableEvent[], hold: { token: string; ms: number }): Promise<number>;
  release(token: string): Promise<void>;
  cancel(token: string): Promise<void>;
}

/** How long queued deliveries wait for their group's write before they are sent anyway. */
const FORWARD_HOLD_MS = 120_000;

export interface GroupDeps {
  dedup: DedupStore;
  warehouse: WarehouseStore;
  /** Identity ids for the rows, and the sightings published for the identity worker. */
  identity: IdentityFeed;
  forwarder?: ForwardQueue;
  /** Told which pixels got new rows, before the requests are acknowledged (query caches key on it). */
  onStored?: (pixelIds: string[]) => Promise<void>;
  log: Logger;
}

/** What a group has taken in the stores so far, and whether its INSERT succeeded. */
interface Taken {
  leases: DedupLease[];
  claims: (() => Promise<void>)[];
  stored: boolean;
}

interface Waiting {
  batch: Batch;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit: requests arriving together share one dedup reservation, one sightings message per
 * pixel and one warehouse INSERT, so per-statement costs are paid once per group, not per request.
 * Every request of a group is acknowledged only after the group's INSERTs succeeded; if a step fails,
 * every reservation of the group is released and every request answers 503 (nothing half-stored).
 * A request carrying a copy whose first copy an earlier group of this process was storing waits for
 * that group: it answers 503 if that group failed, though its own other events were stored.
 */
export class GroupCommitter {
  private waiting: Waiting[] = [];
  private waitingRows = 0;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private unsettled: { lease: DedupLease; commit: boolean }[] = [];
  private readonly holders = new LocalHolders();
  /** Lease commits of acknowledged groups still under way (they no longer hold a group's slot). */
  private readonly settling = new Set<Promise<void>>();

  constructor(
    private readonly deps: GroupDeps,
    private readonly options: GroupOptions,
  ) {}

  /** Resolves when the batch's kept events are durably stored (its `drop` marks are final then). */
  submit(batch: Batch): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ batch, resolve, reject });
      this.waitingRows += batch.events.length;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.waiting.length === 0 || this.running >= this.options.concurrency) return;
    // Idle: go now, nothing to wait for. Busy: requests gather while groups are under way, so a
    // group grows with the load and a lone request never waits out the timer.
    if (this.running === 0 || this.waitingRows >= this.options.maxRows) {
      this.start();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.running < this.options.concurrency) this.start();
    }, this.options.maxDelayMs);
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.waiting;
    this.waiting = [];
    this.waitingRows = 0;
    this.running++;
    const run = this.process(group).finally(() => {
      this.running--;
      this.inFlight.delete(run);
      this.schedule();
    });
    this.inFlight.add(run);
  }

  /** Commits (after a stored write) or releases a lease; one that fails is kept and retried. */
  private async settle(lease: DedupLease, commit: boolean): Promise<void> {
    try {
      await (commit ? this.deps.dedup.commit(lease) : this.deps.dedup.release(lease));
    } catch (err) {
      this.deps.log.warn({ err, commit }, "dedup lease not settled; retried with the next group");
      this.unsettled.push({ lease, commit });
    }
  }

  private async retryUnsettled(): Promise<void> {
    const todo = this.unsettled;
    this.unsettled = [];
    for (const { lease, commit } of todo) await this.settle(lease, commit);
  }

  private async process(group: Waiting[]): Promise<void> {
    // Claimed before anything is awaited, so the groups claim in the order they were formed.
    const holding = new Holding();
    const secondCopies = this.claimIds(group, holding);
    const taken: Taken = { leases: [], claims: [], stored: false };
    try {
      await this.write(group, holding, secondCopies, taken);
    } catch (err) {
      // Not a store's answer (those are handled step by step) but a bug. Its leases are released, or
      // committed if its INSERT had succeeded; whatever it had not answered gets a 503, and groups
      // waiting for its ids learn whether they were stored.
      this.deps.log.error({ err }, "ingest group failed unexpectedly");
      for (const release of taken.claims) await release().catch(() => {});
      for (const lease of taken.leases) await this.settle(lease, taken.stored);
      this.holders.release(holding);
      holding.done(taken.stored);
      const answer = new UnavailableError(
        "Service Unavailable: the request could not be completed; retry it",
        1,
      );
      for (const w of group) w.reject(answer);
    }
  }

  private async write(
    group: Waiting[],
    holding: Holding,
    secondCopies: { batch: Batch; earlier: Holding }[],
    taken: Taken,
  ): Promise<void> {
    if (this.unsettled.length) await this.retryUnsettled();
    const { leases, claims } = taken;
    const fail = async (result: StepResult & { ok: false }) => {
      for (const release of claims) await release().catch(() => {});
      for (const lease of leases) await this.settle(lease, false);
      claims.length = 0;
      leases.length = 0;
      this.holders.release(holding);
      holding.done(false);
      if (isDataError(result.cause) && group.length > 1) {
        // Not an outage but something in the data: retry each request on its own, so one request's
        // content cannot fail the others it happened to be grouped with (across pixels too).
        this.deps.log.warn(
          { err: result.cause },
          "ingest group refused by a store; retrying its requests one by one",
        );
        for (const w of group) {
          w.batch.drop = w.batch.drop.map(() => "");
          await this.process([w]);
        }
        return;
      }
      for (const w of group) w.reject(failure(result));
    };
    const batches = group.map((w) => w.batch);
    const byPixel = new Map<string, Batch[]>();
    for (const b of batches) byPixel.set(b.ctx.pixelId, [...(byPixel.get(b.ctx.pixelId) ?? []), b]);

    const sightings: SightingsPayload[] = [];
    for (const [pixelId, pixelBatches] of byPixel) {
      const dedup = await dedupStep(
        pixelId,
        pixelBatches,
        this.deps.dedup,
        this.deps.warehouse,
        this.options.dedupWait,
      );
      leases.push(...dedup.leases);
      claims.push(...dedup.claims);
      if (!dedup.ok) return fail(dedup);
      const payload = identityStep(pixelId, pixelBatches, this.deps.identity);
      if (payload) sightings.push(payload);
    }
    const rows: Record<string, unknown>[] = [];
    for (const b of batches) {
      b.events.forEach((e, i) => {
        if (b.drop[i] === "") rows.push(e.row as unknown as Record<string, unknown>);
      });
    }
    // Forwarding is queued before the write, held until it succeeds: a crash in between delays the
    // deliveries (sent after the hold) but never loses them.
    const hold = { token: randomUUID(), ms: FORWARD_HOLD_MS };
    const forwarder = this.deps.forwarder;
    // Deliveries held for this group: none (no destination wants these events) means nothing to release.
    let held = 0;
    if (forwarder) {
      try {
        for (const [pixelId, pixelBatches] of byPixel) {
          const kept = pixelBatches.flatMap((b) =>
            b.events
              .filter((_, i) => b.drop[i] === "")
              .map((e) => ({ row: e.row, originalIp: e.originalIp })),
          );
          if (kept.length) held += await forwarder.enqueue(pixelId, kept, hold);
        }
      } catch (err) {
        await forwarder.cancel(hold.token).catch(() => {});
        return fail({ ok: false, retry: "the forwarding queue", cause: err });
      }
    }
    // Sightings before the write, like forwarding: a crash after the write must not lose a merge.
    try {
      await this.deps.identity.publish(sightings);
    } catch (err) {
      await forwarder?.cancel(hold.token).catch(() => {});
      return fail({ ok: false, retry: "the event bus", cause: err });
    }
    try {
      if (rows.length) await this.deps.warehouse.insert("events", rows);
      taken.stored = true;
    } catch (err) {
      await forwarder?.cancel(hold.token).catch((e: unknown) => {
        this.deps.log.warn(
          { err: e },
          "held deliveries of a failed write not dropped; they are sent after the hold",
        );
      });
      return fail({ ok: false, retry: "the warehouse", cause: err });
    }
    if (held > 0) {
      await forwarder?.release(hold.token).catch((err: unknown) => {
        this.deps.log.warn({ err }, "held deliveries not released; they are sent after the hold");
      });
    }
    ingestGroupEvents.observe(rows.length);
    if (rows.length && this.deps.onStored) {
      await this.deps.onStored([...byPixel.keys()]).catch((err: unknown) => {
        this.deps.log.warn(
          { err },
          "data version not bumped; cached query results may lag until they expire",
        );
      });
    }
    // Stored: acknowledged now, and the leases committed after. Until a commit lands, copies of these
    // ids in this process find them among the holders (stored: duplicate); copies elsewhere find the
    // lease held by a live owner and wait for it, then answer duplicate; if this process dies first,
    // they reclaim the lease and find the rows in the warehouse. A commit that fails is retried with
    // the next group. The commits run beside the next group; past `concurrency` of them under way,
    // this group waits for one to end before it frees its slot.
    holding.done(true);
    const unstored = await this.unstoredFirstCopies(secondCopies);
    for (const w of group) {
      if (unstored.has(w.batch)) w.reject(firstCopyLost());
      else w.resolve();
    }
    const settled = (async () => {
      for (const lease of leases) await this.settle(lease, true);
    })().finally(() => {
      this.holders.release(holding);
      this.settling.delete(settled);
    });
    this.settling.add(settled);
    while (this.settling.size > this.options.concurrency) await Promise.race(this.settling);
  }

  /**
   * Claims the group's ids among this process's holders. A copy whose first copy an earlier group is
   * storing is marked duplicate here, and the request waits for that group before it is answered.
   */
  private claimIds(group: Waiting[], holding: Holding): { batch: Batch; earlier: Holding }[] {
    const second: { batch: Batch; earlier: Holding }[] = [];
    for (const { batch } of group) {
      batch.events.forEach((e, i) => {
        if (!e.row.client_event_id || batch.drop[i] !== "") return;
        const earlier = this.holders.claim(batch.ctx.pixelId, e.row.event_id, holding);
        if (!earlier) return;
        batch.drop[i] = "duplicate";
        second.push({ batch, earlier });
      });
    }
    return second;
  }

  /** The requests holding a second copy whose first copy's group failed: nothing stored it. */
  private async unstoredFirstCopies(
    second: readonly { batch: Batch; earlier: Holding }[],
  ): Promise<Set<Batch>> {
    const unstored = new Set<Batch>();
    for (const { batch, earlier } of second) if (!(await earlier.written)) unstored.add(batch);
    return unstored;
  }

  /** Starts what is waiting and waits for every group under way (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.waiting.length || this.inFlight.size || this.settling.size) {
      if (this.waiting.length && this.running < this.options.concurrency) this.start();
      await Promise.allSettled([...this.inFlight, ...this.settling]);
    }
    if (this.unsettled.length) await this.retryUnsettled();
  }
}
