import type { Alias } from "../identity/union.js";
import type { EventRow } from "../shared/event-row.js";
import { toNumericText } from "../shared/money.js";
import { formatDateTime } from "../stores/warehouse/port.js";
import { classifyTouch } from "./enrich/channel.js";
import { hashEmail } from "./enrich/email.js";
import { truncateIp } from "./enrich/ip.js";
import { deriveFbc, parsePageUrl, referrerHost } from "./enrich/url.js";
import { parseUserAgent } from "./enrich/user-agent.js";
import type { IncomingEvent } from "./schema.js";
import type { ValidEvent } from "./validate.js";

export interface IngestContext {
  pixelId: string;
  origin: "server" | "browser";
  requestId: string;
  receivedAtMs: number;
  ipPrefix: { v4PrefixBits: number; v6PrefixBits: number };
  /** Browser events take IP and user agent from the connection; server events never do (rule 3). */
  connection?: { ip: string; userAgent: string };
}

export interface NormalizedEvent {
  row: EventRow;
  aliases: Alias[];
  originalIp: string;
}

// Keys the row's columns already hold; everything else of the event is kept in `properties`.
const KNOWN: Record<string, readonly string[]> = {
  "": [
    "name",
    "eventId",
    "identityId",
    "timestamp",
    "userProperties",
    "ipAddress",
    "userAgent",
    "locale",
    "referrer",
    "page",
    "click",
    "viewport",
    "eventProperties",
  ],
  userProperties: ["emails", "userIds", "storeYIds"],
  page: ["url", "referrer"],
  click: [],
  viewport: ["viewportWidth", "viewportHeight", "pageHeight", "devicePixelRatio"],
  eventProperties: ["orderId", "value", "currency", "items"],
};

function extras(
  obj: Record<string, unknown> | undefined,
  known: readonly string[],
): Record<string, unknown> | undefined {
  if (!obj) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(obj)) {
    if (known.includes(k)) continue;
    out ??= {};
    out[k] = v;
  }
  return out;
}

/** Pass-through keys, kept where they were sent: top-level extras at the top, nested ones under their object. */
function properties(event: IncomingEvent): string {
  const out: Record<string, unknown> = extras(event, KNOWN[""]!) ?? {};
  // click.* strings are click ids (columns); anything else under click is kept here.
  const clickExtras = Object.entries(event.click ?? {}).filter(([, v]) => typeof v !== "string");
  if (clickExtras.length) out.click = Object.fromEntries(clickExtras);
  for (const nested of ["userProperties", "page", "viewport", "eventProperties"] as const) {
    const e = extras(event[nested] as Record<string, unknown> | undefined, KNOWN[nested]!);
    if (e) out[nested] = e;
  }
  return Object.keys(out).length ? JSON.stringify(out) : "";
}

/** Raw addresses are hashed here and never stored; an address sent already hashed is kept as is. */
const emailHash = (m: string): string => {
  const t = m.trim();
  return /^[0-9a-fA-F]{64}$/.test(t) ? t.toLowerCase() : (hashEmail(t) ?? "");
};

// From the number's shortest decimal text, not its binary expansion (toFixed(4) wrote 70000000000000.01 as …0.0078).
const money = (v: number | undefined): string | null => (v === undefined ? null : toNumericText(v));
const uniq = (xs: readonly string[]) => [...new Set(xs.filter((x) => x !== ""))];

/** Click ids from `click.*` (except the fbc/fbp cookies) joined with those in the page URL. */
function clickIdsOf(event: IncomingEvent, fromUrl: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...fromUrl };
  for (const [k, v] of Object.entries(event.click ?? {})) {
    if (k === "fbc" || k === "fbp" || typeof v !== "string" || v === "") continue;
    out[k.toLowerCase()] = v;
  }
  return out;
}

