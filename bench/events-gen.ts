/** Realistic storefront events for benchmarks: deterministic from a seed, unique event ids. */

const USER_AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
];
const LANDINGS = [
  "https://shop.example.com/products/linen-shirt?utm_source=facebook&utm_medium=paid_social&utm_campaign=spring&utm_id=120200&adset_id=7781&ad_id=99812&fbclid=IwAR2x",
  "https://shop.example.com/collections/summer?utm_source=google&utm_medium=cpc&utm_campaign=brand&gclid=Cj0KCQjw",
  "https://shop.example.com/?utm_source=klaviyo&utm_medium=email&utm_campaign=newsletter-42",
  "https://shop.example.com/products/canvas-tote",
  "https://shop.example.com/cart",
];
const REFERRERS = [
  "https://www.google.com/",
  "https://l.facebook.com/",
  "",
  "https://news.example.org/story",
];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function makeBatches(count: number, perBatch: number, seed = 1, idPrefix = "bench"): string[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: string[] = [];
  let n = 0;
  for (let b = 0; b < count; b++) {
    const events: object[] = [];
    for (let i = 0; i < perBatch; i++) {
      n++;
      const visitor = Math.floor(r() * 20_000);
      const kind = r();
      const name = kind < 0.7 ? "page_view" : kind < 0.9 ? "add_to_cart" : "purchase";
      const event: Record<string, unknown> = {
        name,
        eventId: `${idPrefix}-${seed}-${n}`,
        identityId: `anon-${visitor}`,
        ipAddress: `198.51.${visitor % 250}.${(visitor * 7) % 250}`,
        userAgent: pick(USER_AGENTS),
        locale: "en-US",
        page: { url: pick(LANDINGS) },
        referrer: pick(REFERRERS),
        viewport: { viewportWidth: 1280, viewportHeight: 800, pageHeight: 3200, devicePixelRatio: 2 },
      };
      if (name !== "page_view") {
        const qty = 1 + Math.floor(r() * 3);
        const price = Math.round(r() * 9000 + 500) / 100;
        event.eventProperties = {
          value: Math.round(qty * price * 100) / 100,
          currency: "USD",
          items: [{ id: `sku-${Math.floor(r() * 500)}`, name: "Linen shirt", price, quantity: qty }],
          ...(name === "purchase" ? { orderId: `order-${seed}-${n}` } : {}),
        };
        if (name === "purchase") event.userProperties = { emails: [`buyer${visitor}@example.com`] };
      }
      events.push(event);
    }
    out.push(JSON.stringify({ events }));
  }
  return out;
}
