/**
 * The one setup of the query end-to-end suites (query-*.test.ts): the app over embedded stores (or
 * Redis), a pixel with a key of the scopes a suite needs, a poster for the query endpoints, and
 * loaders that store a fixture through the public paths — the sync service and the events API — and
 * fail on any record they refuse, so a suite's figures never rest on a silently dropped record.
 */
import { expect } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sendOk } from "./ingest-helpers.js";
import { type Pixel, poster } from "./query-fixtures.js";

export type Poster = ReturnType<typeof poster>;
type Records = readonly unknown[];

/** Stores records for one pixel; each call fails the test when a record is rejected. */
export interface Loader {
  orders(records: Records): Promise<void>;
  refunds(records: Records): Promise<void>;
  adEntities(records: Records): Promise<void>;
  adMetrics(records: Records): Promise<void>;
  /** Rates are global (every pixel converts with them). */
  fxRates(records: Records): Promise<void>;
  /** Through POST /tr/api/events, as one request. */
  events(events: Records): Promise<void>;
}

export interface QueryPixel {
  px: Pixel;
  post: Poster;
  load: Loader;
}

export interface QuerySuite extends QueryPixel {
  app: TestApp;
  /** Another pixel (with its own account) of the same app. */
  pixel(scopes?: string[]): Promise<QueryPixel>;
}

export interface QuerySuiteOptions {
  /** Scopes of the first pixel's key (default: analytics:read). */
  scopes?: string[];
  /** Environment of the app (ACCOUNT_CACHE_MS, rate limits…). */
  env?: Record<string, string>;
  kv?: "memory" | "redis";
}

export function loader(app: TestApp, px: Pixel): Loader {
  const sync = async (kind: Parameters<TestApp["services"]["sync"]["upsert"]>[0], records: Records) => {
    const r = await app.services.sync.upsert(kind, kind === "fx-rates" ? null : px.pixelId, records);
    expect(r.rejected, `${kind} refused`).toEqual([]);
    // Loaded means visible to queries: the identity worker has filed what was written.
    expect((await app.services.settle()).messages).toBe(0);
  };
  return {
    orders: (r) => sync("orders", r),
    refunds: (r) => sync("refunds", r),
    adEntities: (r) => sync("ad-entities", r),
    adMetrics: (r) => sync("ad-metrics", r),
    fxRates: (r) => sync("fx-rates", r),
    events: async (events) => {
      await sendOk(app, px, [...events]);
      expect((await app.services.settle()).messages).toBe(0);
    },
  };
}

/** Starts the app with one pixel. Close it with `app.close()` in the suite's afterAll. */
export async function startQuerySuite(options: QuerySuiteOptions = {}): Promise<QuerySuite> {
  const app = await startTestApp({
    ...(options.env ? { env: options.env } : {}),
    ...(options.kv ? { kv: options.kv } : {}),
  });
  const pixel = async (scopes = ["analytics:read"]): Promise<QueryPixel> => {
    const px = await app.pixelWithKey(scopes);
    return { px, post: poster(app, px), load: loader(app, px) };
  };
  return { app, pixel, ...(await pixel(options.scopes)) };
}
