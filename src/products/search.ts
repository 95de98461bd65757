import type { SqlExecutor } from "../stores/sql/port.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { COG_LINE_COLUMNS, type CogLineRow, histories } from "./facts.js";
import { type Product, SEARCH_DEFAULT_LIMIT } from "./schemas.js";

/**
 * Catalog search (docs/products.md). Items are products, in product id order, paged by keyset (the
 * cursor holds the last product id). A product is an item when its title, or the title or SKU of one
 * of its variants, contains the term (ILIKE, so case-insensitive with the database's case rules).
 * Matching rows come from the trigram GIN indexes of migration 006; an empty term walks the products'
 * primary key. An item lists all its variants when the product title matched, otherwise only the
 * variants that matched.
 */

/** `q` as a LIKE pattern matching it anywhere: %, _ and \ in the term are literal. */
export const containsPattern = (q: string) => `%${q.replace(/[\\%_]/g, "\\$&")}%`;

/** Product ids of one page (limit + 1 rows, the extra one telling whether a next page exists). */
export const SEARCH_IDS_SQL = `SELECT product_id FROM (
    SELECT product_id FROM products WHERE pixel_id = $1 AND product_id > $2 AND title ILIKE $3
    UNION
    SELECT product_id FROM variants WHERE pixel_id = $1 AND product_id > $2 AND (title ILIKE $3 OR sku ILIKE $3)
  ) hits ORDER BY product_id LIMIT $4`;
const ALL_IDS_SQL = `SELECT product_id FROM products WHERE pixel_id = $1 AND product_id > $2
  ORDER BY product_id LIMIT $3`;

export async function searchProducts(
  sql: SqlExecutor,
  pixelId: string,
  input: { q: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<{ items: Product[]; nextCursor?: string }> {
  const limit = input.limit ?? SEARCH_DEFAULT_LIMIT;
  const after = input.cursor === undefined ? "" : decodeCursor(input.cursor, input.q);
  const pattern = containsPattern(input.q);
  const { rows } = input.q
    ? await sql.query<{ product_id: string }>(SEARCH_IDS_SQL, [pixelId, after, pattern, limit + 1])
    : await sql.query<{ product_id: string }>(ALL_IDS_SQL, [pixelId, after, limit + 1]);
  const ids = rows.slice(0, limit).map((r) => r.product_id);
  const items = await loadItems(sql, pixelId, ids, input.q ? pattern : null);
  const last = ids[ids.length - 1];
  return rows.length > limit && last !== undefined
    ? { items, nextCursor: encodeCursor(last, input.q) }
    : { items };
}

async function loadItems(
  sql: SqlExecutor,
  pixelId: string,
  ids: string[],
  pattern: string | null,
): Promise<Product[]> {
  if (ids.length === 0) return [];
  const { rows: products } = await sql.query<{
    product_id: string;
    title: string;
    vendor: string;
    hit: boolean;
  }>(
    `SELECT product_id, title, vendor, ($3::text IS NULL OR title ILIKE $3) AS hit
     FROM products WHERE pixel_id = $1 AND product_id = ANY($2::text[])`,
    [pixelId, ids, pattern],
  );
  const { rows: variants } = await sql.query<{
    product_id: string;
    variant_id: string;
    sku: string;
    title: string;
    handling_fee: string;
    hit: boolean;
  }>(
    `SELECT product_id, variant_id, sku, title, handling_fee::text AS handling_fee,
       ($3::text IS NULL OR title ILIKE $3 OR sku ILIKE $3) AS hit
     FROM variants WHERE pixel_id = $1 AND product_id = ANY($2::text[]) ORDER BY product_id, variant_id`,
    [pixelId, ids, pattern],
  );
  const { rows: lines } = await sql.query<CogLineRow & { product_id: string; variant_id: string }>(
    `SELECT product_id, variant_id, ${COG_LINE_COLUMNS} FROM variant_cost_lines
     WHERE pixel_id = $1 AND product_id = ANY($2::text[]) AND source = 'manual'`,
    [pixelId, ids],
  );
  const linesOf = groupBy(lines, (l) => `${l.product_id}\u0000${l.variant_id}`);
  const variantsOf = groupBy(variants, (v) => v.product_id);
  const byId = new Map(products.map((p) => [p.product_id, p]));
  return ids.flatMap((pid) => {
    const p = byId.get(pid);
    if (!p) return [];
    return [
      {
        id: pid,
        title: p.title,
        vendor: p.vendor,
        variants: (variantsOf.get(pid) ?? [])
          .filter((v) => p.hit || v.hit)
          .map((v) => ({
            id: v.variant_id,
            productId: pid,
            sku: v.sku,
            title: v.title,
            handlingFee: Number(v.handling_fee),
            manualCostHistory: histories(linesOf.get(`${pid}\u0000${v.variant_id}`) ?? []).manual,
          })),
      },
    ];
  });
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
