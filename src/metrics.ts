import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/*
 * Every metric of the process, in one registry and one file (docs/operations.md lists them).
 * Names follow Prometheus conventions (`pixelhouse_…_total` counters, base units: seconds, bytes).
 * Labels are bounded sets chosen here — route templates, outcomes, store and consumer names — never
 * a pixel id, an event name or anything else taken from input.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "pixelhouse_" });

const LATENCY = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new Counter({
  name: "pixelhouse_http_requests_total",
  help: "HTTP requests answered, by route template, method and status class",
  labelNames: ["route", "method", "status"] as const,
  registers: [registry],
});

export const ingestRequests = new Counter({
  name: "pixelhouse_ingest_requests_total",
  help: "Event ingestion requests, by origin (server|browser) and outcome (accepted|rejected|unavailable)",
  labelNames: ["origin", "outcome"] as const,
  registers: [registry],
});

export const eventsAccepted = new Counter({
  name: "pixelhouse_events_accepted_total",
  help: "Events stored (acknowledged), by origin",
  labelNames: ["origin"] as const,
  registers: [registry],
});

export const eventsDuplicate = new Counter({
  name: "pixelhouse_events_duplicate_total",
  help: "Events skipped because a copy with the same eventId is stored, by origin",
  labelNames: ["origin"] as const,
  registers: [registry],
});

export const eventsRejected = new Counter({
  name: "pixelhouse_events_rejected_total",
  help: "Events of refused requests, by reason (invalid|too_large|rate_limited|unavailable)",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export const ingestAckSeconds = new Histogram({
  name: "pixelhouse_ingest_ack_seconds",
  help: "Time from an ingestion request's arrival to its acknowledgement (events stored)",
  labelNames: ["origin"] as const,
  buckets: LATENCY,
  registers: [registry],
});

export const ingestGroupEvents = new Histogram({
  name: "pixelhouse_ingest_group_events",
  help: "Events per group commit (one dedup reservation and one INSERT)",
  buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
  registers: [registry],
});

export const querySeconds = new Histogram({
  name: "pixelhouse_query_seconds",
  help: "Query API answers, by endpoint (query|attribution|cohorts|channel|credited_orders), shape (total|series[_by_dimension], the attribution model (attribution, credited_orders), the channel level, cohort) and cache (hit|miss|bypass|none)",
  labelNames: ["endpoint", "shape", "cache"] as const,
  buckets: LATENCY,
  registers: [registry],
});

export const queryStatements = new Counter({
  name: "pixelhouse_query_statements_total",
  help: "Statements the query API ran, by source and form: raw, derived (derived tables beside the rows past their watermark), derived_current (derived tables alone), cells, cells_current (credit cells)",
  labelNames: ["source", "form"] as const,
  registers: [registry],
});

export const consoleQueries = new Counter({
  name: "pixelhouse_console_queries_total",
  help: "SQL console queries, by outcome (ok|refused|failed)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const consoleQueueSeconds = new Histogram({
  name: "pixelhouse_console_queue_wait_seconds",
  help: "Time a console query waited for a reader",
  buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const consoleReadersInUse = new Gauge({
  name: "pixelhouse_console_readers_in_use",
  help: "Console readers running a query now",
  registers: [registry],
});

export const storeUnavailable = new Counter({
  name: "pixelhouse_store_unavailable_total",
  help: "Requests answered 503 because a store did not answer, by store (sql|warehouse|kv)",
  labelNames: ["store"] as const,
  registers: [registry],
});

export const storeErrors = new Counter({
  name: "pixelhouse_store_errors_total",
  help: "Calls to a server store that failed as an outage (kind=outage) or were refused by its open circuit breaker (kind=refused), by store",
  labelNames: ["store", "kind"] as const,
  registers: [registry],
});

export const consumerProcessed = new Counter({
  name: "pixelhouse_consumer_processed_total",
  help: "Messages (or rows) a background consumer finished, by consumer",
  labelNames: ["consumer"] as const,
  registers: [registry],
});

export const consumerRetries = new Counter({
  name: "pixelhouse_consumer_retries_total",
  help: "Messages a background consumer failed and left for another attempt, by consumer",
  labelNames: ["consumer"] as const,
  registers: [registry],
});

/** What a background consumer reports when asked how far behind it is. */
export interface ConsumerState {
  /** Messages (or rows) still to do. */
  messages: number;
  /** Age of the oldest of them; 0 when caught up. */
  seconds: number;
  /** Given up on and kept for an operator (forwarding's dead letters); absent when it has none. */
  deadLetters?: number;
}

