import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ORDER_SETTINGS } from "../../src/accounts/schemas.js";
import { routeTable } from "../../src/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

let userSeq = 0;
async function addMember(
  accountId: string,
  role: "owner" | "admin" | "member",
  active: boolean,
  name: { first: string; last: string },
) {
  userSeq++;
  const id = `user_${userSeq}_${Math.random().toString(36).slice(2, 8)}`;
  const email = `${name.first.toLowerCase()}.${userSeq}@example.com`;
  await app.stores.sql.query("INSERT INTO users (id, email, first_name, last_name) VALUES ($1, $2, $3, $4)", [
    id,
    email,
    name.first,
    name.last,
  ]);
  await app.stores.sql.query(
    "INSERT INTO account_members (account_id, user_id, role, active) VALUES ($1, $2, $3, $4)",
    [accountId, id, role, active],
  );
  return { email, firstName: name.first, lastName: name.last };
}

const createdAtOf = async (accountId: string) =>
  (
    await app.stores.sql.query<{ created_at: Date }>("SELECT created_at FROM accounts WHERE id = $1", [
      accountId,
    ])
  ).rows[0]!.created_at.toISOString();

describe("GET /accounts/api/account", () => {
  it("returns the public projection: active owners and admins only, no internal field", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const owner = await addMember(k.accountId, "owner", true, { first: "Olivia", last: "Owner" });
    await addMember(k.accountId, "owner", false, { first: "Gone", last: "Owner" });
    const admin = await addMember(k.accountId, "admin", true, { first: "Adam", last: "Admin" });
    await addMember(k.accountId, "admin", false, { first: "Former", last: "Admin" });
    await addMember(k.accountId, "member", true, { first: "Mel", last: "Member" });
    // Someone of another account never shows up.
    const other = await app.pixelWithKey(["account:read"]);
    await addMember(other.accountId, "owner", true, { first: "Stranger", last: "Elsewhere" });
    await app.stores.sql.query(
      `UPDATE accounts SET name = 'Acme Shop', company_name = 'Acme Holdings Ltd',
         primary_email = 'billing-secret@acme.test', internal = '{"stripeCustomerId":"cus_SECRET"}'::jsonb
       WHERE id = $1`,
      [k.accountId],
    );

    const res = await app.call("GET", "/accounts/api/account", k);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      account: {
        accountName: "Acme Shop",
        createdAt: await createdAtOf(k.accountId),
        owners: [owner],
        admins: [admin],
      },
    });
    for (const leaked of [
      "company_name",
      "companyName",
      "Acme Holdings",
      "primary_email",
      "primaryEmail",
      "billing-secret",
      "internal",
      "cus_SECRET",
      "Gone",
      "Former",
      "Mel",
      "Stranger",
      k.accountId,
    ]) {
      expect(res.text).not.toContain(leaked);
    }
  });

  it("createdAt is an ISO 8601 timestamp", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const res = await app.call("GET", "/accounts/api/account", k);
    const createdAt = (res.body as { account: { createdAt: string } }).account.createdAt;
    expect(createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
  });

  it("an account with nobody answers empty owners and admins", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const res = await app.call("GET", "/accounts/api/account", k);
    expect(res.body).toStrictEqual({
      account: {
        accountName: "Test Shop",
        createdAt: await createdAtOf(k.accountId),
        owners: [],
        admins: [],
      },
    });
  });

  it("lists several owners in membership order", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const first = await addMember(k.accountId, "owner", true, { first: "Zed", last: "First" });
    await app.stores.sql.query(
      "UPDATE account_members SET created_at = now() - interval '1 day' WHERE account_id = $1",
      [k.accountId],
    );
    const second = await addMember(k.accountId, "owner", true, { first: "Amy", last: "Second" });
    const res = await app.call("GET", "/accounts/api/account", k);
    expect((res.body as { account: { owners: unknown[] } }).account.owners).toStrictEqual([first, second]);
  });

  it("includes the subscription object when one is set", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const subscription = {
      plan: {
        name: "Growth",
        billingFrequency: "monthly",
        displayPrice: "$99",
        currency: "USD",
        discountedDisplayPrice: "$79",
        discount: { code: "SPRING", type: "percent", value: 20, appliesForBillingIntervals: 3 },
      },
      status: "active",
      currentPeriodEnd: "2026-07-01",
      cancelAtPeriodEnd: false,
    };
    await app.stores.sql.query("UPDATE accounts SET subscription = $2::jsonb WHERE id = $1", [
      k.accountId,
      JSON.stringify(subscription),
    ]);
    const res = await app.call("GET", "/accounts/api/account", k);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      account: {
        accountName: "Test Shop",
        createdAt: await createdAtOf(k.accountId),
        owners: [],
        admins: [],
        subscription,
      },
    });
  });

  it("answers the account of the key's pixel, not another", async () => {
    const a = await app.pixelWithKey(["account:read"]);
    const b = await app.pixelWithKey(["account:read"]);
    await app.stores.sql.query("UPDATE accounts SET name = 'Account B' WHERE id = $1", [b.accountId]);
    const res = await app.call("GET", "/accounts/api/account", a);
    expect((res.body as { account: { accountName: string } }).account.accountName).toBe("Test Shop");
  });
});

