/**
 * The browser collector end to end (docs/ingestion.md, "The browser pixel"): POST /tr/api/collect (CORS, pixel id + allowed origins,
 * sendBeacon-style text/plain), GET /tr/pixel.js, one pipeline with the server API (a browser + server
 * pair with one eventId counts once), and — when Chromium and playwright-core are installed — the
 * real pixel in a headless browser.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
  poll,
  sendOk,
  UUID_RE,
} from "./ingest-helpers.js";

const FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
const CHROMIUM = "/usr/bin/chromium";

interface BrowserLike {
  newPage(): Promise<{
    goto(url: string): Promise<unknown>;
    waitForFunction(fn: string): Promise<unknown>;
    click(selector: string): Promise<void>;
  }>;
  close(): Promise<void>;
}
interface ChromiumLike {
  launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<BrowserLike>;
}

/** playwright-core when installed (never installed by the tests themselves). */
async function loadChromium(): Promise<ChromiumLike | null> {
  try {
    const name = "playwright-core";
    const mod = (await import(name)) as { chromium?: ChromiumLike };
    return mod.chromium ?? null;
  } catch {
    return null;
  }
}

const chromium = await loadChromium();
const browserSkipReason = !existsSync(CHROMIUM)
  ? `${CHROMIUM} does not exist`
  : !chromium
    ? "the package playwright-core is not installed"
    : "";
if (browserSkipReason) console.warn(`real-browser pixel test skipped: ${browserSkipReason}`);

/** The storefront page: serves the HTML whose origin the pixel allows. */
let page: Server;
let pageOrigin: string;
let app: TestApp;
let px: Pixel;

