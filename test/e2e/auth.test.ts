import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DENY_MESSAGE } from "../../src/errors.js";
import { errorHandler } from "../../src/http/errors.js";
import { mountRoutes, requestId } from "../../src/http/mount.js";
import { type RouteDef, route } from "../../src/http/route.js";
import { generateKey, KEY_PREFIX } from "../../src/keys/format.js";
import { effectiveScopes, type Scope, STORABLE_SCOPES } from "../../src/keys/scopes.js";
import { createLogger } from "../../src/log.js";
import { routeTable } from "../../src/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

/**
 * Walks the route table: every route that is not public gets the whole authentication matrix of
 * docs/authentication.md. The app runs with a short key cache (200 ms), so the cache-window test below can see a
 * revocation made behind the service's back; every other case changes state before the key's first use.
 */
const app: TestApp = await startTestApp({ env: { KEY_CACHE_MS: "200" } });
afterAll(() => app.close());

const UNAUTHORIZED = { message: "Unauthorized" };
const DENIED = { message: DENY_MESSAGE, Message: DENY_MESSAGE };
const DENIED_TEXT = JSON.stringify(DENIED);

const routes = routeTable(app.services, app.stores, app.config).filter((r) => r.auth !== "public");

/** `/views/:id` → `/views/x`; Express 5 wildcards (`*rest`) and optional groups (`{…}`) too. */
const concretePath = (path: string) => path.replace(/[:*][A-Za-z0-9_]+/g, "x").replace(/[{}]/g, "");

const cases = routes.map((r) => ({
  name: `${r.method.toUpperCase()} ${r.path} (${r.auth})`,
  route: r,
  method: r.method.toUpperCase(),
  path: concretePath(r.path),
}));

/** Body routes get an empty object: auth must decide before the body is looked at. */
const bodyOf = (r: RouteDef) => (r.body ? {} : undefined);

/** Does a key holding exactly `stored` pass the route's auth? */
const grants = (r: RouteDef, stored: readonly string[]) =>
  r.auth === "any-key" || (r.auth !== "public" && effectiveScopes(stored).has(r.auth));

/** A stored scope list that passes the route, preferring the route's own scope. */
const rightScopes = (r: RouteDef): string[] => (r.auth === "any-key" ? ["account:read"] : [r.auth]);

/** A single stored scope that does not grant the route's scope (only for scope routes). */
const wrongScope = (r: RouteDef): string => {
  const s = STORABLE_SCOPES.find((x) => !grants(r, [x]));
  if (!s) throw new Error(`every scope grants ${r.path}`);
  return s;
};

function corruptLastChar(key: string): string {
  const last = key.at(-1)!;
  return key.slice(0, -1) + (last === "a" ? "b" : "a");
}

