/**
 * Bad input answers a clear 4xx naming the field or the problem, never a 500 (docs/errors.md, "Bad
 * input"): text the stores cannot hold, escapes that do not decode, query days outside what the
 * warehouse holds, bodies that are not UTF-8 or come compressed, control characters in event names,
 * and amounts a JSON number cannot carry to the cent. bad-input-sweep.test.ts feeds the same kinds of
 * values to every route; this file pins down the answers.
 */
import { deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "../../src/keys/scopes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type EventsEnvelope, eventCount, type Pixel, sendEvents } from "./ingest-helpers.js";

let app: TestApp;
let px: Pixel;
let auth: { key: string; pixelId: string };

interface Standard {
  message: string;
  errors?: { message: string; key: string; path: string[] }[];
}

beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey([...SCOPES]);
  auth = { key: px.key, pixelId: px.pixelId };
  await app.services.pixels.updateOrigins(px.pixelId, ["http://shop.test"], []);
});
afterAll(() => app?.close());

const json = { "content-type": "application/json" };
const product = (extra: Record<string, unknown>) => ({
  id: "p1",
  updatedAt: "2026-01-01T00:00:00Z",
  ...extra,
});

async function storedValue(eventId: string): Promise<string | undefined> {
  const rows = await app.stores.warehouse.query<{ v: string }>(
    "SELECT toString(value) AS v FROM events WHERE pixel_id = {pixel:String} AND event_id = {id:String}",
    { pixel: px.pixelId, id: eventId },
  );
  return rows[0]?.v;
}

