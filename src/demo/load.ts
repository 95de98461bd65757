import { createReadStream } from "node:fs";
import { createLineBody, LINE_COST_TYPES } from "../costs/schemas.js";
import type { IngestContext } from "../ingest/normalize.js";
import type { Services } from "../services.js";
import { ulidFactory } from "../shared/random.js";
import type { Stores } from "../stores/index.js";
import { readRecords } from "../sync/read-records.js";
import type { RecordKind } from "../sync/schemas.js";
import { makeAds } from "./ads.js";
import { makeCatalog } from "./catalog.js";
import { makeVisitor } from "./journeys.js";
import { createOverview } from "./overview.js";
import { Random } from "./random.js";

/** `conversion`: purchase chance per session of a visitor; `repeat`: chance a buyer buys once more. */
export const SCALES = {
  small: { visitors: 2_500, products: 20, days: 30, conversion: 0.045, repeat: 0.35 },
  medium: { visitors: 40_000, products: 60, days: 90, conversion: 0.045, repeat: 0.35 },
  // A busy store for benchmarks: ≥ 10M events and ≥ 300k orders.
  large: { visitors: 1_650_000, products: 200, days: 365, conversion: 0.1, repeat: 0.5 },
} as const;
export type Scale = keyof typeof SCALES;

export interface DemoOptions {
  pixelId: string;
  scale: Scale;
  days?: number;
  seed: number;
  /** Progress: called with a phase name and a fraction done (0..1). */
  progress?: (phase: string, done: number) => void;
  /** The day the history ends before (default: today, UTC); fixed in tests so two loads match. */
  today?: Date;
  /** Stops the load between steps (a server shutting down while its first-start demo loads). */
  signal?: AbortSignal;
}

export interface DemoSummary {
  pixelId: string;
  days: number;
  products: number;
  variants: number;
  adEntities: number;
  adMetricDays: number;
  visitors: number;
  eventsSent: number;
  eventsIngested: number;
  orders: number;
  refunds: number;
  fxRates: number;
  costLines: number;
}

const DAY = 86_400_000;
/** Ingest requests the loader keeps open at once (one per visitor's browser events, 100 server events). */
const MAX_IN_FLIGHT = 2048;
const FX_FILE = new URL("../../data/fx/demo-rates.csv", import.meta.url);

/**
 * Generates a believable store from a seed and loads it the way production data arrives: events
 * through the ingestion pipeline (browser and server origins), catalog, orders, refunds and ads through
 * the sync service, FX rates from the shipped demo rates file. Deterministic for a seed and an as-of day.
 */
