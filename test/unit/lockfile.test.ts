import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

// `npm ci` (CI's first step) refuses a lock file that lacks an optional dependency; see scripts/complete-lock.mjs.
it("package-lock.json lists every optional platform package of chdb (run `npm run lock:platforms`)", () => {
  const lock = JSON.parse(readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8")) as {
    packages: Record<string, { optionalDependencies?: Record<string, string>; version?: string }>;
  };
  const optional = lock.packages["node_modules/chdb"]?.optionalDependencies ?? {};
  expect(Object.keys(optional).length).toBeGreaterThan(0);
  for (const [name, version] of Object.entries(optional)) {
    expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(version);
  }
});