beforeAll(async () => {
  app = await startTestApp();
  page = createServer((req, res) => {
    if (req.url !== "/") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(storefront(app.url, px.pixelId));
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  px = await app.pixelWithKey(["events:write"]);
  expect(await app.services.pixels.updateOrigins(px.pixelId, [pageOrigin], [])).toEqual([pageOrigin]);
});
afterAll(async () => {
  page?.closeAllConnections();
  await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
  await app?.close();
});

function storefront(appUrl: string, pixelId: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<script>window.pixelhouse = window.pixelhouse || function () { (window.pixelhouse.q = window.pixelhouse.q || []).push(arguments); };</script>
<script async src="${appUrl}/tr/pixel.js" data-pixel-id="${pixelId}"></script>
</head><body>
<button id="buy" onclick="pixelhouse('track', 'purchase', { value: 10, currency: 'USD' }, { eventId: 'browser-1' })">Buy</button>
</body></html>`;
}

let seq = 0;
const eid = (label: string) => `${label}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** POST /tr/api/collect as a browser's sendBeacon would: text/plain JSON, Origin and User-Agent headers. */
function collect(
  body: unknown,
  options: { origin?: string | null; userAgent?: string; headers?: Record<string, string> } = {},
) {
  const origin = options.origin === undefined ? pageOrigin : options.origin;
  return app.call("POST", "/tr/api/collect", {
    rawBody: JSON.stringify(body),
    headers: {
      "content-type": "text/plain;charset=UTF-8",
      "user-agent": options.userAgent ?? FIREFOX_LINUX,
      ...(origin === null ? {} : { origin }),
      ...options.headers,
    },
  });
}

describe("POST /tr/api/collect", () => {
  it("an allowed origin stores a browser event with the connection's IP and user agent", async () => {
    const id = eid("collect");
    const res = await collect(
      {
        pixelId: px.pixelId,
        events: [
          {
            name: "page_view",
            eventId: id,
            identityId: "browser-anon",
            page: { url: `${pageOrigin}/products/1?utm_source=newsletter&utm_medium=email` },
            locale: "fr-FR",
            viewport: { viewportWidth: 1280, viewportHeight: 720, pageHeight: 3000, devicePixelRatio: 2 },
            // A browser cannot vouch for these: the connection's values are used instead.
            ipAddress: "203.0.113.77",
            userAgent: "spoofed-agent",
          },
        ],
      },
      { headers: { "x-forwarded-for": "198.51.100.7" } },
    );
    expect(res.status, res.text).toBe(200);
    const body = res.body as IngestOk;
    expect(body).toStrictEqual({ requestId: expect.any(String), eventsIngested: 1, duplicatesSkipped: 0 });
    expect(body.requestId).toMatch(UUID_RE);
    expect(body.requestId).toBe(res.headers.get("x-request-id"));
    expect(res.headers.get("access-control-allow-origin")).toBe(pageOrigin);
    expect(res.headers.get("vary") ?? "").toMatch(/origin/i);

    const row = await oneRow(app, px.pixelId, id);
    expect(row).toMatchObject({
      origin: "browser",
      ip: "127.0.0.0",
      user_agent: FIREFOX_LINUX,
      ua_browser: "Firefox",
      ua_os: "Linux",
      ua_device: "desktop",
      locale: "fr-FR",
      identity_id: "browser-anon",
      viewport_width: 1280,
      viewport_height: 720,
      page_height: 3000,
      device_pixel_ratio: 2,
      channel: "email",
      is_touch: true,
    });
    expect((row.canonical_id as string).length).toBeGreaterThan(0);
    const text = JSON.stringify(row);
    expect(text).not.toContain("203.0.113");
    expect(text).not.toContain("198.51.100");
    expect(text).not.toContain("spoofed-agent");
  });

  it("accepts application/json as well", async () => {
    const id = eid("json");
    const res = await app.call("POST", "/tr/api/collect", {
      body: { pixelId: px.pixelId, events: [{ name: "page_view", eventId: id }] },
      headers: { origin: pageOrigin },
    });
    expect(res.status, res.text).toBe(200);
    expect(await eventCount(app, px.pixelId, id)).toBe(1);
  });

  it.each([
    ["a disallowed origin", "https://evil.example"],
    ["another port of the allowed host", "http://127.0.0.1:1"],
    ["no origin", null],
    ["the literal null origin", "null"],
  ])("%s is refused with 403 and stores nothing", async (_label, origin) => {
    const id = eid("refused");
    const res = await collect(
      { pixelId: px.pixelId, events: [{ name: "page_view", eventId: id }] },
      { origin },
    );
    expect(res.status, res.text).toBe(403);
    // No CORS grant on a refusal.
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await eventCount(app, px.pixelId, id)).toBe(0);
  });

  it("an unknown pixel is refused with 403", async () => {
    const res = await collect({ pixelId: "px_does_not_exist", events: [{ name: "page_view" }] });
    expect(res.status, res.text).toBe(403);
  });

  it("an inactive pixel is refused with 403", async () => {
    const off = await app.pixelWithKey(["events:write"]);
    await app.services.pixels.updateOrigins(off.pixelId, [pageOrigin], []);
    await app.services.pixels.setStatus(off.pixelId, "inactive");
    const res = await collect({ pixelId: off.pixelId, events: [{ name: "page_view" }] });
    expect(res.status, res.text).toBe(403);
    expect(await eventCount(app, off.pixelId)).toBe(0);
  });

  it("another pixel's allowed origin does not open this pixel", async () => {
    const other = await app.pixelWithKey(["events:write"]);
    await app.services.pixels.updateOrigins(other.pixelId, ["https://other-shop.example"], []);
    const res = await collect(
      { pixelId: px.pixelId, events: [{ name: "page_view" }] },
      { origin: "https://other-shop.example" },
    );
    expect(res.status, res.text).toBe(403);
  });

  it("validation problems answer in the events envelope and store nothing", async () => {
    const ids = [eid("bad"), eid("bad")];
    const res = await collect({
      pixelId: px.pixelId,
      events: [
        { name: "page_view", eventId: ids[0] },
        { name: "", eventId: ids[1] },
      ],
    });
    const body = expectEnvelope(res, 400, "VALIDATION_ERROR");
    expect(body.error.details).toContainEqual(expect.objectContaining({ index: 1, field: "name" }));
    for (const id of ids) expect(await eventCount(app, px.pixelId, id)).toBe(0);
  });

  it("a body over 131072 bytes is a 413 in the events envelope", async () => {
    const res = await collect({ pixelId: px.pixelId, events: [{ name: "big", pad: "x".repeat(131_072) }] });
    expectEnvelope(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("OPTIONS preflight answers 204 with the CORS headers", async () => {
    const res = await fetch(`${app.url}/tr/api/collect`, {
      method: "OPTIONS",
      headers: {
        origin: pageOrigin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(pageOrigin);
    expect(res.headers.get("access-control-allow-methods") ?? "").toContain("POST");
    expect((res.headers.get("access-control-allow-headers") ?? "").toLowerCase()).toContain("content-type");
  });
});

describe("GET /tr/pixel.js", () => {
  it("serves a small script without dependencies", async () => {
    const res = await fetch(`${app.url}/tr/pixel.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type") ?? "").toMatch(/^application\/javascript/);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBeLessThan(5 * 1024);
    const text = bytes.toString("utf8");
    expect(text).toContain("/tr/api/collect");
    expect(text).not.toMatch(/\bimport\s*\(|\brequire\s*\(/);
  });
});

describe("one pipeline: a browser + server pair with one eventId counts once", () => {
  const purchase = (eventId: string) => ({
    name: "purchase",
    eventId,
    identityId: "pair-anon",
    eventProperties: { orderId: `order-${eventId}`, value: 10, currency: "USD" },
  });

  it("server first, then the browser copy is a duplicate", async () => {
    const id = eid("pair-sb");
    expect(await sendOk(app, px, [purchase(id)])).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 0 });
    const res = await collect({ pixelId: px.pixelId, events: [purchase(id)] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
    expect((await oneRow(app, px.pixelId, id)).origin).toBe("server");
  });

  it("browser first, then the server copy is a duplicate", async () => {
    const id = eid("pair-bs");
    const res = await collect({ pixelId: px.pixelId, events: [purchase(id)] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ eventsIngested: 1, duplicatesSkipped: 0 });
    expect(await sendOk(app, px, [purchase(id)])).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
    expect((await oneRow(app, px.pixelId, id)).origin).toBe("browser");
  });

  it("both at once: exactly one copy", async () => {
    const id = eid("pair-race");
    const [server, browser] = await Promise.all([
      app.call("POST", "/tr/api/events", {
        key: px.key,
        pixelId: px.pixelId,
        body: { events: [purchase(id)] },
      }),
      collect({ pixelId: px.pixelId, events: [purchase(id)] }),
    ]);
    expect(server.status, server.text).toBe(200);
    expect(browser.status, browser.text).toBe(200);
    const total = (server.body as IngestOk).eventsIngested + (browser.body as IngestOk).eventsIngested;
    expect(total).toBe(1);
    expect(await eventCount(app, px.pixelId, id)).toBe(1);
  });
});

describe("the pixel in a real headless browser", () => {
  it.skipIf(!!browserSkipReason)(
    "sends page_view and a tracked purchase that the server API then duplicates",
    async () => {
      const browser = await chromium!.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      });
      try {
        const tab = await browser.newPage();
        await tab.goto(`${pageOrigin}/`);
        await tab.waitForFunction("typeof window.pixelhouse === 'function' && !window.pixelhouse.q");
        await tab.click("#buy");
        const stored = await poll(async () => {
          const rows = await eventRows(app, px.pixelId);
          const pv = rows.find(
            (r) => r.name === "page_view" && r.origin === "browser" && r.page_url === `${pageOrigin}/`,
          );
          const buy = rows.find((r) => r.event_id === "browser-1");
          return pv && buy ? { pv, buy } : undefined;
        }, 150);
        expect(stored, "page_view and purchase from the browser").toBeDefined();
        const { pv, buy } = stored as { pv: Json; buy: Json };
        expect(buy).toMatchObject({
          name: "purchase",
          origin: "browser",
          value: 10,
          currency: "USD",
          ip: "127.0.0.0",
        });
        // The pixel kept one anonymous identity across both events.
        expect(buy.identity_id).toBe(pv.identity_id);
        expect((pv.identity_id as string).length).toBeGreaterThan(0);
        expect(pv.ua_device).not.toBe("");

        // The storefront's server fires the same conversion: it counts once.
        const again = await sendOk(app, px, [
          {
            name: "purchase",
            eventId: "browser-1",
            identityId: buy.identity_id,
            eventProperties: { value: 10, currency: "USD" },
          },
        ]);
        expect(again).toMatchObject({ eventsIngested: 0, duplicatesSkipped: 1 });
        expect(await eventCount(app, px.pixelId, "browser-1")).toBe(1);
      } finally {
        await browser.close();
      }
    },
  );
});
