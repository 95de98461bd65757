import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import { tempDir } from "../helpers/stores.js";

/**
 * The real CLI as a user runs it: `node bin/pixelhouse.mjs …` in a child process, on embedded stores
 * in a temp DATA_DIR. Each call boots PGlite (a few seconds), so the sequential cases share one dir.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "bin/pixelhouse.mjs";
const CALL_TIMEOUT_MS = 90_000;

/** The parent's environment without anything that would point the CLI at server stores. */
function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    "DATABASE_URL",
    "CLICKHOUSE_URL",
    "REDIS_URL",
    "KEY_SECRET",
    "PORT",
    "HOST",
    "LOG_LEVEL",
    "DATA_DIR",
    "KEY_CACHE_MS",
    "DEMO_ON_FIRST_START",
    "CLICKHOUSE_DATABASE",
  ]) {
    delete env[name];
  }
  return { ...env, LOG_LEVEL: "silent", ...extra };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: ROOT,
        env: cliEnv(env),
        timeout: CALL_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: 10 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
        resolve({
          code: e ? (typeof e.code === "number" ? e.code : null) : 0,
          signal: e?.signal ?? null,
          stdout: String(stdout),
          stderr: String(stderr),
        });
      },
    );
  });
}

const json = <T>(run: Run): T => {
  expect({ code: run.code, stderr: run.stderr }).toStrictEqual({ code: 0, stderr: "" });
  return JSON.parse(run.stdout) as T;
};

