/**
 * The store servers a fault scenario owns: a redis-server it can stop and start again with or without
 * persistence, and a Postgres cluster (initdb + pg_ctl, from test/helpers/own-servers.ts). Both on
 * free loopback ports in temp directories; the machine's own servers (5432, 6379) are never touched.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REQUIRE_SERVER_STORES } from "../helpers/env.js";
import { freePort, type OwnPostgres, startOwnPostgres, which } from "../helpers/own-servers.js";

export { freePort, type OwnPostgres, startOwnPostgres };

export interface FaultRedis {
  url: string;
  appendonly: boolean;
  /** Starts (again) on the same port and directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM and wait for the exit: without persistence everything it held is gone. */
  stop(): Promise<void>;
  /** SIGSTOP: connections stay open, commands are read later; nothing is answered meanwhile. */
  freeze(): void;
  thaw(): void;
  /** Stops it and removes its directory (afterAll; safe to call twice). */
  remove(): Promise<void>;
}

/**
 * `--save ""` always (no RDB snapshot, as the production default here); `appendonly` chooses whether
 * a restart keeps the data (AOF with fsync every second, what docs/ingestion.md recommends).
 */
export async function startFaultRedis(options: { appendonly: boolean }): Promise<FaultRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pxh-fault-redis-"));
  let proc: ChildProcess | undefined;
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    options.appendonly ? "yes" : "no",
    "--appendfsync",
    "everysec",
    "--dir",
    dir,
  ];
  // Should the test process end without its afterAll, the server must not outlive it.
  const killOnExit = () => proc?.kill("SIGKILL");
  process.once("exit", killOnExit);
  const start = async () => {
    const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    proc = child;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 20_000);
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      };
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve();
        }
      });
      child.once("exit", onExit);
    });
    child.stdout!.resume();
    child.stderr!.resume();
  };
  const stop = async () => {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    appendonly: options.appendonly,
    start,
    stop,
    freeze: () => proc?.kill("SIGSTOP"),
    thaw: () => proc?.kill("SIGCONT"),
    async remove() {
      await stop();
      process.off("exit", killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Why the server scenarios cannot run here, or undefined when they can. With REQUIRE_SERVER_STORES=1
 * (CI) a missing binary is an error instead of a skip.
 */
export async function serverStoresMissing(): Promise<string | undefined> {
  await postgresBinariesOnPath();
  const missing: string[] = [];
  for (const bin of ["redis-server", "initdb", "pg_ctl"]) if (!(await which(bin))) missing.push(bin);
  if (missing.length === 0) return undefined;
  const reason = `fault scenario on server stores skipped: ${missing.join(", ")} not on PATH`;
  if (REQUIRE_SERVER_STORES) throw new Error(reason);
  console.warn(reason);
  return reason;
}

/**
 * Debian's postgresql packages keep initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off PATH
 * (.ci/run installs them so): the newest such directory is added to this process's PATH.
 */
async function postgresBinariesOnPath(): Promise<void> {
  if ((await which("initdb")) && (await which("pg_ctl"))) return;
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0]) process.env.PATH = `${join(base, versions[0], "bin")}:${process.env.PATH ?? ""}`;
}
