import { type ConsumerState, consumerProcessed, consumerRetries } from "../metrics.js";
import type { Bus } from "../stores/bus/port.js";
import type { SqlStore } from "../stores/sql/port.js";
import { PollingLoop } from "./loop.js";
import { TOPIC_STREAMS, type TopicRoute } from "./topics.js";

/*
 * The outbox relay: moves unpublished outbox rows of the mapped topics to the bus and marks them
 * published only after the bus accepted them (at-least-once: a crash in between publishes them
 * again). Any number of processes may run it: each claims a batch with a lease (FOR UPDATE SKIP
 * LOCKED, then `claimed_until`), so batches do not overlap and a dead relay's batch is taken again
 * once its lease ends. The bus is never called inside a SQL transaction (PGlite has one connection,
 * and the embedded bus lives in that same store).
 */

export interface RelayOptions {
  /** Outbox topic → bus stream; other topics are left alone (default TOPIC_STREAMS). */
  topics?: Readonly<Record<string, TopicRoute>>;
  /** Rows claimed per batch (default 100). */
  batchSize?: number;
  /** How long a claim is held; must exceed the time a batch takes to publish (default 30 s). */
  leaseMs?: number;
  /** Sleep between polls when the outbox was drained (default 1 s); `wake` cuts it short. */
  pollIntervalMs?: number;
  /** Published outbox rows and acknowledged bus messages older than this are deleted (default 7 days). */
  retentionMs?: number;
  /** How often that clean-up runs (default 10 min). */
  housekeepingEveryMs?: number;
  /** Background failures (the relay keeps running and retries). */
  onError?: (err: unknown) => void;
}

export interface RelayResult {
  claimed: number;
  published: number;
}

interface ClaimedRow {
  id: string;
  topic: string;
  payload: unknown;
}

export class OutboxRelay {
  private readonly topics: Readonly<Record<string, TopicRoute>>;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly retentionMs: number;
  private readonly housekeepingEveryMs: number;
  private readonly loop: PollingLoop;
  private lastHousekeeping = 0;

  constructor(
    private readonly sql: SqlStore,
    private readonly bus: Bus,
    options: RelayOptions = {},
  ) {
    this.topics = options.topics ?? TOPIC_STREAMS;
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.leaseMs = Math.max(1, options.leaseMs ?? 30_000);
    this.retentionMs = Math.max(0, options.retentionMs ?? 7 * 24 * 3600_000);
    this.housekeepingEveryMs = Math.max(1, options.housekeepingEveryMs ?? 600_000);
    const onError = options.onError ?? (() => {});
    this.loop = new PollingLoop(() => this.step(), Math.max(1, options.pollIntervalMs ?? 1_000), onError);
  }

  /** Starts relaying in the background (idempotent). */
  start(): void {
    this.loop.start();
  }

  /** Stops after the batch in flight is published and marked; resolves when the relay is idle. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** New outbox rows were committed: relay them now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  get running(): boolean {
    return this.loop.isRunning;
  }

  private async step(): Promise<boolean> {
    const r = await this.runOnce();
    if (Date.now() - this.lastHousekeeping >= this.housekeepingEveryMs) {
      this.lastHousekeeping = Date.now();
      await this.housekeeping();
    }
    return r.claimed >= this.batchSize;
  }

  /** Claims one batch, publishes it stream by stream in outbox order, marks what the bus accepted. */
  async runOnce(): Promise<RelayResult> {
    const rows = await this.claim();
    if (rows.length === 0) return { claimed: 0, published: 0 };
    const byStream = new Map<string, ClaimedRow[]>();
    for (const row of rows) {
      const stream = this.topics[row.topic]!.stream;
      byStream.set(stream, [...(byStream.get(stream) ?? []), row]);
    }
    const published: string[] = [];
    const unpublished: string[] = [];
    let failure: unknown;
    for (const [stream, batch] of byStream) {
      if (failure !== undefined) {
        unpublished.push(...batch.map((r) => r.id));
        continue;
      }
      try {
        await this.bus.publish(
          stream,
          batch.map((r) => {
            const shape = this.topics[r.topic]!.shape;
            return { key: r.id, payload: shape ? shape(r.payload) : r.payload };
          }),
        );
        published.push(...batch.map((r) => r.id));
      } catch (err) {
        failure = err;
        unpublished.push(...batch.map((r) => r.id));
      }
    }
    if (published.length > 0) {
      await this.sql.query(
        "UPDATE outbox SET published_at = clock_timestamp(), claimed_until = NULL WHERE id = ANY($1::bigint[])",
        [published],
      );
    }
    if (unpublished.length > 0) {
      // Hand the rest back at once: the next poll retries them instead of waiting out the lease.
      await this.sql.query(
        "UPDATE outbox SET claimed_until = NULL WHERE id = ANY($1::bigint[]) AND published_at IS NULL",
        [unpublished],
      );
    }
    consumerProcessed.inc({ consumer: "outbox-relay" }, published.length);
    if (failure !== undefined) {
      consumerRetries.inc({ consumer: "outbox-relay" }, unpublished.length);
      throw failure;
    }
    return { claimed: rows.length, published: published.length };
  }

  /** Rows of the relayed topics not published yet, and the age of the oldest. */
  async backlog(): Promise<ConsumerState> {
    const { rows } = await this.sql.query<{ n: string; oldest: number | null }>(
      `SELECT count(*)::text AS n, extract(epoch FROM clock_timestamp() - min(created_at))::float8 AS oldest
       FROM outbox WHERE published_at IS NULL AND topic = ANY($1::text[])`,
      [Object.keys(this.topics)],
    );
    return { messages: Number(rows[0]?.n ?? 0), seconds: Math.max(0, rows[0]?.oldest ?? 0) };
  }

  private async claim(): Promise<ClaimedRow[]> {
    const { rows } = await this.sql.query<ClaimedRow>(
      `UPDATE outbox o SET claimed_until = clock_timestamp() + make_interval(secs => $3)
       FROM (SELECT id FROM outbox
             WHERE published_at IS NULL AND topic = ANY($1::text[])
               AND (claimed_until IS NULL OR claimed_until < clock_timestamp())
             ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) c
       WHERE o.id = c.id
       RETURNING o.id::text AS id, o.topic, o.payload`,
      [Object.keys(this.topics), this.batchSize, this.leaseMs / 1000],
    );
    return rows.sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** Deletes published outbox rows and acknowledged bus messages past the retention. */
  async housekeeping(): Promise<{ outbox: number; bus: number }> {
    const r = await this.sql.query(
      `DELETE FROM outbox WHERE topic = ANY($1::text[]) AND published_at IS NOT NULL
         AND published_at < clock_timestamp() - make_interval(secs => $2)`,
      [Object.keys(this.topics), this.retentionMs / 1000],
    );
    let trimmed = 0;
    for (const stream of new Set(Object.values(this.topics).map((t) => t.stream))) {
      trimmed += await this.bus.trim(stream, this.retentionMs);
    }
    return { outbox: r.rowCount, bus: trimmed };
  }
}
