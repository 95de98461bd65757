import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorHandler } from "../../src/http/errors.js";
import { createLogger } from "../../src/log.js";
import { KvError, KvUnavailableError } from "../../src/stores/kv/port.js";
import { SqlUnavailableError } from "../../src/stores/sql/port.js";
import { WarehouseUnavailableError } from "../../src/stores/warehouse/port.js";

/** An outage refused by a breaker with `ms` of cool-down left. */
const refused = <E extends { retryAfterMs?: number }>(err: E, ms: number): E => {
  err.retryAfterMs = ms;
  return err;
};

const ROUTES: Record<string, () => unknown> = {
  "/sql": () => new SqlUnavailableError("connect ECONNREFUSED 10.0.0.5:5432", "ECONNREFUSED"),
  "/sql-breaker": () => refused(new SqlUnavailableError("breaker", undefined), 1500),
  "/warehouse-breaker": () => refused(new WarehouseUnavailableError("breaker"), 200),
  "/kv": () => new KvUnavailableError("Command timed out"),
  "/kv-wrapped": () =>
    new Error("the forwarding queue failed", { cause: new KvUnavailableError("Connection is closed.") }),
  "/kv-bug": () => new KvError("WRONGTYPE Operation against a key holding the wrong kind of value"),
};

describe("store outages through the error middleware", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    for (const [path, make] of Object.entries(ROUTES)) {
      app.get(path, async () => {
        throw make();
      });
    }
    app.use(errorHandler(createLogger("silent")));
    server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ["/sql", 503, "1", "the SQL store is not reachable"],
    ["/sql-breaker", 503, "2", "the SQL store is not reachable"],
    ["/warehouse-breaker", 503, "1", "the warehouse is not reachable"],
    ["/kv", 503, "1", "the cache store is not reachable"],
    ["/kv-wrapped", 503, "1", "the cache store is not reachable"],
    ["/kv-bug", 500, null, "Internal Server Error"],
  ])("%s → %i, Retry-After %s", async (path, status, retryAfter, message) => {
    const res = await fetch(base + path);
    const body = (await res.json()) as { message: string; requestId: string };
    expect(res.status).toBe(status);
    expect(res.headers.get("retry-after")).toBe(retryAfter);
    expect(body.message).toContain(message);
    expect(body.requestId).toBe(res.headers.get("x-request-id") ?? "");
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|WRONGTYPE|timed out|closed/);
  });
});
