import { type CogLine, type VariantCostFacts, type VariantKey, variantKey } from "../costs/resolve.js";
import { fromNumeric } from "../shared/money.js";
import type { SqlExecutor } from "../stores/sql/port.js";
import { chronological } from "./cog-rules.js";

/**
 * Loading what COGS resolution needs for many variants in two queries (one for the variants, one for
 * every cost line), for the variant cost endpoint and for the per-order snapshot worker alike.
 */

export interface CogLineRow {
  id: string;
  source: "manual" | "store";
  cost: string;
  start: string;
  end: string | null;
  description: string | null;
}

/** Columns of `variant_cost_lines` as `CogLineRow` (dates as text: no local-time Date conversion). */
export const COG_LINE_COLUMNS = `id, source, cost::text AS cost, effective_start::text AS start,
  effective_end::text AS "end", description`;

export const toCogLine = (r: CogLineRow): CogLine => ({
  id: r.id,
  cost: fromNumeric(r.cost),
  effectiveStartDate: r.start,
  effectiveEndDate: r.end,
  ...(r.description !== null ? { description: r.description } : {}),
});

/** Manual and store histories of rows of one variant, each chronological. */
export function histories(rows: readonly CogLineRow[]): { manual: CogLine[]; store: CogLine[] } {
  const manual = rows
    .filter((r) => r.source === "manual")
    .map(toCogLine)
    .sort(chronological);
  const store = rows
    .filter((r) => r.source === "store")
    .map(toCogLine)
    .sort(chronological);
  return { manual, store };
}

/** Variants $2 (product ids) / $3 (variant ids) of pixel $1, one primary-key probe each. */
export const VARIANT_FACTS_SQL = `SELECT v.product_id, v.variant_id, v.currency, v.current_price, v.handling_fee
FROM unnest($2::text[], $3::text[]) AS k(p, v)
CROSS JOIN LATERAL (
  SELECT product_id, variant_id, currency, current_price::text AS current_price,
    handling_fee::text AS handling_fee
  FROM variants WHERE pixel_id = $1 AND product_id = k.p AND variant_id = k.v LIMIT 1
) AS v`;

/** Their COG lines, one index probe per variant (OFFSET 0 keeps the subquery a subquery: a variant has several lines, so no LIMIT). */
export const VARIANT_LINES_SQL = `SELECT l.* FROM unnest($2::text[], $3::text[]) AS k(p, v)
CROSS JOIN LATERAL (
  SELECT product_id, variant_id, ${COG_LINE_COLUMNS} FROM variant_cost_lines
  WHERE pixel_id = $1 AND product_id = k.p AND variant_id = k.v OFFSET 0
) AS l`;

/**
 * Facts of the given variants of a pixel, keyed by `variantKey`; unknown variants are absent.
 *
 * Each variant is one index probe (a LATERAL subquery the planner cannot turn into a join): embedded
 * Postgres gathers no statistics, and `(product_id, variant_id) IN (…)` over a batch's thousand
 * variants was planned as a read of the pixel's whole catalog hashed against them (both queries
 * 158–187 ms for 1,000 of 200,000 variants, growing with the catalog; as probes 50–70 ms).
 */
export async function loadVariantCostFacts(
  sql: SqlExecutor,
  pixelId: string,
  keys: readonly VariantKey[],
): Promise<Map<string, VariantCostFacts>> {
  const out = new Map<string, VariantCostFacts>();
  if (keys.length === 0) return out;
  const unique = new Map(keys.map((k) => [variantKey(k), k]));
  const params = [
    pixelId,
    [...unique.values()].map((k) => k.productId),
    [...unique.values()].map((k) => k.variantId),
  ];
  const { rows: variants } = await sql.query<{
    product_id: string;
    variant_id: string;
    currency: string;
    current_price: string;
    handling_fee: string;
  }>(VARIANT_FACTS_SQL, params);
  const { rows: lines } = await sql.query<CogLineRow & { product_id: string; variant_id: string }>(
    VARIANT_LINES_SQL,
    params,
  );
  const linesOf = new Map<string, CogLineRow[]>();
  for (const l of lines) {
    const k = variantKey({ productId: l.product_id, variantId: l.variant_id });
    const list = linesOf.get(k);
    if (list) list.push(l);
    else linesOf.set(k, [l]);
  }
  for (const v of variants) {
    const k = variantKey({ productId: v.product_id, variantId: v.variant_id });
    out.set(k, {
      ...histories(linesOf.get(k) ?? []),
      currentPrice: fromNumeric(v.current_price),
      currency: v.currency,
      handlingFee: fromNumeric(v.handling_fee),
    });
  }
  return out;
}
