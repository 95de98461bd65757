import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgliteSqlStore } from "../../src/stores/sql/pglite.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { tempDir } from "../helpers/stores.js";

/**
 * `pixelhouse destination …` and `pixelhouse deadletter …` as a user runs them on the embedded
 * stores. The test reads and seeds the tables between commands (never during one: the CLI holds the
 * data directory while it runs), since only a running worker produces dead letters.
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
        resolve({ code: typeof code === "number" ? code : err ? 1 : 0, stdout, stderr });
      },
    );
  });
}

async function ok<T>(run: Promise<{ code: number; stdout: string; stderr: string }>): Promise<T> {
  const r = await run;
  expect({ code: r.code, stderr: r.stderr }).toStrictEqual({ code: 0, stderr: "" });
  return JSON.parse(r.stdout) as T;
}

/** Runs `fn` on the data directory's Postgres while no command holds it. */
async function withSql<T>(dataDir: string, fn: (sql: SqlStore) => Promise<T>): Promise<T> {
  const sql = await PgliteSqlStore.open(join(dataDir, "pg"));
  try {
    return await fn(sql);
  } finally {
    await sql.close();
  }
}

describe("pixelhouse destination and deadletter", { timeout: 300_000 }, () => {
  const dir = tempDir("pixelhouse-cli-destinations-");
  let pixelId: string;
  let destinationId: string;
  beforeAll(async () => {
    pixelId = (await ok<{ pixelId: string }>(cli(["pixel", "create", "--name", "Hooks", "--json"], dir.path)))
      .pixelId;
  });
  afterAll(() => dir.remove());

  it("add prints the generated secret once; list masks it", async () => {
    const added = await ok<{
      id: string;
      kind: string;
      eventNames: string[];
      secret: string;
      config: object;
    }>(
      cli(
        [
          "destination",
          "add",
          "--pixel",
          pixelId,
          "--kind",
          "webhook",
          "--url",
          "http://127.0.0.1:9/hook",
          "--events",
          "purchase,lead",
          "--json",
        ],
        dir.path,
      ),
    );
    expect(added).toMatchObject({ kind: "webhook", eventNames: ["purchase", "lead"] });
    expect(added.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(added.config).toEqual({
      url: "http://127.0.0.1:9/hook",
      secret: expect.stringMatching(/^\*+.{4}$/),
    });
    destinationId = added.id;

    const listing = await cli(["destination", "list", "--pixel", pixelId], dir.path);
    expect(listing.code).toBe(0);
    expect(listing.stdout).toContain(destinationId);
    expect(listing.stdout).toContain("events=purchase,lead");
    expect(listing.stdout).not.toContain(added.secret);
  });

  it("refuses options of the other kind before touching the stores", async () => {
    const run = await cli(
      ["destination", "add", "--pixel", pixelId, "--kind", "meta_capi", "--url", "http://x.example"],
      dir.path,
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("--url only applies to --kind webhook");
  });

  it("deadletter list and replay: the letter goes back to the queue once", async () => {
    await withSql(dir.path, (sql) =>
      sql.query(
        `INSERT INTO dead_letters (destination_id, pixel_id, event_id, payload, attempts, last_error)
         VALUES ($1, $2, 'evt-1', '{"id":"7","event":{"name":"purchase"}}', 8, 'HTTP 500')`,
        [destinationId, pixelId],
      ),
    );
    const letters = await ok<{ id: string; eventName: string; lastError: string; replayedAt: null }[]>(
      cli(["deadletter", "list", "--pixel", pixelId, "--json"], dir.path),
    );
    expect(letters).toMatchObject([
      { destinationId, eventId: "evt-1", eventName: "purchase", attempts: 8, lastError: "HTTP 500" },
    ]);

    expect(await ok(cli(["deadletter", "replay", "--pixel", pixelId, "--json"], dir.path))).toEqual({
      replayed: 1,
    });
    const again = await cli(["deadletter", "replay", "--pixel", pixelId, "--id", letters[0]!.id], dir.path);
    expect(again.stdout.trim()).toBe("nothing to replay");
    const queued = await withSql(dir.path, async (sql) => {
      const { rows } = await sql.query<{ attempts: number; payload: unknown }>(
        "SELECT attempts, payload FROM deliveries WHERE destination_id = $1",
        [destinationId],
      );
      return rows;
    });
    expect(queued).toEqual([{ attempts: 0, payload: { id: "7", event: { name: "purchase" } } }]);
  });

  it("remove drops the destination with its queue and dead letters", async () => {
    const run = await cli(["destination", "remove", destinationId], dir.path);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`destination ${destinationId} (webhook) removed from pixel ${pixelId}`);
    const left = await withSql(dir.path, async (sql) => {
      const { rows } = await sql.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM deliveries) + (SELECT count(*) FROM dead_letters) AS n`,
      );
      return Number(rows[0]!.n);
    });
    expect(left).toBe(0);
    expect((await cli(["destination", "list", "--pixel", pixelId], dir.path)).stdout.trim()).toBe(
      `no destinations for pixel ${pixelId}`,
    );
  });
});
