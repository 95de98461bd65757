import { once } from "node:events";
import { createServer, type RequestListener, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BadRequestError, PayloadTooLargeError } from "../../src/errors.js";
import { errorHandler } from "../../src/http/errors.js";
import { readRawBody } from "../../src/http/json-body.js";
import { requestId } from "../../src/http/mount.js";
import { createLogger } from "../../src/log.js";
import { jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonBody } from "../../src/shared/json.js";
import { parseWith, toFieldIssues } from "../../src/shared/validate.js";
import { SqlUnavailableError } from "../../src/stores/sql/port.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const listen = async (handler: RequestListener) => {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};
const close = async (server: Server) => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
};

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;

describe("the app", () => {
  let app: TestApp;
  let key: { key: string; pixelId: string };
  beforeAll(async () => {
    app = await startTestApp();
    key = await app.pixelWithKey(["account:read"]);
  });
  afterAll(() => app?.close());

  it("puts a UUID x-request-id on every kind of response, different each time", async () => {
    const responses = await Promise.all([
      app.call("GET", "/healthz"),
      app.call("GET", "/accounts/api/account", key),
      app.call("GET", "/accounts/api/account"),
      app.call("GET", "/accounts/api/account", { key: key.key, pixelId: "other" }),
      app.call("GET", "/nowhere"),
      app.call("POST", "/healthz"),
      app.call("GET", "/docs"),
      app.call("GET", "/openapi.json"),
      app.call("HEAD", "/healthz"),
    ]);
    expect(responses.map((r) => r.status)).toStrictEqual([200, 200, 401, 403, 404, 405, 200, 200, 200]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([
    ["GET", "/nowhere"],
    ["GET", "/accounts/api/accounts"],
    ["POST", "/accounts/api/nothing/here"],
    ["DELETE", "/"],
    ["GET", "/accounts/api/account/settings/order/extra"],
  ])("unknown route %s %s → 404 JSON", async (method, path) => {
    const res = await app.call(method, path, { ...key });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toStrictEqual({ message: "Not Found" });
  });

  it.each([
    ["POST", "/healthz", "GET, HEAD"],
    ["PUT", "/readyz", "GET, HEAD"],
    ["DELETE", "/accounts/api/account", "GET, HEAD, PATCH"],
    ["PATCH", "/accounts/api/account/settings/order", "GET, HEAD"],
    ["POST", "/openapi.json", "GET, HEAD"],
  ])("wrong method %s %s → 405 with Allow", async (method, path, allow) => {
    // 405 is decided before authentication: no headers needed.
    const res = await app.call(method, path);
    expect(res.status).toBe(405);
    expect(res.body).toStrictEqual({ message: "Method Not Allowed" });
    expect(res.headers.get("allow")).toBe(allow);
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });

  it("HEAD of a GET route is allowed", async () => {
    const res = await app.call("HEAD", "/healthz");
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
  });
});

/** docs/errors.md: malformed JSON → 400 `{message, errors:[…]}` (standard entries). */
function expectMalformedBody(body: Record<string, unknown>, message: string) {
  expect(body.message).toBe(message);
  expect(Array.isArray(body.errors)).toBe(true);
  const errors = body.errors as { message: unknown; key: unknown; path: unknown }[];
  expect(errors.length).toBeGreaterThan(0);
  for (const e of errors) {
    expect(typeof e.message).toBe("string");
    expect(typeof e.key).toBe("string");
    expect(Array.isArray(e.path)).toBe(true);
  }
}

describe("parseJsonBody", () => {
  const parse = (text: string) => parseJsonBody(Buffer.from(text));
  const thrown = (fn: () => unknown): unknown => {
    try {
      fn();
    } catch (err) {
      return err;
    }
    throw new Error("expected a throw");
  };

  it("parses ordinary JSON; an empty or blank body is undefined", () => {
    expect(parse('{"a":[1,"x",null,true],"b":{"c":1.5}}')).toStrictEqual({
      a: [1, "x", null, true],
      b: { c: 1.5 },
    });
    expect(parse("")).toBeUndefined();
    expect(parse("  \n ")).toBeUndefined();
  });

  it.each([['{"a":'], ["{a:1}"], ["[1,2,]"], ["{'a':1}"], ["undefined"], ['{"a":1}x']])(
    "malformed JSON %s → 400 with a message",
    (text) => {
      const err = thrown(() => parse(text));
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).status).toBe(400);
      const body = (err as BadRequestError).body();
      expect(body.message).toMatch(/^Malformed JSON/);
      expectMalformedBody(body, body.message as string);
    },
  );

  it(`accepts nesting of exactly ${MAX_JSON_DEPTH} levels`, () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(jsonDepthExceeds(nested(64), 64)).toBe(false);
    expect(jsonDepthExceeds(nestedObjects(64), 64)).toBe(false);
    let v = parse(nested(64));
    let depth = 0;
    while (Array.isArray(v)) {
      depth++;
      v = v[0];
    }
    expect(depth).toBe(64);
    expect(parse(nestedObjects(64))).toBeTypeOf("object");
  });

  it("refuses 65 levels with 400", () => {
    expect(jsonDepthExceeds(nested(65), 64)).toBe(true);
    expect(jsonDepthExceeds(nestedObjects(65), 64)).toBe(true);
    for (const text of [nested(65), nestedObjects(65), `{"x":[${nested(64)}]}`]) {
      const err = thrown(() => parse(text));
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).status).toBe(400);
      expectMalformedBody((err as BadRequestError).body(), "Malformed JSON: nesting deeper than 64 levels");
    }
  });

  it("refuses very deep nesting without blowing the stack", () => {
    expect(() => parse(nested(100_000))).toThrow(BadRequestError);
  });

  it("counts depth outside strings only (brackets and escaped quotes inside strings do not count)", () => {
    const inString = JSON.stringify({ s: `${"[".repeat(200)}\\"{{{${"{".repeat(200)}` });
    expect(jsonDepthExceeds(inString, 64)).toBe(false);
    expect(parse(inString)).toStrictEqual(JSON.parse(inString));
    // Wide but shallow is fine.
    const wide = `[${Array.from({ length: 1000 }, () => "[1]").join(",")}]`;
    expect(jsonDepthExceeds(wide, 64)).toBe(false);
  });

  it("removes __proto__ keys at every level", () => {
    const v = parse(
      '{"a":1,"__proto__":{"polluted":"yes"},"b":{"__proto__":{"polluted":"yes"},"c":2}}',
    ) as Record<string, unknown>;
    expect(Object.hasOwn(v, "__proto__")).toBe(false);
    expect(Object.hasOwn(v.b as object, "__proto__")).toBe(false);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(v).toStrictEqual({ a: 1, b: { c: 2 } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Merging the parsed value into an application object pollutes nothing either.
    const merged = Object.assign({}, v, v.b);
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("removes constructor.prototype keys", () => {
    const v = parse('{"constructor":{"prototype":{"polluted":"yes"}},"ok":1}') as Record<string, unknown>;
    expect(v.ok).toBe(1);
    expect(Object.hasOwn(v, "constructor")).toBe(false);
    expect(v.constructor).toBe(Object);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const inArray = parse('[{"constructor":{"prototype":{"polluted":"yes"}}}]') as object[];
    expect(Object.hasOwn(inArray[0]!, "constructor")).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("removes __proto__ and constructor.prototype keys spelled with escapes, and skips a byte order mark", () => {
    const v = parse(
      '{"\\u005f_proto__":{"polluted":"yes"},"a":{"_\\u005Fproto\\u005f_":{"polluted":"yes"}},' +
        '"\\u0063onstructor":{"prototype":{"polluted":"yes"}},"b":"caf\\u00e9"}',
    ) as Record<string, unknown>;
    expect(v).toStrictEqual({ a: {}, b: "café" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parse('\ufeff{"a":1}')).toStrictEqual({ a: 1 });
    expect(parse('\ufeff{"\\u005f_proto__":1,"a":1}')).toStrictEqual({ a: 1 });
  });

  it("keeps innocent keys that merely look related", () => {
    expect(parse('{"proto":1,"constructorName":"x","prototype":2}')).toStrictEqual({
      proto: 1,
      constructorName: "x",
      prototype: 2,
    });
  });
});

describe("readRawBody", () => {
  const LIMIT = 100;
  let server: Server;
  let url: URL;
  beforeAll(async () => {
    const s = await listen(async (req, res) => {
      try {
        const body = await readRawBody(req, LIMIT);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ bytes: body.length, text: body.toString("utf8") }));
      } catch (err) {
        const status = err instanceof PayloadTooLargeError ? 413 : 500;
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: (err as Error).constructor.name, message: (err as Error).message }));
      }
    });
    server = s.server;
    url = new URL(s.url);
  });
  afterAll(() => close(server));

  /** Sends `chunks`; with `length` a Content-Length header is set, otherwise the body goes chunked. */
  const send = (chunks: string[], options: { contentLength?: boolean } = {}) =>
    new Promise<{
      status: number;
      body: { bytes?: number; text?: string; error?: string; message?: string };
    }>((resolve, reject) => {
      const total = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: "POST",
          path: "/",
          headers: options.contentLength
            ? { "content-length": String(total) }
            : { "transfer-encoding": "chunked" },
        },
        (res) => {
          let data = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            data += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
        },
      );
      req.on("error", reject);
      for (const c of chunks) req.write(c);
      req.end();
    });

  it("returns a body at the limit, with Content-Length or chunked", async () => {
    const exact = "x".repeat(LIMIT);
    expect(await send([exact], { contentLength: true })).toStrictEqual({
      status: 200,
      body: { bytes: LIMIT, text: exact },
    });
    expect(await send(["x".repeat(40), "x".repeat(40), "x".repeat(20)])).toStrictEqual({
      status: 200,
      body: { bytes: LIMIT, text: exact },
    });
  });

  it("refuses a declared Content-Length over the limit", async () => {
    const res = await send(["x".repeat(LIMIT + 1)], { contentLength: true });
    expect(res).toStrictEqual({
      status: 413,
      body: { error: "PayloadTooLargeError", message: `Request body exceeds the limit of ${LIMIT} bytes` },
    });
  });

  it("refuses a chunked body once its bytes pass the limit", async () => {
    const res = await send(["x".repeat(60), "x".repeat(60), "x".repeat(60)]);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe("PayloadTooLargeError");
  });

  it("counts bytes, not characters", async () => {
    // 51 two-byte characters = 102 bytes.
    const res = await send(["é".repeat(51)]);
    expect(res.status).toBe(413);
    const ok = await send(["é".repeat(50)], { contentLength: true });
    expect(ok).toStrictEqual({ status: 200, body: { bytes: 100, text: "é".repeat(50) } });
  });

  it("the server still answers afterwards (the refused body was drained)", async () => {
    await send(["x".repeat(500)]);
    expect((await send(["ok"])).body).toStrictEqual({ bytes: 2, text: "ok" });
  });
});

