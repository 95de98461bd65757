import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { buildServices } from "../../src/services.js";
import { openStores } from "../../src/stores/index.js";
import { migrate } from "../../src/stores/migrations.js";
import { tempDir } from "../helpers/stores.js";

/**
 * `pixelhouse events read` as a user runs it on the embedded stores: a rename made while no relay
 * ran (the service was stopped) is relayed by the command and read by a consumer group.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function cli(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" };
  for (const name of ["DATABASE_URL", "CLICKHOUSE_URL", "REDIS_URL", "KEY_SECRET"]) delete env[name];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/pixelhouse.mjs", ...args],
      { cwd: ROOT, env, timeout: 90_000 },
      (err, stdout, stderr) => {
        const code = (err as { code?: number } | null)?.code;
        resolve({ code: typeof code === "number" ? code : 0, stdout, stderr });
      },
    );
  });
}

describe("pixelhouse events read", () => {
  const dir = tempDir("pixelhouse-cli-events-");
  let renamed: { accountId: string; pixelId: string; keyId: string };
  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: "silent" });
    const stores = await openStores(config, "test");
    try {
      await migrate(stores.sql, stores.warehouse);
      const services = buildServices(stores, config, createLogger("silent"));
      const { pixel } = await services.pixels.create({ name: "CLI Shop", id: "cli-shop" });
      const { record } = await services.keys.create({ pixelId: pixel.id, scopes: ["account:write"] });
      renamed = { accountId: pixel.accountId, pixelId: pixel.id, keyId: record.id };
      await services.accounts.rename(renamed, "CLI Shop ✨");
    } finally {
      await stores.close();
    }
  });
  afterAll(() => dir.remove());

  it("relays what the outbox holds, hands it to the group once, and acknowledges it", async () => {
    const first = await cli(["events", "read", "--group", "ops", "--json"], dir.path);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const messages = JSON.parse(first.stdout) as {
      key: string;
      payload: Record<string, unknown>;
      deliveries: number;
    }[];
    expect(messages).toHaveLength(1);
    expect(messages[0]!.deliveries).toBe(1);
    expect(messages[0]!.payload).toMatchObject({
      type: "accountUpdated",
      accountId: renamed.accountId,
      pixelId: "cli-shop",
      actor: `cli:${renamed.keyId}`,
      changes: { accountName: { from: "CLI Shop", to: "CLI Shop ✨" } },
    });
    const again = await cli(["events", "read", "--group", "ops"], dir.path);
    expect(again.stdout.trim()).toBe("no new messages on events for group ops");
  });

  it("refuses a group name outside the bus alphabet", async () => {
    const bad = await cli(["events", "read", "--group", "no spaces"], dir.path);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/group name "no spaces" must be 1-100 of letters/);
  });
});
