import type { OrderRecord, RefundRecord } from "../sync/schemas.js";
import type { DemoAd } from "./ads.js";
import type { CatalogVariant } from "./catalog.js";
import type { Random } from "./random.js";

const DAY = 86_400_000;
const SITE = "https://shop.demo.example";
const UAS = [
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
];
const COUNTRIES = [
  ["US", "USD", 0.55],
  ["DE", "EUR", 0.15],
  ["GB", "GBP", 0.15],
  ["CA", "CAD", 0.1],
  ["AU", "AUD", 0.05],
] as const;
/** Rough USD value of one unit of each currency, so basket prices look local. */
const PER_USD: Record<string, number> = { USD: 1, EUR: 0.92, GBP: 0.79, CAD: 1.36, AUD: 1.52 };

type Touch = "facebook" | "google" | "tiktok" | "organic" | "email" | "direct";

export interface Visitor {
  ip: string;
  userAgent: string;
  browserEvents: Record<string, unknown>[];
  serverEvents: Record<string, unknown>[];
  orders: OrderRecord[];
  refunds: RefundRecord[];
}

function landing(
  rng: Random,
  touch: Touch,
  ads: readonly DemoAd[],
  path: string,
): { url: string; referrer?: string } {
  if (touch === "facebook" || touch === "google" || touch === "tiktok") {
    const ad = rng.pick(ads.filter((a) => a.platform === touch));
    const click = touch === "facebook" ? "fbclid" : touch === "google" ? "gclid" : "ttclid";
    const medium = touch === "google" ? "cpc" : "paid_social";
    const q = new URLSearchParams({
      utm_source: touch,
      utm_medium: medium,
      utm_campaign: ad.campaignName,
      utm_id: ad.campaignId,
      adset_id: ad.adsetId,
      ad_id: ad.adId,
      [click]: `${click}.${rng.int(1e8, 9e8)}`,
    });
    return {
      url: `${SITE}${path}?${q}`,
      referrer: touch === "google" ? "https://www.google.com/" : undefined,
    };
  }
  if (touch === "email")
    return {
      url: `${SITE}${path}?utm_source=klaviyo&utm_medium=email&utm_campaign=weekly-${rng.int(1, 30)}`,
    };
  if (touch === "organic")
    return {
      url: `${SITE}${path}`,
      referrer: rng.pick(["https://www.google.com/", "https://duckduckgo.com/", "https://www.bing.com/"]),
    };
  return { url: `${SITE}${path}` };
}

/**
 * One visitor's multi-touch journey over several days: sessions that start from ads (with UTM links
 * and click ids), search, email or direct; page views and carts; for some, a purchase fired from the
 * browser and the server with one eventId, and the order the store syncs (several currencies,
 * pending / voided / refunded / partially refunded cases, draft orders to exclude).
 */
