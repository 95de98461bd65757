import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { EventRow, ForwardableEvent } from "../shared/event-row.js";
import type { Destination, MetaCapiConfig } from "./destinations.js";

/*
 * Pure mappings from an accepted event to a destination's request. Nothing here touches a store or
 * the network; the queue stores the mapped body at enqueue time and the worker builds the request
 * (URL, headers, signature) when it sends.
 */

// ---------------------------------------------------------------------------------------------
// Event-name filter

/** `eventNames` null = every event; otherwise only the listed names (exact match). */
export function matchesEventFilter(eventNames: readonly string[] | null, name: string): boolean {
  return eventNames === null || eventNames.includes(name);
}

// ---------------------------------------------------------------------------------------------
// Times and values

const ROW_TIME_RE = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)$/;

/** A row time (`YYYY-MM-DD HH:MM:SS.mmm`, UTC) as a Date; ISO strings are accepted too. */
export function parseRowTime(value: string): Date {
  const m = ROW_TIME_RE.exec(value);
  return new Date(m ? `${m[1]}T${m[2]}Z` : value);
}

function eventDate(row: EventRow): Date {
  const at = parseRowTime(row.event_time);
  if (!Number.isNaN(at.getTime())) return at;
  const received = parseRowTime(row.received_at);
  return Number.isNaN(received.getTime()) ? new Date() : received;
}