describe("toFieldIssues", () => {
  const schema = z.strictObject({
    pixelId: z.string(),
    dateRange: z.strictObject({ start: z.string(), end: z.string() }),
    limit: z.number().int().optional(),
  });

  it("names a missing required field", () => {
    const r = schema.safeParse({ dateRange: { start: "a", end: "b" } });
    expect(r.success).toBe(false);
    expect(toFieldIssues(r.error!)).toStrictEqual([
      { message: "pixelId is required", key: "pixelId", path: ["pixelId"] },
    ]);
  });

  it("names a missing nested field by its dotted path", () => {
    const r = schema.safeParse({ pixelId: "p", dateRange: { start: "a" } });
    expect(toFieldIssues(r.error!)).toStrictEqual([
      { message: "dateRange.end is required", key: "dateRange.end", path: ["dateRange", "end"] },
    ]);
  });

  it("gives one entry per unknown key of a strict object", () => {
    const r = schema.safeParse({ pixelId: "p", dateRange: { start: "a", end: "b", tz: 1 }, foo: 1, bar: 2 });
    const issues = toFieldIssues(r.error!);
    expect(issues).toHaveLength(3);
    expect(issues).toEqual(
      expect.arrayContaining([
        { message: "foo is not allowed", key: "foo", path: ["foo"] },
        { message: "bar is not allowed", key: "bar", path: ["bar"] },
        { message: "dateRange.tz is not allowed", key: "dateRange.tz", path: ["dateRange", "tz"] },
      ]),
    );
  });

  it("a present but invalid value names the field and what is wrong", () => {
    const r = z
      .strictObject({ limit: z.number().int().min(1), code: z.string().length(3) })
      .safeParse({ limit: 0, code: "ab" });
    const issues = toFieldIssues(r.error!);
    expect(issues.map((i) => i.key).sort()).toStrictEqual(["code", "limit"]);
    for (const i of issues) {
      expect(i.message.startsWith(`${i.key}: `)).toBe(true);
      expect(i.message).not.toContain("required");
      expect(i.path).toStrictEqual([i.key]);
    }
  });

  it("a value of the wrong type is not reported as missing", () => {
    const r = schema.safeParse({ pixelId: 5, dateRange: { start: "a", end: null }, limit: 1.5 });
    const issues = toFieldIssues(r.error!);
    expect(issues.map((i) => i.key).sort()).toStrictEqual(["dateRange.end", "limit", "pixelId"]);
    for (const i of issues) {
      expect(i.message.startsWith(`${i.key}: `)).toBe(true);
      expect(i.message).not.toContain("required");
      expect(i.path).toStrictEqual(i.key.split("."));
    }
  });

  it("applies a prefix (array element of a body) to key and path", () => {
    const r = z.strictObject({ name: z.string() }).safeParse({});
    expect(toFieldIssues(r.error!, ["events", 3])).toStrictEqual([
      { message: "events.3.name is required", key: "events.3.name", path: ["events", "3", "name"] },
    ]);
  });

  it("a missing body as a whole is named 'body'", () => {
    const r = schema.safeParse(undefined);
    expect(toFieldIssues(r.error!)).toStrictEqual([{ message: "body is required", key: "", path: [] }]);
  });

  it("parseWith throws the standard 400 body", () => {
    let err: unknown;
    try {
      parseWith(schema, { dateRange: { start: "a", end: "b" } });
    } catch (e) {
      err = e;
    }
    expect((err as BadRequestError).status).toBe(400);
    expect((err as BadRequestError).body()).toStrictEqual({
      message: "Bad Request",
      errors: [{ message: "pixelId is required", key: "pixelId", path: ["pixelId"] }],
    });
  });
});

