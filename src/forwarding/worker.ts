import { PollingLoop } from "../events/loop.js";
import { consumerProcessed, consumerRetries } from "../metrics.js";
import { VERSION } from "../version.js";
import { type Destination, destinationFromRow } from "./destinations.js";
import { buildRequest } from "./mappers.js";
import type { AttemptOutcome, ClaimedDelivery, DeliveryQueue, SettleResult } from "./queue.js";

/*
 * The only code that talks to destinations. Each step claims a batch from the queue, sends it with
 * bounded concurrency and a per-request timeout, and hands every outcome back to the queue, which
 * decides between done, retry and dead letter. Runs on the shared PollingLoop (never throws,
 * failures go to `onError`).
 */

export interface WorkerOptions {
  /** Rows claimed per batch (default 100). */
  batchSize?: number;
  /** Requests in flight at once within a batch (default 16). */
  concurrency?: number;
  /** Per-request timeout covering the response body too (default 10 s). */
  requestTimeoutMs?: number;
  /** Worker sleep between polls when the last batch was not full (default 1 s). */
  pollIntervalMs?: number;
  /** How long a claim is held; must exceed the time a batch can take (default derived). */
  leaseMs?: number;
  /** Background failures of the worker (it never throws out of its loop). */
  onError?: (err: unknown) => void;
  /** Default the global fetch. */
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface RunResult extends SettleResult {
  claimed: number;
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

export class DeliveryWorker {
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly requestTimeoutMs: number;
  private readonly leaseMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly loop: PollingLoop;
  private stopSignal = new AbortController();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly queue: DeliveryQueue,
    options: WorkerOptions = {},
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? 10_000);
    const rounds = Math.ceil(this.batchSize / this.concurrency);
    this.leaseMs = options.leaseMs ?? this.requestTimeoutMs * rounds + 30_000;
    this.fetchImpl = options.fetch ?? fetch;
    this.userAgent = options.userAgent ?? `pixelhouse/${VERSION}`;
    const onError = options.onError ?? (() => {});
    // A full batch means more may be due at once: the loop runs the next step without sleeping.
    this.loop = new PollingLoop(
      async () => (await this.runOnce()).claimed >= this.batchSize,
      Math.max(1, options.pollIntervalMs ?? 1_000),
      onError,
    );
  }

  /** Starts the polling loop (idempotent). Failures go to `onError`; the loop never throws. */
  start(): void {
    if (this.loop.isRunning) return;
    this.unsubscribe ??= this.queue.onDue(() => this.loop.wake());
    this.loop.start();
  }

  /** Stops the loop: in-flight requests are aborted and their rows handed back untouched. */
  async stop(): Promise<void> {
    if (!this.loop.isRunning) return this.loop.stop();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopSignal.abort();
    await this.loop.stop();
    this.stopSignal = new AbortController();
  }

  get running(): boolean {
    return this.loop.isRunning;
  }

  /** Claims one batch of due deliveries, sends them, and records the outcomes. */
  async runOnce(): Promise<RunResult> {
    const stop = this.stopSignal.signal;
    const claimed = await this.queue.claim(this.batchSize, this.leaseMs);
    if (claimed.length === 0) return { claimed: 0, delivered: 0, retried: 0, deadLettered: 0, released: 0 };
    const outcomes = await mapLimit(claimed, this.concurrency, (delivery) => this.send(delivery, stop));
    const settled = await this.queue.settle(
      claimed.map((delivery, i) => ({ delivery, outcome: outcomes[i]! })),
    );
    consumerProcessed.inc({ consumer: "forwarding" }, settled.delivered + settled.deadLettered);
    consumerRetries.inc({ consumer: "forwarding" }, settled.retried);
    return { claimed: claimed.length, ...settled };
  }

  private async send(delivery: ClaimedDelivery, stop: AbortSignal): Promise<AttemptOutcome> {
    if (stop.aborted) return { kind: "released" };
    let destination: Destination;
    try {
      destination = destinationFromRow(delivery.destination);
    } catch (err) {
      return { kind: "failed", error: `invalid destination config: ${describeError(err)}` };
    }
    const secret = destination.kind === "meta_capi" ? destination.config.accessToken : undefined;
    const scrub = (text: string) => (secret ? text.split(secret).join("***") : text).slice(0, ERROR_MAX);
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    try {
      const request = buildRequest(
        destination,
        { id: delivery.id, eventId: delivery.eventId, payload: delivery.payload },
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
}
