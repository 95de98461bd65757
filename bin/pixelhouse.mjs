#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx compiles on load and caches), so there is no build step.
import { spawn } from "node:child_process";

/**
 * libuv's thread pool for `serve` on chDB: CONSOLE_READERS + QUERY_READERS + 8 threads, or undefined
 * when nothing is to change. chDB runs every warehouse query — ingestion inserts (up to INGEST_GROUPS
 * at once), the three background workers' own sessions, the query API, /readyz, each console query —
 * on a pool thread until it finishes, and each console reader may hold one for its whole time
 * limit: with Node's default 4 threads and 4 readers, a few runaway console queries would stall all
 * the rest. A UV_THREADPOOL_SIZE already set is kept as it is, and so is a server warehouse
 * (CLICKHOUSE_URL: its queries are HTTP requests, no pool thread waits on them).
 */
function threadpoolSize(env, args) {
  if (args[0] !== "serve" || env.UV_THREADPOOL_SIZE || env.CLICKHOUSE_URL) return undefined;
  const readers = Number(env.CONSOLE_READERS || 4);
  const statements = Number(env.QUERY_READERS || 4);
  // A bad CONSOLE_READERS or QUERY_READERS is the configuration's to report, in the process that reads it.
  const console_ = Number.isInteger(readers) && readers >= 1 && readers <= 64 ? readers : 4;
  const query = Number.isInteger(statements) && statements >= 0 && statements <= 64 ? statements : 4;
  // Every running chDB query holds a pool thread: console readers and query-API readers may all be busy.
  return console_ + query + 8;
}

const size = threadpoolSize(process.env, process.argv.slice(2));
if (size === undefined) {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
} else {
  // libuv reads UV_THREADPOOL_SIZE once, when its pool starts, and Node started it to load this very
  // file: setting the variable now would change nothing. So the process runs once more with it set,
  // passes its signals on, and ends as that process ends.
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, UV_THREADPOOL_SIZE: String(size) },
  });
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  const forward = (signal) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  child.on("error", (err) => {
    console.error(`pixelhouse: could not start ${process.execPath}: ${err.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