describe("errorHandler", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    const log = createLogger("silent");
    const a = express();
    a.use(requestId(log));
    a.get("/sync-throw", () => {
      throw new Error('relation "x" does not exist: SELECT secret FROM api_keys WHERE key_hash = $1');
    });
    a.get("/async-throw", async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      throw new Error("SELECT secret FROM api_keys");
    });
    a.get("/throw-string", () => {
      throw "SELECT secret";
    });
    a.get("/store-down", () => {
      throw new SqlUnavailableError(
        "connect ECONNREFUSED 10.0.0.5:5432 while running SELECT secret",
        "ECONNREFUSED",
      );
    });
    a.get("/bad", () => {
      throw new BadRequestError("nope");
    });
    a.use(errorHandler(log));
    const s = await listen(a);
    server = s.server;
    base = s.url;
  });
  afterAll(() => close(server));

  it.each(["/sync-throw", "/async-throw", "/throw-string"])(
    "%s → 500 naming the request id and nothing internal",
    async (path) => {
      const res = await fetch(base + path);
      const text = await res.text();
      const id = res.headers.get("x-request-id");
      expect(res.status).toBe(500);
      expect(id).toMatch(UUID);
      expect(JSON.parse(text)).toStrictEqual({ message: "Internal Server Error", requestId: id });
      expect(text).not.toContain("SELECT");
      expect(text).not.toContain("secret");
      expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(text).not.toContain("stack");
    },
  );

  it("a store outage → 503 with Retry-After, no internals", async () => {
    const res = await fetch(`${base}/store-down`);
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(text)).toStrictEqual({
      message: "Service Unavailable: the SQL store is not reachable",
      requestId: res.headers.get("x-request-id"),
    });
    expect(text).not.toContain("SELECT");
    expect(text).not.toContain("10.0.0.5");
  });

  it("an AppError keeps its status and body", async () => {
    const res = await fetch(`${base}/bad`);
    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({ message: "nope" });
  });
});
