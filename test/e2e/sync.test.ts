/**
 * The sync endpoints for connectors (docs/data-formats.md): POST /accounts/api/sync/{kind} over the real app and
 * embedded stores. Per kind: good batches land in the store (products in Postgres, the rest in the
 * warehouse, read with FINAL/argMax), bad records are rejected one by one with their index and
 * field, versions decide (newer → updated, same/older → unchanged, nothing written), duplicates in
 * a batch keep the newest, limits (1000 records, 5 MB), the sync:write scope and pixel isolation.
 * Then orders (email hashing, identity graph, orders.changed notices), product cost lines, money to the cent, and FX
 * rates through the service.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusMessage } from "../../src/stores/bus/port.js";
import type { SqlValue } from "../../src/stores/sql/port.js";
import type { SyncResult } from "../../src/sync/schemas.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { postChunked } from "./ingest-helpers.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

type Kind = "products" | "orders" | "refunds" | "ad-entities" | "ad-metrics";
type Json = Record<string, unknown>;
type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;

const KINDS: Kind[] = ["products", "orders", "refunds", "ad-entities", "ad-metrics"];
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

/** ISO time `minutes` after a fixed base, the versions the tests play with. */
const at = (minutes: number) =>
  new Date(Date.parse("2026-03-01T10:00:00.000Z") + minutes * 60_000).toISOString();

const newPixel = () => app.pixelWithKey(["sync:write", "events:write"]);

function sync(px: Pixel, kind: string, records: unknown[]) {
  return app.call("POST", `/accounts/api/sync/${kind}`, {
    key: px.key,
    pixelId: px.pixelId,
    body: { records },
  });
}

async function syncOk(px: Pixel, kind: Kind, records: unknown[]): Promise<SyncResult> {
  const res = await sync(px, kind, records);
  expect(res.status, res.text).toBe(200);
  const body = res.body as SyncResult;
  expect(Object.keys(body).sort()).toEqual(["accepted", "rejected", "unchanged", "updated"]);
  // The identity worker files the orders' aliases after the write; wait for it like a reader would.
  expect((await app.services.settle()).messages).toBe(0);
  return body;
}

const wh = <T = Json>(sql: string, params: Record<string, string> = {}) =>
  app.stores.warehouse.query<T>(sql, params);
const pg = async <T = Json>(sql: string, params: SqlValue[] = []) =>
  (await app.stores.sql.query<T & Record<string, unknown>>(sql, params)).rows as T[];

/** Rows of a pixel in a Postgres table. */
async function pgCount(table: string, pixelId: string): Promise<number> {
  const [row] = await pg<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE pixel_id = $1`, [
    pixelId,
  ]);
  return Number(row!.n);
}

/** Rows of a pixel in a warehouse table: the current ones (FINAL) or every stored version. */
async function whCount(table: string, pixelId: string, final: boolean): Promise<number> {
  const [row] = await wh<{ n: number }>(
    `SELECT count() AS n FROM ${table}${final ? " FINAL" : ""} WHERE pixel_id = {pixel:String}`,
    { pixel: pixelId },
  );
  return Number(row!.n);
}

function without(record: Json, ...keys: string[]): Json {
  const copy = { ...record };
  for (const k of keys) delete copy[k];
  return copy;
}

/** Everything of a pixel in the kind's tables, every stored version, as comparable text. */
async function rawSnapshot(kind: Kind, pixelId: string): Promise<string> {
  const tables: Record<Kind, string[]> = {
    products: [],
    orders: ["orders", "order_lines"],
    refunds: ["refunds"],
    "ad-entities": ["ad_entities"],
    "ad-metrics": ["ad_metrics_daily"],
  };
  const parts: string[] = [];
  if (kind === "products") {
    for (const t of ["products", "variants", "variant_cost_lines"]) {
      const rows = await pg(`SELECT * FROM ${t} WHERE pixel_id = $1`, [pixelId]);
      parts.push(...rows.map((r) => `${t} ${JSON.stringify(r)}`));
    }
  }
  for (const t of tables[kind]) {
    const rows = await wh(`SELECT * FROM ${t} WHERE pixel_id = {pixel:String}`, { pixel: pixelId });
    parts.push(...rows.map((r) => `${t} ${JSON.stringify(r)}`));
  }
  return parts.sort().join("\n");
}

interface KindCase {
  /** A valid record number `i` at version `version` carrying `value` in a money field. */
  make(i: number, version: string, value: number): Json;
  /** Current records of a pixel (FINAL). */
  count(pixelId: string): Promise<number>;
  /** Stored rows of a pixel, every version (no FINAL). */
  rawCount(pixelId: string): Promise<number>;
  /** The money field `make` filled, as stored now for record `i`; undefined when not stored. */
  valueOf(pixelId: string, i: number): Promise<number | undefined>;
  /** Bad records (built from a good one) and the fields their errors must name. */
  bad(good: Json): { record: Json; fields: string[] }[];
}

const one = async (rows: { v: unknown }[]) => (rows.length ? Number(rows[0]!.v) : undefined);

const CASES: Record<Kind, KindCase> = {
  products: {
    make: (i, version, value) => ({
      id: `p-${i}`,
      title: `Linen Shirt ${i}`,
      handle: `linen-shirt-${i}`,
      vendor: "Acme",
      productType: "Shirts",
      tags: ["summer", "linen"],
      imageUrls: [`https://cdn.example.com/p-${i}.jpg`],
      variants: [
        {
          id: `v-${i}-s`,
          sku: `LS-${i}-S`,
          title: "S",
          currency: "usd",
          currentPrice: value,
          inventory: 12,
          storeCostHistory: [{ cost: 11.5, effectiveStartDate: "2026-01-01" }],
        },
      ],
      updatedAt: version,
    }),
    count: (pixelId) => pgCount("products", pixelId),
    rawCount: (pixelId) => pgCount("products", pixelId),
    valueOf: async (pixelId, i) =>
      one(
        await pg<{ v: string }>(
          "SELECT current_price AS v FROM variants WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3",
          [pixelId, `p-${i}`, `v-${i}-s`],
        ),
      ),
    bad: (good) => [
      { record: without(good, "updatedAt"), fields: ["updatedAt"] },
      {
        record: {
          ...good,
          variants: [{ id: "v-x", storeCostHistory: [{ cost: -1, effectiveStartDate: "2026-01-01" }] }],
        },
        fields: ["variants.0.storeCostHistory.0.cost"],
      },
      {
        record: { ...good, variants: [{ id: "v-y", currency: "dollars" }] },
        fields: ["variants.0.currency"],
      },
    ],
  },
  orders: {
    make: (i, version, value) => ({
      id: `o-${i}`,
      createdAt: "2026-03-01T09:00:00+02:00",
      currency: "EUR",
      totalPrice: value,
      subtotalPrice: value,
      financialStatus: "paid",
      sourceName: "web",
      customer: { id: `c-${i}`, email: `buyer${i}@example.com` },
      lineItems: [{ productId: "p-1", variantId: "v-1-s", sku: "LS-1-S", quantity: 1, price: value }],
      updatedAt: version,
    }),
    count: (pixelId) => whCount("orders", pixelId, true),
    rawCount: (pixelId) => whCount("orders", pixelId, false),
    valueOf: async (pixelId, i) =>
      one(
        await wh<{ v: number }>(
          "SELECT total_price AS v FROM orders FINAL WHERE pixel_id = {pixel:String} AND order_id = {id:String}",
          { pixel: pixelId, id: `o-${i}` },
        ),
      ),
    bad: (good) => [
      { record: without(good, "updatedAt"), fields: ["updatedAt"] },
      { record: { ...good, financialStatus: "shipped" }, fields: ["financialStatus"] },
      {
        record: { ...good, lineItems: [{ sku: "X", quantity: -2, price: 1 }] },
        fields: ["lineItems.0.quantity"],
      },
    ],
  },
  refunds: {
    make: (i, version, value) => ({
      id: `r-${i}`,
      orderId: `o-${i}`,
      createdAt: "2026-03-02T08:30:00Z",
      amount: value,
      currency: "EUR",
      updatedAt: version,
    }),
    count: (pixelId) => whCount("refunds", pixelId, true),
    rawCount: (pixelId) => whCount("refunds", pixelId, false),
    valueOf: async (pixelId, i) =>
      one(
        await wh<{ v: number }>(
          `SELECT argMax(amount, version) AS v FROM refunds
           WHERE pixel_id = {pixel:String} AND refund_id = {id:String} GROUP BY refund_id`,
          { pixel: pixelId, id: `r-${i}` },
        ),
      ),
    bad: (good) => [
      { record: without(good, "orderId"), fields: ["orderId"] },
      { record: { ...good, amount: "12.00" }, fields: ["amount"] },
      {
        record: { ...good, lineItems: [{ variantId: "v-1-s", quantity: -1, amount: 1 }] },
        fields: ["lineItems.0.quantity"],
      },
    ],
  },
  "ad-entities": {
    make: (i, version, value) => ({
      platform: "facebook",
      level: "campaign",
      id: `cmp-${i}`,
      accountId: "act_1001",
      name: `Spring sale ${i}`,
      status: "ACTIVE",
      currency: "USD",
      dailyBudget: 50,
      amountSpent: value,
      sourceCreatedAt: "2026-01-15T12:00:00Z",
      sourceUpdatedAt: version,
    }),
    count: (pixelId) => whCount("ad_entities", pixelId, true),
    rawCount: (pixelId) => whCount("ad_entities", pixelId, false),
    valueOf: async (pixelId, i) =>
      one(
        await wh<{ v: number }>(
          `SELECT argMax(amount_spent, version) AS v FROM ad_entities
           WHERE pixel_id = {pixel:String} AND platform = 'facebook' AND level = 'campaign' AND entity_id = {id:String}
           GROUP BY entity_id`,
          { pixel: pixelId, id: `cmp-${i}` },
        ),
      ),
    bad: (good) => [
      { record: { ...good, level: "ad" }, fields: ["campaignId", "adsetId"] },
      { record: { ...good, level: "adset" }, fields: ["campaignId"] },
      { record: { ...good, platform: "Facebook Ads" }, fields: ["platform"] },
    ],
  },
  "ad-metrics": {
    make: (i, version, value) => ({
      platform: "google",
      level: "campaign",
      entityId: `cmp-${i}`,
      accountId: "123-456-7890",
      date: "2026-03-01",
      currency: "USD",
      spend: value,
      impressions: 1200,
      clicks: 34,
      conversions: 2.5,
      conversionValue: 180.4,
      updatedAt: version,
    }),
    count: (pixelId) => whCount("ad_metrics_daily", pixelId, true),
    rawCount: (pixelId) => whCount("ad_metrics_daily", pixelId, false),
    valueOf: async (pixelId, i) =>
      one(
        await wh<{ v: number }>(
          `SELECT spend AS v FROM ad_metrics_daily FINAL
           WHERE pixel_id = {pixel:String} AND entity_id = {id:String} AND date = '2026-03-01'`,
          { pixel: pixelId, id: `cmp-${i}` },
        ),
      ),
    bad: (good) => [
      { record: { ...good, level: "ad", campaignId: "cmp-1" }, fields: ["adsetId"] },
      { record: { ...good, impressions: -5 }, fields: ["impressions"] },
      { record: { ...good, date: "03/01/2026" }, fields: ["date"] },
    ],
  },
};

