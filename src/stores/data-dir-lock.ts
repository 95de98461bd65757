import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
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
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      // Written to a private file first and linked into place: the lock never exists half-written.
      const mine = `${file}.${process.pid}.${attempt}`;
      writeFileSync(mine, JSON.stringify({ pid: process.pid, purpose, since: new Date().toISOString() }), {
        mode: 0o600,
      });
      try {
        linkSync(mine, file);
      } finally {
        rmSync(mine, { force: true });
      }
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
        // Gone between our attempt and this read (its owner released it): try again.
        continue;
      }
      if (typeof owner.pid === "number" && owner.pid !== process.pid && alive(owner.pid)) {
        throw new DataDirLockedError(
          `the embedded data directory ${resolve(dir)} is in use by another pixelhouse process ` +
            `(pid ${owner.pid}, ${owner.purpose ?? "unknown"}). Stop that process first (Ctrl+C on \`npm start\`), ` +
            "or set both DATABASE_URL and CLICKHOUSE_URL to run against server stores, which many processes can share.",
        );
      }
      // A dead owner's lock: move it aside atomically, so of two processes taking it over only the one
      // whose rename succeeded removes it; the other finds the new lock on its next attempt.
      const stale = `${file}.stale.${process.pid}`;
      try {
        renameSync(file, stale);
        const moved = JSON.parse(readFileSync(stale, "utf8")) as { pid?: number };
        // Between our read and the rename another process may have taken over and locked: put it back.
        if (moved.pid !== owner.pid) linkSync(stale, file);
        rmSync(stale, { force: true });
      } catch {
        // someone else took it over first
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + attempt * 5);
    }
  }
  throw new DataDirLockedError(`could not lock the data directory ${resolve(dir)}`);
}