export function makeVisitor(
  rng: Random,
  n: number,
  windowStart: number,
  windowDays: number,
  catalog: readonly CatalogVariant[],
  ads: readonly DemoAd[],
  conversion = 0.045,
  repeatRate = 0.35,
  /** Where in the window the first visit falls (0..1); random when not given. */
  arrival?: number,
): Visitor {
  const identityId = `demo-anon-${n}`;
  const [country, currency] = rng.weighted(COUNTRIES.map(([c, cur, w]) => [[c, cur] as const, w] as const));
  const ua = rng.pick(UAS);
  const ip = `${rng.int(11, 223)}.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`;
  const sessions = rng.weighted([
    [1, 0.5],
    [2, 0.3],
    [3, 0.15],
    [4, 0.05],
  ] as const);
  let t = windowStart + (arrival ?? rng.next()) * (windowDays - 1) * DAY;
  const browserEvents: Record<string, unknown>[] = [];
  const serverEvents: Record<string, unknown>[] = [];
  const orders: OrderRecord[] = [];
  const refunds: RefundRecord[] = [];
  const end = windowStart + windowDays * DAY - 60_000;
  const buyer = rng.chance(conversion * sessions);
  const email = `shopper${n}@mail.demo.example`;
  const viewed: CatalogVariant[] = [];
  for (let s = 0; s < sessions && t < end; s++) {
    const touch = rng.weighted<Touch>([
      ["facebook", 0.3],
      ["google", 0.24],
      ["tiktok", 0.1],
      ["organic", 0.15],
      ["email", s > 0 ? 0.12 : 0.02],
      ["direct", s > 0 ? 0.2 : 0.09],
    ]);
    const first = rng.pick(catalog);
    viewed.push(first);
    const land = landing(rng, touch, ads, `/products/${first.productId}`);
    const base = { identityId, locale: country === "DE" ? "de-DE" : "en-US" };
    browserEvents.push({
      ...base,
      name: "page_view",
      timestamp: new Date(t).toISOString(),
      page: { url: land.url },
      ...(land.referrer ? { referrer: land.referrer } : {}),
    });
    for (let v = rng.int(0, 4); v > 0; v--) {
      t += rng.int(15, 240) * 1000;
      const item = rng.pick(catalog);
      viewed.push(item);
      browserEvents.push({
        ...base,
        name: "page_view",
        timestamp: new Date(t).toISOString(),
        page: { url: `${SITE}/products/${item.productId}` },
        referrer: `${SITE}/`,
      });
    }
    if (rng.chance(0.25) || (buyer && s === sessions - 1)) {
      t += rng.int(10, 120) * 1000;
      const item = rng.pick(viewed);
      browserEvents.push({
        ...base,
        name: "add_to_cart",
        timestamp: new Date(t).toISOString(),
        page: { url: `${SITE}/products/${item.productId}` },
        eventProperties: {
          value: round(item.price * PER_USD[currency]!),
          currency,
          items: [
            {
              id: item.variantId,
              name: item.title,
              price: round(item.price * PER_USD[currency]!),
              quantity: 1,
            },
          ],
        },
      });
    }
    if (buyer && s === sessions - 1) {
      t += rng.int(60, 600) * 1000;
      const order = makeOrder(rng, n, new Date(t), viewed, currency, country, email);
      orders.push(order);
      // The storefront fires the same conversion from the browser and its server: counted once.
      const [fromBrowser, fromServer] = purchaseEvents(order, identityId, email, ip, ua);
      browserEvents.push(fromBrowser);
      serverEvents.push(fromServer);
      const refund = makeRefund(rng, order);
      if (refund) refunds.push(refund);
    }
    t +=
      rng.int(1, Math.max(1, Math.min(4, Math.floor((end - t) / DAY)))) * DAY + rng.int(0, 6 * 3600) * 1000;
  }
  // Some buyers come back (by email or directly) and buy again: repeat customers for cohorts and LTV.
  for (let k = 1; orders.length > 0 && rng.chance(repeatRate) && k < 6; k++) {
    t += rng.int(7, 45) * DAY;
    if (t >= end) break;
    const back = landing(rng, rng.chance(0.6) ? "email" : "direct", ads, "/");
    const base = { identityId, locale: country === "DE" ? "de-DE" : "en-US" };
    browserEvents.push({
      ...base,
      name: "page_view",
      timestamp: new Date(t).toISOString(),
      page: { url: back.url },
    });
    t += rng.int(60, 900) * 1000;
    const order = makeOrder(
      rng,
      n,
      new Date(t),
      [rng.pick(catalog), ...viewed.slice(-1)],
      currency,
      country,
      email,
      k,
    );
    orders.push(order);
    const [fromBrowser, fromServer] = purchaseEvents(order, identityId, email, ip, ua);
    browserEvents.push(fromBrowser);
    serverEvents.push(fromServer);
    const refund = makeRefund(rng, order);
    if (refund) refunds.push(refund);
  }
  return { ip, userAgent: ua, browserEvents, serverEvents, orders, refunds };
}

const round = (v: number) => Math.round(v * 100) / 100;

