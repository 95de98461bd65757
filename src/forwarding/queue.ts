import { BadRequestError } from "../errors.js";
import type { ConsumerState } from "../metrics.js";
import type { ForwardableEvent } from "../shared/event-row.js";
import { SqlError, type SqlExecutor, type SqlStore } from "../stores/sql/port.js";
import type { Destination, DestinationRow, DestinationService } from "./destinations.js";
import { matchesEventFilter, payloadFor, toJsonText } from "./mappers.js";

/*
 * The delivery queue: every statement on `deliveries` and `dead_letters`. Rows are claimed with a
 * lease (FOR UPDATE SKIP LOCKED, then `next_attempt_at = locked_until = lease end`), so any number
 * of processes can work the queue and a crashed worker's rows come back when their lease ends.
 * Every statement after the claim matches on that lease end: a row whose lease lapsed and was
 * claimed again belongs to the new claimant.
 */

export interface QueueOptions {
  /** Failed attempts before a delivery moves to `dead_letters` (default 8). */
  maxAttempts?: number;
  /** Backoff after the n-th failed attempt: base × 2^(n-1), capped, ±jitter (default 1 s). */
  backoffBaseMs?: number;
  /** Cap of the backoff before jitter (default 1 h); also caps a Retry-After. */
  backoffCapMs?: number;
  /** Relative jitter (default 0.2 = ±20 %). */
  jitter?: number;
  /** For jitter; default Math.random. */
  random?: () => number;
}

/** Held rows wait `ms` for their events' write; `release`/`cancel` settle them by `token`. */
export interface Hold {
  token: string;
  ms: number;
}

/** A delivery claimed by `claim`, with its destination as stored at claim time. */
export interface ClaimedDelivery {
  id: string;
  pixelId: string;
  eventId: string;
  payload: unknown;
  /** Attempts started, this one included. */
  attempts: number;
  /** End of the claim's lease. */
  lease: Date;
  destination: DestinationRow;
}

/** What one attempt came to; `released` hands the row back without counting the attempt. */
export type AttemptOutcome =
  | { kind: "ok" }
  | { kind: "failed"; error: string; retryAfterMs?: number }
  | { kind: "released" };

export interface SettleResult {
  delivered: number;
  retried: number;
  deadLettered: number;
  released: number;
}

export interface DeadLetter {
  id: string;
  destinationId: string;
  pixelId: string;
  eventId: string;
  eventName: string;
  attempts: number;
  lastError: string | null;
  failedAt: Date;
  replayedAt: Date | null;
}

export interface ReplayFilter {
  pixelId?: string;
  destinationId?: string;
  ids?: (string | number)[];
}

/** A failed or released row to run again after `delay` ms; `undo` 1 un-counts a released attempt. */
interface Retry {
  id: string;
  delay: number;
  error: string | null;
  undo: number;
}

interface Dead {
  id: string;
  error: string;
}

interface ClaimedRow {
  id: string;
  destination_id: string;
  pixel_id: string;
  event_id: string;
  payload: unknown;
  attempts: number;
  locked_until: Date;
  kind: string;
  config: unknown;
  dest_name: string;
  event_names: string[] | null;
  enabled: boolean;
  dest_created_at: Date;
}

/** Exponential backoff after the `attempts`-th failure: base × 2^(attempts-1), capped, ± jitter. */
export function backoffDelayMs(
  attempts: number,
  options: { baseMs: number; capMs: number; jitter: number },
  random: () => number = Math.random,
): number {
  if (options.baseMs <= 0) return 0;
  const raw = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempts - 1));
  const factor = 1 + options.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(raw * factor));
}

export class DeliveryQueue {
  private readonly maxAttempts: number;
  private readonly backoff: { baseMs: number; capMs: number; jitter: number };
  private readonly random: () => number;
  private readonly dueListeners = new Set<() => void>();

