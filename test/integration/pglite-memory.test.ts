/**
 * Embedded Postgres's buffer pool: 32 MB unless the caller sizes it, and the size given is the one
 * the engine runs with (Postgres reports shared_buffers back as it parsed it: 16 → "16MB").
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStores } from "../../src/stores/index.js";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import { tempDir } from "../helpers/stores.js";

const poolOf = async (store: { query: PgliteSqlStore["query"] }) =>
  (await store.query<{ v: string }>("SELECT current_setting('shared_buffers') AS v")).rows[0]?.v;

describe("PGlite's buffer pool", () => {
  it("is 32 MB by default and what the caller asks otherwise", async () => {
    for (const [options, expected] of [
      [{}, "32MB"],
      [{ sharedBuffersMb: 16 }, "16MB"],
      [{ sharedBuffersMb: 128 }, "128MB"],
    ] as const) {
      const store = await PgliteSqlStore.open(undefined, options);
      try {
        expect(await poolOf(store)).toBe(expected);
      } finally {
        await store.close();
      }
    }
  });

  it("follows PGLITE_SHARED_BUFFERS_MB when the stores are opened from the configuration", async () => {
    const dir = tempDir("pxh-pglite-memory-");
    try {
      const stores = await openStores(
        loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: "silent", PGLITE_SHARED_BUFFERS_MB: "24" }),
        "test",
      );
      try {
        expect(await poolOf(stores.sql)).toBe("24MB");
      } finally {
        await stores.close();
      }
    } finally {
      dir.remove();
    }
  });
});
