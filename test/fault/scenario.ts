/**
 * One fault scenario as a vitest suite: its own servers and service, the load, the fault injected
 * mid-load, two full resends, then the raw events table read back and checked, each guarantee as a
 * test of its own so a run tells which one broke and how.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Figures, figuresOf, formatResendDetail, formatSummary, violations } from "./checks.js";
import { type IdentityState, identityViolations, settledIdentity } from "./identity.js";
import {
  DEFAULT_LOAD,
  Ledger,
  type ResendResult,
  type RunningLoad,
  resendAll,
  startLoad,
  type Target,
} from "./load.js";
import { type FaultRedis, freePort, type OwnPostgres, startFaultRedis, startOwnPostgres } from "./servers.js";
import { nextInsertPart, preparePixel, readRawEvents, ServiceProcess, serviceEnv } from "./service.js";

const PIXEL_ID = "fault";

/**
 * The crash, twice: SIGKILL while a group's INSERT into the events table is under way (its dedup
 * leases taken, nothing stored), restart; once the load is acknowledged again, SIGKILL the moment a
 * group's INSERT has landed (stored, its requests not yet answered), restart. Each time other
 * requests are in flight too. Each restart is on the same DATA_DIR and servers.
 */
export async function killTwiceAndRestart(ctx: FaultContext): Promise<void> {
  await killAt(ctx, "started");
  const mark = ctx.load.acked();
  await ctx.load.until(
    () => ctx.load.acked() >= mark + DEFAULT_LOAD.clients,
    45_000,
    "load acknowledged after the first restart",
  );
  ctx.note("load acknowledged again");
  await killAt(ctx, "landed");
}

async function killAt(ctx: FaultContext, moment: "started" | "landed"): Promise<void> {
  const part = await nextInsertPart(ctx.eventsDir, moment, 30_000);
  await ctx.service.kill();
  const final = part.replace(/^tmp_insert_/, "");
  const landed = existsSync(join(ctx.eventsDir, final));
  ctx.note(
    `SIGKILL as part ${final} ${moment === "started" ? "was being written" : "appeared"} (${landed ? "it had landed" : "it had not landed"})`,
  );
  await ctx.service.start();
  ctx.note(`restarted (pid ${ctx.service.pid})`);
}

/** How long a store stays down in the outage scenarios: FAULT_OUTAGE_SECONDS, default 3, at most 60. */
export function outageMs(): number {
  const raw = Number(process.env.FAULT_OUTAGE_SECONDS ?? 3);
  const seconds = Number.isFinite(raw) && raw > 0 ? Math.min(raw, 60) : 3;
  return seconds * 1000;
}

export interface FaultContext {
  service: ServiceProcess;
  load: RunningLoad;
  redis: FaultRedis | undefined;
  postgres: OwnPostgres | undefined;
  /** Where chDB keeps the events table's parts (see `nextInsertPart`). */
  eventsDir: string;
  /** A line for the scenario's timeline (printed with the summary). */
  note(text: string): void;
}

export interface ScenarioSpec {
  /** Short name, used in the summary line (`kill-embedded`, `redis-restart` …). */
  name: string;
  title: string;
  stores: "embedded" | "server";
  redisAppendonly?: boolean;
  /** True when the fault restarts the service; otherwise it must survive the fault as it is. */
  restartsService: boolean;
  /**
   * Why the identity check (6) does not apply, when it does not: the fault takes the bus that carries
   * the sightings with it.
   */
  identityUnchecked?: string;
  /** Runs while the load runs; resolves once the fault is over (the store or the service is back). */
  inject(ctx: FaultContext): Promise<void>;
}

export interface ScenarioRun {
  spec: ScenarioSpec;
  ledger: Ledger;
  resend: ResendResult;
  verify: ResendResult;
  raw: Map<string, { count: number; names: string[] }>;
  /** The identity pipeline's end state (null when the spec leaves it unchecked). */
  identity: IdentityState | null;
  /** Empty when the load was acknowledged again after the fault; else what happened instead. */
  recovery: string;
  recoveryMs: number | undefined;
  starts: number;
  aliveAtEnd: boolean;
  unexpectedExits: string[];
  shutdownCode: number | null;
  serviceProblems: string[];
  timeline: string[];
  ms: number;
}

/** Batches acknowledged before the fault, and again after it, before the load stops. */
const WARM_BATCHES_PER_CLIENT = 2;
const RECOVERY_BATCHES_PER_CLIENT = 2;
const RECOVERY_TIMEOUT_MS = 45_000;

/**
 * Starts the service on a free loopback port. A port is free when asked for and taken only when the
 * service listens: should another process get it in between (an ephemeral port of some connection),
 * the service exits with EADDRINUSE before it is ready, and it is started again on another port.
 */
async function startOnFreePort(env: Record<string, string>): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const service = new ServiceProcess({ ...env, PORT: String(port) }, port);
    try {
      await service.start();
      return service;
    } catch (err) {
      if (attempt >= 3 || !String((err as Error).message).includes("EADDRINUSE")) throw err;
    }
  }
}