  constructor(
    private readonly sql: SqlStore,
    private readonly destinations: DestinationService,
    options: QueueOptions = {},
  ) {
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 8);
    this.backoff = {
      baseMs: Math.max(0, options.backoffBaseMs ?? 1_000),
      capMs: Math.max(0, options.backoffCapMs ?? 3_600_000),
      jitter: Math.min(1, Math.max(0, options.jitter ?? 0.2)),
    };
    this.random = options.random ?? Math.random;
  }

  /**
   * Calls `listener` whenever this instance made rows due now (an unheld enqueue, a release, a
   * replay), so a worker of the same process need not wait for its next poll. Returns the unsubscribe.
   */
  onDue(listener: () => void): () => void {
    this.dueListeners.add(listener);
    return () => this.dueListeners.delete(listener);
  }

  private due(): void {
    for (const listener of this.dueListeners) listener();
  }

  /**
   * Queues every (enabled destination × matching event) of the pixel in one INSERT and returns the
   * number of rows queued. No SQL at all when the pixel has no destination (cached lookup).
   */
  async enqueue(pixelId: string, events: readonly ForwardableEvent[], hold?: Hold): Promise<number> {
    if (events.length === 0) return 0;
    const destinations = await this.destinations.forPixel(pixelId);
    if (destinations.length === 0) return 0;
    const rows = this.rowsFor(destinations, pixelId, events);
    if (rows.length === 0) return 0;
    const json = toJsonText(rows);
    let queued: number;
    try {
      queued = await this.insert(pixelId, json, hold);
    } catch (err) {
      // A destination removed since the cached lookup: the join skips it, but a delete racing the
      // insert can still trip the foreign key. Retry once.
      if (!(err instanceof SqlError && err.isForeignKeyViolation)) throw err;
      this.destinations.invalidate(pixelId);
      queued = await this.insert(pixelId, json, hold);
    }
    if (queued > 0 && !hold) this.due();
    return queued;
  }

  /** Held deliveries of a token become due now (their events are stored). */
  async release(token: string): Promise<void> {
    const r = await this.sql.query(
      "UPDATE deliveries SET next_attempt_at = now(), hold_token = NULL WHERE hold_token = $1",
      [token],
    );
    if (r.rowCount > 0) this.due();
  }

  /** Held deliveries of a token are dropped (their events were not stored). */
  async cancel(token: string): Promise<void> {
    await this.sql.query("DELETE FROM deliveries WHERE hold_token = $1", [token]);
  }

  private rowsFor(destinations: Destination[], pixelId: string, events: readonly ForwardableEvent[]) {
    const rows: { d: string; e: string; w: boolean; p: object }[] = [];
    // Webhook bodies do not depend on the destination: map each event once.
    const webhookBodies = new Map<ForwardableEvent, object>();
    for (const destination of destinations) {
      for (const fe of events) {
        if (!matchesEventFilter(destination.eventNames, fe.row.name)) continue;
        let payload: object;
        if (destination.kind === "webhook") {
          payload = webhookBodies.get(fe) ?? payloadFor(destination, pixelId, fe);
          webhookBodies.set(fe, payload);
        } else {
          payload = payloadFor(destination, pixelId, fe);
        }
        rows.push({ d: destination.id, e: fe.row.event_id, w: destination.kind === "webhook", p: payload });
      }
    }
    return rows;
  }

  private async insert(pixelId: string, json: string, hold?: Hold): Promise<number> {
    // Webhook bodies get their delivery id (the row id) at insert; it stays with the payload
    // through retries, dead-lettering and replays, so receivers can use it as an idempotency key.
    const r = await this.sql.query(
      `WITH src AS (
         SELECT nextval('deliveries_id_seq') AS id, x.id AS destination_id, e->>'e' AS event_id,
                (e->>'w')::boolean AS with_id, e->'p' AS payload
         FROM jsonb_array_elements($2::jsonb) e
         JOIN destinations x ON x.id = e->>'d' AND x.enabled
       )
       INSERT INTO deliveries (id, destination_id, pixel_id, event_id, payload, next_attempt_at, hold_token)
       SELECT id, destination_id, $1, event_id,
              CASE WHEN with_id THEN jsonb_build_object('id', id::text) || payload ELSE payload END,
              now() + make_interval(secs => $3), $4
       FROM src`,
      [pixelId, json, hold ? hold.ms / 1000 : 0, hold?.token ?? null],
    );
    return r.rowCount;
  }

  /**
   * Claims up to `limit` due rows of enabled destinations for `leaseMs`, counting the attempt now
   * (a worker that dies mid-send has still used it). Oldest due first.
   */
  async claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const { rows } = await this.sql.query<ClaimedRow>(
      `WITH due AS (
         SELECT q.id FROM deliveries q
         JOIN destinations x ON x.id = q.destination_id AND x.enabled
         WHERE q.next_attempt_at <= now()
         ORDER BY q.next_attempt_at, q.id
         LIMIT $1
         FOR UPDATE OF q SKIP LOCKED
       ),
       lease AS (
         SELECT date_trunc('milliseconds', clock_timestamp() + $2 * interval '1 millisecond') AS until
       ),
       claimed AS (
         UPDATE deliveries q
         SET attempts = q.attempts + 1, locked_until = lease.until, next_attempt_at = lease.until
         FROM due, lease
         WHERE q.id = due.id
         RETURNING q.id, q.destination_id, q.pixel_id, q.event_id, q.payload, q.attempts, q.locked_until
       )
       SELECT c.*, x.kind, x.config, x.name AS dest_name, x.event_names, x.enabled,
              x.created_at AS dest_created_at
       FROM claimed c JOIN destinations x ON x.id = c.destination_id
       ORDER BY c.id`,
      [Math.max(1, limit), leaseMs],
    );
    return rows.map((r) => ({
      id: r.id,
      pixelId: r.pixel_id,
      eventId: r.event_id,
      payload: r.payload,
      attempts: r.attempts,
      lease: r.locked_until,
      destination: {
        id: r.destination_id,
        pixel_id: r.pixel_id,
        kind: r.kind,
        name: r.dest_name,
        config: r.config,
        event_names: r.event_names,
        enabled: r.enabled,
        created_at: r.dest_created_at,
      },
    }));
  }

  /**
   * Records the outcomes of claimed deliveries in one transaction: delivered rows are deleted,
   * failed ones rescheduled with backoff (or a Retry-After) until `maxAttempts`, then moved to
   * `dead_letters`; released ones are handed back due now, the attempt not counted.
   */
  async settle(
    results: readonly { delivery: ClaimedDelivery; outcome: AttemptOutcome }[],
  ): Promise<SettleResult> {
    const byLease = new Map<number, { lease: Date; delivered: string[]; retry: Retry[]; dead: Dead[] }>();
    const result: SettleResult = { delivered: 0, retried: 0, deadLettered: 0, released: 0 };
    for (const { delivery, outcome } of results) {
      const key = delivery.lease.getTime();
      let group = byLease.get(key);
      if (!group) {
        group = { lease: delivery.lease, delivered: [], retry: [], dead: [] };
        byLease.set(key, group);
      }
      if (outcome.kind === "ok") {
        group.delivered.push(delivery.id);
        result.delivered++;
      } else if (outcome.kind === "released") {
        group.retry.push({ id: delivery.id, delay: 0, error: null, undo: 1 });
        result.released++;
      } else if (delivery.attempts >= this.maxAttempts) {
        group.dead.push({ id: delivery.id, error: outcome.error });
        result.deadLettered++;
      } else {
        const delay =
          outcome.retryAfterMs !== undefined
            ? Math.min(outcome.retryAfterMs, this.backoff.capMs)
            : backoffDelayMs(delivery.attempts, this.backoff, this.random);
        group.retry.push({ id: delivery.id, delay, error: outcome.error, undo: 0 });
        result.retried++;
      }
    }
    if (byLease.size === 0) return result;
    await this.sql.transaction(async (tx) => {
      for (const { lease, delivered, retry, dead } of byLease.values()) {
        if (delivered.length) await complete(tx, delivered, lease);
        if (retry.length) await reschedule(tx, retry, lease);
        if (dead.length) await deadLetter(tx, dead, lease);
      }
    });
    return result;
  }

  /** The pixel's dead letters, newest first; replayed ones only with `includeReplayed`. */
  /** Deliveries due or in flight, the age of the oldest due one, and the dead letters kept. */
  async backlog(): Promise<ConsumerState> {
    const { rows } = await this.sql.query<{ n: string; oldest: number | null; dead: string }>(
      `SELECT (SELECT count(*) FROM deliveries)::text AS n,
              (SELECT extract(epoch FROM clock_timestamp() - min(created_at)) FROM deliveries
                WHERE next_attempt_at <= clock_timestamp())::float8 AS oldest,
              (SELECT count(*) FROM dead_letters)::text AS dead`,
    );
    const r = rows[0];
    return {
      messages: Number(r?.n ?? 0),
      seconds: Math.max(0, r?.oldest ?? 0),
      deadLetters: Number(r?.dead ?? 0),
    };
  }

  async listDeadLetters(
    pixelId: string,
    options: { includeReplayed?: boolean; limit?: number } = {},
  ): Promise<DeadLetter[]> {
    const { rows } = await this.sql.query<{
      id: string;
      destination_id: string;
      pixel_id: string;
      event_id: string;
      event_name: string | null;
      attempts: number;
      last_error: string | null;
      failed_at: Date;
      replayed_at: Date | null;
    }>(
      `SELECT id, destination_id, pixel_id, event_id,
              COALESCE(payload->'event'->>'name', payload->'data'->0->>'event_name') AS event_name,
              attempts, last_error, failed_at, replayed_at
       FROM dead_letters
       WHERE pixel_id = $1 AND ($2::boolean OR replayed_at IS NULL)
       ORDER BY failed_at DESC, id DESC
       LIMIT $3`,
      [pixelId, options.includeReplayed ?? false, Math.max(1, options.limit ?? 1000)],
    );
    return rows.map((r) => ({
      id: r.id,
      destinationId: r.destination_id,
      pixelId: r.pixel_id,
      eventId: r.event_id,
      eventName: r.event_name ?? "",
      attempts: r.attempts,
      lastError: r.last_error,
      failedAt: r.failed_at,
      replayedAt: r.replayed_at,
    }));
  }

  /**
   * Moves not-yet-replayed dead letters matching every given filter back into the queue (attempts 0,
   * due now) and marks them replayed, in one statement. Returns how many were queued again.
   */
  async replayDeadLetters(filter: ReplayFilter): Promise<number> {
    const ids = filter.ids?.map(String);
    if (!filter.pixelId && !filter.destinationId && !ids?.length) {
      throw new BadRequestError("replay needs a pixel, a destination or dead-letter ids");
    }
    if (ids?.some((id) => !/^\d{1,19}$/.test(id))) {
      throw new BadRequestError("dead-letter ids are positive integers");
    }
    const r = await this.sql.query(
      `WITH picked AS (
         UPDATE dead_letters SET replayed_at = now()
         WHERE replayed_at IS NULL
           AND ($1::text IS NULL OR pixel_id = $1)
           AND ($2::text IS NULL OR destination_id = $2)
           AND ($3::text[] IS NULL OR id = ANY($3::text[]::bigint[]))
         RETURNING id, destination_id, pixel_id, event_id, payload
       )
       INSERT INTO deliveries (destination_id, pixel_id, event_id, payload)
       SELECT destination_id, pixel_id, event_id, payload FROM picked ORDER BY id`,
      [filter.pixelId ?? null, filter.destinationId ?? null, ids?.length ? ids : null],
    );
    if (r.rowCount > 0) this.due();
    return r.rowCount;
  }
}