describe("route table", () => {
  it("has routes that need a key", () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  it("declares a known scope, any-key or public on every route", () => {
    for (const r of routeTable(app.services, app.stores, app.config)) {
      expect(["any-key", "public", ...STORABLE_SCOPES]).toContain(r.auth);
    }
  });
});

describe.each(cases.map((c) => [c.name, c] as const))("%s", (_name, { route: r, method, path }) => {
  const call = (key: string | undefined, pixelId: string | undefined, headers?: Record<string, string>) =>
    app.call(method, path, {
      ...(key !== undefined ? { key } : {}),
      ...(pixelId !== undefined ? { pixelId } : {}),
      ...(bodyOf(r) !== undefined ? { body: bodyOf(r) } : {}),
      ...(headers ? { headers } : {}),
    });

  let good: { pixelId: string; key: string };
  beforeAll(async () => {
    good = await app.pixelWithKey(rightScopes(r));
  });

  describe("401 Unauthorized", () => {
    it("no x-api-key", async () => {
      const res = await call(undefined, good.pixelId);
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(UNAUTHORIZED);
      expect(res.text).toBe('{"message":"Unauthorized"}');
    });

    it("no x-pixel-id", async () => {
      const res = await call(good.key, undefined);
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(UNAUTHORIZED);
    });

    it("neither header", async () => {
      const res = await call(undefined, undefined);
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(UNAUTHORIZED);
    });

    it.each([
      ["empty", () => ""],
      ["wrong prefix", (k: string) => `pxk_${k.slice(KEY_PREFIX.length)}`],
      ["upper-case prefix", (k: string) => `PXH_${k.slice(KEY_PREFIX.length)}`],
      ["one character short", (k: string) => k.slice(0, -1)],
      ["one character long", (k: string) => `${k}a`],
      ["bad checksum (last character flipped)", corruptLastChar],
      ["non-base62 character", (k: string) => `${k.slice(0, 10)}-${k.slice(11)}`],
      ["no prefix at all", (k: string) => k.slice(KEY_PREFIX.length)],
    ])("malformed x-api-key: %s", async (_label, mangle) => {
      const res = await call(mangle(good.key), good.pixelId);
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(UNAUTHORIZED);
    });

    it.each([
      ["contains a space", (id: string) => `${id} x`],
      ["65 characters", () => "p".repeat(65)],
      ["contains a dot", (id: string) => `${id}.x`],
      ["empty", () => ""],
    ])("malformed x-pixel-id: %s", async (_label, mangle) => {
      const res = await call(good.key, mangle(good.pixelId));
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(UNAUTHORIZED);
    });
  });

  describe("403 explicit deny", () => {
    const expectDenied = (res: { status: number; body: unknown; text: string }) => {
      expect(res.status).toBe(403);
      expect(res.body).toStrictEqual(DENIED);
      expect(res.text).toBe(DENIED_TEXT);
    };

    it("unknown well-formed key", async () => {
      expectDenied(await call(generateKey().raw, good.pixelId));
    });

    it("known public id with the wrong secret", async () => {
      // A well-formed key whose lookup id matches a stored row but whose secret does not.
      const other = generateKey();
      const k = await app.pixelWithKey(rightScopes(r));
      await app.stores.sql.query("UPDATE api_keys SET public_id = $1 WHERE id = $2", [
        other.publicId,
        k.keyId,
      ]);
      expectDenied(await call(other.raw, k.pixelId));
    });

    it("revoked key", async () => {
      const k = await app.pixelWithKey(rightScopes(r));
      await app.services.keys.revoke(k.keyId);
      expectDenied(await call(k.key, k.pixelId));
    });

    it("revoked after use (service revocation clears the cache)", async () => {
      const k = await app.pixelWithKey(rightScopes(r));
      expect([401, 403]).not.toContain((await call(k.key, k.pixelId)).status);
      await app.services.keys.revoke(k.keyId);
      expectDenied(await call(k.key, k.pixelId));
    });

    it("expired key", async () => {
      const k = await app.pixelWithKey(rightScopes(r), { expiresAt: new Date(Date.now() - 60_000) });
      expectDenied(await call(k.key, k.pixelId));
    });

    it("key of another pixel", async () => {
      const a = await app.pixelWithKey(rightScopes(r));
      const b = await app.pixelWithKey(rightScopes(r));
      expectDenied(await call(a.key, b.pixelId));
      expectDenied(await call(b.key, a.pixelId));
    });

    it("key with a well-formed pixel id that does not exist", async () => {
      const a = await app.pixelWithKey(rightScopes(r));
      expectDenied(await call(a.key, "no-such-pixel"));
    });

    it("inactive pixel", async () => {
      const k = await app.pixelWithKey(rightScopes(r));
      await app.services.pixels.setStatus(k.pixelId, "inactive");
      expectDenied(await call(k.key, k.pixelId));
    });

    it("a pixel made active again accepts its key", async () => {
      const k = await app.pixelWithKey(rightScopes(r));
      await app.services.pixels.setStatus(k.pixelId, "inactive");
      expectDenied(await call(k.key, k.pixelId));
      await app.services.pixels.setStatus(k.pixelId, "active");
      // The denial above was not cached as a success; the cache may hold the inactive row briefly.
      let status = 0;
      for (let i = 0; i < 50; i++) {
        status = (await call(k.key, k.pixelId)).status;
        if (status !== 403) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect([401, 403]).not.toContain(status);
    });
  });

  if (r.auth !== "any-key" && r.auth !== "public") {
    const scope = r.auth;
    const denying = STORABLE_SCOPES.filter((s) => !grants(r, [s]));
    const granting = STORABLE_SCOPES.filter((s) => s !== scope && grants(r, [s]));

    describe(`scope ${scope}`, () => {
      it(`a key without ${scope} → 403 naming the scope`, async () => {
        const k = await app.pixelWithKey([wrongScope(r)]);
        const res = await call(k.key, k.pixelId);
        expect(res.status).toBe(403);
        expect(res.body).toStrictEqual({ message: `API key does not have the ${scope} scope` });
      });

      it("every scope that does not imply it is refused, with the same body", async () => {
        expect(denying.length).toBeGreaterThan(0);
        for (const s of denying) {
          const k = await app.pixelWithKey([s]);
          const res = await call(k.key, k.pixelId);
          expect({ s, status: res.status, body: res.body }).toStrictEqual({
            s,
            status: 403,
            body: { message: `API key does not have the ${scope} scope` },
          });
        }
      });

      it("a key with no scopes at all → 403 naming the scope", async () => {
        const k = await app.pixelWithKey([]);
        const res = await call(k.key, k.pixelId);
        expect(res.status).toBe(403);
        expect(res.body).toStrictEqual({ message: `API key does not have the ${scope} scope` });
      });

      // Legacy names (db_query, attribution_query → analytics:read) and implications
      // (dashboards:write → dashboards:read) apply wherever the route's scope is implied by another.
      if (granting.length > 0) {
        it.each(granting)(`%s satisfies ${scope}`, async (s) => {
          const k = await app.pixelWithKey([s]);
          const res = await call(k.key, k.pixelId);
          expect([401, 403]).not.toContain(res.status);
        });
      }
    });
  }

  if (r.auth === "any-key") {
    it("any active key of the pixel is accepted, whatever its scopes", async () => {
      for (const scopes of [[], ["events:write"], ["db_query"]]) {
        const k = await app.pixelWithKey(scopes);
        const res = await call(k.key, k.pixelId);
        expect({ scopes, status: [401, 403].includes(res.status) }).toStrictEqual({ scopes, status: false });
      }
    });
  }

  describe("the right scope", () => {
    it("passes authentication", async () => {
      const res = await call(good.key, good.pixelId);
      expect([401, 403]).not.toContain(res.status);
      if (r.method === "get" && !r.params && !r.query) expect(res.status).toBe(200);
    });

    it("a key holding every scope passes too", async () => {
      const k = await app.pixelWithKey([...STORABLE_SCOPES]);
      const res = await call(k.key, k.pixelId);
      expect([401, 403]).not.toContain(res.status);
    });

    it("a key that expires in the future passes", async () => {
      const k = await app.pixelWithKey(rightScopes(r), { expiresAt: new Date(Date.now() + 3_600_000) });
      const res = await call(k.key, k.pixelId);
      expect([401, 403]).not.toContain(res.status);
    });
  });
});

describe("effective scopes", () => {
  it("expands the legacy names to analytics:read", () => {
    expect(effectiveScopes(["db_query"])).toStrictEqual(new Set<Scope>(["analytics:read"]));
    expect(effectiveScopes(["attribution_query"])).toStrictEqual(new Set<Scope>(["analytics:read"]));
  });

  it("dashboards:write implies dashboards:read, not the other way round", () => {
    expect(effectiveScopes(["dashboards:write"])).toStrictEqual(
      new Set<Scope>(["dashboards:write", "dashboards:read"]),
    );
    expect(effectiveScopes(["dashboards:read"])).toStrictEqual(new Set<Scope>(["dashboards:read"]));
  });

  it("ignores names it does not know and keeps the rest", () => {
    expect(effectiveScopes(["account:read", "admin", "analytics:*"])).toStrictEqual(
      new Set<Scope>(["account:read"]),
    );
  });

  it("grants nothing else: each stored scope yields only itself and its implications", () => {
    for (const s of STORABLE_SCOPES) {
      const eff = effectiveScopes([s]);
      if (s === "db_query" || s === "attribution_query") expect([...eff]).toStrictEqual(["analytics:read"]);
      else if (s === "dashboards:write") expect(eff.size).toBe(2);
      else expect([...eff]).toStrictEqual([s]);
    }
  });
});

/**
 * Until analytics and dashboard routes exist in the table, synthetic routes with those scopes are
 * mounted by the real mountRoutes over the real key service, so the expansion is exercised end to end.
 */
describe("scope expansion through mountRoutes (synthetic routes)", () => {
  let base = "";
  let server: Server | undefined;
  beforeAll(async () => {
    const synthetic = (["analytics:read", "dashboards:read", "dashboards:write"] as const).map((scope) =>
      route({
        method: "get",
        path: `/synthetic/${scope.replace(":", "-")}`,
        auth: scope,
        tag: "Test",
        summary: scope,
        handler: ({ principal }) => ({ ok: true, pixelId: principal.pixelId }),
      }),
    );
    const express_ = express();
    express_.use(requestId(createLogger("silent")));
    const generous = { capacity: 10_000, refillPerSecond: 10_000 };
    mountRoutes(express_, synthetic, {
      keys: app.services.keys,
      kv: app.stores.kv,
      rates: { ingest: generous, query: generous },
    });
    express_.use(errorHandler(createLogger("silent")));
    server = await new Promise<Server>((resolve) => {
      const s = express_.listen(0, "127.0.0.1", () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  const get = async (scope: string, k: { key: string; pixelId: string }) => {
    const res = await fetch(`${base}/synthetic/${scope.replace(":", "-")}`, {
      headers: { "x-api-key": k.key, "x-pixel-id": k.pixelId },
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it.each([
    ["db_query", "analytics:read"],
    ["attribution_query", "analytics:read"],
    ["analytics:read", "analytics:read"],
    ["dashboards:write", "dashboards:read"],
    ["dashboards:write", "dashboards:write"],
  ])("a key with %s passes a %s route", async (stored, scope) => {
    const k = await app.pixelWithKey([stored]);
    expect(await get(scope, k)).toStrictEqual({ status: 200, body: { ok: true, pixelId: k.pixelId } });
  });

  it.each([
    ["dashboards:read", "dashboards:write"],
    ["db_query", "dashboards:read"],
    ["account:read", "analytics:read"],
  ])("a key with %s is refused on a %s route", async (stored, scope) => {
    const k = await app.pixelWithKey([stored]);
    expect(await get(scope, k)).toStrictEqual({
      status: 403,
      body: { message: `API key does not have the ${scope} scope` },
    });
  });

  it("a legacy-scoped key is still refused when revoked", async () => {
    const k = await app.pixelWithKey(["db_query"]);
    await app.services.keys.revoke(k.keyId);
    expect(await get("analytics:read", k)).toStrictEqual({ status: 403, body: DENIED });
  });
});

describe("key cache window", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const target = routes.find((r) => r.method === "get" && r.auth !== "any-key" && !r.params && !r.query)!;

  it("a revocation written straight to SQL bites once the cached entry lapses", async () => {
    expect(target).toBeDefined();
    const k = await app.pixelWithKey(rightScopes(target));
    const use = () => app.call("GET", target.path, { key: k.key, pixelId: k.pixelId });
    expect((await use()).status).toBe(200);
    // Behind the service's back: no cache invalidation happens.
    const updated = await app.stores.sql.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [
      k.keyId,
    ]);
    expect(updated.rowCount).toBe(1);
    let last: Awaited<ReturnType<typeof use>> | undefined;
    for (let i = 0; i < 50; i++) {
      last = await use();
      if (last.status !== 200) break;
      await sleep(50);
    }
    expect(last?.status).toBe(403);
    expect(last?.body).toStrictEqual(DENIED);
  });

  it("an expiry written straight to SQL bites too", async () => {
    const k = await app.pixelWithKey(rightScopes(target));
    const use = () => app.call("GET", target.path, { key: k.key, pixelId: k.pixelId });
    expect((await use()).status).toBe(200);
    await app.stores.sql.query("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", [
      k.keyId,
    ]);
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await use()).status;
      if (status === 200) await sleep(50);
    }
    expect(status).toBe(403);
  });
});

describe("last_used_at", () => {
  it("is empty for a fresh key and set after a successful call", async () => {
    const target = routes.find((r) => r.method === "get" && !r.params && !r.query)!;
    const k = await app.pixelWithKey(rightScopes(target));
    const read = async () =>
      (
        await app.stores.sql.query<{ last_used_at: Date | null }>(
          "SELECT last_used_at FROM api_keys WHERE id = $1",
          [k.keyId],
        )
      ).rows[0]?.last_used_at ?? null;
    expect(await read()).toBeNull();
    const before = Date.now();
    expect((await app.call("GET", target.path, { key: k.key, pixelId: k.pixelId })).status).toBe(200);
    let seen: Date | null = null;
    for (let i = 0; i < 50 && !seen; i++) {
      seen = await read();
      if (!seen) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen).toBeInstanceOf(Date);
    // Written by the database clock; allow for clock granularity, not for timing.
    expect(seen!.getTime()).toBeGreaterThan(before - 60_000);
    const listed = await app.services.keys.list(k.pixelId);
    expect(listed[0]?.lastUsedAt).toBeInstanceOf(Date);
  });

  it("stays empty after a call refused for a revoked key", async () => {
    const revoked = await app.pixelWithKey(["account:read"]);
    await app.services.keys.revoke(revoked.keyId);
    const res = await app.call("GET", "/accounts/api/account", {
      key: revoked.key,
      pixelId: revoked.pixelId,
    });
    expect(res.status).toBe(403);
    // A successful call made afterwards with another key is written; by then this one would be too.
    const witness = await app.pixelWithKey(["account:read"]);
    await app.call("GET", "/accounts/api/account", { key: witness.key, pixelId: witness.pixelId });
    const read = async (id: string) =>
      (
        await app.stores.sql.query<{ last_used_at: Date | null }>(
          "SELECT last_used_at FROM api_keys WHERE id = $1",
          [id],
        )
      ).rows[0]?.last_used_at ?? null;
    for (let i = 0; i < 50 && !(await read(witness.keyId)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await read(witness.keyId)).toBeInstanceOf(Date);
    expect(await read(revoked.keyId)).toBeNull();
  });
});