function toNumber(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function parseProperties(text: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export const sha256Hex = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

// ---------------------------------------------------------------------------------------------
// Webhook

export interface WebhookEvent {
  eventId: string;
  name: string;
  eventTime: string;
  origin: "server" | "browser";
  identityId: string;
  canonicalId: string;
  emailHashes: string[];
  userIds: string[];
  storeIds: string[];
  ip: string;
  userAgent: string;
  locale: string;
  page: { url: string; host: string; path: string };
  referrer: string;
  utm: { source: string; medium: string; campaign: string; term: string; content: string; id: string };
  clickIds: Record<string, string>;
  fbc: string;
  fbp: string;
  channel: string;
  source: string;
  campaignId: string;
  adsetId: string;
  adId: string;
  orderId: string;
  value: number | null;
  currency: string;
  items: { id: string; name: string; price: number | null; quantity: number }[];
  properties: Record<string, unknown>;
}

/** What a webhook receives: the delivery id (stable across retries and replays), pixel and event. */
export interface WebhookBody {
  id: string;
  pixelId: string;
  event: WebhookEvent;
}

/** The JSON projection of an accepted event that webhooks receive (camelCase, original IP). */
export function toWebhookEvent(fe: ForwardableEvent): WebhookEvent {
  const r = fe.row;
  return {
    eventId: r.event_id,
    name: r.name,
    eventTime: eventDate(r).toISOString(),
    origin: r.origin,
    identityId: r.identity_id,
    canonicalId: r.canonical_id,
    emailHashes: r.email_hashes,
    userIds: r.user_ids,
    storeIds: r.store_ids,
    ip: fe.originalIp,
    userAgent: r.user_agent,
    locale: r.locale,
    page: { url: r.page_url, host: r.page_host, path: r.page_path },
    referrer: r.referrer,
    utm: {
      source: r.utm_source,
      medium: r.utm_medium,
      campaign: r.utm_campaign,
      term: r.utm_term,
      content: r.utm_content,
      id: r.utm_id,
    },
    clickIds: r.click_ids,
    fbc: r.fbc,
    fbp: r.fbp,
    channel: r.channel,
    source: r.source,
    campaignId: r.campaign_id,
    adsetId: r.adset_id,
    adId: r.ad_id,
    orderId: r.order_id,
    value: toNumber(r.value),
    currency: r.currency,
    items: r.items.map((i) => ({ id: i.id, name: i.name, price: toNumber(i.price), quantity: i.quantity })),
    properties: parseProperties(r.properties),
  };
}

/** The webhook body without its delivery id (the queue adds the id when it inserts the row). */
export function webhookPayload(pixelId: string, fe: ForwardableEvent): Omit<WebhookBody, "id"> {
  return { pixelId, event: toWebhookEvent(fe) };
}

export const SIGNATURE_HEADER = "x-pixelhouse-signature";
export const EVENT_ID_HEADER = "x-pixelhouse-event-id";
export const DELIVERY_ID_HEADER = "x-pixelhouse-delivery-id";

const hmacHex = (secret: string, timestamp: number, rawBody: string | Uint8Array) =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");

/** `t=<unix seconds>,v1=<hex HMAC-SHA-256(secret, "<t>.<raw body>")>` (Stripe-style). */
export function signWebhook(secret: string, rawBody: string | Uint8Array, timestampSeconds: number): string {
  const t = Math.floor(timestampSeconds);
  return `t=${t},v1=${hmacHex(secret, t, rawBody)}`;
}

/**
 * Checks a `x-pixelhouse-signature` header against the raw request body (the exact bytes received,
 * before any JSON parsing). False when the header is malformed, no `v1` matches, or the timestamp is
 * more than `toleranceSeconds` away from now (stops replays of captured requests).
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | string[] | undefined | null,
  rawBody: string | Uint8Array,
  toleranceSeconds = 300,
  nowSeconds = Date.now() / 1000,
): boolean {
  const value = Array.isArray(header) ? header.join(",") : header;
  if (!value) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === "t" && /^\d{1,12}$/.test(v)) timestamp = Number(v);
    else if (k === "v1" && /^[0-9a-f]{64}$/i.test(v)) signatures.push(v.toLowerCase());
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), "hex");
  return signatures.some((s) => timingSafeEqual(Buffer.from(s, "hex"), expected));
}

// ---------------------------------------------------------------------------------------------
// Meta Conversions API

const META_EVENT_NAMES: Record<string, string> = {
  purchase: "Purchase",
  add_to_cart: "AddToCart",
  page_view: "PageView",
  initiate_checkout: "InitiateCheckout",
  view_content: "ViewContent",
  lead: "Lead",
};

/** Our event names → Meta standard events; any other name is sent as is (a custom event). */
export function metaEventName(name: string): string {
  return Object.hasOwn(META_EVENT_NAMES, name) ? META_EVENT_NAMES[name]! : name;
}

export interface MetaServerEvent {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: "website" | "other";
  event_source_url?: string;
  user_data?: {
    em?: string[];
    external_id?: string[];
    client_ip_address?: string;
    client_user_agent?: string;
    fbc?: string;
    fbp?: string;
  };
  custom_data?: {
    value?: number;
    currency?: string;
    contents?: { id: string; quantity: number; item_price?: number }[];
    order_id?: string;
  };
}

export interface MetaPayload {
  data: MetaServerEvent[];
  test_event_code?: string;
}

/** Drops undefined, null, '' and [] members, then returns undefined when nothing is left. */
function compact<T extends object>(obj: T): T | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  return Object.keys(out).length ? (out as T) : undefined;
}

/** One server event of the Conversions API, empty fields omitted. */
export function toMetaEvent(fe: ForwardableEvent): MetaServerEvent {
  const r = fe.row;
  const value = toNumber(r.value);
  const contents = r.items
    .filter((i) => i.id !== "")
    .map((i) => {
      const price = toNumber(i.price);
      return price === null
        ? { id: i.id, quantity: i.quantity }
        : { id: i.id, quantity: i.quantity, item_price: price };
    });
  const userData = compact({
    em: r.email_hashes.filter((h) => h !== ""),
    external_id: r.user_ids.filter((u) => u !== "").map(sha256Hex),
    client_ip_address: fe.originalIp,
    client_user_agent: r.user_agent,
    fbc: r.fbc,
    fbp: r.fbp,
  });
  const customData = compact({
    value: value ?? undefined,
    currency: r.currency,
    contents,
    order_id: r.order_id,
  });
  const event: MetaServerEvent = {
    event_name: metaEventName(r.name),
    event_time: Math.floor(eventDate(r).getTime() / 1000),
    event_id: r.event_id,
    action_source: r.origin === "browser" || r.page_url !== "" ? "website" : "other",
  };
  if (r.page_url) event.event_source_url = r.page_url;
  if (userData) event.user_data = userData;
  if (customData) event.custom_data = customData;
  return event;
}

export function metaPayload(
  config: Pick<MetaCapiConfig, "testEventCode">,
  fe: ForwardableEvent,
): MetaPayload {
  return config.testEventCode
    ? { data: [toMetaEvent(fe)], test_event_code: config.testEventCode }
    : { data: [toMetaEvent(fe)] };
}

/** `${baseUrl}/${apiVersion}/${datasetId}/events?access_token=…` */
export function metaEventsUrl(config: MetaCapiConfig): string {
  const base = config.baseUrl.replace(/\/+$/, "");
  return `${base}/${encodeURIComponent(config.apiVersion)}/${encodeURIComponent(config.pixelId)}/events?access_token=${encodeURIComponent(config.accessToken)}`;
}

// ---------------------------------------------------------------------------------------------
// Per destination

/** The body stored in the queue for this destination (webhook bodies get their id on insert). */
export function payloadFor(destination: Destination, pixelId: string, fe: ForwardableEvent): object {
  return destination.kind === "webhook" ? webhookPayload(pixelId, fe) : metaPayload(destination.config, fe);
}

/** JSON text Postgres jsonb accepts: a NUL character (`\u0000`) becomes U+FFFD. */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes("\\u0000") ? text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1\\ufffd") : text;
}

export interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP request that delivers a stored payload now; webhook signatures carry `nowSeconds`. */
export function buildRequest(
  destination: Destination,
  delivery: { id: string; eventId: string; payload: unknown },
  options: { nowSeconds: number; userAgent: string },
): OutgoingRequest {
  const body = JSON.stringify(delivery.payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": options.userAgent,
  };
  if (destination.kind === "meta_capi") return { url: metaEventsUrl(destination.config), headers, body };
  headers[SIGNATURE_HEADER] = signWebhook(destination.config.secret, body, options.nowSeconds);
  headers[EVENT_ID_HEADER] = delivery.eventId;
  const bodyId = (delivery.payload as { id?: unknown } | null)?.id;
  headers[DELIVERY_ID_HEADER] = typeof bodyId === "string" ? bodyId : delivery.id;
  return { url: destination.config.url, headers, body };
}