/** One purchase as the browser pixel and the store's server send it: same eventId, same identity. */
function purchaseEvents(
  order: OrderRecord,
  identityId: string,
  email: string,
  ip: string,
  userAgent: string,
): [Record<string, unknown>, Record<string, unknown>] {
  const purchase = {
    name: "purchase",
    eventId: `order-${order.id}`,
    identityId,
    timestamp: order.createdAt,
    userProperties: { emails: [email] },
    eventProperties: {
      orderId: order.id,
      value: order.totalPrice,
      currency: order.currency,
      items: order.lineItems.map((l) => ({ id: l.variantId, price: l.price, quantity: l.quantity })),
    },
  };
  return [
    { ...purchase, page: { url: `${SITE}/checkout/thank-you` } },
    { ...purchase, ipAddress: ip, userAgent },
  ];
}

function makeOrder(
  rng: Random,
  n: number,
  at: Date,
  viewed: readonly CatalogVariant[],
  currency: string,
  country: string,
  email: string,
  repeat = 0,
): OrderRecord {
  const lines = [...new Set(viewed.slice(-rng.int(1, 3)))].map((v) => ({
    productId: v.productId,
    variantId: v.variantId,
    sku: v.sku,
    quantity: rng.weighted([
      [1, 0.8],
      [2, 0.15],
      [3, 0.05],
    ] as const),
    price: round(v.price * PER_USD[currency]!),
  }));
  const subtotal = round(lines.reduce((s, l) => s + l.price * l.quantity, 0));
  const discount = rng.chance(0.2) ? round(subtotal * 0.1) : 0;
  const shipping = subtotal > 100 ? 0 : round(6.95 * PER_USD[currency]!);
  const tax = country === "US" ? round((subtotal - discount) * 0.07) : 0;
  const financialStatus = rng.weighted([
    ["paid", 0.8],
    ["pending", 0.05],
    ["voided", 0.03],
    ["refunded", 0.05],
    ["partially_refunded", 0.07],
  ] as const);
  const updated = new Date(at.getTime() + (financialStatus.includes("refund") ? 3 : 0) * 86_400_000);
  return {
    id: repeat ? `${100000 + n}-${repeat}` : `${100000 + n}`,
    createdAt: at.toISOString(),
    processedAt: financialStatus === "pending" ? null : at.toISOString(),
    cancelledAt: financialStatus === "voided" ? new Date(at.getTime() + 3_600_000).toISOString() : null,
    currency,
    totalPrice: round(subtotal - discount + shipping + tax),
    subtotalPrice: subtotal,
    totalShipping: shipping,
    totalTax: tax,
    totalDiscounts: discount,
    financialStatus,
    // Draft orders (staff-created, e.g. replacements) are the demo's exclusion-worthy orders.
    sourceName: rng.weighted([
      ["web", 0.9],
      ["draft_orders", 0.05],
      ["pos", 0.05],
    ] as const),
    gateway: rng.weighted([
      ["stripe", 0.7],
      ["paypal", 0.3],
    ] as const),
    tags: discount ? ["promo"] : [],
    discountCodes: discount ? ["WELCOME10"] : [],
    country,
    customer: { id: `cust-${n}`, email },
    lineItems: lines,
    updatedAt: updated.toISOString(),
  };
}

function makeRefund(rng: Random, order: OrderRecord): RefundRecord | null {
  if (order.financialStatus !== "refunded" && order.financialStatus !== "partially_refunded") return null;
  const full = order.financialStatus === "refunded";
  const line = order.lineItems[0]!;
  const amount = full ? order.totalPrice : round(line.price * (0.3 + rng.next() * 0.4));
  return {
    id: `refund-${order.id}`,
    orderId: order.id,
    createdAt: order.updatedAt,
    amount,
    currency: order.currency,
    lineItems: full
      ? order.lineItems.map((l) => ({
          variantId: l.variantId ?? "",
          quantity: l.quantity,
          amount: round(l.price * l.quantity),
        }))
      : [],
  };
}