export async function loadDemo(
  services: Services,
  stores: Stores,
  options: DemoOptions,
): Promise<DemoSummary> {
  const scale = SCALES[options.scale];
  const days = options.days ?? scale.days;
  const rng = new Random(options.seed);
  const today = new Date(`${(options.today ?? new Date()).toISOString().slice(0, 10)}T00:00:00Z`);
  const windowStart = today.getTime() - days * DAY;
  const dates = Array.from({ length: days }, (_, i) =>
    new Date(windowStart + i * DAY).toISOString().slice(0, 10),
  );
  const progress = options.progress ?? (() => {});
  const summary: DemoSummary = {
    pixelId: options.pixelId,
    days,
    products: 0,
    variants: 0,
    adEntities: 0,
    adMetricDays: 0,
    visitors: scale.visitors,
    eventsSent: 0,
    eventsIngested: 0,
    orders: 0,
    refunds: 0,
    fxRates: 0,
    costLines: 0,
  };
  const sync = async (
    kind: RecordKind,
    records: readonly unknown[],
    pixel: string | null = options.pixelId,
  ) => {
    for (let i = 0; i < records.length; i += 1000) {
      const r = await services.sync.upsert(kind, pixel, records.slice(i, i + 1000));
      if (r.rejected.length) throw new Error(`demo ${kind} rejected: ${JSON.stringify(r.rejected[0])}`);
    }
  };

  progress("fx rates", 0);
  const fx: unknown[] = [];
  for await (const item of readRecords(createReadStream(FX_FILE), "csv", "fx-rates")) {
    if ("record" in item) fx.push(item.record);
  }
  await sync("fx-rates", fx, null);
  summary.fxRates = fx.length;

  progress("catalog", 0);
  const catalog = makeCatalog(rng, scale.products, today);
  await sync("products", catalog.records);
  summary.products = catalog.records.length;
  summary.variants = catalog.variants.length;

  progress("ads", 0);
  const ads = makeAds(rng, dates, today);
  await sync("ad-entities", ads.entities);
  await sync("ad-metrics", ads.metrics);
  summary.adEntities = ads.entities.length;
  summary.adMetricDays = ads.metrics.length;

  summary.costLines = await addCostLines(services, stores, options.pixelId);

  // Visitors go through ingestion concurrently so group commit can batch them, as live traffic would.
  // Thousands in flight make groups of thousands of events: an embedded warehouse INSERT costs about
  // the same for 200 rows as for 2,000, so 64 in flight spent most of the load on per-INSERT costs.
  const inFlight = new Set<Promise<void>>();
  // One id per ingest call, millions in a large load: ulid's default source draws 16 random values
  // per id (12 % of the main thread in a profile of the load), the pooled factory one pool refill
  // per 4,096 characters.
  const requestId = ulidFactory();
  let orderSync: Promise<void> = Promise.resolve();
  const serverBatch: Record<string, unknown>[] = [];
  const orders: unknown[] = [];
  const refunds: unknown[] = [];
  const ingest = (
    ctx: Omit<IngestContext, "requestId" | "receivedAtMs" | "ipPrefix">,
    events: Record<string, unknown>[],
  ) => {
    summary.eventsSent += events.length;
    const p = services.ingest
      .ingest(
        {
          ...ctx,
          requestId: requestId(),
          receivedAtMs: Date.now(),
          ipPrefix: { v4PrefixBits: 24, v6PrefixBits: 48 },
        },
        events,
      )
      .then((r) => {
        summary.eventsIngested += r.eventsIngested;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  };
  try {
    for (let n = 0; n < scale.visitors; n++) {
      if (options.signal?.aborted) {
        await Promise.allSettled([...inFlight, orderSync]);
        options.signal.throwIfAborted();
      }
      const v = makeVisitor(
        rng,
        n,
        windowStart,
        days,
        catalog.variants,
        ads.ads,
        scale.conversion,
        scale.repeat,
        // Visitors arrive in time order, as live traffic does: a group of concurrent requests then
        // holds days, not the whole year, so its INSERT writes one or two monthly parts, not thirteen.
        (n + rng.next()) / scale.visitors,
      );
      for (let i = 0; i < v.browserEvents.length; i += 100) {
        ingest(
          { pixelId: options.pixelId, origin: "browser", connection: { ip: v.ip, userAgent: v.userAgent } },
          v.browserEvents.slice(i, i + 100),
        );
      }
      serverBatch.push(...v.serverEvents);
      orders.push(...v.orders);
      refunds.push(...v.refunds);
      if (serverBatch.length >= 100)
        ingest({ pixelId: options.pixelId, origin: "server" }, serverBatch.splice(0, 100));
      if (orders.length >= 1000) {
        // One sync at a time, in order, beside the loop: awaited inline, it stopped new visitors (and so
        // ingestion's groups) for as long as each thousand orders took to store.
        await orderSync;
        orderSync = sync("orders", orders.splice(0, 1000));
        orderSync.catch(() => {}); // surfaced when awaited above or after the loop
      }
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      summary.orders += v.orders.length;
      summary.refunds += v.refunds.length;
      if (n % 500 === 0) progress("visitors", n / scale.visitors);
    }
    if (serverBatch.length) ingest({ pixelId: options.pixelId, origin: "server" }, serverBatch.splice(0));
    await Promise.all(inFlight);
  } finally {
    // Never left writing behind a load that stopped: the stores close after this returns.
    await orderSync.catch(() => {});
  }
  await orderSync;
  await sync("orders", orders);
  await sync("refunds", refunds);
  progress("visitors", 1);
  await createOverview(services.dashboards, stores.sql, options.pixelId);
  return summary;
}

/**
 * Account cost lines (gateway fees, shipping, packaging, agency fee, software), added
 * through the cost service as an API client would add them (validated, with their outbox rows). An
 * account that has cost lines already is left as it is.
 */
async function addCostLines(services: Services, stores: Stores, pixelId: string): Promise<number> {
  const lines = [
    ["gateway", { name: "Stripe", gateway: "stripe", percentRate: 2.9, fixedFee: 0.3, currency: "USD" }],
    ["gateway", { name: "PayPal", gateway: "paypal", percentRate: 3.49, fixedFee: 0.49, currency: "USD" }],
    ["shipping", { name: "Standard shipping", costPerOrder: 5.5, costPerItem: 0.5, currency: "USD" }],
    ["order", { name: "Packaging", amount: 0.85, currency: "USD" }],
    [
      "variable",
      {
        name: "Agency fee",
        type: "pct_ad_spend",
        percentRate: 5,
        category: "marketing",
        channel: "online",
        currency: "USD",
      },
    ],
    [
      "fixed",
      { name: "Store software", amount: 299, frequency: "monthly", category: "software", currency: "USD" },
    ],
  ].map(([costType, line]) => createLineBody.parse({ costType, line }));
  const { rows } = await stores.sql.query<{ account_id: string }>(
    "SELECT account_id FROM pixels WHERE id = $1",
    [pixelId],
  );
  const accountId = rows[0]?.account_id;
  if (!accountId) throw new Error(`pixel ${pixelId} not found`);
  const config = await services.costs.config(accountId);
  if (LINE_COST_TYPES.some((t) => (config[t]?.length ?? 0) > 0)) return 0;
  for (const body of lines) await services.costs.addLine(accountId, body, "system:demo");
  return lines.length;
}
