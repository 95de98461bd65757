/** Generated realistic orders for the import benchmark, streamed to a JSON Lines file. */
import { once } from "node:events";
import { createWriteStream } from "node:fs";

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const CURRENCIES = ["USD", "USD", "USD", "EUR", "EUR", "GBP", "CAD", "AUD"];
const STATUSES = [
  "paid",
  "paid",
  "paid",
  "paid",
  "paid",
  "pending",
  "refunded",
  "partially_refunded",
  "voided",
] as const;
const SOURCES = ["web", "web", "web", "pos", "shopify_draft_order", "iphone"];
const COUNTRIES = ["US", "US", "US", "DE", "FR", "GB", "CA", "AU", "NL", "SE"];
const TAGS = [[], [], ["vip"], ["wholesale"], ["first-order"], ["subscription", "vip"]];
const CODES = [[], [], [], ["WELCOME10"], ["SPRING25"], ["FREESHIP"]];

/** Streams N orders to a JSON Lines file (never all in memory); ~40% repeat customers. */
export async function generateOrders(path: string, n: number): Promise<number> {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out = createWriteStream(path);
  const customers = Math.max(1, Math.floor(n * 0.6));
  const start = Date.parse("2025-01-01T00:00:00Z");
  const span = 365 * 24 * 3600 * 1000;
  for (let i = 0; i < n; i++) {
    const created = start + Math.floor((i / n) * span) + Math.floor(r() * 60_000);
    const items = 1 + Math.floor(r() * r() * 5);
    const lineItems = [];
    let subtotal = 0;
    for (let k = 0; k < items; k++) {
      const product = Math.floor(r() * 400);
      const price = Math.round((5 + r() * 120) * 100) / 100;
      const quantity = 1 + Math.floor(r() * r() * 3);
      subtotal += price * quantity;
      lineItems.push({
        productId: `gid-p-${product}`,
        variantId: `gid-v-${product}-${Math.floor(r() * 4)}`,
        sku: `SKU-${product}`,
        quantity,
        price,
      });
    }
    const shipping = subtotal > 75 ? 0 : 6.95;
    const discounts = r() < 0.2 ? Math.round(subtotal * 10) / 100 : 0;
    const tax = Math.round((subtotal - discounts) * 8) / 100;
    const customer = Math.floor(r() * customers);
    const status = pick(STATUSES);
    const order = {
      id: `${5_000_000_000 + i}`,
      createdAt: new Date(created).toISOString(),
      processedAt: new Date(created + 2000).toISOString(),
      cancelledAt: status === "voided" ? new Date(created + 3_600_000).toISOString() : null,
      currency: pick(CURRENCIES),
      totalPrice: Math.round((subtotal - discounts + shipping + tax) * 100) / 100,
      subtotalPrice: Math.round(subtotal * 100) / 100,
      totalShipping: shipping,
      totalTax: tax,
      totalDiscounts: discounts,
      financialStatus: status,
      sourceName: pick(SOURCES),
      gateway: "shopify_payments",
      tags: pick(TAGS),
      discountCodes: pick(CODES),
      country: pick(COUNTRIES),
      customer: r() < 0.05 ? {} : { id: `cust-${customer}`, email: `Customer.${customer}@example.com` },
      lineItems,
      updatedAt: new Date(created + 5000).toISOString(),
    };
    if (!out.write(`${JSON.stringify(order)}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
  return n;
}
