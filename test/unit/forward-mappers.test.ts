import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  type Destination,
  generateWebhookSecret,
  mask,
  redactDestination,
} from "../../src/forwarding/destinations.js";
import {
  buildRequest,
  DELIVERY_ID_HEADER,
  EVENT_ID_HEADER,
  matchesEventFilter,
  metaEventName,
  metaEventsUrl,
  metaPayload,
  parseRowTime,
  SIGNATURE_HEADER,
  signWebhook,
  toJsonText,
  toMetaEvent,
  toWebhookEvent,
  verifyWebhookSignature,
  webhookPayload,
} from "../../src/forwarding/mappers.js";
import { backoffDelayMs } from "../../src/forwarding/queue.js";
import { parseRetryAfter } from "../../src/forwarding/worker.js";
import type { EventRow, ForwardableEvent } from "../../src/shared/event-row.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function row(overrides: Partial<EventRow> = {}): EventRow {
  return {
    pixel_id: "px_test",
    event_id: "evt_1",
    client_event_id: true,
    name: "purchase",
    event_time: "2026-03-29 10:11:12.345",
    received_at: "2026-03-29 10:11:13.000",
    origin: "browser",
    request_id: "req_1",
    identity_id: "idn_1",
    canonical_id: "can_1",
    email_hashes: [sha("a@example.com")],
    user_ids: ["user-42"],
    store_ids: ["shop-1"],
    ip: "203.0.113.0",
    user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
    ua_browser: "Firefox",
    ua_browser_version: "128",
    ua_os: "Linux",
    ua_device: "desktop",
    locale: "en-US",
    page_url: "https://shop.example/checkout/thanks?x=1",
    page_host: "shop.example",
    page_path: "/checkout/thanks",
    referrer: "https://www.google.com/",
    referrer_host: "www.google.com",
    utm_source: "google",
    utm_medium: "cpc",
    utm_campaign: "spring",
    utm_term: "shoes",
    utm_content: "ad1",
    utm_id: "u1",
    click_ids: { gclid: "g-1" },
    fbc: "fb.1.1711700000000.abc",
    fbp: "fb.1.1711700000000.123",
    channel: "paid_search",
    source: "google",
    campaign_id: "c1",
    adset_id: "as1",
    ad_id: "ad1",
    is_touch: true,
    order_id: "order-9",
    value: "59.90",
    currency: "EUR",
    items: [
      { id: "sku-1", name: "Shoe", price: "29.95", quantity: 2 },
      { id: "sku-2", name: "Sock", price: "", quantity: 1 },
    ],
    viewport_width: 1280,
    viewport_height: 720,
    page_height: 3000,
    device_pixel_ratio: 2,
    properties: '{"coupon":"SPRING","nested":{"a":1}}',
    ...overrides,
  };
}

const fe = (overrides: Partial<EventRow> = {}, originalIp = "203.0.113.77"): ForwardableEvent => ({
  row: row(overrides),
  originalIp,
});

describe("event-name filter", () => {
  it("null forwards every event, a list only its names", () => {
    expect(matchesEventFilter(null, "anything")).toBe(true);
    expect(matchesEventFilter(["purchase", "add_to_cart"], "purchase")).toBe(true);
    expect(matchesEventFilter(["purchase"], "page_view")).toBe(false);
    expect(matchesEventFilter([], "purchase")).toBe(false);
  });
});

describe("webhook mapping", () => {
  it("projects the row with camelCase keys, the original ip, numbers and parsed properties", () => {
    const e = toWebhookEvent(fe());
    expect(e).toEqual({
      eventId: "evt_1",
      name: "purchase",
      eventTime: "2026-03-29T10:11:12.345Z",
      origin: "browser",
      identityId: "idn_1",
      canonicalId: "can_1",
      emailHashes: [sha("a@example.com")],
      userIds: ["user-42"],
      storeIds: ["shop-1"],
      ip: "203.0.113.77",
      userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
      locale: "en-US",
      page: {
        url: "https://shop.example/checkout/thanks?x=1",
        host: "shop.example",
        path: "/checkout/thanks",
      },
      referrer: "https://www.google.com/",
      utm: { source: "google", medium: "cpc", campaign: "spring", term: "shoes", content: "ad1", id: "u1" },
      clickIds: { gclid: "g-1" },
      fbc: "fb.1.1711700000000.abc",
      fbp: "fb.1.1711700000000.123",
      channel: "paid_search",
      source: "google",
      campaignId: "c1",
      adsetId: "as1",
      adId: "ad1",
      orderId: "order-9",
      value: 59.9,
      currency: "EUR",
      items: [
        { id: "sku-1", name: "Shoe", price: 29.95, quantity: 2 },
        { id: "sku-2", name: "Sock", price: null, quantity: 1 },
      ],
      properties: { coupon: "SPRING", nested: { a: 1 } },
    });
  });

  it("maps a null value to null and unparseable properties to {}", () => {
    const e = toWebhookEvent(fe({ value: null, properties: "not json" }));
    expect(e.value).toBeNull();
    expect(e.properties).toEqual({});
    expect(toWebhookEvent(fe({ properties: "[1,2]" })).properties).toEqual({});
  });

  it("the stored payload is the body without its delivery id", () => {
    const p = webhookPayload("px_test", fe());
    expect(p.pixelId).toBe("px_test");
    expect(p.event.eventId).toBe("evt_1");
    expect("id" in p).toBe(false);
  });

  it("reads warehouse times as UTC", () => {
    expect(parseRowTime("2026-01-02 03:04:05.678").toISOString()).toBe("2026-01-02T03:04:05.678Z");
    expect(parseRowTime("2026-01-02 03:04:05").toISOString()).toBe("2026-01-02T03:04:05.000Z");
    expect(parseRowTime("2026-01-02T03:04:05.678Z").toISOString()).toBe("2026-01-02T03:04:05.678Z");
  });
});

