import { z } from "zod";
import { checkRates } from "./evaluate.js";
import { printFilter } from "./filters/print.js";
import { attributionStatement, type Statement } from "./plan.js";
import type { ResolvedCreditedOrders } from "./resolve.js";
import { roundHalfAway } from "./rounding.js";
import { emitCreditedOrders } from "./sources/attribution.js";
import type { Table } from "./tabular.js";

/**
 * `POST /db-mgmt/api/query-attribution/orders` (docs/query.md, "Credited orders"): the orders behind
 * one row of an attribution answer, a page at a time. Plan and shape only; the service runs it.
 */

export interface CreditedOrdersPlan {
  statement: Statement;
  currency: string;
  limit: number;
  offset: number;
}

/** The one statement of a resolved listing. Pure, like every plan step. */
export function planCreditedOrders(r: ResolvedCreditedOrders, page = { limit: r.limit, offset: r.offset }) {
  const statement = attributionStatement("primary", "orders", (binder, derived) =>
    emitCreditedOrders(
      {
        binder,
        pixelId: r.pixelId,
        timezone: r.timezone,
        currency: r.currency,
        granularity: "none",
        range: r.periods.primary,
        orderSettings: r.settings,
        dimensions: [r.dimension],
        attribution: r.attribution,
        needsCustomerNumbering: r.numbering,
      },
      {
        valueSource: "orders",
        eventName: "purchase",
        convWhere: printFilter(r.conv, binder),
        touchWhere: printFilter(r.touch, binder),
      },
      { value: r.value, ...page },
      { derived },
    ),
  );
  return { statement, currency: r.currency, ...page } satisfies CreditedOrdersPlan;
}

export const creditedOrderSchema = z.object({
  orderId: z.string(),
  createdAt: z.string().meta({ description: "ISO 8601 instant (UTC)" }),
  value: z.number().meta({ description: "Net value (total − refunds) in `currency`, to the cent" }),
  credit: z.number().meta({
    description:
      "Share of the order credited to the value: 1 under first_click, last_click, any_click; a fraction (4 decimals) under the fractional models",
  }),
});

export const creditedOrdersAnswerSchema = z.object({
  orders: z.array(creditedOrderSchema),
  currency: z.string(),
  pagination: z.object({
    limit: z.number(),
    offset: z.number(),
    total: z.number(),
    hasMore: z.boolean(),
  }),
});
export type CreditedOrdersAnswer = z.infer<typeof creditedOrdersAnswerSchema>;

/** The engine's DateTime64 text (`2026-08-10 10:00:00.000`, UTC) as ISO 8601. */
const iso = (v: unknown) => `${String(v).replace(" ", "T")}Z`;

/**
 * The page's rows as the answer. `total` rides on every row, so a page past the end has none to
 * carry it: `totalPastEnd` is then asked for (a first page of one row) and used instead.
 */
export async function shapeCreditedOrders(
  plan: CreditedOrdersPlan,
  rows: Record<string, unknown>[],
  totalPastEnd: () => Promise<number>,
): Promise<CreditedOrdersAnswer> {
  checkRates(rows);
  const total = rows.length ? Number(rows[0]!.total) : plan.offset > 0 ? await totalPastEnd() : 0;
  return {
    orders: rows.map((r) => ({
      orderId: String(r.order_id),
      createdAt: iso(r.created_at),
      value: roundHalfAway(Number(r.value), 2),
      credit: roundHalfAway(Number(r.credit), 4),
    })),
    currency: plan.currency,
    pagination: {
      limit: plan.limit,
      offset: plan.offset,
      total,
      hasMore: plan.offset + rows.length < total,
    },
  };
}

/** `format=rows|csv`: one row per order. */
export function creditedOrdersTable(answer: CreditedOrdersAnswer): Table {
  return {
    columns: ["orderId", "createdAt", "value", "credit", "currency"],
    rows: answer.orders.map((o) => ({ ...o, currency: answer.currency })),
  };
}