describe("text the stores cannot hold (NUL, lone surrogates)", () => {
  it.each([
    [
      "a NUL in the record id",
      product({ id: "a\u0000b" }),
      "id",
      "must not contain NUL (U+0000 at character 2)",
    ],
    ["a NUL in a product title", product({ title: "Shoe\u0000" }), "title", "must not contain NUL"],
    ["a NUL in a raw key", product({ raw: { "k\u0000": 1 } }), "raw.k\u0000", "the key must not contain NUL"],
    ["a NUL in a raw value", product({ raw: { k: ["x", "\u0000"] } }), "raw.k.1", "must not contain NUL"],
    [
      "a lone surrogate in a variant title",
      product({ variants: [{ id: "v", title: "\ud800" }] }),
      "variants.0.title",
      "lone surrogate (U+D800 at character 1)",
    ],
  ])(
    "sync: %s rejects that record by index and field, and stores the others",
    async (_l, bad, field, message) => {
      const res = await app.call("POST", "/accounts/api/sync/products", {
        ...auth,
        body: { records: [product({ id: "good-1" }), bad] },
      });
      expect(res.status, res.text).toBe(200);
      const body = res.body as {
        accepted: number;
        rejected: { index: number; errors: { field: string; message: string }[] }[];
      };
      expect(body.rejected).toHaveLength(1);
      expect(body.rejected[0]!.index).toBe(1);
      expect(body.rejected[0]!.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
    },
  );

  it("collect: a NUL in pixelId is a 400 naming pixelId", async () => {
    const res = await app.call("POST", "/tr/api/collect", {
      body: { pixelId: "a\u0000", events: [{ name: "page_view" }] },
      headers: { origin: "http://shop.test" },
    });
    expect(res.status, res.text).toBe(400);
    expect((res.body as EventsEnvelope).error.details).toEqual([
      { index: -1, field: "pixelId", message: "pixelId: must not contain NUL (U+0000 at character 2)" },
    ]);
  });

  it.each([
    ["/accounts/api/products/search?q=%00", "q", "q: must not contain NUL (U+0000 at character 1)"],
    ["/accounts/api/products/search?q=%ED%A0%80", "q", "q: malformed percent-encoding"],
    [
      "/accounts/api/products/a%00b/c/cost",
      "productId",
      "productId: must not contain NUL (U+0000 at character 2)",
    ],
  ])("GET %s is a 400 naming %s", async (path, key, message) => {
    const res = await app.call("GET", path, auth);
    expect(res.status, res.text).toBe(400);
    const [issue] = (res.body as Standard).errors!;
    expect(issue!.key).toBe(key);
    expect(issue!.message).toContain(message);
  });

  it("a body field is named with its path; the schema's own message wins when it has one", async () => {
    const res = await app.call("POST", "/accounts/api/dashboard/views/from-preset", {
      ...auth,
      body: { name: "Sales", widgets: [{ measure: "orders.count", title: "x\u0000" }] },
    });
    expect(res.status, res.text).toBe(400);
    expect((res.body as Standard).errors).toEqual([
      {
        key: "widgets.0.title",
        path: ["widgets", "0", "title"],
        message: "widgets.0.title: must not contain NUL (U+0000 at character 2)",
      },
    ]);
  });
});

describe("percent-encoding that does not decode", () => {
  it.each([
    ["/accounts/api/products/%FF/c/cost", "productId", '"%FF"'],
    ["/accounts/api/dashboard/views/%E0%A4%A", "dashboardViewId", '"%E0%A4%A"'],
  ])("GET %s is a 400 naming the parameter", async (path, key, quoted) => {
    const res = await app.call("GET", path, auth);
    expect(res.status, res.text).toBe(400);
    expect((res.body as Standard).errors).toEqual([
      {
        key,
        path: [key],
        message: `${key}: malformed percent-encoding (${quoted} does not decode to UTF-8 text)`,
      },
    ]);
  });

  it("a path outside the route table is a 400 quoting the segment", async () => {
    const res = await app.call("GET", "/assets/%C0%AF");
    expect(res.status, res.text).toBe(400);
    expect((res.body as Standard).message).toBe(
      'Malformed percent-encoding in the path: "%C0%AF" does not decode to UTF-8 text',
    );
  });

  it("a query value is a 400 naming the parameter; well-formed escapes and + still decode", async () => {
    const bad = await app.call("GET", "/accounts/api/products/search?q=%FF", auth);
    expect(bad.status).toBe(400);
    expect((bad.body as Standard).errors![0]!.key).toBe("q");
    const good = await app.call("GET", "/accounts/api/products/search?q=caf%C3%A9+noir&limit=5", auth);
    expect(good.status, good.text).toBe(200);
  });
});

describe("query days the warehouse cannot hold", () => {
  const bodies: Record<string, Record<string, unknown>> = {
    "/db-mgmt/api/query": { measures: ["orders.count"], granularity: "none" },
    "/db-mgmt/api/query-attribution": {
      dimension: "attribution.channel",
      attributionModel: "last_click",
      attributionWindow: 7,
    },
    "/db-mgmt/api/query-cohort-analysis": { periods: 1 },
  };
  const cases = Object.keys(bodies).flatMap((path) => [
    [path, { start: "0001-01-01", end: "2026-01-01" }, "dateRange.start"] as const,
    [path, { start: "2026-01-01", end: "9999-12-30" }, "dateRange.end"] as const,
  ]);

  it.each(cases)("%s with %o is a 400 naming %s", async (path, dateRange, key) => {
    const res = await app.call("POST", path, {
      ...auth,
      body: { pixelId: px.pixelId, dateRange, ...bodies[path] },
    });
    expect(res.status, res.text).toBe(400);
    expect((res.body as Standard).errors).toEqual([
      { key, path: key.split("."), message: `${key}: must be a day from 1900-01-01 to 2299-12-31` },
    ]);
  });

  it.each(Object.keys(bodies))("%s answers 200 for the whole supported range", async (path) => {
    const res = await app.call("POST", path, {
      ...auth,
      body: { pixelId: px.pixelId, dateRange: { start: "1900-01-01", end: "2299-12-31" }, ...bodies[path] },
    });
    expect(res.status, res.text).toBe(200);
  });

  it("a datetime filter operand outside the range is a 400 naming its path", async () => {
    const res = await app.call("POST", "/db-mgmt/api/query", {
      ...auth,
      body: {
        pixelId: px.pixelId,
        dateRange: { start: "2026-01-01", end: "2026-01-31" },
        measures: ["orders.count"],
        filters: { field: "orders.created_at", op: "gte", value: "0001-01-01T00:00:00Z" },
      },
    });
    expect(res.status, res.text).toBe(400);
    expect((res.body as Standard).message).toMatch(/must be a day from 1900-01-01 to 2299-12-31/);
  });
});

describe("request bodies", () => {
  it("(a) invalid UTF-8 is a 400 naming the byte, and nothing is stored", async () => {
    const body = Buffer.concat([
      Buffer.from('{"events":[{"name":"page_view","eventId":"id-'),
      Buffer.from([0xe9]),
      Buffer.from('"}]}'),
    ]);
    const res = await app.call("POST", "/tr/api/events", { ...auth, rawBody: body, headers: json });
    expect(res.status, res.text).toBe(400);
    const env = res.body as EventsEnvelope;
    expect(env.error.code).toBe("INVALID_JSON");
    expect(env.message).toBe(
      "Malformed JSON: the body is not valid UTF-8 (invalid byte sequence at byte offset 45)",
    );
    expect(await eventCount(app, px.pixelId, "id-\ufffd")).toBe(0);
  });

  it("(c) a gzip or deflate body is read like the plain one", async () => {
    for (const [coding, compress] of [
      ["gzip", gzipSync],
      ["deflate", deflateSync],
    ] as const) {
      const eventId = `compressed-${coding}`;
      const res = await app.call("POST", "/tr/api/events", {
        ...auth,
        rawBody: compress(JSON.stringify({ events: [{ name: "page_view", eventId }] })),
        headers: { ...json, "content-encoding": coding },
      });
      expect(res.status, res.text).toBe(200);
      expect(await eventCount(app, px.pixelId, eventId)).toBe(1);
    }
  });

  it("(c) the body limit holds for the decompressed size: a small body inflating past it is a 413", async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(131_072);
    const res = await app.call("POST", "/tr/api/events", {
      ...auth,
      rawBody: bomb,
      headers: { ...json, "content-encoding": "gzip" },
    });
    expect(res.status).toBe(413);
    expect((res.body as EventsEnvelope).error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("(c) another content coding is a 415 naming it, with Accept-Encoding; a corrupt gzip body is a 400", async () => {
    const br = await app.call("POST", "/tr/api/events", {
      ...auth,
      rawBody: Buffer.from([0x0b, 0x02, 0x80]),
      headers: { ...json, "content-encoding": "br" },
    });
    expect(br.status).toBe(415);
    expect(br.headers.get("accept-encoding")).toBe("gzip, deflate");
    expect((br.body as EventsEnvelope).error).toEqual({
      code: "UNSUPPORTED_ENCODING",
      message: 'Content-Encoding "br" is not supported; send the body as gzip, deflate or uncompressed',
      details: [],
    });
    const standard = await app.call("PATCH", "/accounts/api/account", {
      ...auth,
      rawBody: "{}",
      headers: { ...json, "content-encoding": "zstd" },
    });
    expect(standard.status).toBe(415);
    expect((standard.body as Standard).message).toMatch(/^Content-Encoding "zstd" is not supported/);
    const corrupt = await app.call("POST", "/tr/api/events", {
      ...auth,
      rawBody: Buffer.from('{"events":[]}'),
      headers: { ...json, "content-encoding": "gzip" },
    });
    expect(corrupt.status).toBe(400);
    expect((corrupt.body as EventsEnvelope).message).toBe("Malformed gzip body: incorrect header check");
  });
});

describe("events", () => {
  it.each([
    ["a control character", "add\u0001to_cart", "U+0001 at character 4"],
    ["a line break", "purchase\n", "U+000A at character 9"],
    ["a tab", "page\tview", "U+0009 at character 5"],
    ["DEL", "x\u007f", "U+007F at character 2"],
    ["a C1 control", "\u0085x", "U+0085 at character 1"],
  ])("(b) a name with %s is a 400 naming name", async (_label, name, where) => {
    const res = await sendEvents(app, px, [{ name }]);
    expect(res.status, res.text).toBe(400);
    expect((res.body as EventsEnvelope).error.details).toEqual([
      { index: 0, field: "name", message: `name: must not contain control characters (${where})` },
    ]);
  });

  it("(b) names in any script, with spaces and emoji, are accepted", async () => {
    const res = await sendEvents(app, px, [{ name: "Kauf abgeschlossen 🛒 購入" }]);
    expect(res.status, res.text).toBe(200);
  });

  /** JSON text as sent: the literal must reach the server as written, not as the double it parses to here. */
  const postText = (text: string) =>
    app.call("POST", "/tr/api/events", { ...auth, rawBody: text, headers: json });

  it.each(["99999999999999.99", "-99999999999999.98", "70368744177664.02"])(
    "(d) value %s is a 400: a JSON number cannot carry it to the cent",
    async (literal) => {
      const res = await postText(
        `{"events":[{"name":"purchase","eventProperties":{"value":${literal},"currency":"USD"}}]}`,
      );
      expect(res.status, res.text).toBe(400);
      const [detail] = (res.body as EventsEnvelope).error.details;
      expect(detail!.field).toBe("eventProperties.value");
      expect(detail!.message).toMatch(
        /^eventProperties\.value: is beyond what a JSON number holds to the cent/,
      );
    },
  );

  it("(d) amounts are stored exactly as the decimals sent, not as their binary expansion", async () => {
    const cases: [string, number, string][] = [
      ["money-large", 70000000000000.01, "70000000000000.01"],
      ["money-whole", 99999999999999, "99999999999999"],
      ["money-noise", 0.1 + 0.2, "0.3"],
      ["money-cents", 19.99, "19.99"],
      ["money-scale", 12345678901.2345, "12345678901.2345"],
    ];
    const res = await sendEvents(
      app,
      px,
      cases.map(([eventId, value]) => ({
        name: "purchase",
        eventId,
        eventProperties: { value, currency: "USD" },
      })),
    );
    expect(res.status, res.text).toBe(200);
    for (const [eventId, , stored] of cases) expect(await storedValue(eventId)).toBe(stored);
  });

  it("(d) sync money follows the same rule: a record with such an amount is rejected, others stored exactly", async () => {
    const order = (id: string, total: string) =>
      `{"id":"${id}","createdAt":"2026-01-01T00:00:00Z","currency":"USD","totalPrice":${total},"financialStatus":"paid","updatedAt":"2026-01-01T00:00:00Z"}`;
    const res = await app.call("POST", "/accounts/api/sync/orders", {
      ...auth,
      rawBody: `{"records":[${order("exact", "70000000000000.01")},${order("lost", "99999999999999.99")}]}`,
      headers: json,
    });
    expect(res.status, res.text).toBe(200);
    const body = res.body as { accepted: number; rejected: { index: number; errors: { field: string }[] }[] };
    expect(body.accepted).toBe(1);
    expect(body.rejected.map((r) => [r.index, r.errors.map((e) => e.field)])).toEqual([[1, ["totalPrice"]]]);
    const rows = await app.stores.warehouse.query<{ v: string }>(
      "SELECT toString(total_price) AS v FROM orders FINAL WHERE pixel_id = {pixel:String} AND order_id = 'exact'",
      { pixel: px.pixelId },
    );
    expect(rows).toEqual([{ v: "70000000000000.01" }]);
  });

  it("(d) cost amounts follow the same rule", async () => {
    const override = await app.call("PUT", "/accounts/api/costs/global-product-override", {
      ...auth,
      rawBody: '{"type":"fixed","value":99999999999999.99}',
      headers: json,
    });
    expect(override.status, override.text).toBe(400);
    expect((override.body as Standard).errors!.map((e) => e.key)).toEqual(["value"]);
    const line = await app.call("POST", "/accounts/api/costs/lines", {
      ...auth,
      rawBody: '{"costType":"order","line":{"name":"Packaging","currency":"USD","amount":99999999999999.99}}',
      headers: json,
    });
    expect(line.status, line.text).toBe(400);
    expect((line.body as Standard).errors!.map((e) => e.key)).toEqual(["line.amount"]);
  });

  it("(d) an item price is held to the same rule", async () => {
    const res = await postText(
      '{"events":[{"name":"purchase","eventProperties":{"items":[{"id":"a","price":99999999999999.99,"quantity":1}]}}]}',
    );
    expect(res.status).toBe(400);
    expect((res.body as EventsEnvelope).error.details[0]!.field).toBe("eventProperties.items.0.price");
  });
});
