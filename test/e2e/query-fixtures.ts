/**
 * Shared helpers of the query engine end-to-end suites (query-*.test.ts): record builders for the
 * sync paths and the events API, exclusion filters in the stored shape, and readers of the query
 * response envelope. Fixtures themselves live in each suite, next to the figures worked out by hand;
 * query-setup.ts starts the app and stores them.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { BucketRow, MeasureDetail, QueryResult } from "../../src/query/responses.js";
import type { TestApp } from "../helpers/app.js";

export type Json = Record<string, unknown>;
export type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
export type Row = BucketRow;

/** The answers' shapes come from the service's own response schemas (src/query/responses.ts). */
export type Detail = MeasureDetail;
export type Result = QueryResult;

export interface Response {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

/** An order record of the sync format (paid, subtotal = total unless given). */
export const order = (
  id: string,
  createdAt: string,
  currency: string,
  totalPrice: number,
  extra: Json = {},
) => ({
  id,
  createdAt,
  currency,
  totalPrice,
  subtotalPrice: totalPrice,
  financialStatus: "paid",
  updatedAt: createdAt,
  ...extra,
});

export const refund = (id: string, orderId: string, createdAt: string, amount: number, currency = "USD") => ({
  id,
  orderId,
  createdAt,
  amount,
  currency,
});

/** An order line item: `quantity` of `sku` at `price` each. */
export const line = (sku: string, quantity: number, price = 10) => ({ sku, quantity, price });

/** An exchange rate of the fx-rates kind: units of `currency` per USD, from `date`. */
export const fxRate = (date: string, currency: string, unitsPerUsd: number) => ({
  date,
  currency,
  unitsPerUsd,
});

/** The entity a day of ad metrics belongs to (campaign level unless `level` says otherwise). */
export interface AdEntityRef {
  platform: string;
  entityId: string;
  accountId: string;
  level?: string;
}

/** A day of ad metrics for an entity; impressions, clicks, updatedAt… in `extra`. */
export const adMetric = (
  entity: AdEntityRef,
  date: string,
  currency: string,
  spend: number,
  extra: Json = {},
) => ({
  level: "campaign",
  ...entity,
  date,
  currency,
  spend,
  ...extra,
});

/** An ad entity (account, campaign, ad set or ad) as the platform lists it. */
export const adEntity = (
  platform: string,
  level: string,
  id: string,
  accountId: string,
  name: string,
  extra: Json = {},
) => ({
  platform,
  level,
  id,
  accountId,
  name,
  status: "ACTIVE",
  currency: "USD",
  sourceCreatedAt: "2026-01-01T00:00:00Z",
  sourceUpdatedAt: "2026-01-01T00:00:00Z",
  ...extra,
});

/** An event of the events API: page views, purchases (value in `eventProperties`), merges… */
export const event = (name: string, identityId: string, timestamp: string, extra: Json = {}) => ({
  name,
  identityId,
  timestamp,
  ...extra,
});

/** A touch: a page view landing on the shop with campaign parameters (`utm_source=…&fbclid=…`). */
export const touch = (identityId: string, timestamp: string, query: string, extra: Json = {}) =>
  event("page_view", identityId, timestamp, {
    page: { url: `https://shop.example/landing?${query}` },
    ...extra,
  });

/** User properties linking an event's identity to a store customer id (as the storefront pixel does). */
export const storeCustomer = (id: string) => ({ userProperties: { storeYIds: [id] } });

/** A stored-shape exclusion filter: groups of [field, operator, value] conditions with their logic. */
export function exclusion(
  name: string,
  groups: { logic: string; conditions: [field: string, operator: string, value: string][] }[],
  enabled = true,
) {
  return {
    id: randomUUID(),
    name,
    enabled,
    conditionGroups: groups.map((g) => ({
      id: randomUUID(),
      logic: g.logic,
      conditions: g.conditions.map(([field, operator, value]) => ({
        id: randomUUID(),
        field,
        operator,
        value,
      })),
    })),
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
  };
}

/** A poster for one pixel: the body gets the pixel id; default path the general query. */
export function poster(app: TestApp, px: Pixel) {
  return (body: Json, options: { path?: string; headers?: Record<string, string> } = {}): Promise<Response> =>
    app.call("POST", options.path ?? "/db-mgmt/api/query", {
      key: px.key,
      pixelId: px.pixelId,
      body: { pixelId: px.pixelId, ...body },
      headers: options.headers ?? {},
    });
}

/** The results of a 200 answer (fails with the body otherwise). */
export function resultsOf(res: Response): Result[] {
  expect(res.status, res.text).toBe(200);
  return (res.body as { results: Result[] }).results;
}

/** The only result of a query without dimensions. */
export function onlyResult(res: Response): Result {
  const results = resultsOf(res);
  expect(results, res.text).toHaveLength(1);
  return results[0]!;
}

/** Results keyed by dimension value. */
export function byValue(res: Response): Record<string, Result> {
  return Object.fromEntries(resultsOf(res).map((r) => [r.dimensionValue ?? "", r]));
}

/** A measure's primarySum per dimension value. */
export function sums(res: Response, measure: string): Record<string, number | null> {
  return Object.fromEntries(
    resultsOf(res).map((r) => [r.dimensionValue ?? "", detail(r, measure).primarySum]),
  );
}

export function detail(r: Result, measure: string): Detail {
  const d = r.measureDetails.find((x) => x.measure === measure);
  expect(d, `measureDetails of ${measure}`).toBeDefined();
  return d!;
}

/** primarySum of one measure of the only result. */
export function total(res: Response, measure: string): number | null {
  return detail(onlyResult(res), measure).primarySum;
}

/** A 400 whose message (or one of its issues) names every given word. */
export function expect400(res: Response, ...words: string[]): string {
  expect(res.status, res.text).toBe(400);
  const body = res.body as { message?: string; errors?: { message: string }[] };
  const text = [body.message ?? "", ...(body.errors ?? []).map((e) => e.message)].join(" | ");
  for (const w of words) expect(text, res.text).toContain(w);
  return text;
}
