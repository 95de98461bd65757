/**
 * Drilling into an attribution table (docs/web-pages.md, "Orders and journeys"): the requests of the
 * credited-orders listing and of an order's journey, the shapes they answer, and how their figures
 * read. No DOM here, so test/unit/web-drill.test.ts imports it as it is.
 */

/** The attribution models in the order the pages offer them (src/query/attribution-models.ts). */
export const MODELS = [
  ["last_click", "Last click"],
  ["first_click", "First click"],
  ["any_click", "Any click"],
  ["linear", "Linear"],
  ["time_decay", "Time decay"],
  ["position_based", "Position based"],
] as const;
export type Model = (typeof MODELS)[number][0];

export const DEFAULT_HALF_LIFE_DAYS = 7;

export const modelLabel = (model: string): string => MODELS.find(([m]) => m === model)?.[1] ?? model;

/** A half-life the API takes (1–90 days), or null. */
export function halfLifeOf(text: string): number | null {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) return null;
  const n = Number(text);
  return n >= 1 && n <= 90 ? n : null;
}

/** How the subtitle names the view's attribution: `time decay (half-life 7 days), 30-day window`. */
export function attributionText(model: string, window: number, halfLifeDays: number | undefined): string {
  const name = model.replace(/_/g, " ");
  const half =
    model === "time_decay"
      ? ` (half-life ${halfLifeDays ?? DEFAULT_HALF_LIFE_DAYS} day${(halfLifeDays ?? DEFAULT_HALF_LIFE_DAYS) === 1 ? "" : "s"})`
      : "";
  return `${name}${half}, ${window === -1 ? "no window" : `${window}-day window`}`;
}

/** What a widget's query sent that the listing repeats: the figure's own range, model and filters. */
export interface WidgetQuery {
  pixelId: string;
  dateRange: { start: string; end: string };
  attributionModel: string;
  attributionWindow: number;
  attributionHalfLifeDays?: number;
  currency: string;
  filters?: unknown;
}

/** The row of an attribution table a listing is about. */
export interface Drill {
  query: WidgetQuery;
  dimension: string;
  /** The value as the query answered it (`(none)` and `(not set)` included). */
  value: string;
}

export const ORDERS_PAGE = 20;

/** The body of POST /db-mgmt/api/query-attribution/orders for one page of a drill. */
export function creditedOrdersBody(d: Drill, offset: number, limit = ORDERS_PAGE) {
  const q = d.query;
  return {
    pixelId: q.pixelId,
    dimension: d.dimension,
    dimensionValue: d.value,
    dateRange: q.dateRange,
    attributionModel: q.attributionModel,
    attributionWindow: q.attributionWindow,
    ...(q.attributionHalfLifeDays !== undefined
      ? { attributionHalfLifeDays: q.attributionHalfLifeDays }
      : {}),
    currency: q.currency,
    ...(q.filters !== undefined ? { filters: q.filters } : {}),
    limit,
    offset,
  };
}

/** The journey's URL: the order id is a path segment, escaped as one. */
export function journeyPath(orderId: string, q: WidgetQuery): string {
  const params = new URLSearchParams({
    window: String(q.attributionWindow),
    currency: q.currency,
    ...(q.attributionHalfLifeDays !== undefined ? { halfLifeDays: String(q.attributionHalfLifeDays) } : {}),
  });
  return `/db-mgmt/api/orders/${encodeURIComponent(orderId)}/journey?${params}`;
}

export interface CreditedOrder {
  orderId: string;
  createdAt: string;
  value: number;
  credit: number;
}
export interface CreditedOrders {
  orders: CreditedOrder[];
  currency: string;
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

export interface IdentityLink {
  aliasType: string;
  aliasValue: string;
  canonicalId: string;
  firstSeen: string;
}
export interface JourneyTouch {
  eventId: string;
  time: string;
  channel: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  campaignId: string | null;
  adsetId: string | null;
  adId: string | null;
  clickIdType: string | null;
  landingPage: string | null;
  inWindow: boolean;
  identity: { identityId: string | null; canonicalId: string; merges: IdentityLink[] };
  credit: Record<string, number>;
}
export interface Journey {
  order: {
    orderId: string;
    createdAt: string;
    status: string;
    currency: string;
    totalPrice: number;
    value: { currency: string; total: number; refunds: number; net: number };
    identity: { storedId: string; canonicalId: string; merge: IdentityLink | null };
  };
  attribution: { window: number; halfLifeDays: number; touchesInWindow: number; olderTouchesOmitted: number };
  touches: JourneyTouch[];
  identityLinks: IdentityLink[];
  identityLinksOmitted: number;
}

/** `1–20 of 57`, `0 orders`. */
export function pageText(p: CreditedOrders["pagination"], shown: number): string {
  if (p.total === 0) return "0 orders";
  if (shown === 0) return `none past ${p.offset} of ${p.total}`;
  return `${p.offset + 1}–${p.offset + shown} of ${p.total}`;
}

/** A share of an order as a percentage: `100%`, `33.33%`, `0%`. */
export function shareText(credit: number): string {
  return `${Number((credit * 100).toFixed(2))}%`;
}

/** An instant as `2026-08-10 10:00:00 UTC`: the page does not know the account's timezone, so it says which. */
export function instantText(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** How long before the order a touch was: `30 min`, `5 h 10 min`, `10 d 2 h`, `at the order`. */
export function beforeText(touchIso: string, orderIso: string): string {
  const minutes = Math.round((Date.parse(orderIso) - Date.parse(touchIso)) / 60_000);
  if (!Number.isFinite(minutes)) return "";
  if (minutes <= 0) return minutes === 0 ? "at the order" : "after the order";
  const d = Math.floor(minutes / 1440);
  const hr = Math.floor((minutes % 1440) / 60);
  const min = minutes % 60;
  if (d > 0) return hr ? `${d} d ${hr} h` : `${d} d`;
  if (hr > 0) return min ? `${hr} h ${min} min` : `${hr} h`;
  return `${min} min`;
}
