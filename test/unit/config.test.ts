import { describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/duration.js";
import { ConfigError, loadConfig, storeModes } from "../../src/config.js";

const errorOf = (env: Record<string, string>): ConfigError => {
  try {
    loadConfig(env);
  } catch (err) {
    return err as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
};

describe("loadConfig", () => {
  it("applies the defaults to an empty environment", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 3000,
      HOST: "127.0.0.1",
      DATA_DIR: "./.pixelhouse",
      LOG_LEVEL: "info",
      CLICKHOUSE_USER: "default",
      CLICKHOUSE_PASSWORD: "",
      CLICKHOUSE_DATABASE: "pixelhouse",
      REDIS_KEY_PREFIX: "pixelhouse:",
      KEY_CACHE_MS: 4000,
      DEMO_ON_FIRST_START: true,
      PGLITE_SHARED_BUFFERS_MB: 32,
    });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.CLICKHOUSE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.KEY_SECRET).toBeUndefined();
    expect(storeModes(c)).toStrictEqual({ sql: "pglite", warehouse: "chdb", kv: "memory" });
  });

  it("reads process.env when given nothing", () => {
    expect(loadConfig().PORT).toBeTypeOf("number");
  });

  it("treats empty URLs and secret as unset", () => {
    const c = loadConfig({ DATABASE_URL: "", CLICKHOUSE_URL: "  ", REDIS_URL: "", KEY_SECRET: "" });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.CLICKHOUSE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.KEY_SECRET).toBeUndefined();
  });

  it("accepts good values and coerces numbers and flags", () => {
    const c = loadConfig({
      PORT: "0",
      HOST: "0.0.0.0",
      DATA_DIR: "/tmp/px",
      DATABASE_URL: "postgres://u:p@localhost:5432/db",
      CLICKHOUSE_URL: "http://localhost:8123",
      CLICKHOUSE_DATABASE: "px_analytics",
      REDIS_URL: "rediss://localhost:6380",
      KEY_SECRET: "k".repeat(32),
      LOG_LEVEL: "debug",
      KEY_CACHE_MS: "0",
      DEMO_ON_FIRST_START: "0",
    });
    expect(c).toMatchObject({
      PORT: 0,
      HOST: "0.0.0.0",
      DATA_DIR: "/tmp/px",
      DATABASE_URL: "postgres://u:p@localhost:5432/db",
      CLICKHOUSE_URL: "http://localhost:8123",
      CLICKHOUSE_DATABASE: "px_analytics",
      REDIS_URL: "rediss://localhost:6380",
      KEY_SECRET: "k".repeat(32),
      LOG_LEVEL: "debug",
      KEY_CACHE_MS: 0,
      DEMO_ON_FIRST_START: false,
    });
    expect(storeModes(c)).toStrictEqual({ sql: "postgres", warehouse: "clickhouse", kv: "redis" });
    expect(loadConfig({ DATABASE_URL: "postgresql://localhost/db" }).DATABASE_URL).toBe(
      "postgresql://localhost/db",
    );
    expect(loadConfig({ PORT: "65535" }).PORT).toBe(65535);
  });

  it("ignores variables it does not know", () => {
    expect(() => loadConfig({ SOMETHING_ELSE: "x", PATH: "/bin" })).not.toThrow();
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "-1"],
    ["PORT", "80.5"],
    ["DATABASE_URL", "mysql://x"],
    ["CLICKHOUSE_URL", "tcp://localhost:9000"],
    ["REDIS_URL", "notaurl"],
    ["DATABASE_URL", "not a url"],
    ["REDIS_URL", "http://localhost:6379"],
    ["KEY_SECRET", "short"],
    ["LOG_LEVEL", "loud"],
    ["CLICKHOUSE_DATABASE", "a-b"],
    ["CLICKHOUSE_DATABASE", "1abc"],
    ["KEY_CACHE_MS", "60000"],
    ["DEMO_ON_FIRST_START", "yes"],
    ["PGLITE_SHARED_BUFFERS_MB", "0"],
    ["PGLITE_SHARED_BUFFERS_MB", "1025"],
    ["PGLITE_SHARED_BUFFERS_MB", "12.5"],
    ["PGLITE_SHARED_BUFFERS_MB", "lots"],
  ])("%s=%s → ConfigError, one line naming the variable", (name, value) => {
    const err = errorOf({ [name]: value });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).not.toContain("\n");
    expect(err.message.startsWith(`invalid configuration: ${name} `)).toBe(true);
    // It says what is wrong, beyond the name.
    expect(err.message.length).toBeGreaterThan(`invalid configuration: ${name} `.length + 5);
  });

  it("takes PGlite's buffer pool from 1 MiB to 1 GiB", () => {
    expect(loadConfig({ PGLITE_SHARED_BUFFERS_MB: "1" }).PGLITE_SHARED_BUFFERS_MB).toBe(1);
    expect(loadConfig({ PGLITE_SHARED_BUFFERS_MB: "1024" }).PGLITE_SHARED_BUFFERS_MB).toBe(1024);
  });

  it("names the offending value, except for secrets", () => {
    expect(errorOf({ PORT: "abc" }).message).toContain('"abc"');
    expect(errorOf({ LOG_LEVEL: "loud" }).message).toContain('"loud"');
    expect(errorOf({ DATABASE_URL: "mysql://x" }).message).toMatch(/postgres/);
    const secret = errorOf({ KEY_SECRET: "tooshort-secret" });
    expect(secret.message).toContain("at least 32 characters");
    expect(secret.message).not.toContain("tooshort-secret");
    const password = errorOf({ CLICKHOUSE_URL: "ftp://x", CLICKHOUSE_PASSWORD: "hunter2" });
    expect(password.message).not.toContain("hunter2");
  });

  it("reports one problem even when several variables are bad", () => {
    const err = errorOf({ PORT: "abc", LOG_LEVEL: "loud" });
    expect(err.message.split("\n")).toHaveLength(1);
    expect(err.message).toMatch(/^invalid configuration: (PORT|LOG_LEVEL) /);
  });
});

