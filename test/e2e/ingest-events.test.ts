/**
 * POST /tr/api/events end to end over the embedded stores (PGlite + chDB): acknowledgement and what
 * is stored, the byte-exact body limit, the 400 envelope, auth bodies, header-only ip/ua/locale, IP
 * truncation, user-agent parsing and URL enrichment (docs/ingestion.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import {
  eventCount,
  eventRows,
  expectEnvelope,
  type IngestOk,
  type Json,
  oneRow,
  type Pixel,
  postChunked,
  sendEvents,
  sendOk,
  sha256,
  UUID_RE,
  whTime,
} from "./ingest-helpers.js";

const LIMIT = 131_072;
const CHROME_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

let app: TestApp;
let px: Pixel;
beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey(["events:write"]);
});
afterAll(() => app?.close());

let seq = 0;
/** A unique event id per call, so tests sharing a pixel never collide. */
const eid = (label: string) => `${label}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** A JSON body of exactly `size` bytes (ASCII): one event padded with a long string field. */
function bodyOfSize(size: number, eventId: string): string {
  const skeleton = (pad: string) => JSON.stringify({ events: [{ name: "padded", eventId, pad }] });
  const base = skeleton("").length;
  const body = skeleton("x".repeat(size - base));
  expect(Buffer.byteLength(body)).toBe(size);
  return body;
}

const postRaw = (rawBody: string, pixel: Pixel = px) =>
  app.call("POST", "/tr/api/events", {
    key: pixel.key,
    pixelId: pixel.pixelId,
    rawBody,
    headers: { "content-type": "application/json" },
  });

/** Asserts a 400 in the events envelope and that nothing of the pixel was stored by it. */
async function expect400(
  send: () => Promise<Parameters<typeof expectEnvelope>[0]>,
  codes?: string | string[],
) {
  const before = await eventCount(app, px.pixelId);
  const res = await send();
  const body = expectEnvelope(res, 400, codes ?? "VALIDATION_ERROR");
  expect(await eventCount(app, px.pixelId)).toBe(before);
  return body;
}

const pairs = (details: { index: number; field: string }[]) =>
  details.map((d) => `${d.index}:${d.field}`).sort();

describe("POST /tr/api/events: success", () => {
  it("acknowledges 3 valid events and stores them at once, hashed, timed and with their extras", async () => {
    const happy = await app.pixelWithKey(["events:write"]);
    const eventTime = Date.now() - 3_600_000 - ((Date.now() - 3_600_000) % 1000) + 250;
    // The same instant written with a +02:00 offset.
    const local = new Date(eventTime + 2 * 3_600_000).toISOString().replace("Z", "+02:00");
    const ids = [eid("hp"), eid("hp"), eid("hp")];
    const before = Date.now();
    const res = await sendEvents(app, happy, [
      {
        name: "page_view",
        eventId: ids[0],
        identityId: "anon-happy",
        timestamp: local,
        userProperties: { emails: ["  Alice.Buyer@Example.COM "], tier: "gold" },
        page: { url: "https://shop.example/products/1" },
        coupon: "SPRING",
        nested: { a: 1, b: [true, null] },
        eventProperties: { value: 12.5, currency: "usd", category: "shoes" },
      },
      {
        name: "add_to_cart",
        eventId: ids[1],
        eventProperties: { items: [{ id: "sku-1", price: 10, quantity: 1 }] },
      },
      {
        name: "purchase",
        eventId: ids[2],
        identityId: "anon-happy",
        eventProperties: {
          orderId: "order-1",
          value: 99.99,
          currency: "EUR",
          items: [{ id: "sku-1", name: "Shoe", price: 49.995, quantity: 2 }],
        },
      },
    ]);
    const after = Date.now();
    expect(res.status, res.text).toBe(200);
    const body = res.body as IngestOk;
    expect(body).toStrictEqual({ requestId: expect.any(String), eventsIngested: 3, duplicatesSkipped: 0 });
    expect(body.requestId).toMatch(UUID_RE);
    expect(body.requestId).toBe(res.headers.get("x-request-id"));

    // Readable at once: the 200 came after the warehouse write.
    const rows = await eventRows(app, happy.pixelId);
    expect(rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
    const byId = new Map(rows.map((r) => [r.event_id as string, r]));
    const [pv, cart, purchase] = ids.map((id) => byId.get(id)!);

    expect(pv).toMatchObject({
      pixel_id: happy.pixelId,
      name: "page_view",
      event_id: ids[0],
      client_event_id: true,
      origin: "server",
      request_id: body.requestId,
      identity_id: "anon-happy",
      event_time: whTime(eventTime),
      email_hashes: [sha256("alice.buyer@example.com")],
      currency: "USD",
      value: 12.5,
      page_url: "https://shop.example/products/1",
      page_host: "shop.example",
      page_path: "/products/1",
    });
    // received_at is the receive time, distinct from the backdated event time.
    const receivedAt = Date.parse(`${(pv!.received_at as string).replace(" ", "T")}Z`);
    expect(receivedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(receivedAt).toBeLessThanOrEqual(after + 1000);
    // Without a timestamp the event time is the receive time.
    expect(cart!.event_time).toBe(cart!.received_at);

    for (const r of [pv!, purchase!]) {
      expect(typeof r.canonical_id).toBe("string");
      expect((r.canonical_id as string).length).toBeGreaterThan(0);
    }
    // Both name the same identity id, so they resolve to the same identity.
    expect(purchase!.canonical_id).toBe(pv!.canonical_id);
    expect(cart!.canonical_id).toBe("");
    expect(purchase).toMatchObject({ order_id: "order-1", value: 99.99, currency: "EUR" });
    expect(purchase!.items).toEqual([{ id: "sku-1", name: "Shoe", price: 49.995, quantity: 2 }]);

    // Extras are kept where they were sent; known fields are not repeated in properties.
    const props = JSON.parse(pv!.properties as string) as Json;
    expect(props).toStrictEqual({
      coupon: "SPRING",
      nested: { a: 1, b: [true, null] },
      userProperties: { tier: "gold" },
      eventProperties: { category: "shoes" },
    });

    // The raw address appears in no column, in any spelling.
    for (const r of rows) {
      const text = JSON.stringify(r).toLowerCase();
      expect(text).not.toContain("alice.buyer");
      expect(text).not.toContain("example.com");
    }
    // The identity worker files the aliases after the write.
    expect((await app.services.settle()).messages).toBe(0);
    const links = await app.stores.warehouse.query<Json>(
      "SELECT * FROM identity_links WHERE pixel_id = {pixel:String}",
      { pixel: happy.pixelId },
    );
    expect(JSON.stringify(links).toLowerCase()).not.toContain("alice.buyer");
    const aliases = await app.stores.identity.aliases(happy.pixelId);
    expect(JSON.stringify(aliases).toLowerCase()).not.toContain("alice.buyer");
    expect(aliases).toContainEqual(
      expect.objectContaining({ type: "email", value: sha256("alice.buyer@example.com") }),
    );
  });

  it("stores items with their typed fields", async () => {
    const id = eid("items");
    await sendOk(app, px, [
      {
        name: "purchase",
        eventId: id,
        eventProperties: { items: [{ id: 42, name: "Hat", price: 5.5, quantity: 3 }, { id: "b" }] },
      },
    ]);
    const row = await oneRow(app, px.pixelId, id);
    expect(row.items).toEqual([
      { id: "42", name: "Hat", price: 5.5, quantity: 3 },
      { id: "b", name: "", price: 0, quantity: 0 },
    ]);
  });
});

describe("POST /tr/api/events: body limit 131072 bytes", () => {
  it("refuses 131073 bytes with 413 in the events envelope and stores nothing", async () => {
    const id = eid("big");
    const res = await postRaw(bodyOfSize(LIMIT + 1, id));
    const body = expectEnvelope(res, 413, "PAYLOAD_TOO_LARGE");
    expect(body.error.details).toEqual([]);
    expect(body.error.message).toBe(body.message);
    expect(await eventCount(app, px.pixelId, id)).toBe(0);
  });

  it("accepts exactly 131072 bytes of valid JSON and keeps the long string whole", async () => {
    const id = eid("edge");
    const raw = bodyOfSize(LIMIT, id);
    const res = await postRaw(raw);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 0 });
    const row = await oneRow(app, px.pixelId, id);
    const pad = (JSON.parse(row.properties as string) as { pad: string }).pad;
    expect(pad.length).toBe(
      LIMIT - JSON.stringify({ events: [{ name: "padded", eventId: id, pad: "" }] }).length,
    );
  });

  it("refuses a chunked body (no Content-Length) that grows past the limit, storing nothing", async () => {
    const id = eid("chunked-big");
    const raw = Buffer.from(bodyOfSize(LIMIT + 1, id));
    const chunks: Buffer[] = [];
    for (let i = 0; i < raw.length; i += 16_384) chunks.push(raw.subarray(i, i + 16_384));
    const res = await postChunked(
      `${app.url}/tr/api/events`,
      { "x-api-key": px.key, "x-pixel-id": px.pixelId, "content-type": "application/json" },
      chunks,
    );
    expect(res.status, res.text).toBe(413);
    const body = res.body as { requestId: string; error: { code: string; details: unknown[] } };
    expect(body.error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(body.error.details).toEqual([]);
    expect(body.requestId).toMatch(UUID_RE);
    expect(await eventCount(app, px.pixelId, id)).toBe(0);
  });

  it("accepts a chunked body of exactly the limit", async () => {
    const id = eid("chunked-edge");
    const raw = Buffer.from(bodyOfSize(LIMIT, id));
    const chunks: Buffer[] = [];
    for (let i = 0; i < raw.length; i += 10_000) chunks.push(raw.subarray(i, i + 10_000));
    const res = await postChunked(
      `${app.url}/tr/api/events`,
      { "x-api-key": px.key, "x-pixel-id": px.pixelId, "content-type": "application/json" },
      chunks,
    );
    expect(res.status, res.text).toBe(200);
    expect(await eventCount(app, px.pixelId, id)).toBe(1);
  });
});

describe("POST /tr/api/events: 400 envelope", () => {
  it("malformed JSON is a 400 envelope, never 500", async () => {
    for (const raw of ['{"events":[{"name":"x"}', "{events:[]}", '{"events":[{"name":"x",}]}', "\u0000"]) {
      const body = await expect400(() => postRaw(raw), ["INVALID_JSON", "VALIDATION_ERROR"]);
      expect(body.error.details).toBeInstanceOf(Array);
    }
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"str"'],
    ["null", "null"],
    ["a number", "42"],
    ["an object without events", "{}"],
    ["events not an array", '{"events":{"name":"x"}}'],
    ["no events", '{"events":[]}'],
  ])("a body that is %s is a 400 envelope", async (_label, raw) => {
    await expect400(() => postRaw(raw));
  });

  it("101 events is a 400 envelope; 100 are accepted", async () => {
    const many = (n: number) => Array.from({ length: n }, () => ({ name: "bulk" }));
    await expect400(() => sendEvents(app, px, many(101)));
    const ok = await sendOk(app, px, many(100));
    expect(ok.eventsIngested).toBe(100);
  });

  it("JSON nested 65 levels deep inside an event is a 400 envelope, never 500", async () => {
    const deep = `${"[".repeat(65)}${"]".repeat(65)}`;
    await expect400(
      () => postRaw(`{"events":[{"name":"deep","d":${deep}}]}`),
      ["INVALID_JSON", "VALIDATION_ERROR"],
    );
    const deepObj = `${'{"a":'.repeat(65)}1${"}".repeat(65)}`;
    await expect400(
      () => postRaw(`{"events":[{"name":"deep","d":${deepObj}}]}`),
      ["INVALID_JSON", "VALIDATION_ERROR"],
    );
  });

  it("64 levels of nesting in total are accepted", async () => {
    // body object (1) + events array (2) + event object (3) + 61 more = 64.
    const id = eid("deep-ok");
    const d = `${"[".repeat(61)}${"]".repeat(61)}`;
    const res = await postRaw(`{"events":[{"name":"deep","eventId":"${id}","d":${d}}]}`);
    expect(res.status, res.text).toBe(200);
    expect(await eventCount(app, px.pixelId, id)).toBe(1);
  });

  it("an event without name, or with an empty or non-string name, is reported at its field", async () => {
    for (const event of [{}, { name: "" }, { name: 7 }, { name: null }, { eventId: "x" }]) {
      const body = await expect400(() => sendEvents(app, px, [event]));
      expect(pairs(body.error.details)).toEqual(["0:name"]);
    }
  });

  it("a non-object event is reported at its index", async () => {
    const body = await expect400(() => sendEvents(app, px, [{ name: "ok" }, "not-an-event", 3, null]));
    expect(body.error.details.map((d) => d.index).sort()).toEqual([1, 2, 3]);
  });

  it("a string item price names the dotted path eventProperties.items.3.price", async () => {
    const items = [{ price: 1 }, { price: 2 }, { price: 3 }, { price: "9.99" }];
    const body = await expect400(() =>
      sendEvents(app, px, [{ name: "purchase", eventProperties: { items } }]),
    );
    expect(body.error.details).toHaveLength(1);
    expect(body.error.details[0]).toMatchObject({ index: 0, field: "eventProperties.items.3.price" });
  });

  it("mixed valid and invalid events: 400 and nothing of the request is stored", async () => {
    const ids = [eid("mixed"), eid("mixed"), eid("mixed")];
    const before = await eventCount(app, px.pixelId);
    const res = await sendEvents(app, px, [
      { name: "page_view", eventId: ids[0] },
      { name: "page_view", eventId: ids[1], viewport: { viewportWidth: "wide" } },
      { name: "page_view", eventId: ids[2] },
    ]);
    const body = expectEnvelope(res, 400, "VALIDATION_ERROR");
    expect(pairs(body.error.details)).toEqual(["1:viewport.viewportWidth"]);
    expect(await eventCount(app, px.pixelId)).toBe(before);
    // Nothing was reserved either: the valid ids are storable afterwards.
    const ok = await sendOk(app, px, [
      { name: "page_view", eventId: ids[0] },
      { name: "page_view", eventId: ids[2] },
    ]);
    expect(ok).toMatchObject({ eventsIngested: 2, duplicatesSkipped: 0 });
  });

  it("several invalid events give one detail per problem, each with its event's index", async () => {
    const body = await expect400(() =>
      sendEvents(app, px, [
        { name: "ok" },
        { eventId: "no-name" },
        { name: "ok" },
        { name: "", viewport: { viewportWidth: 1.5 } },
        { name: "x", eventProperties: { items: [{ price: "a" }], currency: 5 } },
      ]),
    );
    expect(pairs(body.error.details)).toEqual(
      [
        "1:name",
        "3:name",
        "3:viewport.viewportWidth",
        "4:eventProperties.items.0.price",
        "4:eventProperties.currency",
      ].sort(),
    );
  });

  it.each([
    [
      "userProperties.emails",
      { userProperties: { emails: Array.from({ length: 101 }, (_, i) => `u${i}@x.io`) } },
    ],
    [
      "userProperties.userIds",
      { userProperties: { userIds: Array.from({ length: 101 }, (_, i) => `u${i}`) } },
    ],
    [
      "userProperties.storeYIds",
      { userProperties: { storeYIds: Array.from({ length: 101 }, (_, i) => `s${i}`) } },
    ],
    ["userProperties.addresses", { userProperties: { addresses: Array.from({ length: 101 }, () => ({})) } }],
    [
      "eventProperties.items",
      { eventProperties: { items: Array.from({ length: 101 }, () => ({ price: 1 })) } },
    ],
  ])("an array of 101 entries in %s is a 400", async (field, extra) => {
    const body = await expect400(() => sendEvents(app, px, [{ name: "big", ...extra }]));
    expect(body.error.details.map((d) => d.field)).toContain(field);
  });

  it("arrays of exactly 100 entries are accepted", async () => {
    const id = eid("arr100");
    await sendOk(app, px, [
      {
        name: "big",
        eventId: id,
        userProperties: { emails: Array.from({ length: 100 }, (_, i) => `u${i}@x.io`) },
        eventProperties: { items: Array.from({ length: 100 }, () => ({ price: 1, quantity: 1 })) },
      },
    ]);
    const row = await oneRow(app, px.pixelId, id);
    expect(row.email_hashes as string[]).toHaveLength(100);
    expect(row.items as unknown[]).toHaveLength(100);
  });

  it("timestamp: 11 minutes ahead is a 400, 9 minutes ahead and 2 years ago are stored at that time", async () => {
    const body = await expect400(() =>
      sendEvents(app, px, [{ name: "future", timestamp: new Date(Date.now() + 11 * 60_000).toISOString() }]),
    );
    expect(pairs(body.error.details)).toEqual(["0:timestamp"]);

    const soon = Date.now() + 9 * 60_000;
    const past = new Date(Date.UTC(new Date().getUTCFullYear() - 2, 2, 14, 9, 26, 53, 589)).getTime();
    const [soonId, pastId] = [eid("soon"), eid("backfill")];
    await sendOk(app, px, [
      { name: "soon", eventId: soonId, timestamp: new Date(soon).toISOString() },
      { name: "backfill", eventId: pastId, timestamp: new Date(past).toISOString().replace("Z", "+00:00") },
    ]);
    expect((await oneRow(app, px.pixelId, soonId)).event_time).toBe(whTime(soon));
    const backfill = await oneRow(app, px.pixelId, pastId);
    expect(backfill.event_time).toBe(whTime(past));
    expect(backfill.received_at).not.toBe(backfill.event_time);
  });

  it.each([
    ["without an offset", "2025-01-01T10:00:00"],
    ["a date only", "2025-01-01"],
    ["not a date", "yesterday"],
    ["a number", 1_700_000_000_000],
  ])("timestamp %s is a 400", async (_label, timestamp) => {
    const body = await expect400(() => sendEvents(app, px, [{ name: "t", timestamp }]));
    expect(pairs(body.error.details)).toEqual(["0:timestamp"]);
  });

  it.each([
    ["viewport.viewportWidth", { viewport: { viewportWidth: 1024.5 } }],
    ["viewport.viewportHeight", { viewport: { viewportHeight: "768" } }],
    ["viewport.pageHeight", { viewport: { pageHeight: -1 } }],
    ["eventProperties.items.0.quantity", { eventProperties: { items: [{ quantity: 1.5 }] } }],
    ["eventProperties.value", { eventProperties: { value: "12" } }],
    ["eventProperties.orderId", { eventProperties: { orderId: { id: 1 } } }],
    ["userProperties.emails.0", { userProperties: { emails: [5] } }],
    ["page.url", { page: { url: 5 } }],
    ["ipAddress", { ipAddress: 5 }],
    ["identityId", { identityId: 5 }],
    ["eventId", { eventId: 123 }],
    ["userAgent", { userAgent: ["Mozilla"] }],
    ["locale", { locale: 5 }],
    ["click.fbc", { click: { fbc: 5 } }],
    ["viewport.devicePixelRatio", { viewport: { devicePixelRatio: "2" } }],
    ["userProperties", { userProperties: "someone@example.com" }],
    ["eventProperties.items", { eventProperties: { items: { price: 1 } } }],
  ])("a mistyped %s is a 400 at that field", async (field, extra) => {
    const body = await expect400(() => sendEvents(app, px, [{ name: "typed", ...extra }]));
    expect(pairs(body.error.details)).toEqual([`0:${field}`]);
  });

  it.each([
    ["eventProperties.value", '{"value":1e400}'],
    ["eventProperties.items.0.price", '{"items":[{"price":-1e400}]}'],
  ])("a number that parses to Infinity in %s is a 400", async (field, ep) => {
    const body = await expect400(() => postRaw(`{"events":[{"name":"inf","eventProperties":${ep}}]}`));
    expect(pairs(body.error.details)).toEqual([`0:${field}`]);
  });

  it("a number that parses to Infinity in viewport.devicePixelRatio is a 400", async () => {
    const body = await expect400(() =>
      postRaw('{"events":[{"name":"inf","viewport":{"devicePixelRatio":1e400}}]}'),
    );
    expect(pairs(body.error.details)).toEqual(["0:viewport.devicePixelRatio"]);
  });

  it("a number that parses to Infinity in a pass-through key is a 400 (numbers must be finite)", async () => {
    // Accepted, it would silently become null in properties: the value sent would not be kept.
    const id = eid("inf-extra");
    const res = await postRaw(`{"events":[{"name":"inf","eventId":"${id}","custom":1e400}]}`);
    const stored = await eventRows(app, px.pixelId, id);
    expect(
      { status: res.status, properties: stored.map((r) => r.properties) },
      "an infinite pass-through number must be refused, not stored as null",
    ).toEqual({ status: 400, properties: [] });
  });
});

describe("POST /tr/api/events: auth uses the standard body", () => {
  it("no key is 401 {message: Unauthorized}", async () => {
    const res = await app.call("POST", "/tr/api/events", {
      pixelId: px.pixelId,
      body: { events: [{ name: "x" }] },
    });
    expect(res.status).toBe(401);
    expect(res.body).toStrictEqual({ message: "Unauthorized" });
  });

  it("no pixel id is 401 {message: Unauthorized}", async () => {
    const res = await app.call("POST", "/tr/api/events", { key: px.key, body: { events: [{ name: "x" }] } });
    expect(res.status).toBe(401);
    expect(res.body).toStrictEqual({ message: "Unauthorized" });
  });

  it("a key without events:write is 403 naming the scope, and stores nothing", async () => {
    const reader = await app.pixelWithKey(["analytics:read"]);
    const res = await app.call("POST", "/tr/api/events", {
      key: reader.key,
      pixelId: reader.pixelId,
      body: { events: [{ name: "x" }] },
    });
    expect(res.status).toBe(403);
    expect(res.body).toStrictEqual({ message: "API key does not have the events:write scope" });
    expect(await eventCount(app, reader.pixelId)).toBe(0);
  });
});

describe("POST /tr/api/events: body pixelId", () => {
  it("a body pixelId other than x-pixel-id is 403 and stores nothing (docs/authentication.md)", async () => {
    const other = await app.pixelWithKey(["events:write"]);
    const id = eid("pixel-mismatch");
    const res = await app.call("POST", "/tr/api/events", {
      key: px.key,
      pixelId: px.pixelId,
      body: { pixelId: other.pixelId, events: [{ name: "x", eventId: id }] },
    });
    expect(res.status, res.text).toBe(403);
    expect(await eventCount(app, px.pixelId, id)).toBe(0);
    expect(await eventCount(app, other.pixelId, id)).toBe(0);
  });

  it("a body pixelId equal to x-pixel-id is accepted", async () => {
    const id = eid("pixel-match");
    const res = await app.call("POST", "/tr/api/events", {
      key: px.key,
      pixelId: px.pixelId,
      body: { pixelId: px.pixelId, events: [{ name: "x", eventId: id }] },
    });
    expect(res.status, res.text).toBe(200);
    expect(await eventCount(app, px.pixelId, id)).toBe(1);
  });
});

describe("POST /tr/api/events: ip, user agent and locale come only from the body", () => {
  it("headers alone store them empty", async () => {
    const id = eid("hdr");
    const res = await sendEvents(app, px, [{ name: "page_view", eventId: id }], {
      "User-Agent": CHROME_WINDOWS,
      "X-Forwarded-For": "198.51.100.23, 10.0.0.1",
      "X-Real-IP": "198.51.100.24",
      "Accept-Language": "de-DE,de;q=0.9",
    });
    expect(res.status, res.text).toBe(200);
    const row = await oneRow(app, px.pixelId, id);
    expect(row).toMatchObject({
      ip: "",
      user_agent: "",
      locale: "",
      ua_browser: "",
      ua_os: "",
      ua_device: "",
    });
  });

  it("body fields are stored: IPv4 truncated to /24, IPv6 to /48, user agent kept and parsed", async () => {
    const [v4, v6] = [eid("ip4"), eid("ip6")];
    await sendOk(app, px, [
      {
        name: "page_view",
        eventId: v4,
        ipAddress: "203.0.113.77",
        userAgent: CHROME_WINDOWS,
        locale: "en-GB",
      },
      { name: "page_view", eventId: v6, ipAddress: "2001:db8:85a3:1234::1" },
    ]);
    const a = await oneRow(app, px.pixelId, v4);
    expect(a).toMatchObject({
      ip: "203.0.113.0",
      user_agent: CHROME_WINDOWS,
      locale: "en-GB",
      ua_browser: "Chrome",
      ua_os: "Windows",
      ua_device: "desktop",
    });
    expect(a.ua_browser_version).toMatch(/^124/);
    expect(JSON.stringify(a)).not.toContain("203.0.113.77");
    const b = await oneRow(app, px.pixelId, v6);
    expect(b.ip).toBe("2001:db8:85a3::");
    expect(JSON.stringify(b)).not.toContain("1234");
  });

  it("a mobile user agent is classified as mobile", async () => {
    const id = eid("mobile");
    const ua =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
    await sendOk(app, px, [{ name: "page_view", eventId: id, userAgent: ua }]);
    expect(await oneRow(app, px.pixelId, id)).toMatchObject({ ua_os: "iOS", ua_device: "mobile" });
  });
});

describe("POST /tr/api/events: enrichment from page.url", () => {
  const touchpoints = (pixelId: string, eventId: string) =>
    app.stores.warehouse.query<Json>(
      "SELECT * FROM touchpoints WHERE pixel_id = {pixel:String} AND event_id = {id:String}",
      { pixel: pixelId, id: eventId },
    );

  it("UTM fields, click ids, ad ids, derived fbc, channel and a touchpoint", async () => {
    const id = eid("touch");
    const at = Date.now() - 60_000;
    const url =
      "https://www.shop.example/landing?utm_source=facebook&utm_medium=paid_social&utm_campaign=spring_sale" +
      "&utm_term=shoes&utm_content=video_a&fbclid=IwAR0abc&gclid=Cj0KCQ&campaign_id=c-111&adset_id=as-222&ad_id=ad-333";
    await sendOk(app, px, [
      {
        name: "page_view",
        eventId: id,
        identityId: "touch-anon",
        timestamp: new Date(at).toISOString(),
        page: { url },
      },
    ]);
    const row = await oneRow(app, px.pixelId, id);
    expect(row).toMatchObject({
      page_host: "shop.example",
      page_path: "/landing",
      utm_source: "facebook",
      utm_medium: "paid_social",
      utm_campaign: "spring_sale",
      utm_term: "shoes",
      utm_content: "video_a",
      click_ids: { fbclid: "IwAR0abc", gclid: "Cj0KCQ" },
      campaign_id: "c-111",
      adset_id: "as-222",
      ad_id: "ad-333",
      fbc: `fb.1.${at}.IwAR0abc`,
      channel: "paid_social",
      source: "facebook",
      is_touch: true,
    });
    const tps = await touchpoints(px.pixelId, id);
    expect(tps).toHaveLength(1);
    expect(tps[0]).toMatchObject({
      canonical_id: row.canonical_id,
      identity_id: "touch-anon",
      touch_time: whTime(at),
      channel: "paid_social",
      source: "facebook",
      medium: "paid_social",
      campaign: "spring_sale",
      campaign_id: "c-111",
      adset_id: "as-222",
      ad_id: "ad-333",
    });
    expect(["fbclid", "gclid"]).toContain(tps[0]!.click_id_type);
  });

  it("a click.fbc sent by the client is kept, not derived; click.* ids join the map", async () => {
    const id = eid("fbc");
    await sendOk(app, px, [
      {
        name: "page_view",
        eventId: id,
        page: { url: "https://shop.example/?fbclid=FROMURL" },
        click: { fbc: "fb.1.1700000000000.CLIENT", fbp: "fb.1.1700000000000.123", gclid: "G-CLICK" },
      },
    ]);
    const row = await oneRow(app, px.pixelId, id);
    expect(row).toMatchObject({
      fbc: "fb.1.1700000000000.CLIENT",
      fbp: "fb.1.1700000000000.123",
      click_ids: { fbclid: "FROMURL", gclid: "G-CLICK" },
      channel: "paid_social",
      is_touch: true,
    });
  });

  it("gclid alone is paid_search/google; utm_id names the campaign", async () => {
    const id = eid("gclid");
    await sendOk(app, px, [
      { name: "page_view", eventId: id, page: { url: "https://shop.example/?gclid=abc&utm_id=cmp-9" } },
    ]);
    expect(await oneRow(app, px.pixelId, id)).toMatchObject({
      channel: "paid_search",
      source: "google",
      campaign_id: "cmp-9",
      utm_id: "cmp-9",
      fbc: "",
      is_touch: true,
    });
  });

  it("a search-engine referrer is organic_search", async () => {
    const id = eid("seo");
    await sendOk(app, px, [
      {
        name: "page_view",
        eventId: id,
        page: { url: "https://shop.example/p", referrer: "https://www.google.de/" },
      },
    ]);
    expect(await oneRow(app, px.pixelId, id)).toMatchObject({
      channel: "organic_search",
      source: "google",
      referrer_host: "google.de",
      is_touch: true,
    });
    expect(await touchpoints(px.pixelId, id)).toHaveLength(1);
  });

  it("a page view without signals or referrer is direct, not a touch, and adds no touchpoint", async () => {
    const id = eid("direct");
    await sendOk(app, px, [{ name: "page_view", eventId: id, page: { url: "https://shop.example/" } }]);
    const row = await oneRow(app, px.pixelId, id);
    expect(row).toMatchObject({
      channel: "direct",
      source: "",
      is_touch: false,
      click_ids: {},
      fbc: "",
      utm_source: "",
      campaign_id: "",
    });
    expect(await touchpoints(px.pixelId, id)).toHaveLength(0);
  });
});
