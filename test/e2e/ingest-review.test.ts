/**
 * Cases from the review of the ingestion issue: text and numbers the stores cannot hold are refused
 * with a 400 naming the field (never a 503 that repeats forever), a request's bad content never fails
 * another's, browser clocks that run fast, click pass-through keys, and the strict envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type EventsEnvelope, eventRows, type Pixel, sendEvents, sendOk } from "./ingest-helpers.js";

let app: TestApp;
let px: Pixel;
beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey(["events:write"]);
  await app.services.pixels.updateOrigins(px.pixelId, ["http://shop.test"], []);
});
afterAll(async () => {
  await app?.close();
});

describe("values the stores cannot hold are a 400 naming the field", () => {
  it.each([
    ["a NUL in identityId", { name: "e", identityId: "a\u0000b" }, "identityId"],
    ["a NUL in eventId", { name: "e", eventId: "nul\u00002" }, "eventId"],
    ["a lone surrogate", { name: "e", identityId: "\ud800" }, "identityId"],
    [
      "a lone surrogate in a pass-through key's value",
      { name: "e", extra: { deep: "x\udc00" } },
      "extra.deep",
    ],
    [
      "a quantity beyond Int32",
      { name: "e", eventProperties: { items: [{ quantity: 3_000_000_000 }] } },
      "eventProperties.items.0.quantity",
    ],
    [
      "a viewport width beyond UInt32",
      { name: "e", viewport: { viewportWidth: 5_000_000_000 } },
      "viewport.viewportWidth",
    ],
    ["a timestamp before 1970", { name: "e", timestamp: "0001-01-01T00:00:00+00:00" }, "timestamp"],
  ])("%s", async (_label, event, field) => {
    const res = await sendEvents(app, px, [event]);
    expect(res.status, res.text).toBe(400);
    const body = res.body as EventsEnvelope;
    expect(body.error.code).toBe("VALIDATION_ERROR");
    expect(body.error.details.map((d) => d.field)).toEqual([field]);
  });

  it("one request's unstorable text does not fail the good requests sent with it", async () => {
    const good = Array.from({ length: 20 }, (_, i) =>
      sendEvents(app, px, [{ name: "ok", eventId: `good-${i}` }]),
    );
    const bad = sendEvents(app, px, [{ name: "bad", identityId: "\u0000" }]);
    const results = await Promise.all([...good, bad]);
    expect(results.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results[20]!.status).toBe(400);
  });
});

describe("the envelope and pass-through keys", () => {
  it("refuses unknown top-level keys of the envelope, naming them", async () => {
    const res = await app.call("POST", "/tr/api/events", {
      key: px.key,
      pixelId: px.pixelId,
      body: { events: [{ name: "e" }], extra: 1 },
    });
    expect(res.status).toBe(400);
    expect((res.body as EventsEnvelope).error.details).toEqual([
      expect.objectContaining({ index: -1, field: "extra" }),
    ]);
  });

  it("keeps non-string values under click as properties, strings as click ids", async () => {
    await sendOk(app, px, [
      { name: "e", eventId: "click-extras", click: { foo: { bar: 1 }, ttclid: "tt1" } },
    ]);
    const [row] = await eventRows(app, px.pixelId, "click-extras");
    expect(JSON.parse(String(row!.properties))).toEqual({ click: { foo: { bar: 1 } } });
    expect(row!.click_ids).toEqual({ ttclid: "tt1" });
  });
});

describe("the browser collector", () => {
  it("takes the receive time for a browser event stamped more than 10 minutes ahead", async () => {
    const before = Date.now();
    const ahead = new Date(before + 60 * 60_000).toISOString();
    const res = await app.call("POST", "/tr/api/collect", {
      rawBody: JSON.stringify({
        pixelId: px.pixelId,
        events: [{ name: "page_view", eventId: "fast-clock", timestamp: ahead }],
      }),
      headers: { "content-type": "text/plain", origin: "http://shop.test" },
    });
    expect(res.status, res.text).toBe(200);
    const [row] = await eventRows(app, px.pixelId, "fast-clock");
    const stored = Date.parse(`${String(row!.event_time).replace(" ", "T")}Z`);
    expect(stored).toBeGreaterThanOrEqual(before - 1000);
    expect(stored).toBeLessThan(Date.parse(ahead));
  });
});
