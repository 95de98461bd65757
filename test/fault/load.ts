/**
 * The load of a fault scenario: concurrent clients posting batches of events with unique eventIds to
 * the events API, and afterwards resending every batch they ever sent until each is acknowledged.
 * Everything that happens is written to a ledger, which the checks read.
 *
 * Each attempt stores its copies under a name of its own (`fault.L`, `fault.R1.3` …): dedup keys on
 * the eventId alone, so this changes nothing for the service, but the name is part of the events
 * table's sort key — two copies stored by different attempts can then never be collapsed by a
 * background merge before the raw table is read, and each copy tells which attempt stored it.
 */
import { Agent, request } from "node:http";
import { setTimeout as delay } from "node:timers/promises";

export type Phase = "load" | "resend" | "verify";

export type Outcome =
  | { kind: "http"; status: number; retryAfter: string | undefined; body: string; json?: IngestAnswer }
  | { kind: "conn"; code: string }
  | { kind: "timeout" };

export interface IngestAnswer {
  eventsIngested: number;
  duplicatesSkipped: number;
}

export interface Batch {
  client: number;
  seq: number;
  ids: string[];
  timestamp: string;
  /** Acknowledged while the load ran (a 200 covering every event of the batch). */
  ackedInLoad: boolean;
  /** What the first resend's acknowledgement said (undefined: never acknowledged then). */
  resend?: IngestAnswer;
  verify?: IngestAnswer;
  attempts: number;
  /** The first resend: attempts it took and how long from its first attempt to the acknowledgement. */
  resendAttempts?: number;
  resendMs?: number;
}

export interface FailedRequest {
  phase: Phase;
  batch: string;
  /** `503`, `500`, `conn:ECONNREFUSED`, `timeout`, `200 short` (a 200 not covering the batch)… */
  what: string;
  retryAfter: string | undefined;
  /** The error message of a JSON answer (`message`), else the start of the body. */
  body: string;
  at: number;
  /** How long the request took. */
  ms: number;
}

export interface Target {
  url: string;
  pixelId: string;
  key: string;
}

export interface LoadOptions {
  clients: number;
  batchSize: number;
  /** A request that takes longer is abandoned and counted as a timeout (never an allowed failure). */
  requestTimeoutMs: number;
  /** Cap on a Retry-After wait (and on the back-off after a connection error). */
  retryCapMs: number;
}

export const DEFAULT_LOAD: LoadOptions = {
  clients: 20,
  batchSize: 50,
  requestTimeoutMs: 20_000,
  retryCapMs: 2_000,
};

/** Label of a failure for the figures: the status, or the kind of connection failure. */
export function describeOutcome(o: Outcome, batchSize: number): string | undefined {
  if (o.kind === "conn") return `conn:${o.code}`;
  if (o.kind === "timeout") return "timeout";
  if (o.status !== 200) return String(o.status);
  if (!o.json || o.json.eventsIngested + o.json.duplicatesSkipped !== batchSize) return "200 short";
  return undefined;
}

export class Ledger {
  readonly batches: Batch[] = [];
  readonly failures: FailedRequest[] = [];
  readonly requests: Record<Phase, number> = { load: 0, resend: 0, verify: 0 };
  /** A first copy answered as a duplicate during the load: the service called an unseen id a duplicate. */
  readonly loadDuplicates: { batch: string; duplicatesSkipped: number }[] = [];
  private readonly seqs: number[];
  readonly runTag = Math.random().toString(36).slice(2, 8);

  constructor(readonly options: LoadOptions) {
    this.seqs = Array.from({ length: options.clients }, () => 0);
  }

  newBatch(client: number): Batch {
    const seq = this.seqs[client]!++;
    const ids = Array.from(
      { length: this.options.batchSize },
      (_, i) => `${this.runTag}-c${client}-b${seq}-e${i}`,
    );
    const batch: Batch = {
      client,
      seq,
      ids,
      timestamp: new Date().toISOString(),
      ackedInLoad: false,
      attempts: 0,
    };
    this.batches.push(batch);
    return batch;
  }
}

