import type { ProductRecord } from "../sync/schemas.js";
import type { Random } from "./random.js";

const KINDS = [
  ["Linen shirt", "Apparel", 59],
  ["Canvas tote", "Bags", 29],
  ["Merino beanie", "Accessories", 35],
  ["Denim jacket", "Apparel", 129],
  ["Leather wallet", "Accessories", 49],
  ["Wool scarf", "Accessories", 45],
  ["Chino trousers", "Apparel", 79],
  ["Rain jacket", "Outerwear", 149],
  ["Cotton tee", "Apparel", 25],
  ["Weekender bag", "Bags", 189],
] as const;
const COLORS = ["Sand", "Navy", "Olive", "Black", "Rust"];
const SIZES = ["S", "M", "L", "XL"];

export interface CatalogVariant {
  productId: string;
  variantId: string;
  sku: string;
  title: string;
  price: number;
}

/** A believable catalog: products with sized/coloured variants, prices and store cost histories. */
export function makeCatalog(
  rng: Random,
  products: number,
  asOf: Date,
): { records: ProductRecord[]; variants: CatalogVariant[] } {
  const records: ProductRecord[] = [];
  const variants: CatalogVariant[] = [];
  for (let p = 0; p < products; p++) {
    const [name, type, base] = KINDS[p % KINDS.length]!;
    const color = COLORS[Math.floor(p / KINDS.length) % COLORS.length]!;
    const productId = `prod-${1000 + p}`;
    const price = Math.round(base * (0.9 + rng.next() * 0.3)) - 0.01;
    const title = `${name} — ${color}`;
    const vs = SIZES.slice(0, type === "Apparel" || type === "Outerwear" ? 4 : 1).map((size, i) => {
      const variantId = `${productId}-v${i + 1}`;
      const cost = Math.round(price * (0.28 + rng.next() * 0.12) * 100) / 100;
      variants.push({
        productId,
        variantId,
        sku: `${productId.toUpperCase()}-${size}`,
        title: `${title} / ${size}`,
        price,
      });
      return {
        id: variantId,
        sku: `${productId.toUpperCase()}-${size}`,
        title: size,
        currency: "USD",
        currentPrice: price,
        inventory: rng.int(0, 400),
        // The supplier raised prices once: an older, cheaper line closed by a newer open-ended one.
        storeCostHistory: [
          {
            cost: Math.round(cost * 0.92 * 100) / 100,
            effectiveStartDate: "2024-01-01",
            effectiveEndDate: "2025-12-31",
          },
          { cost, effectiveStartDate: "2026-01-01", effectiveEndDate: null },
        ],
        raw: { inventory_quantity: rng.int(0, 400), weight_grams: rng.int(100, 1500) },
      };
    });
    records.push({
      id: productId,
      title,
      handle: title.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
      vendor: "Demo Goods Co.",
      productType: type,
      status: "ACTIVE",
      tags: [type.toLowerCase(), color.toLowerCase()],
      imageUrls: [`https://cdn.demo.example/products/${productId}.jpg`],
      variants: vs,
      raw: {},
      updatedAt: asOf.toISOString(),
    });
  }
  return { records, variants };
}
