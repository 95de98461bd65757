#!/usr/bin/env node
// The npm registry mirror this project is developed against serves chDB's native library only for
// linux-x64, so `npm install` leaves the other platforms' optional packages out of the lock file, and
// `npm ci` then refuses it as out of sync. This adds those entries back with their os/cpu/libc, so
// `npm ci` skips them on a platform they do not fit and fetches them on one they do.
// Run after every `npm install` that changes dependencies: `npm run lock:platforms`.
import { readFileSync, writeFileSync } from "node:fs";

const PLATFORMS = {
  "@chdb/lib-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "@chdb/lib-darwin-x64": { os: ["darwin"], cpu: ["x64"] },
  "@chdb/lib-linux-arm64-gnu": { os: ["linux"], cpu: ["arm64"], libc: ["glibc"] },
  "@chdb/lib-linux-x64-gnu": { os: ["linux"], cpu: ["x64"], libc: ["glibc"] },
};

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const optional = lock.packages["node_modules/chdb"]?.optionalDependencies ?? {};
let added = 0;
for (const [name, version] of Object.entries(optional)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key] || !PLATFORMS[name]) continue;
  lock.packages[key] = { version, license: "Apache-2.0", optional: true, ...PLATFORMS[name] };
  added++;
}
// npm writes the packages sorted by path ("" first); keep that order so `npm install` finds nothing to redo.
const root = lock.packages[""];
const sorted = Object.keys(lock.packages)
  .filter((k) => k !== "")
  .sort((a, b) => a.localeCompare(b, "en"));
lock.packages = { "": root, ...Object.fromEntries(sorted.map((k) => [k, lock.packages[k]])) };
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? "y" : "ies"} added`);
