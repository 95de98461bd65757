/**
 * The service under test as a child process (`node bin/pixelhouse.mjs serve --json`), in a process
 * group of its own so that a kill reaches everything it started, and the pixel + key it serves,
 * created in its data directory before it starts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, watch } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../src/config.js";
import { ApiKeyService } from "../../src/keys/service.js";
import { PixelService } from "../../src/pixels/service.js";
import { openStores } from "../../src/stores/index.js";
import { migrate } from "../../src/stores/migrations.js";
import { ChdbWarehouse } from "../../src/stores/warehouse/chdb.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const BIN = join(ROOT, "bin/pixelhouse.mjs");
const KEY_SECRET = "fault-secret-fault-secret-fault-secret-01";
const DATABASE = "pixelhouse";

/** The child's environment: this process's, minus anything that would point it at other stores. */
export function serviceEnv(vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const dropped =
    /^(DATABASE_URL|REDIS_URL|REDIS_KEY_PREFIX|CLICKHOUSE_.*|DATA_DIR|PORT|HOST|KEY_SECRET|NODE_OPTIONS|TEST_.*|VITEST.*)$/;
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !dropped.test(k)) env[k] = v;
  return {
    ...env,
    HOST: "127.0.0.1",
    KEY_SECRET,
    LOG_LEVEL: "info",
    DEMO_ON_FIRST_START: "false",
    // Set, so bin/pixelhouse.mjs runs serve in its own process instead of re-spawning itself: a
    // SIGKILL then hits the process that holds the stores, not a wrapper.
    UV_THREADPOOL_SIZE: "12",
    // The limiter is not under test: a 429 would hide what the stores did.
    RATE_INGEST_PER_SEC: "100000",
    ...vars,
  };
}

/**
 * Applies the migrations and creates the pixel and an events:write key, in this process, before the
 * service starts (the stores are closed again, which frees the data directory for the service).
 * Returns the key and the directory chDB keeps the events table's parts in.
 */
export async function preparePixel(
  env: Record<string, string>,
  pixelId: string,
): Promise<{ key: string; eventsDir: string }> {
  const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
  const stores = await openStores(config, "fault test setup");
  try {
    await migrate(stores.sql, stores.warehouse);
    await new PixelService(stores.sql).create({ id: pixelId, name: "Fault injection" });
    const { key } = await new ApiKeyService(stores.sql, stores.keySecret, 0).create({
      pixelId,
      scopes: ["events:write"],
      name: "fault load",
    });
    const [table] = await stores.warehouse.query<{ data_paths: string[] }>(
      "SELECT data_paths FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
    );
    const eventsDir = table?.data_paths[0];
    if (!eventsDir) throw new Error("the events table has no data path");
    return { key, eventsDir };
  } finally {
    await stores.close();
  }
}

/**
 * Resolves with the name of the next part an INSERT adds to the events table, at one of two moments:
 * `started` when its `tmp_insert_…` directory appears (the group holds its dedup leases and is
 * writing; nothing is stored yet), `landed` when it is renamed into place (the group's events are
 * stored and its requests not yet answered). A part of one block is `<partition>_<n>_<n>_<level>`
 * (level 1: ReplacingMergeTree applies its merge on insert); merges cover several blocks.
 * Rejects after `timeoutMs`.
 */
export function nextInsertPart(
  eventsDir: string,
  moment: "started" | "landed",
  timeoutMs: number,
): Promise<string> {
  const pattern = moment === "started" ? /^tmp_insert_\d+_(\d+)_\1_\d+$/ : /^\d+_(\d+)_\1_\d+$/;
  return new Promise((resolvePart, reject) => {
    const watcher = watch(eventsDir, (_event, filename) => {
      const name = filename?.toString() ?? "";
      if (!pattern.test(name) || !existsSync(join(eventsDir, name))) return;
      clearTimeout(timer);
      watcher.close();
      resolvePart(name);
    });
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`no insert into the events table ${moment} within ${timeoutMs} ms`));
    }, timeoutMs);
  });
}

export interface LogLine {
  level: number;
  msg: string;
  text: string;
}

