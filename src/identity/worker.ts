import { PollingLoop } from "../events/loop.js";
import { defaultConsumerName } from "../events/subscription.js";
import type { Logger } from "../log.js";
import { consumerProcessed, consumerRetries } from "../metrics.js";
import type { Bus } from "../stores/bus/port.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import type { IdentityAssigner } from "./assign.js";
import type { IdentityGraph, IdentityLinkRow } from "./graph.js";
import { IDENTITY_STREAM, parseSightings, type SightingsMessage } from "./messages.js";
import type { GraphChange, Sighting } from "./union.js";

export const IDENTITY_GROUP = "identity";

export interface IdentityLag {
  /** Sightings messages published and not yet filed. */
  messages: number;
  /** Age of the oldest of them (0 when caught up). */
  seconds: number;
}

export interface IdentityWorkerOptions {
  log?: Logger;
  /** Told which pixels' identities changed once their links are in the warehouse (query caches). */
  onChanged?: (pixelIds: string[]) => Promise<void>;
  /** Messages per batch at most (one filing into the graph per pixel of the batch). */
  batchSize?: number;
  /**
   * Sightings per filing at most (a message is never split): an import publishes 5,000 orders'
   * sightings per message, so a hundred messages read at once after a lag would be filed as one
   * working set of half a million sightings. The next read asks for about four runs of this many.
   */
  maxSightings?: number;
  pollIntervalMs?: number;
  /** A batch pending this long with a consumer that went quiet is taken over. */
  claimIdleMs?: number;
}

/** Sightings per filing by default: ~4 of an import's messages, a few hundred of ingestion's. */
const DEFAULT_MAX_SIGHTINGS = 20_000;

/** Runs of ~maxSightings a read asks for: a run's warehouse write overlaps the next run's filing. */
const RUNS_PER_READ = 4;

/** A pixel's messages filed together, in the order they were read. */
interface Filing {
  ids: string[];
  parsed: SightingsMessage[];
  repair: boolean;
  count: number;
}

/** A run filed into the graph, its links still to write. */
interface FiledRun {
  sightings: Sighting[];
  change: GraphChange;
  links: IdentityLinkRow[];
}

/** What one read's runs came to. */
interface Round {
  /** Message ids to acknowledge. */
  done: string[];
  /** Pixels whose links changed. */
  changed: Set<string>;
  /** Messages left pending. */
  failed: number;
  /** Pixels with a failed run: their later runs stay pending behind it. */
  failedPixels: Set<string>;
  /** Pixels whose links write failed: their later runs' writes are not tried, though filed. */
  writeFailed: Set<string>;
}

/**
 * How many messages the next read asks for: as many as held ~`maxSightings` in this one, between
 * 1 and `batchSize`. A round of few or empty messages asks for the full batch again.
 */
export function nextReadCount(
  messages: number,
  sightings: number,
  maxSightings: number,
  batchSize: number,
): number {
  if (messages === 0 || sightings === 0) return batchSize;
  const perMessage = sightings / messages;
  return Math.max(1, Math.min(batchSize, Math.floor(maxSightings / perMessage)));
}

/** Filing delays kept for the freshness figures: publish → links in the warehouse. */
const DELAYS_KEPT = 10_000;

/**
 * The identity graph as derived state: consumes the sightings the write paths publish (ingest and
 * sync, on the bus directly), files them per pixel (IdentityGraph) and writes the changed
 * links to the warehouse, where queries resolve every stored id in one hop. At-least-once and
 * idempotent: a sighting filed twice changes nothing the second time. A batch is acknowledged only
 * after its links are in the warehouse; a pixel that fails leaves its messages pending, and a message
 * delivered again re-writes every link of the identities it touches (the first attempt may have
 * committed the graph and lost the warehouse write).
 */
