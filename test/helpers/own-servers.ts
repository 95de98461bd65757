/**
 * Store servers a test owns: a redis-server and a Postgres cluster (initdb + pg_ctl) on free loopback
 * ports, which the test may stop, freeze and start again. The machine's own servers (5432, 6379)
 * are never touched.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** The path of `bin` on PATH, or undefined. */
export async function which(bin: string): Promise<string | undefined> {
  try {
    const { stdout } = await run("sh", ["-c", `command -v ${bin}`]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface OwnRedis {
  url: string;
  /** Starts (again) on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM, and waits for the process to end. */
  stop(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing is answered (a hung host). */
  freeze(): void;
  thaw(): void;
  /** Stops it and removes its directory (afterAll). */
  remove(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pxh-redis-"));
  let proc: ChildProcess | undefined;
  const start = async () => {
    const child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    proc = child;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 15_000);
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
    child.stdout!.resume();
    child.stderr!.resume();
  };
  const stop = async () => {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGCONT");
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    freeze: () => proc?.kill("SIGSTOP"),
    thaw: () => proc?.kill("SIGCONT"),
    async remove() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnPostgres {
  url: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: sessions are ended with 57P01, new connections refused. */
  stop(): Promise<void>;
  remove(): Promise<void>;
}

/**
 * A fresh cluster (trust authentication, user `postgres`). Root may not run Postgres: then initdb
 * and pg_ctl run as the `postgres` user, in a directory it owns. The reason, as a string, when the
 * binaries or that user are missing.
 */
export async function startOwnPostgres(): Promise<OwnPostgres | string> {
  if (!(await which("initdb")) || !(await which("pg_ctl"))) return "initdb or pg_ctl is not on PATH";
  const asRoot = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | undefined;
  if (asRoot) {
    try {
      const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
      const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
      owner = { uid, gid };
    } catch {
      return "running as root and there is no postgres user to run initdb as";
    }
  }
  const root = mkdtempSync(join(tmpdir(), "pxh-pg-"));
  const data = join(root, "data");
  mkdirSync(data, { mode: 0o700 });
  if (owner) {
    chownSync(root, owner.uid, owner.gid);
    chownSync(data, owner.uid, owner.gid);
  }
  const as = (bin: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", bin, ...args], { timeout: 60_000 })
      : run(bin, args, { timeout: 60_000 });
  const port = await freePort();
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40`;
  const start = async () => {
    await as("pg_ctl", ["-D", data, "-l", join(root, "log"), "-o", options, "-w", "-t", "30", "start"]);
  };
  const stop = async () => {
    await as("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]).catch(() => {});
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async remove() {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"]).catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}