/** Names a batch in messages: client/sequence and its first id. */
export const batchName = (b: Batch): string => `c${b.client}/b${b.seq} (${b.ids[0]}…)`;

function body(batch: Batch, tag: string): string {
  return JSON.stringify({
    events: batch.ids.map((eventId) => ({
      name: `fault.${tag}`,
      eventId,
      timestamp: batch.timestamp,
      // A new alias per batch, so every group writes the identity index in Postgres too.
      identityId: `anon-${batch.ids[0]}`,
    })),
  });
}

export function post(agent: Agent, target: Target, payload: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      `${target.url}/tr/api/events`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          "x-api-key": target.key,
          "x-pixel-id": target.pixelId,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (err: NodeJS.ErrnoException) =>
          resolve({ kind: "conn", code: err.code ?? err.message }),
        );
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          let json: IngestAnswer | undefined;
          try {
            const parsed = JSON.parse(text) as Partial<IngestAnswer>;
            if (typeof parsed.eventsIngested === "number" && typeof parsed.duplicatesSkipped === "number")
              json = { eventsIngested: parsed.eventsIngested, duplicatesSkipped: parsed.duplicatesSkipped };
          } catch {
            // not JSON: kept as text for the report
          }
          const ra = res.headers["retry-after"];
          resolve({
            kind: "http",
            status: res.statusCode ?? 0,
            retryAfter: ra,
            body: text,
            ...(json ? { json } : {}),
          });
        });
      },
    );
    let timedOut = false;
    req.setTimeout(timeoutMs, () => {
      timedOut = true;
      req.destroy();
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      resolve(timedOut ? { kind: "timeout" } : { kind: "conn", code: err.code ?? err.message });
    });
    req.end(payload);
  });
}

/**
 * The pause before the next attempt: Retry-After when the service gave one (capped), else a back-off
 * that doubles from 100 ms (connection refused while a process restarts, for instance), capped too.
 */
function pauseMs(o: Outcome, failuresInARow: number, capMs: number): number {
  if (o.kind === "http" && o.retryAfter !== undefined) {
    const seconds = Number(o.retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, capMs);
  }
  return Math.min(100 * 2 ** Math.min(failuresInARow, 10), capMs);
}

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 300);
}

/** One attempt at one batch, recorded in the ledger; true when acknowledged. */
async function attempt(
  ledger: Ledger,
  agent: Agent,
  target: Target,
  batch: Batch,
  phase: Phase,
  tag: string,
): Promise<{ ok: boolean; outcome: Outcome }> {
  ledger.requests[phase]++;
  batch.attempts++;
  const started = performance.now();
  const outcome = await post(agent, target, body(batch, tag), ledger.options.requestTimeoutMs);
  const failure = describeOutcome(outcome, batch.ids.length);
  if (failure) {
    ledger.failures.push({
      phase,
      batch: batchName(batch),
      what: failure,
      retryAfter: outcome.kind === "http" ? outcome.retryAfter : undefined,
      body: outcome.kind === "http" ? messageOf(outcome.body) : "",
      at: Date.now(),
      ms: performance.now() - started,
    });
    return { ok: false, outcome };
  }
  return { ok: true, outcome };
}

export interface RunningLoad {
  /** Ends the load: every client finishes the request it has in flight, then stops. */
  stop(): Promise<void>;
  /** Acknowledged batches so far. */
  acked(): number;
  /**
   * Resolves once `check` holds (checked after every answer and every 50 ms), or rejects after
   * `timeoutMs` with `what` and the load's state.
   */
  until(check: () => boolean, timeoutMs: number, what: string): Promise<number>;
}

