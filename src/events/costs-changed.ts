import { envelope } from "../shared/days.js";
import type { SqlExecutor } from "../stores/sql/port.js";

/**
 * The recalculation trigger: one `outbox` row, topic `costs.changed`, written in the same transaction
 * as the cost change it announces (src/costs/CONTEXT.md documents the payload). The per-order cost
 * snapshot worker reads these rows to find the orders whose snapshot may have changed.
 */
export const COSTS_CHANGED = "costs.changed";

export type CostChangeKind = "cost_line" | "variant_cog" | "handling_fee" | "global_product_override";

export interface DayRange {
  /** First affected day (account timezone), inclusive; null = since the beginning. */
  from: string | null;
  /** Last affected day, inclusive; null = open-ended. */
  to: string | null;
}

export interface CostsChanged {
  v: 1;
  kind: CostChangeKind;
  action: "created" | "updated" | "deleted";
  accountId: string;
  /** The pixel whose catalog changed; null for account-level changes (every pixel of the account). */
  pixelId: string | null;
  /** For cost lines: order, gateway or shipping. */
  costType: string | null;
  /** Variants whose orders are affected; null = not limited to variants. */
  variants: { productId: string; variantId: string }[] | null;
  /** Days on which the cost may differ: the envelope of every old and new line's range. */
  dateRange: DayRange;
  /** Timezone of the days above (the account's). */
  timezone: string;
  /** Each changed record before and after (null when created / deleted); a deleted line travels whole. */
  changes: { old: object | null; new: object | null }[];
  /** `cli:<apiKeyPk>` for API-key writes, as for accountUpdated. */
  actor: string;
  occurredAt: string;
}

type Dated = { effectiveStartDate?: string | null; effectiveEndDate?: string | null };

/** The envelope of the ranges of every old and new version of the changed records. */
export function rangeOfChanges(changes: CostsChanged["changes"]): DayRange {
  const ranges: DayRange[] = [];
  for (const c of changes) {
    for (const side of [c.old, c.new] as (Dated | null)[]) {
      if (side) ranges.push({ from: side.effectiveStartDate ?? null, to: side.effectiveEndDate ?? null });
    }
  }
  return envelope(ranges);
}

export async function writeCostsChanged(
  tx: SqlExecutor,
  event: Omit<CostsChanged, "v" | "occurredAt">,
): Promise<void> {
  const payload: CostsChanged = { v: 1, ...event, occurredAt: new Date().toISOString() };
  await tx.query("INSERT INTO outbox (topic, payload) VALUES ($1, $2)", [COSTS_CHANGED, payload]);
}