describe("webhook signature", () => {
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ id: "1", pixelId: "px", event: { eventId: "e" } });
  const now = 1_800_000_000;

  it("generates 32-byte base64url secrets", () => {
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, "base64url")).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it("is t=<seconds>,v1=<hex HMAC-SHA-256 over '<t>.<body>'>", () => {
    const header = signWebhook(secret, body, now + 0.9);
    const expected = createHmac("sha256", secret).update(`${now}.${body}`).digest("hex");
    expect(header).toBe(`t=${now},v1=${expected}`);
  });

  it("verifies the untouched body with the right secret inside the tolerance", () => {
    const header = signWebhook(secret, body, now);
    expect(verifyWebhookSignature(secret, header, body, 300, now)).toBe(true);
    expect(verifyWebhookSignature(secret, header, Buffer.from(body), 300, now + 299)).toBe(true);
    expect(verifyWebhookSignature(secret, [header], body, 300, now - 299)).toBe(true);
  });

  it("rejects a tampered body, a wrong secret, a stale or future timestamp, and malformed headers", () => {
    const header = signWebhook(secret, body, now);
    expect(verifyWebhookSignature(secret, header, body.replace('"e"', '"f"'), 300, now)).toBe(false);
    expect(verifyWebhookSignature(`${secret}x`, header, body, 300, now)).toBe(false);
    expect(verifyWebhookSignature(secret, header, body, 300, now + 301)).toBe(false);
    expect(verifyWebhookSignature(secret, header, body, 300, now - 301)).toBe(false);
    // A replayed signature with a fresh timestamp does not match the body's HMAC.
    const forged = header.replace(`t=${now}`, `t=${now + 1000}`);
    expect(verifyWebhookSignature(secret, forged, body, 300, now + 1000)).toBe(false);
    for (const bad of [undefined, null, "", "garbage", `t=${now}`, "v1=abc", `t=x,v1=${"0".repeat(64)}`]) {
      expect(verifyWebhookSignature(secret, bad, body, 300, now)).toBe(false);
    }
  });

  it("accepts any of several v1 values (secret rotation)", () => {
    const good = signWebhook(secret, body, now).split(",")[1];
    const header = `t=${now},v1=${"0".repeat(64)},${good}`;
    expect(verifyWebhookSignature(secret, header, body, 300, now)).toBe(true);
  });
});

describe("Meta Conversions API mapping", () => {
  it("maps standard event names and keeps others as they are", () => {
    expect(metaEventName("purchase")).toBe("Purchase");
    expect(metaEventName("add_to_cart")).toBe("AddToCart");
    expect(metaEventName("page_view")).toBe("PageView");
    expect(metaEventName("initiate_checkout")).toBe("InitiateCheckout");
    expect(metaEventName("view_content")).toBe("ViewContent");
    expect(metaEventName("lead")).toBe("Lead");
    expect(metaEventName("newsletter_signup")).toBe("newsletter_signup");
    expect(metaEventName("constructor")).toBe("constructor");
  });

  it("maps a browser purchase with user and custom data", () => {
    expect(toMetaEvent(fe())).toEqual({
      event_name: "Purchase",
      event_time: Math.floor(Date.parse("2026-03-29T10:11:12.345Z") / 1000),
      event_id: "evt_1",
      action_source: "website",
      event_source_url: "https://shop.example/checkout/thanks?x=1",
      user_data: {
        em: [sha("a@example.com")],
        external_id: [sha("user-42")],
        client_ip_address: "203.0.113.77",
        client_user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
        fbc: "fb.1.1711700000000.abc",
        fbp: "fb.1.1711700000000.123",
      },
      custom_data: {
        value: 59.9,
        currency: "EUR",
        contents: [
          { id: "sku-1", quantity: 2, item_price: 29.95 },
          { id: "sku-2", quantity: 1 },
        ],
        order_id: "order-9",
      },
    });
  });

  it("uses action_source website for server events with a page url, else other", () => {
    expect(toMetaEvent(fe({ origin: "server" })).action_source).toBe("website");
    expect(toMetaEvent(fe({ origin: "server", page_url: "" })).action_source).toBe("other");
    expect(toMetaEvent(fe({ origin: "browser", page_url: "" })).action_source).toBe("website");
  });

  it("omits empty fields", () => {
    const e = toMetaEvent(
      fe(
        {
          name: "page_view",
          email_hashes: [],
          user_ids: [],
          user_agent: "",
          fbc: "",
          fbp: "",
          page_url: "",
          origin: "server",
          value: null,
          currency: "",
          items: [],
          order_id: "",
        },
        "",
      ),
    );
    expect(e).toEqual({
      event_name: "PageView",
      event_time: expect.any(Number),
      event_id: "evt_1",
      action_source: "other",
    });
    const partial = toMetaEvent(fe({ email_hashes: [], fbc: "", value: "0" }, ""));
    expect(partial.user_data).not.toHaveProperty("em");
    expect(partial.user_data).not.toHaveProperty("fbc");
    expect(partial.user_data).not.toHaveProperty("client_ip_address");
    expect(partial.custom_data?.value).toBe(0);
  });

  it("wraps one event in data[] and adds test_event_code when configured", () => {
    expect(metaPayload({}, fe()).data).toHaveLength(1);
    expect(metaPayload({}, fe())).not.toHaveProperty("test_event_code");
    expect(metaPayload({ testEventCode: "TEST123" }, fe()).test_event_code).toBe("TEST123");
  });

  it("posts to <baseUrl>/<version>/<dataset>/events with the access token", () => {
    expect(
      metaEventsUrl({
        pixelId: "1234567890",
        accessToken: "EAAB/tok+en",
        baseUrl: "http://127.0.0.1:9999/",
        apiVersion: "v21.0",
      }),
    ).toBe("http://127.0.0.1:9999/v21.0/1234567890/events?access_token=EAAB%2Ftok%2Ben");
  });
});

