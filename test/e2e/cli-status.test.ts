/**
 * `pixelhouse status` (docs/operations.md): stores, migrations and background consumers, exit 1 when
 * something is down, pending or behind. Worked example: events are stored while no identity worker
 * runs (a stopped consumer); once the oldest sighting is older than --max-lag-seconds 1 the command
 * names the identity consumer and exits 1; after the worker catches up it exits 0. While `serve`
 * holds the embedded data directory, the command asks the running service's /readyz instead.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { startTestApp } from "../helpers/app.js";
import { freePort } from "../helpers/own-servers.js";
import { tempDir } from "../helpers/stores.js";
import { sendOk } from "./ingest-helpers.js";

const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/pixelhouse.mjs");
const dir = tempDir("pixelhouse-status-");
afterAll(() => dir.remove());

interface Report {
  ok: boolean;
  source: string;
  stores: Record<string, { ok: boolean }>;
  migrations?: { sql: { pending: string[] }; warehouse: { pending: string[] } };
  consumers: Record<string, { ok: boolean; messages: number | null; seconds: number | null }>;
  derivedTables: Record<string, { pixelsBehind: number | null; seconds: number | null }>;
  problems: string[];
}

async function status(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; report: Report }> {
  const child = spawn(process.execPath, [BIN, "status", "--json", ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const [code] = (await once(child, "exit")) as [number];
  return { code, report: JSON.parse(out) as Report };
}

describe("pixelhouse status", () => {
  it("exits 1 naming a consumer that is behind, and 0 once it caught up", async () => {
    const env = { DATA_DIR: join(dir.path, "a") };
    const app = await startTestApp({ env });
    const px = await app.pixelWithKey(["events:write"]);
    await sendOk(app, px, [{ name: "page_view", eventId: "st-1", identityId: "v-1" }]);
    const published = Date.now();
    await app.close(); // nobody files the sighting: the identity consumer is stopped

    // Behind once its oldest message is older than the limit (1 s): polled, not slept.
    let behind: { code: number; report: Report } | undefined;
    const deadline = published + 60_000;
    while (Date.now() < deadline) {
      behind = await status(env, "--max-lag-seconds", "1");
      if (behind.code !== 0) break;
    }
    expect(behind!.code).toBe(1);
    expect(behind!.report.ok).toBe(false);
    expect(behind!.report.source).toBe("stores");
    expect(behind!.report.consumers.identity).toMatchObject({ ok: false, messages: 1 });
    expect(behind!.report.problems.join("\n")).toMatch(/consumer identity behind: 1 message/);
    expect(behind!.report.stores).toMatchObject({
      sql: { ok: true },
      warehouse: { ok: true },
      kv: { ok: true },
    });
    expect(behind!.report.migrations?.sql.pending).toEqual([]);

    const again = await startTestApp({ env });
    expect((await again.services.settle()).messages).toBe(0);
    await again.close();
    const ok = await status(env, "--max-lag-seconds", "1");
    expect(ok.code).toBe(0);
    expect(ok.report).toMatchObject({ ok: true, problems: [] });
    expect(ok.report.consumers.identity).toMatchObject({ ok: true, messages: 0 });
    // settle() built the derived table: nothing of it is older than the limit.
    expect(ok.report.derivedTables.conversion_touches?.seconds).toBeLessThanOrEqual(1);
  }, 120_000);

  it("asks the running service when `serve` holds the embedded data directory", async () => {
    const port = await freePort();
    const env = { DATA_DIR: join(dir.path, "b"), PORT: String(port), DEMO_ON_FIRST_START: "false" };
    const serve = spawn(process.execPath, [BIN, "serve", "--json"], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      await once(createInterface({ input: serve.stdout! }), "line");
      const r = await status(env);
      expect(r.code).toBe(0);
      expect(r.report.source).toBe("service");
      expect(Object.keys(r.report.consumers).sort()).toEqual([
        "cogs-recalc",
        "derived-tables",
        "forwarding",
        "identity",
        "outbox-relay",
      ]);
    } finally {
      serve.kill("SIGTERM");
      await once(serve, "exit");
    }
  }, 120_000);
});
