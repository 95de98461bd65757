import { BadRequestError } from "../errors.js";
import type { ForwardableEvent } from "../shared/event-row.js";
import { SqlError, type SqlExecutor, type SqlStore } from "../stores/sql/port.js";
import { VERSION } from "../version.js";
import {
  type Destination,
  type DestinationRow,
  type DestinationService,
  destinationFromRow,
} from "./destinations.js";
import { buildRequest, matchesEventFilter, payloadFor, toJsonText } from "./mappers.js";

/*
 * At-least-once forwarding. Ingestion calls `enqueue` (one INSERT into `deliveries`, nothing when
 * the pixel has no destination); only the worker talks to destinations. The worker claims due rows
 * with a lease (FOR UPDATE SKIP LOCKED, then `next_attempt_at = locked_until = lease end`), so any
 * number of processes can run it and a crashed worker's rows come back when their lease ends.
 */

export interface ForwarderOptions {
  /** Rows claimed per batch (default 100). */
  batchSize?: number;
  /** Requests in flight at once within a batch (default 16). */
  concurrency?: number;
  /** Failed attempts before a delivery moves to `dead_letters` (default 8). */
  maxAttempts?: number;
  /** Backoff after the n-th failed attempt: base × 2^(n-1), capped, ±jitter (default 1 s). */
  backoffBaseMs?: number;
  /** Cap of the backoff before jitter (default 1 h); also caps a Retry-After. */
  backoffCapMs?: number;
  /** Relative jitter (default 0.2 = ±20 %). */
  jitter?: number;
  /** Per-request timeout covering the response body too (default 10 s). */
  requestTimeoutMs?: number;
  /** Worker sleep between polls when the last batch was not full (default 1 s). */
  pollIntervalMs?: number;
  /** How long a claim is held; must exceed the time a batch can take (default derived). */
  leaseMs?: number;
  /** Background failures of the worker (it never throws out of its loop). */
  onError?: (err: unknown) => void;
  /** For jitter; default Math.random. */
  random?: () => number;
  /** Default the global fetch. */
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface RunResult {
  claimed: number;
  delivered: number;
  retried: number;
  deadLettered: number;
  /** Claimed rows handed back untouched because the worker was stopping. */
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

type Outcome =
  | { kind: "ok" }
  | { kind: "failed"; error: string; retryAfterMs?: number }
  | { kind: "released" };

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

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date; undefined when absent/bad. */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

const ERROR_MAX = 500;

function describeError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e?.message ?? String(err)} (${cause})` : (e?.message ?? String(err));
}

async function readSnippet(res: Response, max = ERROR_MAX): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // The status is what matters; a body that cannot be read adds nothing.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString("utf8").replace(/\s+/g, " ").trim().slice(0, max);
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

export class Forwarder {
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly backoff: { baseMs: number; capMs: number; jitter: number };
  private readonly requestTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;

  private loopPromise: Promise<void> | undefined;
  private stopping = false;
  private stopSignal = new AbortController();
  private wake: (() => void) | undefined;

  constructor(
    private readonly sql: SqlStore,
    private readonly destinations: DestinationService,
    private readonly options: ForwarderOptions = {},
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 8);
    this.backoff = {
      baseMs: Math.max(0, options.backoffBaseMs ?? 1_000),
      capMs: Math.max(0, options.backoffCapMs ?? 3_600_000),
      jitter: Math.min(1, Math.max(0, options.jitter ?? 0.2)),
    };
    this.requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? 10_000);
    this.pollIntervalMs = Math.max(1, options.pollIntervalMs ?? 1_000);
    const rounds = Math.ceil(this.batchSize / this.concurrency);
    this.leaseMs = options.leaseMs ?? this.requestTimeoutMs * rounds + 30_000;
    this.random = options.random ?? Math.random;
    this.fetchImpl = options.fetch ?? fetch;
    this.userAgent = options.userAgent ?? `pixelhouse/${VERSION}`;
  }

  // -------------------------------------------------------------------------------------------
  // Ingestion side

  /**
   * Queues every (enabled destination × matching event) of the pixel in one INSERT and returns the
   * number of rows queued. No SQL at all when the pixel has no destination (cached lookup).
   */
  async enqueue(
    pixelId: string,
    events: readonly ForwardableEvent[],
    hold?: { token: string; ms: number },
  ): Promise<number> {
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
    if (queued > 0 && !hold) this.wake?.();
    return queued;
  }

  /** Held deliveries of a token become due now (their events are stored). */
  async release(token: string): Promise<void> {
    const r = await this.sql.query(
      "UPDATE deliveries SET next_attempt_at = now(), hold_token = NULL WHERE hold_token = $1",
      [token],
    );
    if (r.rowCount > 0) this.wake?.();
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

  private async insert(pixelId: string, json: string, hold?: { token: string; ms: number }): Promise<number> {
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

  // -------------------------------------------------------------------------------------------
  // Worker

  /** Starts the polling loop (idempotent). Failures go to `onError`; the loop never throws. */
  start(): void {
    if (this.loopPromise) return;
    this.stopping = false;
    this.loopPromise = this.loop();
  }

  /** Stops the loop: in-flight requests are aborted and their rows handed back untouched. */
  async stop(): Promise<void> {
    if (!this.loopPromise) return;
    this.stopping = true;
    this.stopSignal.abort();
    this.wake?.();
    await this.loopPromise;
    this.loopPromise = undefined;
    this.stopSignal = new AbortController();
  }

  get running(): boolean {
    return this.loopPromise !== undefined && !this.stopping;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let full = false;
      try {
        const r = await this.runOnce();
        full = r.claimed >= this.batchSize;
      } catch (err) {
        this.report(err);
      }
      if (this.stopping) break;
      if (!full) await this.sleep(this.pollIntervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private report(err: unknown): void {
    try {
      this.options.onError?.(err);
    } catch {
      // A failing error callback must not stop the worker.
    }
  }

  /** Claims one batch of due deliveries, sends them, and records the outcomes. */
  async runOnce(): Promise<RunResult> {
    const stop = this.stopSignal.signal;
    const claimed = await this.claim();
    const result: RunResult = {
      claimed: claimed.length,
      delivered: 0,
      retried: 0,
      deadLettered: 0,
      released: 0,
    };
    if (claimed.length === 0) return result;
    const outcomes = await mapLimit(claimed, this.concurrency, (row) => this.send(row, stop));

    const delivered: string[] = [];
    const retry: { id: string; delay: number; error: string | null; undo: number }[] = [];
    const dead: { id: string; error: string }[] = [];
    claimed.forEach((row, i) => {
      const outcome = outcomes[i]!;
      if (outcome.kind === "ok") {
        delivered.push(row.id);
      } else if (outcome.kind === "released") {
        retry.push({ id: row.id, delay: 0, error: null, undo: 1 });
      } else if (row.attempts >= this.maxAttempts) {
        dead.push({ id: row.id, error: outcome.error });
      } else {
        const delay =
          outcome.retryAfterMs !== undefined
            ? Math.min(outcome.retryAfterMs, this.backoff.capMs)
            : backoffDelayMs(row.attempts, this.backoff, this.random);
        retry.push({ id: row.id, delay, error: outcome.error, undo: 0 });
      }
    });
    result.delivered = delivered.length;
    result.deadLettered = dead.length;
    result.released = retry.filter((r) => r.undo).length;
    result.retried = retry.length - result.released;

    // Rows whose lease we no longer hold (it expired and another worker claimed them) are left to
    // that worker: every statement matches on the lease end we were given.
    const lease = claimed[0]!.locked_until;
    await this.sql.transaction(async (tx) => {
      if (delivered.length) await this.complete(tx, delivered, lease);
      if (retry.length) await this.reschedule(tx, retry, lease);
      if (dead.length) await this.deadLetter(tx, dead, lease);
    });
    return result;
  }

  private async claim(): Promise<ClaimedRow[]> {
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
      [this.batchSize, this.leaseMs],
    );
    return rows;
  }

  private async send(row: ClaimedRow, stop: AbortSignal): Promise<Outcome> {
    if (stop.aborted) return { kind: "released" };
    let destination: Destination;
    try {
      destination = destinationFromRow({
        id: row.destination_id,
        pixel_id: row.pixel_id,
        kind: row.kind,
        name: row.dest_name,
        config: row.config,
        event_names: row.event_names,
        enabled: row.enabled,
        created_at: row.dest_created_at,
      } satisfies DestinationRow);
    } catch (err) {
      return { kind: "failed", error: `invalid destination config: ${describeError(err)}` };
    }
    const secret = destination.kind === "meta_capi" ? destination.config.accessToken : undefined;
    const scrub = (text: string) => (secret ? text.split(secret).join("***") : text).slice(0, ERROR_MAX);
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    try {
      const request = buildRequest(
        destination,
        { id: row.id, eventId: row.event_id, payload: row.payload },
        { nowSeconds: Date.now() / 1000, userAgent: this.userAgent },
      );
      const res = await this.fetchImpl(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.any([timeout, stop]),
      });
      if (res.status >= 200 && res.status < 300) {
        await res.body?.cancel().catch(() => {});
        return { kind: "ok" };
      }
      const snippet = await readSnippet(res);
      const retryAfterMs =
        res.status === 429 || res.status === 503
          ? parseRetryAfter(res.headers.get("retry-after"))
          : undefined;
      const error = scrub(`HTTP ${res.status}${snippet ? `: ${snippet}` : ""}`);
      return retryAfterMs === undefined ? { kind: "failed", error } : { kind: "failed", error, retryAfterMs };
    } catch (err) {
      if (stop.aborted) return { kind: "released" };
      if (timeout.aborted) return { kind: "failed", error: `timeout after ${this.requestTimeoutMs} ms` };
      return { kind: "failed", error: scrub(`request failed: ${describeError(err)}`) };
    }
  }

  private async complete(tx: SqlExecutor, ids: string[], lease: Date): Promise<void> {
    await tx.query("DELETE FROM deliveries WHERE id = ANY($1::text[]::bigint[]) AND locked_until = $2", [
      ids,
      lease,
    ]);
  }

  private async reschedule(
    tx: SqlExecutor,
    rows: { id: string; delay: number; error: string | null; undo: number }[],
    lease: Date,
  ): Promise<void> {
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

  private async deadLetter(
    tx: SqlExecutor,
    rows: { id: string; error: string }[],
    lease: Date,
  ): Promise<void> {
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

  // -------------------------------------------------------------------------------------------
  // Dead letters

  /** The pixel's dead letters, newest first; replayed ones only with `includeReplayed`. */
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
    if (r.rowCount > 0) this.wake?.();
    return r.rowCount;
  }
}
