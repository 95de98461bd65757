import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { buildServices, type Services } from "../../src/services.js";
import { openStores, type Stores } from "../../src/stores/index.js";
import { migrate } from "../../src/stores/migrations.js";
import { TEST_REDIS_URL } from "./env.js";
import { createTestDatabase, tempDir, uniqueName } from "./stores.js";

export interface TestApp {
  url: string;
  config: Config;
  stores: Stores;
  services: Services;
  /** A new pixel (with its own account) and a key for it. */
  pixelWithKey(
    scopes: string[],
    options?: { pixelId?: string; expiresAt?: Date | null },
  ): Promise<{ pixelId: string; accountId: string; key: string; keyId: string }>;
  /** fetch against the app with the auth headers filled in. */
  call(
    method: string,
    path: string,
    options?: {
      key?: string;
      pixelId?: string;
      body?: unknown;
      rawBody?: string | Buffer;
      headers?: Record<string, string>;
    },
  ): Promise<{ status: number; body: unknown; text: string; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The real app over real stores: embedded ones in a temp DATA_DIR by default, or a fresh database on
 * the Postgres server / a private key prefix on the Redis server when asked.
 */
export async function startTestApp(
  options: { sql?: "pglite" | "postgres"; kv?: "memory" | "redis"; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const dir = tempDir("pixelhouse-app-");
  const env: Record<string, string> = { DATA_DIR: dir.path, LOG_LEVEL: "silent", ...options.env };
  let dropDatabase: (() => Promise<void>) | undefined;
  if (options.sql === "postgres") {
    const db = await createTestDatabase("pxh_app");
    env.DATABASE_URL = db.url;
    env.KEY_SECRET ??= "test-secret-test-secret-test-secret-0123";
    dropDatabase = db.drop;
  }
  if (options.kv === "redis") {
    if (!TEST_REDIS_URL) throw new Error("TEST_REDIS_URL is not set");
    env.REDIS_URL = TEST_REDIS_URL;
    env.REDIS_KEY_PREFIX = `${uniqueName("pxh_app")}:`;
  }
  const config = loadConfig(env);
  const log = createLogger(config.LOG_LEVEL);
  const stores = await openStores(config, "test");
  await migrate(stores.sql, stores.warehouse);
  const services = buildServices(stores, config, log);
  const app = createApp({ config, stores, services, log });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    config,
    stores,
    services,
    async pixelWithKey(scopes, opts = {}) {
      const { pixel } = await services.pixels.create({
        name: "Test Shop",
        ...(opts.pixelId ? { id: opts.pixelId } : {}),
      });
      const { key, record } = await services.keys.create({
        pixelId: pixel.id,
        scopes,
        expiresAt: opts.expiresAt ?? null,
      });
      return { pixelId: pixel.id, accountId: pixel.accountId, key, keyId: record.id };
    },
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key !== undefined) headers["x-api-key"] = o.key;
      if (o.pixelId !== undefined) headers["x-pixel-id"] = o.pixelId;
      let body: string | Buffer | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stores.close();
      await dropDatabase?.();
      dir.remove();
    },
  };
}