describe.each(KINDS)("POST /accounts/api/sync/%s", (kind) => {
  const c = CASES[kind];

  it("stores a good batch and answers {accepted, updated, unchanged, rejected: []}", async () => {
    const px = await newPixel();
    const res = await syncOk(px, kind, [
      c.make(1, at(0), 10.5),
      c.make(2, at(0), 20.25),
      c.make(3, at(0), 30),
    ]);
    expect(res).toStrictEqual({ accepted: 3, updated: 0, unchanged: 0, rejected: [] });
    expect(await c.count(px.pixelId)).toBe(3);
    expect(await c.valueOf(px.pixelId, 1)).toBe(10.5);
    expect(await c.valueOf(px.pixelId, 2)).toBe(20.25);
    expect(await c.valueOf(px.pixelId, 3)).toBe(30);
  });

  it("stores the good records of a mixed batch and rejects each bad one with its index and field", async () => {
    const px = await newPixel();
    const bad = c.bad(c.make(9, at(0), 9));
    const batch = [
      c.make(1, at(0), 1),
      bad[0]!.record,
      c.make(2, at(0), 2),
      bad[1]!.record,
      c.make(3, at(0), 3),
      bad[2]!.record,
    ];
    const res = await syncOk(px, kind, batch);
    expect(res.accepted).toBe(3);
    expect(res.updated).toBe(0);
    expect(res.unchanged).toBe(0);
    expect(res.rejected.map((r) => r.index)).toEqual([1, 3, 5]);
    res.rejected.forEach((r, n) => {
      expect(
        r.errors.map((e) => e.field),
        JSON.stringify(r),
      ).toEqual(bad[n]!.fields);
      for (const e of r.errors) {
        expect(typeof e.message).toBe("string");
        expect(e.message.length).toBeGreaterThan(0);
      }
    });
    expect(await c.count(px.pixelId)).toBe(3);
    for (const i of [1, 2, 3]) expect(await c.valueOf(px.pixelId, i)).toBe(i);
    expect(await c.valueOf(px.pixelId, 9)).toBeUndefined();
  });

  it("re-sending the same batch is all unchanged and writes nothing", async () => {
    const px = await newPixel();
    const batch = [c.make(1, at(0), 10), c.make(2, at(5), 20)];
    expect(await syncOk(px, kind, batch)).toMatchObject({ accepted: 2, updated: 0, unchanged: 0 });
    const before = await rawSnapshot(kind, px.pixelId);
    expect(await syncOk(px, kind, batch)).toStrictEqual({
      accepted: 0,
      updated: 0,
      unchanged: 2,
      rejected: [],
    });
    expect(await c.count(px.pixelId)).toBe(2);
    expect(await c.rawCount(px.pixelId)).toBe(2);
    expect(await rawSnapshot(kind, px.pixelId)).toBe(before);
  });

  it("a newer version is updated and its values replace the stored ones", async () => {
    const px = await newPixel();
    await syncOk(px, kind, [c.make(1, at(0), 10), c.make(2, at(0), 20)]);
    const res = await syncOk(px, kind, [c.make(1, at(10), 11), c.make(2, at(0), 20)]);
    expect(res).toStrictEqual({ accepted: 0, updated: 1, unchanged: 1, rejected: [] });
    expect(await c.valueOf(px.pixelId, 1)).toBe(11);
    expect(await c.valueOf(px.pixelId, 2)).toBe(20);
    expect(await c.count(px.pixelId)).toBe(2);
    // …and the first version sent again afterwards changes nothing.
    expect(await syncOk(px, kind, [c.make(1, at(0), 10)])).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await c.valueOf(px.pixelId, 1)).toBe(11);
  });

  it("an older version is unchanged and nothing is written", async () => {
    const px = await newPixel();
    await syncOk(px, kind, [c.make(1, at(60), 99)]);
    const before = await rawSnapshot(kind, px.pixelId);
    const res = await syncOk(px, kind, [c.make(1, at(30), 55), c.make(1, at(0), 11)]);
    expect(res).toStrictEqual({ accepted: 0, updated: 0, unchanged: 2, rejected: [] });
    expect(await c.valueOf(px.pixelId, 1)).toBe(99);
    expect(await rawSnapshot(kind, px.pixelId)).toBe(before);
  });

  it("two copies of one id in one batch: the newest counts, the other is unchanged", async () => {
    const px = await newPixel();
    const res = await syncOk(px, kind, [c.make(1, at(1), 1), c.make(1, at(3), 3), c.make(1, at(2), 2)]);
    expect(res).toStrictEqual({ accepted: 1, updated: 0, unchanged: 2, rejected: [] });
    expect(await c.valueOf(px.pixelId, 1)).toBe(3);
    expect(await c.count(px.pixelId)).toBe(1);
    expect(await c.rawCount(px.pixelId)).toBe(1);
    // Against a stored version too: the newest of the batch replaces it.
    const res2 = await syncOk(px, kind, [c.make(1, at(5), 5), c.make(1, at(7), 7), c.make(1, at(0), 0)]);
    expect(res2).toStrictEqual({ accepted: 0, updated: 1, unchanged: 2, rejected: [] });
    expect(await c.valueOf(px.pixelId, 1)).toBe(7);
  });

  it("refuses more than 1000 records (400) and an empty batch, storing nothing", async () => {
    const px = await newPixel();
    const many = Array.from({ length: 1001 }, (_, i) => c.make(i, at(0), 1));
    const res = await sync(px, kind, many);
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect((res.body as { message: string }).message).toBe("Bad Request");
    for (const body of [{ records: [] }, {}, { records: "x" }]) {
      const r = await app.call("POST", `/accounts/api/sync/${kind}`, {
        key: px.key,
        pixelId: px.pixelId,
        body,
      });
      expect(r.status, `${JSON.stringify(body)} → ${r.text}`).toBe(400);
    }
    expect(await c.count(px.pixelId)).toBe(0);
  });

  it("refuses a body over 5 MB with 413, storing nothing", async () => {
    const px = await newPixel();
    const record = c.make(1, at(0), 1);
    const body = JSON.stringify({ records: [record, { ...record, padding: "x".repeat(5 * 1024 * 1024) }] });
    const res = await app.call("POST", `/accounts/api/sync/${kind}`, {
      key: px.key,
      pixelId: px.pixelId,
      rawBody: body,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(413);
    expect(res.body).toStrictEqual({ message: `Request body exceeds the limit of ${5 * 1024 * 1024} bytes` });
    expect(await c.count(px.pixelId)).toBe(0);
  });

  it("answers 403 to a key without sync:write", async () => {
    const px = await app.pixelWithKey(["events:write", "analytics:read", "costs:write"]);
    const res = await sync(px, kind, [c.make(1, at(0), 1)]);
    expect(res.status).toBe(403);
    expect(res.text).toBe('{"message":"API key does not have the sync:write scope"}');
    expect(await c.count(px.pixelId)).toBe(0);
    const anon = await app.call("POST", `/accounts/api/sync/${kind}`, {
      body: { records: [c.make(1, at(0), 1)] },
    });
    expect(anon.status).toBe(401);
  });

  it("stores rows under the key's pixel: another pixel neither sees nor touches them", async () => {
    const a = await newPixel();
    const b = await newPixel();
    await syncOk(a, kind, [c.make(1, at(10), 10), c.make(2, at(10), 20)]);
    const before = await rawSnapshot(kind, a.pixelId);

    // B's key cannot act on A's pixel.
    const cross = await app.call("POST", `/accounts/api/sync/${kind}`, {
      key: b.key,
      pixelId: a.pixelId,
      body: { records: [c.make(1, at(99), 1)] },
    });
    expect(cross.status).toBe(403);

    // The same ids from B are new to B, whatever their version: B does not see A's rows…
    expect(await syncOk(b, kind, [c.make(1, at(0), 5), c.make(2, at(99), 6)])).toStrictEqual({
      accepted: 2,
      updated: 0,
      unchanged: 0,
      rejected: [],
    });
    // …and does not change them.
    expect(await rawSnapshot(kind, a.pixelId)).toBe(before);
    expect(await c.valueOf(a.pixelId, 1)).toBe(10);
    expect(await c.valueOf(a.pixelId, 2)).toBe(20);
    expect(await c.valueOf(b.pixelId, 1)).toBe(5);
    expect(await c.valueOf(b.pixelId, 2)).toBe(6);
    expect(await c.count(a.pixelId)).toBe(2);
    expect(await c.count(b.pixelId)).toBe(2);
  });
});

describe("sync endpoints: shape", () => {
  it("accepts exactly 1000 records in one batch", async () => {
    const px = await newPixel();
    const batch = Array.from({ length: 1000 }, (_, i) => CASES.refunds.make(i, at(0), 1 + i / 100));
    expect(await syncOk(px, "refunds", batch)).toStrictEqual({
      accepted: 1000,
      updated: 0,
      unchanged: 0,
      rejected: [],
    });
    expect(await CASES.refunds.count(px.pixelId)).toBe(1000);
    expect(await CASES.refunds.valueOf(px.pixelId, 999)).toBe(10.99);
  });

  it("has no HTTP endpoint for FX rates (they are global: `pixelhouse fx import`)", async () => {
    const px = await newPixel();
    const res = await sync(px, "fx-rates", [{ date: "2026-03-01", currency: "EUR", unitsPerUsd: 0.92 }]);
    expect(res.status).toBe(404);
  });

  it("names the field of a missing value, an unknown key and a wrong type", async () => {
    const px = await newPixel();
    const good = CASES.orders.make(1, at(0), 10);
    const res = await syncOk(px, "orders", [
      without(good, "currency", "createdAt"),
      { ...good, id: 1.5 },
      { ...good, createdAt: "2026-03-01 09:00:00" },
      "not an object",
      { ...good, shippingLines: [] },
    ]);
    expect(res.accepted).toBe(0);
    const fields = res.rejected.map((r) => r.errors.map((e) => e.field).sort());
    expect(fields.slice(0, 4)).toEqual([["createdAt", "currency"], ["id"], ["createdAt"], [""]]);
    const missing = res.rejected[0]!.errors.find((e) => e.field === "currency")!;
    expect(missing.message).toBe("is required");
    expect(res.rejected[2]!.errors[0]!.message).toMatch(/ISO-8601/);
    // Records are strict: an unknown key is refused, and its error names it.
    const unknown = res.rejected[4]!;
    expect(unknown.index).toBe(4);
    expect(unknown.errors).toHaveLength(1);
    expect(unknown.errors[0]!.field + unknown.errors[0]!.message).toContain("shippingLines");
  });

  it("refuses a chunked body over 5 MB (no Content-Length) with 413", async () => {
    const px = await newPixel();
    const chunk = "x".repeat(1024 * 1024);
    const res = await postChunked(
      `${app.url}/accounts/api/sync/orders`,
      { "x-api-key": px.key, "x-pixel-id": px.pixelId, "content-type": "application/json" },
      ['{"records":[{"id":"big","tags":["', ...Array.from({ length: 6 }, () => chunk), '"]}]}'],
    );
    expect(res.status).toBe(413);
    expect(await CASES.orders.count(px.pixelId)).toBe(0);
  });
});

describe("orders", () => {
  const order = (id: string | number, extra: Json = {}): Json => ({
    id,
    createdAt: "2026-03-01T09:15:00+02:00",
    currency: "eur",
    totalPrice: 59.9,
    financialStatus: "paid",
    updatedAt: at(0),
    ...extra,
  });

  it("stores every field, times in UTC, currency upper-cased, lines with the order's version", async () => {
    const px = await newPixel();
    const res = await syncOk(px, "orders", [
      order(4501, {
        processedAt: "2026-03-01T09:16:30.250+02:00",
        cancelledAt: null,
        subtotalPrice: 54.9,
        totalShipping: 4.95,
        totalTax: 9.56,
        totalDiscounts: 5,
        financialStatus: "partially_refunded",
        sourceName: "web",
        gateway: "stripe",
        tags: ["vip", "first-order"],
        discountCodes: ["SPRING5"],
        country: "DE",
        customer: { id: 778899, email: "anna@example.de" },
        lineItems: [
          { productId: 101, variantId: 201, sku: "LS-1-S", quantity: 2, price: 19.99 },
          { sku: "GIFT", quantity: 1, price: 14.92 },
        ],
      }),
    ]);
    expect(res).toStrictEqual({ accepted: 1, updated: 0, unchanged: 0, rejected: [] });
    const [row] = await wh("SELECT * FROM orders FINAL WHERE pixel_id = {pixel:String}", {
      pixel: px.pixelId,
    });
    expect(row).toMatchObject({
      order_id: "4501",
      created_at: "2026-03-01 07:15:00.000",
      processed_at: "2026-03-01 07:16:30.250",
      cancelled_at: null,
      currency: "EUR",
      total_price: 59.9,
      subtotal_price: 54.9,
      total_shipping: 4.95,
      total_tax: 9.56,
      total_discounts: 5,
      financial_status: "partially_refunded",
      source_name: "web",
      gateway: "stripe",
      tags: ["vip", "first-order"],
      discount_codes: ["SPRING5"],
      country: "DE",
      customer_id: "778899",
      customer_email_hash: sha256("anna@example.de"),
      version: Date.parse(at(0)),
      updated_at: "2026-03-01 10:00:00.000",
    });
    expect(row!.canonical_id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const lines = await wh(
      "SELECT line_index, product_id, variant_id, sku, quantity, price, version FROM order_lines FINAL WHERE pixel_id = {pixel:String} ORDER BY line_index",
      { pixel: px.pixelId },
    );
    expect(lines).toStrictEqual([
      {
        line_index: 0,
        product_id: "101",
        variant_id: "201",
        sku: "LS-1-S",
        quantity: 2,
        price: 19.99,
        version: Date.parse(at(0)),
      },
      {
        line_index: 1,
        product_id: "",
        variant_id: "",
        sku: "GIFT",
        quantity: 1,
        price: 14.92,
        version: Date.parse(at(0)),
      },
    ]);
  });

  it("a newer version with fewer lines: the current lines are those with the order's version", async () => {
    const px = await newPixel();
    const l = (sku: string) => ({ sku, quantity: 1, price: 5 });
    await syncOk(px, "orders", [order("o-1", { lineItems: [l("A"), l("B"), l("C")] })]);
    await syncOk(px, "orders", [
      order("o-1", { updatedAt: at(5), lineItems: [l("A")], financialStatus: "refunded" }),
    ]);
    const current = await wh<{ sku: string }>(
      `SELECT l.sku AS sku FROM order_lines AS l FINAL
       INNER JOIN (SELECT order_id, version FROM orders FINAL WHERE pixel_id = {pixel:String}) AS o
         ON o.order_id = l.order_id AND o.version = l.version
       WHERE l.pixel_id = {pixel:String} ORDER BY l.line_index`,
      { pixel: px.pixelId },
    );
    expect(current.map((r) => r.sku)).toEqual(["A"]);
    const [o] = await wh("SELECT financial_status FROM orders FINAL WHERE pixel_id = {pixel:String}", {
      pixel: px.pixelId,
    });
    expect(o!.financial_status).toBe("refunded");
  });

  it("stores the customer email only as its SHA-256 hash, nowhere raw", async () => {
    const px = await newPixel();
    const email = "  Jane.Doe+VIP@Example.COM ";
    await syncOk(px, "orders", [
      order("o-mail", { customer: { id: "cust-42", email } }),
      order("o-bad-mail", { customer: { email: "jane-doe-no-at" } }),
    ]);
    const rows = await wh<Json>(
      "SELECT * FROM orders FINAL WHERE pixel_id = {pixel:String} ORDER BY order_id",
      {
        pixel: px.pixelId,
      },
    );
    expect(rows.map((r) => [r.order_id, r.customer_email_hash])).toEqual([
      ["o-bad-mail", ""],
      ["o-mail", sha256("jane.doe+vip@example.com")],
    ]);
    const links = await wh<Json>("SELECT * FROM identity_links WHERE pixel_id = {pixel:String}", {
      pixel: px.pixelId,
    });
    expect(links.filter((l) => l.alias_type === "email").map((l) => l.alias_value)).toEqual([
      sha256("jane.doe+vip@example.com"),
    ]);
    const outbox = await pg<Json>("SELECT * FROM outbox WHERE payload->>'pixelId' = $1", [px.pixelId]);
    const pgAliases = await app.stores.identity.aliases(px.pixelId);
    const everything = JSON.stringify([rows, links, outbox, pgAliases]).toLowerCase();
    expect(everything).not.toContain("jane");
    expect(everything).not.toContain("example.com");
  });

  /** What `group` (a consumer group of a test's own) has not read yet of `stream`, acknowledged. */
  async function unread(stream: string, group: string): Promise<BusMessage[]> {
    const out: BusMessage[] = [];
    for (;;) {
      const batch = await app.stores.bus.read(stream, group, "t", { count: 1000 });
      if (batch.length === 0) return out;
      await app.stores.bus.ack(
        stream,
        group,
        batch.map((m) => m.id),
      );
      out.push(...batch);
    }
  }

  /** The canonical id of an order / an event after one `canonical` hop in identity_links. */
  async function resolved(pixelId: string, canonical: string): Promise<string> {
    const [hop] = await wh<{ to: string }>(
      `SELECT canonical_id AS to FROM identity_links FINAL
       WHERE pixel_id = {pixel:String} AND alias_type = 'canonical' AND alias_value = {c:String}`,
      { pixel: pixelId, c: canonical },
    );
    return hop?.to || canonical;
  }
  const orderCanonical = async (pixelId: string, orderId: string) => {
    const [row] = await wh<{ canonical_id: string }>(
      "SELECT canonical_id FROM orders FINAL WHERE pixel_id = {pixel:String} AND order_id = {id:String}",
      { pixel: pixelId, id: orderId },
    );
    expect(row, `order ${orderId}`).toBeDefined();
    return resolved(pixelId, row!.canonical_id);
  };
  const eventCanonical = async (pixelId: string, eventId: string) => {
    const rows = await wh<{ canonical_id: string }>(
      "SELECT canonical_id FROM events WHERE pixel_id = {pixel:String} AND event_id = {id:String}",
      { pixel: pixelId, id: eventId },
    );
    expect(rows, `event ${eventId}`).toHaveLength(1);
    return resolved(pixelId, rows[0]!.canonical_id);
  };
  async function sendEvent(px: Pixel, event: Json) {
    const res = await app.call("POST", "/tr/api/events", {
      key: px.key,
      pixelId: px.pixelId,
      body: { events: [event] },
    });
    expect(res.status, res.text).toBe(200);
    expect((res.body as { eventsIngested: number }).eventsIngested).toBe(1);
  }

  it("a purchase event with eventProperties.orderId and the synced order share one canonical identity", async () => {
    const px = await newPixel();
    await sendEvent(px, {
      name: "purchase",
      eventId: "ev-purchase-1",
      identityId: "anon-buyer-1",
      eventProperties: { orderId: "1001", value: 59.9, currency: "EUR" },
    });
    await syncOk(px, "orders", [
      order(1001, { customer: { id: "cust-1", email: "first.buyer@example.com" } }),
    ]);
    const fromEvent = await eventCanonical(px.pixelId, "ev-purchase-1");
    expect(fromEvent).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(await orderCanonical(px.pixelId, "1001")).toBe(fromEvent);
  });

  it("the order synced first and the purchase event after it meet too", async () => {
    const px = await newPixel();
    await syncOk(px, "orders", [order("2002", { customer: { id: "cust-2", email: "second@example.com" } })]);
    await sendEvent(px, {
      name: "purchase",
      eventId: "ev-purchase-2",
      identityId: "anon-buyer-2",
      eventProperties: { orderId: 2002 },
    });
    expect(await eventCanonical(px.pixelId, "ev-purchase-2")).toBe(await orderCanonical(px.pixelId, "2002"));
  });

  it("an order whose email and order id belong to two identities merges them; one hop resolves both", async () => {
    const px = await newPixel();
    // Identity A knows the email (from a sign-up); identity B bought order 3003 anonymously, later.
    await sendEvent(px, {
      name: "sign_up",
      eventId: "ev-signup",
      identityId: "anon-a",
      userProperties: { emails: ["Merged@Example.com"] },
    });
    await sendEvent(px, {
      name: "purchase",
      eventId: "ev-purchase-3",
      identityId: "anon-b",
      eventProperties: { orderId: "3003" },
    });
    const a = await eventCanonical(px.pixelId, "ev-signup");
    const bRaw = (
      await wh<{ canonical_id: string }>(
        "SELECT canonical_id FROM events WHERE pixel_id = {pixel:String} AND event_id = 'ev-purchase-3'",
        { pixel: px.pixelId },
      )
    )[0]!.canonical_id;
    expect(bRaw).not.toBe(a);
    await syncOk(px, "orders", [order("3003", { customer: { email: "merged@example.com" } })]);
    expect(await orderCanonical(px.pixelId, "3003")).toBe(a);
    // The purchase event's row still says B; its `canonical` link leads to A in one hop.
    expect(await eventCanonical(px.pixelId, "ev-purchase-3")).toBe(a);
  });

  it("orders of one customer id share an identity, and its email joins later orders to it", async () => {
    const px = await newPixel();
    await syncOk(px, "orders", [order("c-1", { customer: { id: 5550001 } })]);
    await syncOk(px, "orders", [order("c-2", { customer: { id: "5550001", email: "repeat@example.com" } })]);
    await syncOk(px, "orders", [order("c-3", { customer: { email: "REPEAT@example.com" } })]);
    const first = await orderCanonical(px.pixelId, "c-1");
    expect(await orderCanonical(px.pixelId, "c-2")).toBe(first);
    expect(await orderCanonical(px.pixelId, "c-3")).toBe(first);
    // Another customer is another identity.
    await syncOk(px, "orders", [order("c-4", { customer: { id: "5550002" } })]);
    expect(await orderCanonical(px.pixelId, "c-4")).not.toBe(first);
  });

  it("a returning customer's order is announced as its order id alone, and joins the customer's identity", async () => {
    const px = await newPixel();
    // A consumer group of its own starts at the oldest message kept: every sighting published so far.
    const group = `sightings-test-${px.pixelId}`;
    const sightings = async () =>
      (await unread("identity.observed", group))
        .map((m) => m.payload as { pixelId: string; sightings: string[][] })
        .filter((p) => p.pixelId === px.pixelId)
        .flatMap((p) => p.sightings);
    const customer = { id: "5560001", email: "back@example.com" };
    await syncOk(px, "orders", [order("r-1", { customer })]);
    const [first] = await sightings();
    const id = await orderCanonical(px.pixelId, "r-1");
    expect(first).toEqual([id, "order", "r-1", "email", sha256(customer.email), "store", customer.id]);
    // Filed and learned (syncOk waits for the worker): the customer's aliases are not sent again.
    await syncOk(px, "orders", [order("r-2", { customer })]);
    expect(await sightings()).toEqual([[id, "order", "r-2"]]);
    expect(await orderCanonical(px.pixelId, "r-2")).toBe(id);
    const links = await wh<{ alias_type: string; alias_value: string; canonical_id: string }>(
      `SELECT alias_type, alias_value, canonical_id FROM identity_links FINAL
       WHERE pixel_id = {pixel:String} ORDER BY alias_type, alias_value`,
      { pixel: px.pixelId },
    );
    expect(links).toEqual([
      { alias_type: "email", alias_value: sha256(customer.email), canonical_id: id },
      { alias_type: "order", alias_value: "r-1", canonical_id: id },
      { alias_type: "order", alias_value: "r-2", canonical_id: id },
      { alias_type: "store", alias_value: customer.id, canonical_id: id },
    ]);
  });

  it("every stored or changed batch publishes one orders.changed message listing its order ids", async () => {
    const px = await newPixel();
    // A consumer group of its own starts at the oldest message kept: every notice published so far.
    const group = `sync-test-${px.pixelId}`;
    const seen: { key: string; payload: { pixelId: string; orderIds: string[] } }[] = [];
    const notices = async () => {
      for (const m of await unread("orders.changed", group)) {
        const payload = m.payload as { pixelId: string; orderIds: string[] };
        if (payload.pixelId === px.pixelId) seen.push({ key: m.key, payload });
      }
      return seen.map((m) => ({ ...m, topic: "orders.changed" }));
    };
    const ids = async (n: number) => [...((await notices())[n]?.payload.orderIds ?? [])].sort();

    await syncOk(px, "orders", [order("a"), order("b"), order("c")]);
    let rows = await notices();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.topic).toBe("orders.changed");
    expect(rows[0]!.payload.pixelId).toBe(px.pixelId);
    expect(rows[0]!.key).not.toBe("");
    expect(await ids(0)).toEqual(["a", "b", "c"]);

    // Nothing changed: no notification.
    expect(await syncOk(px, "orders", [order("a"), order("b"), order("c")])).toMatchObject({ unchanged: 3 });
    expect(await notices()).toHaveLength(1);

    // One newer, one older, one new, one bad: the notice lists the changed and the new.
    const res = await syncOk(px, "orders", [
      order("b", { updatedAt: at(5), financialStatus: "refunded" }),
      order("a", { updatedAt: at(-5) }),
      order("d"),
      order("e", { financialStatus: "shipped" }),
    ]);
    expect(res).toMatchObject({ accepted: 1, updated: 1, unchanged: 1 });
    rows = await notices();
    expect(rows).toHaveLength(2);
    expect(rows[1]!.topic).toBe("orders.changed");
    // Each notice has a key of its own: the recalculation checkpoints on it.
    expect(rows[1]!.key).not.toBe(rows[0]!.key);
    expect(await ids(1)).toEqual(["b", "d"]);
    // Orders are announced on the bus, not through the Postgres outbox.
    expect(
      await pg(
        "SELECT 1 FROM outbox WHERE payload->>'pixelId' = $1 AND topic IN ('orders.changed', 'identity.observed')",
        [px.pixelId],
      ),
    ).toEqual([]);

    // Only rejects: nothing to announce.
    await syncOk(px, "orders", [order("f", { updatedAt: "yesterday" })]);
    expect(await notices()).toHaveLength(2);
  });
});

describe("products", () => {
  const product = (updatedAt: string, storeCostHistory: Json[], extra: Json = {}): Json => ({
    id: 8_001_234,
    title: "Canvas Tote",
    handle: "canvas-tote",
    vendor: "Acme",
    productType: "Bags",
    status: "ACTIVE",
    tags: ["eco"],
    imageUrls: ["https://cdn.example.com/tote.jpg"],
    variants: [
      {
        id: 9_001,
        sku: "TOTE-NAT",
        title: "Natural",
        currency: "eur",
        currentPrice: 24.9,
        inventory: 40,
        storeCostHistory,
      },
    ],
    raw: { admin_graphql_api_id: "gid://shopify/Product/8001234" },
    updatedAt,
    ...extra,
  });
  const storeLines = async (pixelId: string) =>
    pg<{ cost: string; effective_start: unknown; effective_end: unknown }>(
      `SELECT cost, to_char(effective_start, 'YYYY-MM-DD') AS effective_start, to_char(effective_end, 'YYYY-MM-DD') AS effective_end
       FROM variant_cost_lines WHERE pixel_id = $1 AND source = 'store' ORDER BY effective_start`,
      [pixelId],
    );

  it("lands products, variants and store cost lines in Postgres under the pixel", async () => {
    const px = await newPixel();
    await syncOk(px, "products", [
      product(at(0), [
        { cost: 8.4, effectiveStartDate: "2025-01-01", effectiveEndDate: "2025-12-31" },
        { cost: 9.1, effectiveStartDate: "2026-01-01", effectiveEndDate: null },
      ]),
      { id: "bare", updatedAt: at(0) },
    ]);
    const products = await pg<Json>(
      `SELECT product_id, title, handle, vendor, product_type, status, tags, image_urls, raw, version
       FROM products WHERE pixel_id = $1 ORDER BY product_id`,
      [px.pixelId],
    );
    expect(products).toHaveLength(2);
    expect(products[0]).toMatchObject({
      product_id: "8001234",
      title: "Canvas Tote",
      handle: "canvas-tote",
      vendor: "Acme",
      product_type: "Bags",
      status: "ACTIVE",
      tags: ["eco"],
      image_urls: ["https://cdn.example.com/tote.jpg"],
      raw: { admin_graphql_api_id: "gid://shopify/Product/8001234" },
    });
    expect(new Date(products[0]!.version as string).toISOString()).toBe(at(0));
    // Defaults of an almost empty product.
    expect(products[1]).toMatchObject({
      product_id: "bare",
      title: "",
      status: "ACTIVE",
      tags: [],
      image_urls: [],
      raw: {},
    });
    const variants = await pg<Json>(
      "SELECT product_id, variant_id, sku, title, currency, current_price, inventory, handling_fee FROM variants WHERE pixel_id = $1",
      [px.pixelId],
    );
    expect(variants).toHaveLength(1);
    expect(variants[0]).toMatchObject({
      product_id: "8001234",
      variant_id: "9001",
      sku: "TOTE-NAT",
      title: "Natural",
      currency: "EUR",
      inventory: 40,
    });
    expect(Number(variants[0]!.current_price)).toBe(24.9);
    expect(Number(variants[0]!.handling_fee)).toBe(0);
    const lines = await storeLines(px.pixelId);
    expect(lines.map((l) => [Number(l.cost), l.effective_start, l.effective_end])).toEqual([
      [8.4, "2025-01-01", "2025-12-31"],
      [9.1, "2026-01-01", null],
    ]);
  });

  it("re-sync replaces the store cost history but never manual lines nor handling_fee", async () => {
    const px = await newPixel();
    await syncOk(px, "products", [
      product(at(0), [
        { cost: 8.4, effectiveStartDate: "2025-01-01", effectiveEndDate: "2025-12-31" },
        { cost: 9.1, effectiveStartDate: "2026-01-01" },
      ]),
    ]);
    await app.stores.sql.query(
      `INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start, description)
       VALUES ('01MANUALLINE0000000000000A', $1, '8001234', '9001', 'manual', 7.25, '2026-02-01', 'negotiated price')`,
      [px.pixelId],
    );
    await app.stores.sql.query(
      "UPDATE variants SET handling_fee = 1.35 WHERE pixel_id = $1 AND variant_id = '9001'",
      [px.pixelId],
    );

    // A newer version with another store history.
    expect(
      await syncOk(px, "products", [
        product(at(10), [{ cost: 9.8, effectiveStartDate: "2026-03-01" }], { title: "Canvas Tote Bag" }),
      ]),
    ).toMatchObject({ updated: 1 });
    expect(
      (await storeLines(px.pixelId)).map((l) => [Number(l.cost), l.effective_start, l.effective_end]),
    ).toEqual([[9.8, "2026-03-01", null]]);
    const manual = await pg<Json>(
      "SELECT id, cost, description FROM variant_cost_lines WHERE pixel_id = $1 AND source = 'manual'",
      [px.pixelId],
    );
    expect(manual.map((m) => [m.id, Number(m.cost), m.description])).toEqual([
      ["01MANUALLINE0000000000000A", 7.25, "negotiated price"],
    ]);
    const [variant] = await pg<Json>("SELECT handling_fee FROM variants WHERE pixel_id = $1", [px.pixelId]);
    expect(Number(variant!.handling_fee)).toBe(1.35);
    const [p] = await pg<Json>("SELECT title FROM products WHERE pixel_id = $1", [px.pixelId]);
    expect(p!.title).toBe("Canvas Tote Bag");

    // An older version touches nothing: neither the store lines nor the manual one.
    expect(
      await syncOk(px, "products", [product(at(5), [{ cost: 1, effectiveStartDate: "2020-01-01" }])]),
    ).toMatchObject({
      unchanged: 1,
    });
    expect((await storeLines(px.pixelId)).map((l) => Number(l.cost))).toEqual([9.8]);
    // An empty history in a newer version clears the store lines only.
    await syncOk(px, "products", [product(at(20), [])]);
    expect(await storeLines(px.pixelId)).toEqual([]);
    expect(
      await pg("SELECT id FROM variant_cost_lines WHERE pixel_id = $1 AND source = 'manual'", [px.pixelId]),
    ).toHaveLength(1);
    const [v2] = await pg<Json>("SELECT handling_fee FROM variants WHERE pixel_id = $1", [px.pixelId]);
    expect(Number(v2!.handling_fee)).toBe(1.35);
  });
});

describe("refunds, ad entities, ad metrics", () => {
  it("a refund without updatedAt is versioned by createdAt", async () => {
    const px = await newPixel();
    const refund = {
      id: "rf-1",
      orderId: 4501,
      createdAt: "2026-03-03T11:00:00-05:00",
      amount: 19.99,
      currency: "usd",
    };
    expect(await syncOk(px, "refunds", [refund])).toMatchObject({ accepted: 1 });
    expect(await syncOk(px, "refunds", [refund])).toMatchObject({ unchanged: 1 });
    const rows = await wh("SELECT * FROM refunds FINAL WHERE pixel_id = {pixel:String}", {
      pixel: px.pixelId,
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      refund_id: "rf-1",
      order_id: "4501",
      created_at: "2026-03-03 16:00:00.000",
      amount: 19.99,
      currency: "USD",
      lines: [],
      version: Date.parse("2026-03-03T16:00:00Z"),
    });
    // An updatedAt after createdAt is a newer version.
    expect(
      await syncOk(px, "refunds", [{ ...refund, amount: 25, updatedAt: "2026-03-04T00:00:00Z" }]),
    ).toMatchObject({
      updated: 1,
    });
    expect(await CASES.refunds.valueOf(px.pixelId, 0)).toBeUndefined();
    const [after] = await wh<{ amount: number }>(
      "SELECT amount FROM refunds FINAL WHERE pixel_id = {pixel:String}",
      {
        pixel: px.pixelId,
      },
    );
    expect(after!.amount).toBe(25);
  });

  it("a refund with line items is stored with its lines (and does not sink its batch)", async () => {
    const px = await newPixel();
    const res = await syncOk(px, "refunds", [
      {
        id: "rf-2",
        orderId: "4501",
        createdAt: "2026-03-03T11:00:00-05:00",
        amount: 24.91,
        currency: "USD",
        lineItems: [
          { variantId: 201, quantity: 1, amount: 19.99 },
          { variantId: "202", quantity: 2, amount: 4.92 },
        ],
      },
      { id: "rf-3", orderId: "4502", createdAt: "2026-03-03T12:00:00Z", amount: 5, currency: "USD" },
    ]);
    expect(res).toStrictEqual({ accepted: 2, updated: 0, unchanged: 0, rejected: [] });
    const rows = await wh<{ refund_id: string; lines: unknown }>(
      "SELECT refund_id, lines FROM refunds FINAL WHERE pixel_id = {pixel:String} ORDER BY refund_id",
      { pixel: px.pixelId },
    );
    expect(rows).toStrictEqual([
      {
        refund_id: "rf-2",
        lines: [
          { variant_id: "201", quantity: 1, amount: 19.99 },
          { variant_id: "202", quantity: 2, amount: 4.92 },
        ],
      },
      { refund_id: "rf-3", lines: [] },
    ]);
  });

  it("ad entities of every level carry their parents; the key is platform, level and id", async () => {
    const px = await newPixel();
    const base = {
      platform: "facebook",
      accountId: "act_1001",
      currency: "usd",
      sourceCreatedAt: at(0),
      sourceUpdatedAt: at(0),
    };
    const res = await syncOk(px, "ad-entities", [
      { ...base, level: "account", id: "act_1001", name: "Main account", amountSpent: 12345.67 },
      { ...base, level: "campaign", id: "c1", name: "Prospecting", status: "ACTIVE", dailyBudget: 100 },
      { ...base, level: "adset", id: "s1", campaignId: "c1", dailyBudget: 40, budgetRemaining: 12.5 },
      { ...base, level: "ad", id: "a1", campaignId: "c1", adsetId: "s1", status: "PAUSED" },
      { ...base, platform: "google", level: "campaign", id: "c1", accountId: "123-456-7890" },
    ]);
    expect(res).toStrictEqual({ accepted: 5, updated: 0, unchanged: 0, rejected: [] });
    const rows = await wh<Json>(
      `SELECT platform, level, entity_id, account_id, campaign_id, adset_id, currency,
              daily_budget, budget_remaining, amount_spent
       FROM ad_entities FINAL WHERE pixel_id = {pixel:String} ORDER BY platform, level`,
      { pixel: px.pixelId },
    );
    expect(rows).toStrictEqual([
      {
        platform: "facebook",
        level: "account",
        entity_id: "act_1001",
        account_id: "act_1001",
        campaign_id: "",
        adset_id: "",
        currency: "USD",
        daily_budget: null,
        budget_remaining: null,
        amount_spent: 12345.67,
      },
      {
        platform: "facebook",
        level: "campaign",
        entity_id: "c1",
        account_id: "act_1001",
        campaign_id: "c1",
        adset_id: "",
        currency: "USD",
        daily_budget: 100,
        budget_remaining: null,
        amount_spent: null,
      },
      {
        platform: "facebook",
        level: "adset",
        entity_id: "s1",
        account_id: "act_1001",
        campaign_id: "c1",
        adset_id: "s1",
        currency: "USD",
        daily_budget: 40,
        budget_remaining: 12.5,
        amount_spent: null,
      },
      {
        platform: "facebook",
        level: "ad",
        entity_id: "a1",
        account_id: "act_1001",
        campaign_id: "c1",
        adset_id: "s1",
        currency: "USD",
        daily_budget: null,
        budget_remaining: null,
        amount_spent: null,
      },
      {
        platform: "google",
        level: "campaign",
        entity_id: "c1",
        account_id: "123-456-7890",
        campaign_id: "c1",
        adset_id: "",
        currency: "USD",
        daily_budget: null,
        budget_remaining: null,
        amount_spent: null,
      },
    ]);
  });

  it("ad metrics are keyed by entity and date; without updatedAt a later report wins", async () => {
    const px = await newPixel();
    const m = (date: string, spend: number, extra: Json = {}) => ({
      platform: "tiktok",
      level: "ad",
      entityId: "ad-7",
      accountId: "adv-1",
      campaignId: "cmp-7",
      adsetId: "grp-7",
      date,
      currency: "gbp",
      spend,
      ...extra,
    });
    expect(await syncOk(px, "ad-metrics", [m("2026-03-01", 10), m("2026-03-02", 20)])).toMatchObject({
      accepted: 2,
    });
    // No updatedAt: the version is the time of the sync (in ms), so a re-sent report replaces the stored one.
    await new Promise((r) => setTimeout(r, 5));
    expect(await syncOk(px, "ad-metrics", [m("2026-03-01", 12.5)])).toMatchObject({
      updated: 1,
      unchanged: 0,
    });
    const rows = await wh<Json>(
      `SELECT toString(date) AS date, spend, impressions, clicks, conversions, conversion_value, campaign_id, adset_id, currency
       FROM ad_metrics_daily FINAL WHERE pixel_id = {pixel:String} ORDER BY date`,
      { pixel: px.pixelId },
    );
    expect(rows).toStrictEqual([
      {
        date: "2026-03-01",
        spend: 12.5,
        impressions: 0,
        clicks: 0,
        conversions: 0,
        conversion_value: 0,
        campaign_id: "cmp-7",
        adset_id: "grp-7",
        currency: "GBP",
      },
      {
        date: "2026-03-02",
        spend: 20,
        impressions: 0,
        clicks: 0,
        conversions: 0,
        conversion_value: 0,
        campaign_id: "cmp-7",
        adset_id: "grp-7",
        currency: "GBP",
      },
    ]);
    // A report with an explicit updatedAt older than the stored sync time is unchanged.
    expect(
      await syncOk(px, "ad-metrics", [m("2026-03-02", 99, { updatedAt: "2000-01-01T00:00:00Z" })]),
    ).toMatchObject({
      unchanged: 1,
    });
  });
});

describe("money round-trips to the cent", () => {
  it("orders, lines, refunds, ad metrics and variants keep 19.99 and 0.1 + 0.2 exact", async () => {
    const px = await newPixel();
    const tenth = 0.1;
    await syncOk(px, "orders", [
      {
        id: "m-1",
        createdAt: at(0),
        currency: "USD",
        totalPrice: 19.99,
        subtotalPrice: tenth + 0.2,
        totalShipping: 0.07,
        totalTax: 1234567890.12,
        totalDiscounts: 0.01,
        financialStatus: "paid",
        lineItems: [0.1, 0.1, 0.1].map((price, i) => ({ sku: `S${i}`, quantity: 1, price })),
        updatedAt: at(0),
      },
    ]);
    const [o] = await wh<Json>(
      `SELECT toString(total_price) AS total, toString(subtotal_price) AS subtotal, toString(total_shipping) AS shipping,
              toString(total_tax) AS tax, toString(total_discounts) AS discounts
       FROM orders FINAL WHERE pixel_id = {pixel:String}`,
      { pixel: px.pixelId },
    );
    expect(Object.fromEntries(Object.entries(o!).map(([k, v]) => [k, Number(v)]))).toStrictEqual({
      total: 19.99,
      subtotal: 0.3,
      shipping: 0.07,
      tax: 1234567890.12,
      discounts: 0.01,
    });
    // Decimal arithmetic: three lines of 0.10 are exactly 0.30.
    const [sum] = await wh<{ s: string }>(
      "SELECT toString(sum(price * quantity)) AS s FROM order_lines FINAL WHERE pixel_id = {pixel:String}",
      { pixel: px.pixelId },
    );
    expect(Number(sum!.s)).toBe(0.3);
    expect(sum!.s).toMatch(/^0\.30*$/);

    await syncOk(px, "refunds", [
      { id: "m-r", orderId: "m-1", createdAt: at(1), amount: tenth * 3, currency: "USD" },
    ]);
    const [r] = await wh<{ a: string }>(
      "SELECT toString(amount) AS a FROM refunds FINAL WHERE pixel_id = {pixel:String}",
      {
        pixel: px.pixelId,
      },
    );
    expect(Number(r!.a)).toBe(0.3);

    await syncOk(px, "ad-metrics", [
      { ...CASES["ad-metrics"].make(1, at(0), 19.99), conversionValue: tenth + 0.2, conversions: 1 / 3 },
    ]);
    const [m] = await wh<Json>(
      "SELECT toString(spend) AS spend, toString(conversion_value) AS cv, toString(conversions) AS conv FROM ad_metrics_daily FINAL WHERE pixel_id = {pixel:String}",
      { pixel: px.pixelId },
    );
    expect([Number(m!.spend), Number(m!.cv), Number(m!.conv)]).toEqual([19.99, 0.3, 0.3333]);

    await syncOk(px, "products", [CASES.products.make(1, at(0), tenth + 0.2)]);
    expect(await CASES.products.valueOf(px.pixelId, 1)).toBe(0.3);
    await syncOk(px, "products", [CASES.products.make(1, at(1), 19.99)]);
    expect(await CASES.products.valueOf(px.pixelId, 1)).toBe(19.99);
  });
});

describe("values the stores cannot hold are rejected, never mangled, and never sink their batch", () => {
  const good = (i: number) => CASES.orders.make(i, at(0), 10);

  it("a line quantity beyond Int32 is rejected (not wrapped around)", async () => {
    const px = await newPixel();
    const res = await syncOk(px, "orders", [
      good(1),
      { ...good(2), lineItems: [{ sku: "BULK", quantity: 3_000_000_000, price: 0.01 }] },
    ]);
    expect(res.accepted).toBe(1);
    expect(res.rejected.map((r) => [r.index, r.errors.map((e) => e.field)])).toEqual([
      [1, ["lineItems.0.quantity"]],
    ]);
    const lines = await wh<{ quantity: number }>(
      "SELECT quantity FROM order_lines FINAL WHERE pixel_id = {pixel:String}",
      { pixel: px.pixelId },
    );
    for (const l of lines) expect(l.quantity).toBeGreaterThanOrEqual(0);
  });

  it("an updatedAt before 1970 (a negative version) does not fail the batch", async () => {
    const px = await newPixel();
    const res = await sync(px, "orders", [good(1), { ...good(2), updatedAt: "1969-12-31T23:00:00Z" }]);
    expect(res.status, res.text).toBe(200);
    const body = res.body as SyncResult;
    expect(body.accepted + body.rejected.length).toBe(2);
    for (const r of body.rejected) expect(r.errors.map((e) => e.field)).toEqual(["updatedAt"]);
    expect(await CASES.orders.valueOf(px.pixelId, 1)).toBe(10);
  });

  it("an ad-metrics date outside the warehouse Date range is rejected, not clamped", async () => {
    const px = await newPixel();
    const res = await syncOk(px, "ad-metrics", [
      CASES["ad-metrics"].make(1, at(0), 5),
      { ...CASES["ad-metrics"].make(2, at(0), 5), date: "1960-01-01" },
    ]);
    expect(res.accepted).toBe(1);
    expect(res.rejected.map((r) => [r.index, r.errors.map((e) => e.field)])).toEqual([[1, ["date"]]]);
  });

  it("a variant inventory beyond Postgres integer is rejected without failing the other products", async () => {
    const px = await newPixel();
    const big = CASES.products.make(2, at(0), 5);
    (big.variants as Json[])[0]!.inventory = 3_000_000_000;
    const res = await sync(px, "products", [CASES.products.make(1, at(0), 5), big]);
    expect(res.status, res.text).toBe(200);
    const body = res.body as SyncResult;
    expect(body.accepted).toBe(1);
    expect(body.rejected.map((r) => [r.index, r.errors.map((e) => e.field)])).toEqual([
      [1, ["variants.0.inventory"]],
    ]);
    expect(await CASES.products.valueOf(px.pixelId, 1)).toBe(5);
  });

  it("an FX rate outside Decimal(24, 10) is rejected, not stored as 0 nor failing the batch", async () => {
    const res = await app.services.sync.upsert("fx-rates", null, [
      { date: "2026-04-01", currency: "CHF", unitsPerUsd: 0.88 },
      { date: "2026-04-01", currency: "VND", unitsPerUsd: 1e20 },
      { date: "2026-04-01", currency: "XBT", unitsPerUsd: 1e-11 },
    ]);
    expect(res.accepted).toBe(1);
    expect(res.rejected.map((r) => [r.index, r.errors.map((e) => e.field)])).toEqual([
      [1, ["unitsPerUsd"]],
      [2, ["unitsPerUsd"]],
    ]);
  });
});

describe("FX rates through SyncService.upsert('fx-rates', null, …)", () => {
  const rate = async (currency: string, date: string) => {
    const rows = await wh<{ r: string }>(
      "SELECT toString(argMax(usd_rate, version)) AS r FROM fx_rates WHERE currency = {c:String} AND date = {d:String} GROUP BY currency, date",
      { c: currency, d: date },
    );
    return rows.length ? Number(rows[0]!.r) : undefined;
  };

  it("new → accepted, same rate → unchanged, another rate → updated and argMax returns it", async () => {
    const sync = app.services.sync;
    expect(
      await sync.upsert("fx-rates", null, [
        { date: "2026-03-01", currency: "eur", unitsPerUsd: 0.9214 },
        { date: "2026-03-01", currency: "GBP", unitsPerUsd: 0.7851 },
        { date: "2026-03-01", currency: "JPY", unitsPerUsd: 149.82 },
      ]),
    ).toStrictEqual({ accepted: 3, updated: 0, unchanged: 0, rejected: [] });
    expect(await rate("EUR", "2026-03-01")).toBe(0.9214);

    expect(
      await sync.upsert("fx-rates", null, [
        { date: "2026-03-01", currency: "EUR", unitsPerUsd: 0.9214 },
        { date: "2026-03-01", currency: "GBP", unitsPerUsd: 0.7851 },
      ]),
    ).toStrictEqual({ accepted: 0, updated: 0, unchanged: 2, rejected: [] });
    const [{ n }] = (await wh<{ n: number }>("SELECT count() AS n FROM fx_rates WHERE currency = 'EUR'")) as [
      { n: number },
    ];
    expect(n).toBe(1);

    expect(
      await sync.upsert("fx-rates", null, [
        { date: "2026-03-01", currency: "EUR", unitsPerUsd: 0.9302 },
        { date: "2026-03-02", currency: "EUR", unitsPerUsd: 0.93 },
        { date: "2026-03-02", currency: "EUR", unitsPerUsd: 0 },
        { date: "2026-03-32", currency: "EUR", unitsPerUsd: 0.93 },
      ]),
    ).toStrictEqual({
      accepted: 1,
      updated: 1,
      unchanged: 0,
      rejected: [
        { index: 2, errors: [{ field: "unitsPerUsd", message: expect.any(String) }] },
        { index: 3, errors: [{ field: "date", message: expect.any(String) }] },
      ],
    });
    expect(await rate("EUR", "2026-03-01")).toBe(0.9302);
    expect(await rate("EUR", "2026-03-02")).toBe(0.93);
    expect(await rate("GBP", "2026-03-01")).toBe(0.7851);
    expect(await rate("JPY", "2026-03-01")).toBe(149.82);
  });

  it("records of a pixel need a pixel", async () => {
    await expect(app.services.sync.upsert("orders", null, [CASES.orders.make(1, at(0), 1)])).rejects.toThrow(
      /pixel/,
    );
  });
});