export function describeFaultScenario(spec: ScenarioSpec, skip: string | undefined): void {
  describe.skipIf(!!skip)(`fault: ${spec.title}`, { timeout: 30_000 }, () => {
    const root = mkdtempSync(join(tmpdir(), `pxh-fault-${spec.name}-`));
    let redis: FaultRedis | undefined;
    let postgres: OwnPostgres | undefined;
    let service: ServiceProcess | undefined;
    let load: RunningLoad | undefined;
    let run: ScenarioRun | undefined;
    let figures: Figures | undefined;

    beforeAll(async () => {
      const started = performance.now();
      const timeline: string[] = [];
      const note = (text: string) =>
        timeline.push(`${((performance.now() - started) / 1000).toFixed(1)}s ${text}`);
      const vars: Record<string, string> = { DATA_DIR: join(root, "data") };
      if (spec.stores === "server") {
        const pg = await startOwnPostgres();
        if (typeof pg === "string") throw new Error(pg);
        postgres = pg;
        redis = await startFaultRedis({ appendonly: spec.redisAppendonly ?? false });
        vars.DATABASE_URL = postgres.url;
        vars.REDIS_URL = redis.url;
        vars.REDIS_KEY_PREFIX = "fault:";
        note(`servers up (postgres, redis appendonly ${redis.appendonly ? "yes" : "no"})`);
      }
      const env = serviceEnv(vars);
      const { key, eventsDir } = await preparePixel(env, PIXEL_ID);
      note("pixel and key created");
      service = await startOnFreePort(env);
      note(`service ready (pid ${service.pid})`);
      const target: Target = { url: service.url, pixelId: PIXEL_ID, key };
      const ledger = new Ledger(DEFAULT_LOAD);
      const clients = ledger.options.clients;
      load = startLoad(ledger, target);
      const running = load;
      await running.until(() => running.acked() >= WARM_BATCHES_PER_CLIENT * clients, 60_000, "warm-up");
      note(`warm: ${running.acked()} batches acknowledged`);
      await spec.inject({ service, load: running, redis, postgres, eventsDir, note });
      note("fault over");
      const mark = running.acked();
      let recovery = "";
      let recoveryMs: number | undefined;
      try {
        recoveryMs = await running.until(
          () => running.acked() >= mark + RECOVERY_BATCHES_PER_CLIENT * clients,
          RECOVERY_TIMEOUT_MS,
          "load acknowledged again after the fault",
        );
        note(
          `recovered: ${RECOVERY_BATCHES_PER_CLIENT * clients} batches acknowledged in ${recoveryMs.toFixed(0)} ms`,
        );
      } catch (err) {
        recovery = (err as Error).message;
        note("no recovery");
      }
      await running.stop();
      load = undefined;
      note(`load stopped: ${ledger.batches.length} batches, ${ledger.requests.load} requests`);
      const resend = await resendAll(ledger, target, "resend", { maxAttempts: 40, deadlineMs: 90_000 });
      note(`first resend: ${resend.requests} requests in ${resend.ms.toFixed(0)} ms`);
      const verify = await resendAll(ledger, target, "verify", { maxAttempts: 10, deadlineMs: 20_000 });
      note(`second resend: ${verify.requests} requests in ${verify.ms.toFixed(0)} ms`);
      const aliveAtEnd = service.alive();
      const shutdownCode = await service.stop();
      note(`service stopped (exit ${shutdownCode})`);
      const raw = await readRawEvents(vars.DATA_DIR!, PIXEL_ID);
      note(`raw table read: ${raw.size} distinct ids`);
      const identity = spec.identityUnchecked ? null : await settledIdentity(env, PIXEL_ID);
      if (identity)
        note(`identities settled: ${identity.graph.size} aliases, ${identity.events.length} events`);
      run = {
        spec,
        ledger,
        resend,
        verify,
        raw,
        identity,
        recovery,
        recoveryMs,
        starts: service.starts,
        aliveAtEnd,
        unexpectedExits: [...service.unexpectedExits],
        shutdownCode,
        serviceProblems: service.problems
          .filter((p) => p.level >= 50)
          .slice(0, 5)
          .map((p) => p.text.slice(0, 400)),
        timeline,
        ms: performance.now() - started,
      };
      figures = figuresOf(run);
      console.info(
        `${formatSummary(run, figures)}\n  timeline: ${timeline.join(" · ")}\n${formatResendDetail(run)}`,
      );
    }, 240_000);

    afterAll(async () => {
      await load?.stop().catch(() => {});
      await service?.dispose().catch(() => {});
      await redis?.remove().catch(() => {});
      await postgres?.remove().catch(() => {});
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    const check = (which: keyof ReturnType<typeof violations>) => {
      if (!run || !figures) throw new Error("the scenario did not run to its end (see the beforeAll error)");
      const found = violations(run, figures)[which];
      expect(found, found.join("\n")).toEqual([]);
    };

    it("(1) every acknowledged id is stored exactly once in the raw events table", () =>
      check("exactlyOnce"));
    it("(2) every id ever sent is stored after the resend (nothing lost)", () => check("nothingLost"));
    it("(3) every failed request was a 503 with Retry-After or a connection error", () => check("failures"));
    it(
      spec.restartsService
        ? "(4) the restarted service takes the load again"
        : "(4) the service recovered without a restart",
      () => check("recovered"),
    );
    it("(5) the resend stored only ids never acknowledged; a second resend stores nothing", () =>
      check("resendIdempotent"));
    it.skipIf(!!spec.identityUnchecked)(
      "(6) every stored event resolves in one hop to the identity filed for it, and the warehouse's links agree with the graph",
      () => {
        if (!run?.identity) throw new Error("the scenario did not run to its end (see the beforeAll error)");
        const found = identityViolations(run.identity);
        expect(found, found.join("\n")).toEqual([]);
      },
    );
  });
}