describe("GET /accounts/api/account/settings/order", () => {
  it("returns the documented defaults when nothing is stored", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const res = await app.call("GET", "/accounts/api/account/settings/order", k);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      orderSettings: {
        countPendingOrders: false,
        countVoidedOrders: false,
        refundDateAttribution: "refund_date",
        exclusionFilters: [],
      },
    });
    expect(DEFAULT_ORDER_SETTINGS).toStrictEqual((res.body as { orderSettings: unknown }).orderSettings);
  });

  it("merges a partial stored object with the defaults", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    await app.stores.sql.query("UPDATE accounts SET order_settings = $2::jsonb WHERE id = $1", [
      k.accountId,
      JSON.stringify({ countPendingOrders: true, refundDateAttribution: "order_date" }),
    ]);
    const res = await app.call("GET", "/accounts/api/account/settings/order", k);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      orderSettings: {
        countPendingOrders: true,
        countVoidedOrders: false,
        refundDateAttribution: "order_date",
        exclusionFilters: [],
      },
    });
  });

  it("returns a complete stored object as stored", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const stored = {
      countPendingOrders: false,
      countVoidedOrders: true,
      refundDateAttribution: "refund_date",
      exclusionFilters: [
        {
          id: "3f1e2d4c-5b6a-4789-8a0b-1c2d3e4f5a6b",
          name: "Test orders",
          enabled: true,
          conditionGroups: [
            {
              id: "0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b",
              logic: "and",
              conditions: [
                {
                  id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
                  field: "orders.tags",
                  operator: "contains",
                  value: "test",
                },
              ],
            },
          ],
          createdAt: "2026-01-02T03:04:05.000Z",
          updatedAt: "2026-01-02T03:04:05.000Z",
        },
      ],
    };
    await app.stores.sql.query("UPDATE accounts SET order_settings = $2::jsonb WHERE id = $1", [
      k.accountId,
      JSON.stringify(stored),
    ]);
    const res = await app.call("GET", "/accounts/api/account/settings/order", k);
    expect(res.body).toStrictEqual({ orderSettings: stored });
  });

  it("another account's settings do not bleed over", async () => {
    const a = await app.pixelWithKey(["account:read"]);
    const b = await app.pixelWithKey(["account:read"]);
    await app.stores.sql.query("UPDATE accounts SET order_settings = $2::jsonb WHERE id = $1", [
      b.accountId,
      JSON.stringify({ countVoidedOrders: true }),
    ]);
    const res = await app.call("GET", "/accounts/api/account/settings/order", a);
    expect(res.body).toStrictEqual({ orderSettings: DEFAULT_ORDER_SETTINGS });
  });
});

describe("operations endpoints", () => {
  it("GET /healthz → 200 {status: ok}", async () => {
    const res = await app.call("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ status: "ok" });
  });

  it("GET /readyz → 200 naming the three stores (and each background consumer's lag)", async () => {
    const res = await app.call("GET", "/readyz");
    expect(res.status).toBe(200);
    const { consumers, ...rest } = res.body as { consumers: Record<string, unknown> };
    expect(rest).toStrictEqual({
      status: "ready",
      stores: {
        sql: { adapter: app.stores.sql.kind, ok: true },
        warehouse: { adapter: app.stores.warehouse.kind, ok: true },
        kv: { adapter: app.stores.kv.kind, ok: true },
      },
    });
    expect(Object.keys(consumers).sort()).toEqual([
      "cogs-recalc",
      "derived-tables",
      "forwarding",
      "identity",
      "outbox-relay",
    ]);
    // Embedded by default.
    expect([app.stores.sql.kind, app.stores.warehouse.kind, app.stores.kv.kind]).toStrictEqual([
      "pglite",
      "chdb",
      "memory",
    ]);
  });

  it("GET /openapi.json is an OpenAPI 3.1 document with every route of the table", async () => {
    const res = await app.call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.body as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
    const table = routeTable(app.services, app.stores, app.config);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    const expected = table.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    expect(documented.sort()).toStrictEqual(expected.sort());
    for (const r of table) {
      const op = doc.paths[r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")]![r.method]!;
      expect(op.responses["200"]).toBeDefined();
      if (r.auth === "public") expect(op.security).toStrictEqual([]);
      else {
        expect(op.responses["401"]).toBeDefined();
        expect(op.responses["403"]).toBeDefined();
      }
    }
  });

  it("GET /docs is HTML that loads local assets only", async () => {
    const res = await app.call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const refs = [
      ...res.text.matchAll(/<(?:script|link|img)\b[^>]*\b(?:src|href)\s*=\s*["']([^"']+)["']/gi),
    ].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(ref).toMatch(/^\/(?!\/)/);
    expect(res.text).not.toMatch(/https?:\/\//);
    // Every referenced asset is served.
    for (const ref of refs) {
      const asset = await app.call("GET", ref);
      expect({ ref, status: asset.status }).toStrictEqual({ ref, status: 200 });
    }
  });

  it("serves the bundled swagger-ui script", async () => {
    const res = await app.call("GET", "/docs/assets/swagger-ui-bundle.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    expect(res.text.length).toBeGreaterThan(100_000);
    expect(res.text).toContain("SwaggerUIBundle");
  });
});
