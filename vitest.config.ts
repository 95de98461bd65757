import { defineConfig } from "vitest/config";

// chDB runs each query on a libuv pool thread until it ends, and libuv sizes that pool once, from
// UV_THREADPOOL_SIZE, when it first starts — before a test file could set it. The forked test
// processes inherit this process's environment, so it is set here (as bin/pixelhouse.mjs does for
// `serve`): console readers in the tests (up to 8) plus room for everything else.
process.env.UV_THREADPOOL_SIZE ||= "16";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // chDB allows one data directory per process: every test file gets its own process.
    pool: "forks",
    isolate: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