describe("pixelhouse CLI on one data directory", { timeout: 180_000 }, () => {
  const dir = tempDir("pixelhouse-cli-");
  const env = { DATA_DIR: dir.path };
  afterAll(() => dir.remove());

  let pixelId = "";
  let accountId = "";
  let rawKey = "";
  let keyId = "";

  /** Every migration file of the tree, as the CLI names them (`001_init`). */
  const expectedMigrations = () => {
    const names = (store: string) =>
      readMigrations(join(SQL_DIR, store)).map((m) => `${String(m.version).padStart(3, "0")}_${m.name}`);
    return { postgres: names("postgres"), clickhouse: names("clickhouse") };
  };

  it("migrate --json lists 001_init for both stores (and every later migration)", async () => {
    const out = json<{ postgres: string[]; clickhouse: string[] }>(await cli(["migrate", "--json"], env));
    expect(out.postgres[0]).toBe("001_init");
    expect(out.clickhouse[0]).toBe("001_init");
    expect(out).toStrictEqual(expectedMigrations());
  });

  it("migrate is idempotent", async () => {
    const out = json<{ postgres: string[]; clickhouse: string[] }>(await cli(["migrate", "--json"], env));
    expect(out).toStrictEqual(expectedMigrations());
    const human = await cli(["migrate"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("schema is up to date");
  });

  it("pixel create --name Shop --json prints the new pixel and account", async () => {
    const out = json<{
      pixelId: string;
      accountId: string;
      accountCreated: boolean;
      name: string;
      status: string;
    }>(await cli(["pixel", "create", "--name", "Shop", "--json"], env));
    expect(out).toStrictEqual({
      pixelId: expect.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
      accountId: expect.stringMatching(/^[0-9A-Z]{26}$/),
      accountCreated: true,
      name: "Shop",
      status: "active",
    });
    pixelId = out.pixelId;
    accountId = out.accountId;
    expect(accountId).not.toBe("");
  });

  it("key create prints the raw key once, with its id and scopes", async () => {
    const out = json<{
      key: string;
      id: string;
      pixelId: string;
      scopes: string[];
      expiresAt: string | null;
    }>(await cli(["key", "create", "--pixel", pixelId, "--scopes", "account:read", "--json"], env));
    expect(out.key).toMatch(/^pxh_[0-9A-Za-z]{46}$/);
    expect(out).toStrictEqual({
      key: out.key,
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      pixelId,
      scopes: ["account:read"],
      expiresAt: null,
    });
    rawKey = out.key;
    keyId = out.id;
  });

  it("key list shows the key without the raw key", async () => {
    const run = await cli(["key", "list", "--pixel", pixelId, "--json"], env);
    const out = json<{ id: string; pixelId: string; prefix: string; scopes: string[]; state: string }[]>(run);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      id: keyId,
      pixelId,
      scopes: ["account:read"],
      state: "active",
      revokedAt: null,
      prefix: `${rawKey.slice(0, 16)}…`,
    });
    expect(run.stdout).not.toContain(rawKey);
    expect(run.stdout).not.toContain(rawKey.slice(16, 44));
    expect(run.stdout).not.toMatch(/key_hash|keyHash/);
  });

  it("key revoke then list shows it revoked", async () => {
    const revoke = await cli(["key", "revoke", keyId], env);
    expect({ code: revoke.code, stderr: revoke.stderr }).toStrictEqual({ code: 0, stderr: "" });
    expect(revoke.stdout).toContain(`key ${keyId} revoked`);
    const out = json<{ id: string; state: string; revokedAt: string | null }[]>(
      await cli(["key", "list", "--pixel", pixelId, "--json"], env),
    );
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ id: keyId, state: "revoked" });
    expect(Number.isNaN(Date.parse(out[0]!.revokedAt ?? ""))).toBe(false);
  });

  it("key create with an unknown scope exits non-zero naming it", async () => {
    const run = await cli(
      ["key", "create", "--pixel", pixelId, "--scopes", "account:read,analytics:write"],
      env,
    );
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stderr).toContain("unknown scope analytics:write");
    expect(run.stdout).not.toMatch(/pxh_/);
  });

  it.each([
    [[], "pixelhouse"],
    [["serve"], "pixelhouse serve"],
    [["migrate"], "pixelhouse migrate"],
    [["pixel"], "pixelhouse pixel"],
    [["pixel", "create"], "pixelhouse pixel create"],
    [["key"], "pixelhouse key"],
    [["key", "create"], "pixelhouse key create"],
    [["key", "list"], "pixelhouse key list"],
    [["key", "revoke"], "pixelhouse key revoke"],
  ])("%j --help", async (command, usage) => {
    const run = await cli([...command, "--help"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Usage: ${usage}`);
    expect(run.stdout).toContain("--help");
    if (["pixel create", "key create", "key list", "migrate"].includes(command.join(" "))) {
      expect(run.stdout).toContain("--json");
    }
  });
});

describe("serve and the data-directory lock", { timeout: 180_000 }, () => {
  const dir = tempDir("pixelhouse-serve-");
  const env = { DATA_DIR: dir.path };
  let server: ChildProcessWithoutNullStreams | undefined;
  let exited: Promise<unknown> | undefined;
  const stdout: string[] = [];
  let stderr = "";

  beforeAll(async () => {
    const child = spawn(process.execPath, [BIN, "serve"], {
      cwd: ROOT,
      env: cliEnv({ ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    server = child;
    exited = once(child, "exit");
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const lines = createInterface({ input: child.stdout });
    // Ready once the log line and the demo block have both arrived (in either order: the logger and
    // the demo block write to stdout independently).
    await new Promise<void>((resolve, reject) => {
      let ready = false;
      let demo = false;
      // Fail with what the process said rather than a bare hook timeout.
      const giveUp = setTimeout(() => {
        reject(new Error(`serve was not ready in time:\n${stdout.join("\n")}\n${stderr}`));
      }, 110_000);
      lines.on("line", (line) => {
        stdout.push(line);
        if (line.includes("pixelhouse ready")) ready = true;
        if (line.includes("API reference:")) demo = true;
        if (ready && demo) {
          clearTimeout(giveUp);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(giveUp);
        reject(new Error(`serve exited with ${code} before it was ready:\n${stdout.join("\n")}\n${stderr}`));
      });
    });
  }, 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      server.kill("SIGKILL");
      await exited;
    }
    dir.remove();
  });

  it("logs pixelhouse ready with the URL", () => {
    const ready = stdout.find((l) => l.includes("pixelhouse ready"))!;
    const log = JSON.parse(ready) as { msg: string; url: string; stores: Record<string, string> };
    expect(log.msg).toBe("pixelhouse ready");
    expect(log.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(log.stores).toStrictEqual({ sql: "pglite", warehouse: "chdb", kv: "memory" });
  });

  it("prints a demo key and a curl line on the first start, and the key works", async () => {
    const keyLines = stdout.map((l) => l.trim()).filter((l) => l.startsWith("pxh_"));
    expect(keyLines).toHaveLength(1);
    const key = keyLines[0]!;
    expect(key).toMatch(/^pxh_[0-9A-Za-z]{46}$/);
    const curl = stdout.map((l) => l.trim()).find((l) => l.startsWith("curl "));
    expect(curl).toMatch(
      new RegExp(
        `^curl -s http://127\\.0\\.0\\.1:\\d+/accounts/api/account -H 'x-api-key: ${key}' -H 'x-pixel-id: demo'$`,
      ),
    );
    const url = /(http:\/\/[^ ]+)\/accounts/.exec(curl!)![1]!;
    const res = await fetch(`${url}/accounts/api/account`, {
      headers: { "x-api-key": key, "x-pixel-id": "demo" },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { account: { accountName: string } }).account.accountName).toBe(
      "Demo Store",
    );
  });

  it("a CLI command on the held data directory exits 3 saying it is in use", async () => {
    const run = await cli(["key", "list", "--pixel", "demo"], env);
    expect(run.signal).toBeNull(); // it answered on its own, not killed by the timeout
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("in use by another pixelhouse process");
    expect(run.stderr).toContain(`pid ${server!.pid}`);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stdout).toBe("");
  });

  it("after the server stops, the directory is free and holds the demo key", async () => {
    server!.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const run = await cli(["key", "list", "--pixel", "demo", "--json"], env);
    expect({ code: run.code, stderr: run.stderr }).toStrictEqual({ code: 0, stderr: "" });
    const keys = JSON.parse(run.stdout) as { name: string; state: string; scopes: string[] }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ name: "demo (all scopes)", state: "active" });
    expect(keys[0]!.scopes).toContain("account:read");
  });
});