describe("requests", () => {
  const base = {
    id: "01DEST",
    pixelId: "px_test",
    name: "",
    eventNames: null,
    enabled: true,
    createdAt: new Date(),
  };
  const webhook: Destination = {
    ...base,
    kind: "webhook",
    config: { url: "https://hooks.example/in", secret: "s".repeat(32) },
  };
  const meta: Destination = {
    ...base,
    kind: "meta_capi",
    config: {
      pixelId: "42",
      accessToken: "token-abcdef-1234",
      baseUrl: "https://graph.facebook.com",
      apiVersion: "v21.0",
    },
  };

  it("signs webhook requests over the exact body sent", () => {
    const payload = { id: "7", ...webhookPayload("px_test", fe()) };
    const req = buildRequest(
      webhook,
      { id: "9", eventId: "evt_1", payload },
      { nowSeconds: 1_800_000_000, userAgent: "t" },
    );
    expect(req.url).toBe("https://hooks.example/in");
    expect(req.headers[EVENT_ID_HEADER]).toBe("evt_1");
    expect(req.headers[DELIVERY_ID_HEADER]).toBe("7");
    expect(JSON.parse(req.body)).toEqual(payload);
    expect(
      verifyWebhookSignature("s".repeat(32), req.headers[SIGNATURE_HEADER], req.body, 60, 1_800_000_000),
    ).toBe(true);
  });

  it("sends Meta requests unsigned to the events endpoint", () => {
    const req = buildRequest(
      meta,
      { id: "9", eventId: "evt_1", payload: metaPayload({}, fe()) },
      { nowSeconds: 1, userAgent: "t" },
    );
    expect(req.url).toBe("https://graph.facebook.com/v21.0/42/events?access_token=token-abcdef-1234");
    expect(req.headers).not.toHaveProperty(SIGNATURE_HEADER);
  });

  it("masks secrets and tokens to their last 4 characters", () => {
    expect(mask("abcdefghijkl")).toBe("********ijkl");
    expect(mask("short")).toBe("*****");
    const w = redactDestination(webhook);
    expect(
      w.kind === "webhook" && w.config.secret.endsWith("ssss") && !w.config.secret.includes("sssss"),
    ).toBe(true);
    const m = redactDestination(meta);
    expect(m.kind === "meta_capi" && m.config.accessToken).toBe("************1234");
  });

  it("replaces NUL characters that jsonb refuses", () => {
    expect(JSON.parse(toJsonText({ a: "x\u0000y", b: "\\u0000" }))).toEqual({ a: "x\ufffdy", b: "\\u0000" });
  });
});

describe("backoff", () => {
  const opts = { baseMs: 1000, capMs: 3_600_000, jitter: 0.2 };
  it("doubles per failed attempt from the base, capped at the cap", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, opts, mid))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelayMs(13, opts, mid)).toBe(3_600_000);
    expect(backoffDelayMs(5000, opts, mid)).toBe(3_600_000);
  });

  it("jitters by ±20 %", () => {
    expect(backoffDelayMs(1, opts, () => 0)).toBe(800);
    expect(backoffDelayMs(1, opts, () => 0.999999)).toBe(1200);
  });

  it("is 0 with a zero base", () => {
    expect(backoffDelayMs(7, { ...opts, baseMs: 0 }, Math.random)).toBe(0);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("0")).toBe(0);
    expect(parseRetryAfter("120")).toBe(120_000);
    const now = Date.parse("2026-03-29T10:00:00Z");
    expect(parseRetryAfter("Sun, 29 Mar 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 29 Mar 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
