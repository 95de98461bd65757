import { ATTRIBUTION_MODELS, type AttributionModel, touchShares } from "../query/attribution-models.js";
import { roundAddingUp, roundHalfAway } from "../query/rounding.js";
import type { IdentityLink, Journey, JourneyTouch } from "./schemas.js";

/** The order's row as `orderStatement` returns it. */
export interface OrderRow {
  order_id: string;
  created_ms: number;
  status: string;
  currency: string;
  total_price: number;
  stored_id: string;
  /** The stored id's canonical link ('' when it has none) and that link's first_seen (epoch ms). */
  linked_to: string;
  linked_ms: number;
  total_target: number;
  refunded_target: number;
}

/** A touch as `touchesStatement` returns it. */
export interface TouchRow {
  event_id: string;
  touch_ms: number;
  channel: string;
  source: string;
  medium: string;
  campaign: string;
  campaign_id: string;
  adset_id: string;
  ad_id: string;
  click_id_type: string;
  identity_id: string;
  stored_id: string;
  linked_to: string;
  linked_ms: number;
  in_window: number;
  /** How many touches of the identity lie before the window (the same on every row). */
  older: number;
}

/** An alias as `identityLinksStatement` returns it. */
export interface LinkRow {
  alias_type: string;
  alias_value: string;
  linked_to: string;
  linked_ms: number;
}

export interface JourneyInput {
  order: OrderRow;
  touches: readonly TouchRow[];
  /** page_url by `${event id}\u0000${epoch ms}`. */
  landingPages: ReadonlyMap<string, string>;
  links: readonly LinkRow[];
  linksTotal: number;
  currency: string;
  window: number;
  halfLifeDays: number;
}

export const pageKey = (eventId: string, timeMs: number): string => `${eventId}\u0000${timeMs}`;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Stored text is '' when absent; the answer says null. */
const text = (v: string): string | null => (v === "" ? null : v);

const canonicalLink = (alias: string, to: string, ms: number): IdentityLink => ({
  aliasType: "canonical",
  aliasValue: alias,
  canonicalId: to,
  firstSeen: iso(ms),
});

/**
 * The journey from the statements' rows. Credit is decided over the touches inside the window only,
 * with `touchShares` — the reference the engine's attribution follows — so a touch's credit here is
 * what it contributes to `query-attribution` for this order; touches before the window get 0.
 * Revenue is credit × the order's net value (total − refunds, in the requested currency). Under
 * every model but any_click the rounded credits add up to exactly 1 and the revenues to the net
 * value, as the query API's rows add up to its total.
 */
export function shapeJourney(input: JourneyInput): Journey {
  const { order } = input;
  const net = order.total_target - order.refunded_target;
  const touches = [...input.touches].sort(
    (a, b) => a.touch_ms - b.touch_ms || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0),
  );
  const inWindow = touches.filter((t) => t.in_window === 1);
  const at = new Map(inWindow.map((t, i) => [t, i]));
  const credit = new Map<AttributionModel, { share: number[]; revenue: number[] }>();
  for (const m of ATTRIBUTION_MODELS) {
    const shares = touchShares(
      m,
      inWindow.map((t) => ({ time: t.touch_ms, eventId: t.event_id })),
      input.halfLifeDays,
    );
    const revenues = shares.map((s) => s * net);
    // any_click gives every touch the whole order: nothing to add up.
    credit.set(
      m,
      m === "any_click"
        ? { share: shares, revenue: revenues.map((r) => roundHalfAway(r, 2)) }
        : { share: roundAddingUp(shares, 4), revenue: roundAddingUp(revenues, 2) },
    );
  }
  const orderMerge =
    order.linked_to !== "" ? canonicalLink(order.stored_id, order.linked_to, order.linked_ms) : null;
  const shaped: JourneyTouch[] = touches.map((t) => {
    const i = at.get(t);
    // Rows carrying the same id are one identity already; otherwise the links each side crossed.
    const merges: IdentityLink[] = [];
    if (t.stored_id !== order.stored_id) {
      if (t.linked_to !== "") merges.push(canonicalLink(t.stored_id, t.linked_to, t.linked_ms));
      if (orderMerge) merges.push(orderMerge);
    }
    return {
      eventId: t.event_id,
      time: iso(t.touch_ms),
      channel: text(t.channel),
      source: text(t.source),
      medium: text(t.medium),
      campaign: text(t.campaign),
      campaignId: text(t.campaign_id),
      adsetId: text(t.adset_id),
      adId: text(t.ad_id),
      clickIdType: text(t.click_id_type),
      landingPage: text(input.landingPages.get(pageKey(t.event_id, t.touch_ms)) ?? ""),
      inWindow: i !== undefined,
      identity: { identityId: text(t.identity_id), canonicalId: t.stored_id, merges },
      credit: mapModels((m) => (i === undefined ? 0 : credit.get(m)!.share[i]!)),
      revenue: mapModels((m) => (i === undefined ? 0 : credit.get(m)!.revenue[i]!)),
    };
  });
  const older = touches[0]?.older ?? 0;
  return {
    order: {
      orderId: order.order_id,
      createdAt: iso(order.created_ms),
      status: order.status,
      currency: order.currency,
      totalPrice: roundHalfAway(order.total_price, 4),
      value: {
        currency: input.currency,
        total: roundHalfAway(order.total_target, 2),
        refunds: roundHalfAway(order.refunded_target, 2),
        net: roundHalfAway(net, 2),
      },
      identity: {
        storedId: order.stored_id,
        canonicalId: order.linked_to !== "" ? order.linked_to : order.stored_id,
        merge: orderMerge,
      },
    },
    attribution: {
      window: input.window,
      halfLifeDays: input.halfLifeDays,
      touchesInWindow: inWindow.length,
      olderTouchesOmitted: older - (touches.length - inWindow.length),
    },
    touches: shaped,
    identityLinks: input.links.map((l) => ({
      aliasType: l.alias_type,
      aliasValue: l.alias_value,
      canonicalId: l.linked_to,
      firstSeen: iso(l.linked_ms),
    })),
    identityLinksOmitted: Math.max(0, input.linksTotal - input.links.length),
  };
}

function mapModels(f: (m: AttributionModel) => number): Record<AttributionModel, number> {
  return Object.fromEntries(ATTRIBUTION_MODELS.map((m) => [m, f(m)])) as Record<AttributionModel, number>;
}