describe("loadConfig: the SQL console", () => {
  it("defaults: 30 s per query, 4 readers, 2 per pixel, 10 s wait for a reader", () => {
    expect(loadConfig({})).toMatchObject({
      CONSOLE_MAX_EXECUTION_SECONDS: 30,
      CONSOLE_READERS: 4,
      CONSOLE_READERS_PER_PIXEL: 2,
      CONSOLE_QUEUE_TIMEOUT_MS: 10_000,
    });
  });

  it("accepts the bounds: an hour per query (the console user's profile maximum), no wait at all", () => {
    expect(
      loadConfig({
        CONSOLE_MAX_EXECUTION_SECONDS: "3600",
        CONSOLE_READERS_PER_PIXEL: "1",
        CONSOLE_QUEUE_TIMEOUT_MS: "0",
      }),
    ).toMatchObject({
      CONSOLE_MAX_EXECUTION_SECONDS: 3600,
      CONSOLE_READERS_PER_PIXEL: 1,
      CONSOLE_QUEUE_TIMEOUT_MS: 0,
    });
  });

  it.each([
    ["CONSOLE_MAX_EXECUTION_SECONDS", "3601"],
    ["CONSOLE_MAX_EXECUTION_SECONDS", "0"],
    ["CONSOLE_READERS", "0"],
    ["CONSOLE_READERS_PER_PIXEL", "0"],
    ["CONSOLE_READERS_PER_PIXEL", "1.5"],
    ["CONSOLE_QUEUE_TIMEOUT_MS", "-1"],
    ["CONSOLE_QUEUE_TIMEOUT_MS", "600001"],
  ])("%s=%s → ConfigError naming it", (name, value) => {
    const err = errorOf({ [name]: value });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message.startsWith(`invalid configuration: ${name} `)).toBe(true);
  });
});

describe("parseDuration", () => {
  it.each([
    ["30m", 30 * 60_000],
    ["12h", 12 * 3_600_000],
    ["90d", 90 * 86_400_000],
    ["2w", 2 * 7 * 86_400_000],
    ["1y", 365 * 86_400_000],
    [" 7d ", 7 * 86_400_000],
    ["999999m", 999_999 * 60_000],
  ])("%j → %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "d", "90", "0d", "-1d", "1.5d", "10s", "90D", "1d2h", "1000000m", "90 d", "ninety days"])(
    "%j → null",
    (text) => {
      expect(parseDuration(text)).toBeNull();
    },
  );
});