export class IdentityWorker {
  private readonly loop: PollingLoop;
  private readonly consumer = defaultConsumerName();
  private readonly delays: number[] = [];
  private filed = 0;
  /** Messages the next read asks for: fewer after a round of large messages. */
  private readCount: number | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly graph: IdentityGraph,
    private readonly warehouse: WarehouseStore,
    private readonly assigner: IdentityAssigner,
    private readonly options: IdentityWorkerOptions = {},
  ) {
    this.loop = new PollingLoop(
      // A full read means more are waiting: the next round starts at once.
      async () => {
        const asked = this.readCount ?? this.batchSize;
        return (await this.runOnce()).delivered >= asked;
      },
      options.pollIntervalMs ?? 100,
      (err) => options.log?.warn({ err }, "identity worker error; retrying"),
    );
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 100;
  }

  private get maxSightings(): number {
    return this.options.maxSightings ?? DEFAULT_MAX_SIGHTINGS;
  }

  /** The graph of record opened now: a process about to file fails at once when it cannot. */
  ready(): Promise<void> {
    return this.graph.ready();
  }

  start(): this {
    this.loop.start();
    return this;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** New sightings were published in this process: file them now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** Reads one batch and files it; returns how many messages came and how many failed. */
  async runOnce(): Promise<{ delivered: number; failed: number }> {
    const messages = await this.bus.read(IDENTITY_STREAM, IDENTITY_GROUP, this.consumer, {
      count: this.readCount ?? this.batchSize,
      claimIdleMs: this.options.claimIdleMs ?? 60_000,
    });
    if (messages.length === 0) return { delivered: 0, failed: 0 };
    const byPixel = new Map<string, Filing[]>();
    const done: string[] = [];
    let read = 0;
    for (const m of messages) {
      const parsed = parseSightings(m.payload);
      if (!parsed) {
        this.options.log?.warn({ key: m.key }, "not a sightings message; dropped");
        done.push(m.id);
        continue;
      }
      read += parsed.sightings.length;
      const filings = byPixel.get(parsed.pixelId) ?? [];
      let last = filings.at(-1);
      if (!last || (last.count > 0 && last.count + parsed.sightings.length > this.maxSightings)) {
        last = { ids: [], parsed: [], repair: false, count: 0 };
        filings.push(last);
      }
      last.ids.push(m.id);
      last.parsed.push(parsed);
      last.count += parsed.sightings.length;
      last.repair ||= m.deliveries > 1;
      byPixel.set(parsed.pixelId, filings);
    }
    this.readCount = nextReadCount(messages.length, read, this.maxSightings * RUNS_PER_READ, this.batchSize);
    const round: Round = {
      done,
      changed: new Set(),
      failed: 0,
      failedPixels: new Set(),
      writeFailed: new Set(),
    };
    // Each run's warehouse write (and what follows it) overlaps the next run's filing into the graph:
    // different engines, and the graph's side was idle while the links were written. Writes stay in
    // run order, one at a time.
    let writing: Promise<void> = Promise.resolve();
    for (const [pixelId, filings] of byPixel) {
      for (const filing of filings) {
        // The pixel's later messages wait with a failed one: they are filed in the order published.
        if (round.failedPixels.has(pixelId)) {
          round.failed += filing.ids.length;
          continue;
        }
        const filed = await this.fileInGraph(pixelId, filing);
        if (filed === null) {
          round.failedPixels.add(pixelId);
          round.failed += filing.ids.length;
          continue;
        }
        writing = writing.then(() => this.writeLinks(pixelId, filing, filed, round));
        // Handled here while the next run is filed; a rejection still reaches the await below.
        writing.catch(() => {});
      }
    }
    await writing;
    if (round.changed.size && this.options.onChanged) {
      await this.options.onChanged([...round.changed]).catch((err: unknown) => {
        this.options.log?.warn({ err }, "data version not bumped after identity merges");
      });
    }
    if (done.length) await this.bus.ack(IDENTITY_STREAM, IDENTITY_GROUP, done);
    consumerProcessed.inc({ consumer: IDENTITY_GROUP }, done.length);
    if (round.failed > 0) consumerRetries.inc({ consumer: IDENTITY_GROUP }, round.failed);
    return { delivered: messages.length, failed: round.failed };
  }

  /** Files one run of a pixel's messages into the graph; null (logged) when that failed. */
  private async fileInGraph(pixelId: string, filing: Filing): Promise<FiledRun | null> {
    const sightings = filing.parsed.flatMap((p) => p.sightings);
    try {
      const { change, links } = await this.graph.apply(pixelId, sightings, { repair: filing.repair });
      return { sightings, change, links };
    } catch (err) {
      this.options.log?.warn({ err, pixelId }, "identity sightings not filed; retried");
      return null;
    }
  }

  /**
   * After the graph's commit, outside its writer lock (on a server that lock holds a Postgres
   * connection): the run's links into the warehouse, then the run counts as done. A run whose pixel
   * failed meanwhile (an earlier run's write) stays pending too, though the graph has it: its
   * redelivery is in repair mode, which writes every link it touches again. Never throws.
   */
  private async writeLinks(pixelId: string, filing: Filing, filed: FiledRun, round: Round): Promise<void> {
    // Only an earlier run's failed write holds this one back: a later run's failed filing does not.
    if (round.writeFailed.has(pixelId)) {
      round.failed += filing.ids.length;
      return;
    }
    try {
      if (filed.links.length) {
        await this.warehouse.insert("identity_links", filed.links as unknown as Record<string, unknown>[]);
        round.changed.add(pixelId);
      }
      this.assigner.learn(pixelId, filed.sightings, filed.change);
    } catch (err) {
      this.options.log?.warn({ err, pixelId }, "identity links not written; retried");
      round.failedPixels.add(pixelId);
      round.writeFailed.add(pixelId);
      round.failed += filing.ids.length;
      return;
    }
    const now = Date.now();
    for (const p of filing.parsed) this.record(now - p.at);
    round.done.push(...filing.ids);
  }

  private record(ms: number): void {
    this.filed++;
    if (this.delays.length >= DELAYS_KEPT) this.delays.shift();
    this.delays.push(Math.max(0, ms));
  }

  /** Publish → filed delays of the last messages (ms), and how many were filed in all. */
  freshness(): { count: number; p50: number | null; p99: number | null } {
    const sorted = [...this.delays].sort((a, b) => a - b);
    const at = (q: number) =>
      sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null;
    return { count: this.filed, p50: at(0.5), p99: at(0.99) };
  }

  /** What is still to file, across every process of the group. */
  async lag(): Promise<IdentityLag> {
    const b = await this.bus.backlog(IDENTITY_STREAM, IDENTITY_GROUP);
    return {
      messages: b.messages,
      seconds: b.oldestAt === null ? 0 : Math.max(0, (Date.now() - b.oldestAt) / 1000),
    };
  }

  /**
   * Files everything published so far in this process (tests, the CLI after an import, a query
   * asked to wait). Messages another live consumer holds are waited for until `timeoutMs`.
   * Returns the lag left (zero messages when caught up).
   */
  async catchUp(timeoutMs = 30_000): Promise<IdentityLag> {
    const deadline = Date.now() + timeoutMs;
    let pause = 5;
    for (;;) {
      const r = await this.runOnce();
      if (r.delivered > 0 && r.failed === 0) continue;
      const left = await this.lag();
      if (left.messages === 0 || Date.now() >= deadline) return left;
      // Held by another consumer (or failing): poll until it lands or the time is up.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(pause, Math.max(1, deadline - Date.now()))),
      );
      pause = Math.min(pause * 2, 250);
    }
  }
}