async function complete(tx: SqlExecutor, ids: string[], lease: Date): Promise<void> {
  await tx.query("DELETE FROM deliveries WHERE id = ANY($1::text[]::bigint[]) AND locked_until = $2", [
    ids,
    lease,
  ]);
}

async function reschedule(tx: SqlExecutor, rows: Retry[], lease: Date): Promise<void> {
  await tx.query(
    `UPDATE deliveries q
     SET attempts = q.attempts - (u->>'undo')::int,
         next_attempt_at = clock_timestamp() + (u->>'delay')::float8 * interval '1 millisecond',
         locked_until = NULL,
         last_error = COALESCE(u->>'error', q.last_error)
     FROM jsonb_array_elements($1::jsonb) u
     WHERE q.id = (u->>'id')::bigint AND q.locked_until = $2`,
    [toJsonText(rows), lease],
  );
}

async function deadLetter(tx: SqlExecutor, rows: Dead[], lease: Date): Promise<void> {
  await tx.query(
    `WITH failed AS (
       SELECT (u->>'id')::bigint AS id, u->>'error' AS error FROM jsonb_array_elements($1::jsonb) u
     ),
     moved AS (
       DELETE FROM deliveries q USING failed
       WHERE q.id = failed.id AND q.locked_until = $2
       RETURNING q.destination_id, q.pixel_id, q.event_id, q.payload, q.attempts, failed.error
     )
     INSERT INTO dead_letters (destination_id, pixel_id, event_id, payload, attempts, last_error)
     SELECT destination_id, pixel_id, event_id, payload, attempts, error FROM moved`,
    [toJsonText(rows), lease],
  );
}