export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> | undefined;
  /** Processes started (1 + restarts). */
  starts = 0;
  /** Exits the test did not cause (crash, exit on its own). */
  readonly unexpectedExits: string[] = [];
  /** Warnings and errors it logged (level ≥ 40), across restarts. */
  readonly problems: LogLine[] = [];
  private readonly tail: string[] = [];
  private expectingExit = false;
  readonly url: string;

  constructor(
    private readonly env: Record<string, string>,
    port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    process.once("exit", this.killOnExit);
  }

  /** Should the test process end without its afterAll, the service must not outlive it. */
  private readonly killOnExit = () => {
    if (this.child?.pid && this.alive()) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  get pid(): number | undefined {
    return this.child?.pid;
  }

  alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines it printed, for failure messages. */
  lastLines(n = 30): string {
    return this.tail.slice(-n).join("\n");
  }

  /** Spawns it and resolves once its ready line arrived and /readyz answers 200. */
  async start(timeoutMs = 120_000): Promise<void> {
    const child = spawn(process.execPath, [BIN, "serve", "--json"], {
      cwd: ROOT,
      env: this.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.starts++;
    this.expectingExit = false;
    this.exited = once(child, "exit").then(([code, signal]) => {
      if (!this.expectingExit)
        this.unexpectedExits.push(`pid ${child.pid} exited: code ${code}, signal ${signal}`);
    });
    const ready = new Promise<void>((resolveReady, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`serve not ready within ${timeoutMs} ms:\n${this.lastLines()}`)),
        timeoutMs,
      );
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${code ?? signal}) before it was ready:\n${this.lastLines()}`));
      });
      const read = (stream: NodeJS.ReadableStream) =>
        createInterface({ input: stream }).on("line", (text) => {
          this.tail.push(text);
          if (this.tail.length > 200) this.tail.shift();
          const parsed = parseLine(text);
          if (parsed && "level" in parsed && Number(parsed.level) >= 40) {
            if (this.problems.length < 500)
              this.problems.push({ level: Number(parsed.level), msg: String(parsed.msg ?? ""), text });
          } else if (parsed && typeof parsed.url === "string") {
            clearTimeout(timer);
            resolveReady();
          }
        });
      read(child.stdout!);
      read(child.stderr!);
    });
    await ready;
    const res = await fetch(`${this.url}/readyz`);
    if (res.status !== 200) throw new Error(`/readyz answered ${res.status}: ${await res.text()}`);
  }

  /** SIGKILL to the whole group; resolves once the process is gone. */
  async kill(): Promise<void> {
    await this.signal("SIGKILL", 0);
  }

  /**
   * SIGTERM (a clean shutdown: groups drained, stores closed); SIGKILL to the group if it has not
   * ended within `graceMs`. Resolves to the exit code (null when it had to be killed).
   */
  async stop(graceMs = 30_000): Promise<number | null> {
    return this.signal("SIGTERM", graceMs);
  }

  private async signal(signal: NodeJS.Signals, graceMs: number): Promise<number | null> {
    const child = this.child;
    if (!child?.pid || !this.alive()) return child?.exitCode ?? null;
    this.expectingExit = true;
    const exited = this.exited;
    this.groupKill(child.pid, signal);
    let forced = false;
    const timer =
      graceMs > 0
        ? setTimeout(() => {
            forced = true;
            this.groupKill(child.pid!, "SIGKILL");
          }, graceMs)
        : undefined;
    await exited;
    clearTimeout(timer);
    return forced ? null : child.exitCode;
  }

  private groupKill(pid: number, signal: NodeJS.Signals): void {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone
    }
  }

  /** Kills whatever still runs (afterAll). */
  async dispose(): Promise<void> {
    await this.kill();
    process.off("exit", this.killOnExit);
  }
}

function parseLine(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Every copy of the pixel's events in the RAW table (no FINAL, so a second copy shows), with the
 * names they were stored under. The service must be stopped: chDB's directory is the service's.
 */
export async function readRawEvents(
  dataDir: string,
  pixelId: string,
): Promise<Map<string, { count: number; names: string[] }>> {
  const warehouse = await ChdbWarehouse.open(join(dataDir, "ch"), DATABASE);
  try {
    const rows = await warehouse.query<{ event_id: string; n: number; names: string[] }>(
      "SELECT event_id, count() AS n, groupArray(name) AS names FROM events WHERE pixel_id = {pixel:String} GROUP BY event_id",
      { pixel: pixelId },
    );
    return new Map(rows.map((r) => [r.event_id, { count: Number(r.n), names: r.names }]));
  } finally {
    await warehouse.close();
  }
}
