import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/stores.js";

/**
 * `serve` on chDB sizes libuv's thread pool for the console readers (bin/pixelhouse.mjs): libuv reads
 * UV_THREADPOOL_SIZE once, before any code of the entry runs, so the process runs itself again with it
 * set — CONSOLE_READERS + QUERY_READERS + 8 — and passes its signals on. Linux only (it reads /proc).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The environment of a user who set nothing: no server stores, no pool size. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["UV_THREADPOOL_SIZE", "CLICKHOUSE_URL", "DATABASE_URL", "REDIS_URL", "KEY_SECRET"])
    delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith("CONSOLE_")) delete env[name];
  return {
    ...env,
    LOG_LEVEL: "silent",
    PORT: "0",
    HOST: "127.0.0.1",
    DEMO_ON_FIRST_START: "false",
    ...extra,
  };
}

/** Starts `serve --json`; resolves with the child, its ready line and its exit. */
async function serve(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ["bin/pixelhouse.mjs", "serve", "--json"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith('{"url')) resolve(JSON.parse(line) as { url: string });
    });
    void exited.then(([code]) => reject(new Error(`serve exited with ${code} before it was ready`)));
  });
  return { child, ready, exited };
}

/** After a failed assertion: the process tree must not outlive the test. */
async function stop(started: Awaited<ReturnType<typeof serve>> | undefined): Promise<void> {
  const child = started?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const served = children(child.pid!);
  child.kill("SIGKILL");
  for (const pid of served) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await started!.exited;
}

const children = (pid: number) =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");

describe.skipIf(!existsSync("/proc/self/environ"))("serve: libuv's thread pool", { timeout: 120_000 }, () => {
  it("runs serve on chDB with CONSOLE_READERS + QUERY_READERS + 8 threads, and ends with it on SIGTERM", async () => {
    const dir = tempDir("pixelhouse-uv-");
    let started: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      started = await serve(userEnv({ DATA_DIR: dir.path, CONSOLE_READERS: "3", QUERY_READERS: "2" }));
      const { child, ready, exited } = started;
      const [served] = children(child.pid!);
      expect(served).toBeDefined();
      expect(environ(served!)).toContain("UV_THREADPOOL_SIZE=13");
      expect((await fetch(`${ready.url}/readyz`)).status).toBe(200);
      child.kill("SIGTERM");
      // The signal reached the serving process: it shut down cleanly, and the wrapper ended with it.
      expect(await exited).toEqual([0, null]);
      expect(existsSync(`/proc/${served}`)).toBe(false);
    } finally {
      await stop(started);
      dir.remove();
    }
  });

  it("keeps a UV_THREADPOOL_SIZE the user set, in a single process", async () => {
    const dir = tempDir("pixelhouse-uv-");
    let started: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      started = await serve(userEnv({ DATA_DIR: dir.path, UV_THREADPOOL_SIZE: "6" }));
      const { child, exited } = started;
      // No second pixelhouse process (esbuild's service, which bundles the web pages, may be a child).
      const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8");
      expect(children(child.pid!).filter((pid) => cmdline(pid).includes("pixelhouse.mjs"))).toEqual([]);
      expect(environ(child.pid!)).toContain("UV_THREADPOOL_SIZE=6");
      child.kill("SIGTERM");
      expect(await exited).toEqual([0, null]);
    } finally {
      await stop(started);
      dir.remove();
    }
  });
});
