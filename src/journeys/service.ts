import { DEFAULT_HALF_LIFE_DAYS } from "../query/attribution-models.js";
import { checkRates } from "../query/evaluate.js";
import { ownedOrNotFound } from "../shared/ownership.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { DEFAULT_WINDOW, type Journey } from "./schemas.js";
import { type LinkRow, type OrderRow, pageKey, shapeJourney, type TouchRow } from "./shape.js";
import {
  identityLinksStatement,
  landingPagesStatement,
  orderStatement,
  type Statement,
  touchesStatement,
} from "./sql.js";

export const ORDER_NOT_FOUND = "Order not found";
/** Touches before the window are context, not credit: the latest this many are listed. */
export const OLDER_TOUCHES_LIMIT = 100;
/** An identity's aliases listed at most (a frequent buyer has one per order). */
export const IDENTITY_LINKS_LIMIT = 500;

export interface JourneyOptions {
  currency?: string | undefined;
  window?: number | undefined;
  halfLifeDays?: number | undefined;
}

/**
 * One order's journey (docs/journeys.md): the order and its value, the touches attribution joins to
 * it with each one's credit under every model, and the identity links behind them. Reads the
 * warehouse only; the order is looked up within the caller's pixel, so another pixel's order and a
 * missing one are the same 404.
 */
export class JourneyService {
  constructor(private readonly warehouse: Pick<WarehouseStore, "query">) {}

  async journey(pixelId: string, orderId: string, options: JourneyOptions = {}): Promise<Journey> {
    const currency = options.currency ?? "USD";
    const window = options.window ?? DEFAULT_WINDOW;
    const halfLifeDays = options.halfLifeDays ?? DEFAULT_HALF_LIFE_DAYS;
    const o = orderStatement(pixelId, orderId, currency);
    const orderRows = await this.warehouse.query<OrderRow & { fx_missing: string }>(o.sql, o.params);
    const row = ownedOrNotFound(
      orderRows[0] ? { ...orderRows[0], pixelId } : null,
      { pixelId },
      ORDER_NOT_FOUND,
    );
    checkRates(orderRows.map((r) => ({ fx_missing: r.fx_missing })));
    const identity = row.linked_to !== "" ? row.linked_to : row.stored_id;
    // An order stored without an identity joins no touch (attribution requires one on both sides).
    const [touches, links] =
      identity === ""
        ? [[], []]
        : await Promise.all([
            this.read<TouchRow>(
              touchesStatement(pixelId, identity, new Date(row.created_ms), window, OLDER_TOUCHES_LIMIT),
            ),
            this.read<LinkRow & { total: number }>(
              identityLinksStatement(pixelId, identity, IDENTITY_LINKS_LIMIT),
            ),
          ]);
    const landingPages = new Map<string, string>();
    if (touches.length > 0) {
      const pages = await this.read<{ event_id: string; time_ms: number; page_url: string }>(
        landingPagesStatement(
          pixelId,
          touches.map((t) => ({ eventId: t.event_id, time: t.touch_ms })),
        ),
      );
      for (const p of pages) landingPages.set(pageKey(p.event_id, p.time_ms), p.page_url);
    }
    return shapeJourney({
      order: row,
      touches,
      landingPages,
      links,
      linksTotal: links[0]?.total ?? 0,
      currency,
      window,
      halfLifeDays,
    });
  }

  private read<T>(s: Statement): Promise<T[]> {
    return this.warehouse.query<T>(s.sql, s.params);
  }
}