/** One validated event → the warehouse row (identity left for the resolver) and its aliases. */
export function normalizeEvent(
  v: ValidEvent,
  ctx: IngestContext,
  eventId: string,
  clientEventId: boolean,
): NormalizedEvent {
  const e = v.event;
  const page = parsePageUrl(e.page?.url);
  const refUrl = e.referrer ?? e.page?.referrer ?? "";
  const refHost = referrerHost(refUrl);
  const clickIds = clickIdsOf(e, page.clickIds);
  const touch = classifyTouch({
    utmSource: page.utm.source,
    utmMedium: page.utm.medium,
    utmCampaign: page.utm.campaign,
    utmTerm: page.utm.term,
    utmContent: page.utm.content,
    utmId: page.utm.id,
    clickIds,
    referrerHost: refHost,
    pageHost: page.pageHost,
  });
  const originalIp = ctx.connection ? ctx.connection.ip : (e.ipAddress ?? "");
  const userAgent = ctx.connection ? ctx.connection.userAgent : (e.userAgent ?? "");
  const ua = parseUserAgent(userAgent);
  const emailHashes = uniq((e.userProperties?.emails ?? []).map(emailHash));
  const userIds = uniq(e.userProperties?.userIds ?? []);
  const storeIds = uniq(e.userProperties?.storeYIds ?? []);
  const fbclid = clickIds.fbclid ?? "";
  const ep = e.eventProperties;

  const aliases: Alias[] = [];
  if (e.identityId) aliases.push({ type: "identity", value: e.identityId });
  for (const h of emailHashes) aliases.push({ type: "email", value: h });
  for (const u of userIds) aliases.push({ type: "user", value: u });
  for (const s of storeIds) aliases.push({ type: "store", value: s });
  // An order id names one buyer: browser and server copies of a purchase, and the synced order, meet here.
  if (ep?.orderId) aliases.push({ type: "order", value: ep.orderId });

  const row: EventRow = {
    pixel_id: ctx.pixelId,
    event_id: eventId,
    client_event_id: clientEventId,
    name: e.name,
    event_time: formatDateTime(new Date(v.eventTimeMs)),
    received_at: formatDateTime(new Date(ctx.receivedAtMs)),
    origin: ctx.origin,
    request_id: ctx.requestId,
    identity_id: e.identityId ?? "",
    canonical_id: "",
    email_hashes: emailHashes,
    user_ids: userIds,
    store_ids: storeIds,
    ip: truncateIp(originalIp, ctx.ipPrefix),
    user_agent: userAgent,
    ua_browser: ua.browser,
    ua_browser_version: ua.browserVersion,
    ua_os: ua.os,
    ua_device: ua.device,
    locale: e.locale ?? "",
    page_url: page.pageUrl,
    page_host: page.pageHost,
    page_path: page.pagePath,
    referrer: refUrl,
    referrer_host: refHost,
    utm_source: page.utm.source,
    utm_medium: page.utm.medium,
    utm_campaign: page.utm.campaign,
    utm_term: page.utm.term,
    utm_content: page.utm.content,
    utm_id: page.utm.id,
    click_ids: clickIds,
    fbc: e.click?.fbc || deriveFbc(fbclid, v.eventTimeMs),
    fbp: e.click?.fbp ?? "",
    channel: touch.channel,
    source: touch.source,
    campaign_id: page.campaignId,
    adset_id: page.adsetId,
    ad_id: page.adId,
    is_touch: touch.isTouch,
    order_id: ep?.orderId ?? "",
    value: money(ep?.value),
    currency: ep?.currency ?? "",
    items: (ep?.items ?? []).map((it) => ({
      id: it.id ?? "",
      name: it.name ?? "",
      price: money(it.price) ?? "0",
      quantity: it.quantity ?? 0,
    })),
    viewport_width: e.viewport?.viewportWidth ?? null,
    viewport_height: e.viewport?.viewportHeight ?? null,
    page_height: e.viewport?.pageHeight ?? null,
    device_pixel_ratio: e.viewport?.devicePixelRatio ?? null,
    properties: properties(e),
  };
  return { row, aliases, originalIp };
}