const consumers = new Map<string, () => Promise<ConsumerState>>();

/**
 * A background consumer (outbox relay, forwarding, cost recalculation, identity…) registers how to
 * read its state; the lag gauges, `pixelhouse status` and /readyz ask every registered one. The name
 * is a fixed word of the code, never input.
 */
export function registerConsumer(name: string, state: () => Promise<ConsumerState>): void {
  consumers.set(name, state);
}

/** Each registered consumer's state; one that cannot say (its store is down) is reported as null. */
export async function consumerStates(): Promise<Record<string, ConsumerState | null>> {
  const entries = await Promise.all(
    [...consumers].map(async ([name, state]) => [name, await state().catch(() => null)] as const),
  );
  return Object.fromEntries(entries);
}

export interface ConsumerVerdict {
  ok: boolean;
  messages: number | null;
  seconds: number | null;
  deadLetters?: number;
}

/** Each consumer's state with its verdict: behind when its oldest message is older than `maxLagSeconds`. */
export async function consumerReport(maxLagSeconds: number): Promise<Record<string, ConsumerVerdict>> {
  const out: Record<string, ConsumerVerdict> = {};
  for (const [name, s] of Object.entries(await consumerStates())) {
    out[name] = s
      ? {
          ok: s.seconds <= maxLagSeconds,
          messages: s.messages,
          seconds: Math.round(s.seconds * 10) / 10,
          ...(s.deadLetters !== undefined ? { deadLetters: s.deadLetters } : {}),
        }
      : { ok: false, messages: null, seconds: null };
  }
  return out;
}

/** `read` once per scrape: the gauges collected in one scrape share its promise. */
function oncePerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= read().finally(() => {
      setImmediate(() => {
        pending = undefined;
      });
    });
    return pending;
  };
}

/** One read of every consumer per scrape, shared by the three gauges below. */
const scrapeConsumers = oncePerScrape(consumerStates);

new Gauge({
  name: "pixelhouse_consumer_lag_messages",
  help: "Messages (or rows) a background consumer still has to do",
  labelNames: ["consumer"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const [name, s] of Object.entries(await scrapeConsumers()))
      if (s) this.set({ consumer: name }, s.messages);
  },
});

new Gauge({
  name: "pixelhouse_consumer_lag_seconds",
  help: "Age of the oldest message a background consumer still has to do (0 when caught up)",
  labelNames: ["consumer"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const [name, s] of Object.entries(await scrapeConsumers()))
      if (s) this.set({ consumer: name }, s.seconds);
  },
});

new Gauge({
  name: "pixelhouse_consumer_dead_letters",
  help: "Messages a background consumer gave up on, kept for an operator",
  labelNames: ["consumer"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const [name, s] of Object.entries(await scrapeConsumers())) {
      if (s?.deadLetters !== undefined) this.set({ consumer: name }, s.deadLetters);
    }
  },
});

/** The warehouse's own background work: merges running now and active parts, in its database. */
export interface WarehouseActivity {
  merges: number;
  parts: number;
}

let warehouseActivity: (() => Promise<WarehouseActivity | null>) | undefined;

/**
 * How to read the warehouse's merges and parts, for the two gauges below: after a burst of writes
 * the engine merges its parts for a while, on the same cores as the requests.
 */
export function registerWarehouseActivity(read: () => Promise<WarehouseActivity | null>): void {
  warehouseActivity = read;
}

/** One read per scrape, shared by the two gauges; null when the warehouse cannot say. */
const scrapeActivity = oncePerScrape(async () => (await warehouseActivity?.().catch(() => null)) ?? null);

new Gauge({
  name: "pixelhouse_warehouse_merges",
  help: "Merges of the warehouse's tables running now",
  registers: [registry],
  async collect() {
    this.reset();
    const a = await scrapeActivity();
    if (a) this.set(a.merges);
  },
});

new Gauge({
  name: "pixelhouse_warehouse_active_parts",
  help: "Active data parts of the warehouse's tables (each small write adds one until merged)",
  registers: [registry],
  async collect() {
    this.reset();
    const a = await scrapeActivity();
    if (a) this.set(a.parts);
  },
});

/** Seconds since `startedMs` (performance.now()) — for histogram observations. */
export const since = (startedMs: number): number => (performance.now() - startedMs) / 1000;
