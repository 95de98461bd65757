import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

export class DataDirLockedError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One process at a time may hold an embedded data directory: PGlite has no lock of its own, and two
 * writers would corrupt it. The lock file holds the owner's pid; a dead owner's lock is taken over.
 */
export function lockDataDir(dir: string, purpose: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "pixelhouse.lock");
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, purpose, since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          const owner = JSON.parse(readFileSync(file, "utf8")) as { pid: number };
          if (owner.pid === process.pid) rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
      process.once("exit", release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let owner: { pid?: number; purpose?: string } = {};
      try {
        owner = JSON.parse(readFileSync(file, "utf8")) as typeof owner;
      } catch {
        // A lock being written right now reads as empty: treat it as held unless it stays unreadable.
        if (attempt < 2) continue;
      }
      if (typeof owner.pid === "number" && owner.pid !== process.pid && alive(owner.pid)) {
        throw new DataDirLockedError(
          `the embedded data directory ${resolve(dir)} is in use by another pixelhouse process ` +
            `(pid ${owner.pid}, ${owner.purpose ?? "unknown"}). Stop that process first (Ctrl+C on \`npm start\`), ` +
            "or set both DATABASE_URL and CLICKHOUSE_URL to run against server stores, which many processes can share.",
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`could not lock the data directory ${resolve(dir)}`);
}