/** Starts the clients; each sends new batches until stopped, pausing after a failure. */
export function startLoad(ledger: Ledger, target: Target): RunningLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: ledger.options.clients * 2 });
  let stopping = false;
  let acked = 0;
  const wake = new Set<() => void>();
  const client = async (c: number) => {
    let inARow = 0;
    while (!stopping) {
      const batch = ledger.newBatch(c);
      const { ok, outcome } = await attempt(ledger, agent, target, batch, "load", "L");
      if (ok && outcome.kind === "http" && outcome.json) {
        batch.ackedInLoad = true;
        acked++;
        inARow = 0;
        if (outcome.json.duplicatesSkipped > 0)
          ledger.loadDuplicates.push({
            batch: batchName(batch),
            duplicatesSkipped: outcome.json.duplicatesSkipped,
          });
      } else {
        inARow++;
        await delay(pauseMs(outcome, inARow - 1, ledger.options.retryCapMs));
      }
      for (const w of wake) w();
    }
  };
  const running = Promise.all(Array.from({ length: ledger.options.clients }, (_, c) => client(c)));
  return {
    acked: () => acked,
    async stop() {
      stopping = true;
      await running;
      agent.destroy();
    },
    until(check, timeoutMs, what) {
      const started = performance.now();
      return new Promise((resolve, reject) => {
        const done = () => {
          clearInterval(poll);
          clearTimeout(timer);
          wake.delete(test);
        };
        const test = () => {
          if (!check()) return;
          done();
          resolve(performance.now() - started);
        };
        const poll = setInterval(test, 50);
        const timer = setTimeout(() => {
          done();
          const last = ledger.failures.slice(-5).map((f) => `${f.what} ${f.body.slice(0, 120)}`);
          reject(
            new Error(
              `${what}: not reached within ${timeoutMs} ms (acknowledged batches ${acked}, ` +
                `requests ${ledger.requests.load}, failures ${ledger.failures.length}; last: ${last.join(" | ")})`,
            ),
          );
        }, timeoutMs);
        wake.add(test);
        test();
      });
    },
  };
}

export interface ResendResult {
  phase: Phase;
  requests: number;
  /** Batches still not acknowledged when their retries ran out. */
  unacknowledged: Batch[];
  ms: number;
}

/**
 * Every client resends every batch it ever sent, in order, each until acknowledged: failures are
 * retried after Retry-After (capped) or a back-off, at most `maxAttempts` times and not past
 * `deadlineMs` for the whole phase.
 */
export async function resendAll(
  ledger: Ledger,
  target: Target,
  phase: "resend" | "verify",
  bounds: { maxAttempts: number; deadlineMs: number },
): Promise<ResendResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: ledger.options.clients * 2 });
  const started = performance.now();
  const before = ledger.requests[phase];
  const unacknowledged: Batch[] = [];
  const prefix = phase === "resend" ? "R1" : "R2";
  const client = async (c: number) => {
    for (const batch of ledger.batches.filter((b) => b.client === c)) {
      let acked = false;
      const first = performance.now();
      for (let n = 1; n <= bounds.maxAttempts && !acked; n++) {
        const { ok, outcome } = await attempt(ledger, agent, target, batch, phase, `${prefix}.${n}`);
        if (ok && outcome.kind === "http" && outcome.json) {
          acked = true;
          batch[phase] = outcome.json;
          if (phase === "resend") {
            batch.resendAttempts = n;
            batch.resendMs = performance.now() - first;
          }
        } else if (performance.now() - started < bounds.deadlineMs) {
          await delay(pauseMs(outcome, n - 1, ledger.options.retryCapMs));
        } else break;
      }
      if (!acked) unacknowledged.push(batch);
    }
  };
  try {
    await Promise.all(Array.from({ length: ledger.options.clients }, (_, c) => client(c)));
  } finally {
    agent.destroy();
  }
  return {
    phase,
    requests: ledger.requests[phase] - before,
    unacknowledged,
    ms: performance.now() - started,
  };
}
