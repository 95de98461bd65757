/**
 * Cost configuration over HTTP (docs/costs.md): GET the bag or one type, POST/PUT/DELETE lines with
 * one strict shape per type, the global product override, 404 for unknown and foreign lines (identical
 * bodies), and the `costs.changed` outbox row written in the same transaction as the change — for
 * order, gateway and shipping lines and the override, never for variable and fixed lines. Runs on
 * PGlite, and on the Postgres server when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CostConfig } from "../../src/costs/schemas.js";
import type { CostsChanged } from "../../src/events/costs-changed.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
type Res = Awaited<ReturnType<TestApp["call"]>>;

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const LINES = {
  order: { name: "Packaging", amount: 0.85, currency: "usd" },
  gateway: { name: "Stripe", gateway: "stripe", percentRate: 2.9, fixedFee: 0.3, currency: "USD" },
  shipping: {
    name: "EU shipping",
    countries: ["de", "FR"],
    costPerOrder: 5.5,
    costPerItem: 0.5,
    currency: "EUR",
  },
  variable: {
    name: "Agency fee",
    type: "pct_ad_spend",
    percentRate: 5,
    category: "marketing",
    channel: "online",
    currency: "USD",
  },
  fixed: { name: "Store software", amount: 299, frequency: "monthly", category: "software", currency: "USD" },
} as const;
type LineType = keyof typeof LINES;

const errorKeys = (res: Res) =>
  ((res.body as { errors?: { key: string }[] }).errors ?? []).map((e) => e.key).sort();

const adapters = [
  { name: "pglite", sql: "pglite" as const, available: true },
  { name: "postgres", sql: "postgres" as const, available: !!TEST_DATABASE_URL },
];

for (const adapter of adapters.filter((a) => a.available)) {
  describe(`costs over HTTP (${adapter.name})`, () => {
    let app: TestApp;
    let px: Pixel;
    let stranger: Pixel;
    beforeAll(async () => {
      app = await startTestApp({ sql: adapter.sql });
      px = await app.pixelWithKey(["costs:read", "costs:write"]);
      stranger = await app.pixelWithKey(["costs:read", "costs:write"]);
    });
    afterAll(() => app?.close());

    const call = (method: string, path: string, body?: unknown, who: Pixel = px) =>
      app.call(method, path, { key: who.key, pixelId: who.pixelId, ...(body !== undefined ? { body } : {}) });
    const post = (costType: string, line: unknown, who: Pixel = px) =>
      call("POST", "/accounts/api/costs/lines", { costType, line }, who);
    const config = (res: Res) => {
      expect(res.status, res.text).toBe(200);
      return (res.body as { config: CostConfig }).config;
    };
    const bag = (res: Res) => {
      expect(res.status, res.text).toBe(200);
      return res.body as CostConfig;
    };
    /** A fresh pixel of its own account, so outbox counts and configs start empty. */
    const fresh = () => app.pixelWithKey(["costs:read", "costs:write"]);
    const outbox = async (accountId: string) =>
      (
        await app.stores.sql.query<{ payload: CostsChanged }>(
          "SELECT payload FROM outbox WHERE topic = 'costs.changed' AND payload->>'accountId' = $1 ORDER BY id",
          [accountId],
        )
      ).rows.map((r) => r.payload);

    describe("GET /accounts/api/costs", () => {
      it("answers the empty bag of every type for a new account", async () => {
        const res = await call("GET", "/accounts/api/costs");
        expect(res.status).toBe(200);
        expect(res.body).toStrictEqual({
          order: [],
          gateway: [],
          shipping: [],
          variable: [],
          fixed: [],
          global_product_override: null,
        });
      });

      it("answers one type, keyed by it, with ?type=", async () => {
        const p = await fresh();
        expect(config(await post("gateway", LINES.gateway, p)).gateway).toHaveLength(1);
        const res = await call("GET", "/accounts/api/costs?type=gateway", undefined, p);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body as object)).toStrictEqual(["gateway"]);
        expect((res.body as CostConfig).gateway[0]).toMatchObject({ name: "Stripe", percentRate: 2.9 });
        const o = await call("GET", "/accounts/api/costs?type=global_product_override", undefined, p);
        expect(o.body).toStrictEqual({ global_product_override: null });
      });

      it("refuses an unknown type or parameter with 400 naming it", async () => {
        const res = await call("GET", "/accounts/api/costs?type=marketing");
        expect(res.status).toBe(400);
        expect(errorKeys(res)).toStrictEqual(["type"]);
        const extra = await call("GET", "/accounts/api/costs?costType=order");
        expect(extra.status).toBe(400);
        expect(errorKeys(extra)).toStrictEqual(["costType"]);
      });
    });

    describe("POST /accounts/api/costs/lines", () => {
      it.each(Object.keys(LINES) as LineType[])(
        "appends a %s line with a server ULID and answers {config}",
        async (t) => {
          const p = await fresh();
          const cfg = config(await post(t, LINES[t], p));
          expect(cfg[t]).toHaveLength(1);
          const line = cfg[t][0]!;
          expect(line.id).toMatch(ULID);
          expect(line).toMatchObject({ effectiveStartDate: null, effectiveEndDate: null });
          expect(line.currency).toMatch(/^[A-Z]{3}$/);
          for (const other of Object.keys(LINES) as LineType[])
            if (other !== t) expect(cfg[other]).toStrictEqual([]);
          // The answer is what a later read sees.
          expect((await call("GET", "/accounts/api/costs", undefined, p)).body).toStrictEqual(cfg);
        },
      );

      it("keeps lines in creation order, normalises codes and rounds amounts to 4 decimals", async () => {
        const p = await fresh();
        await post("order", { ...LINES.order, name: "first" }, p);
        const cfg = config(
          await post(
            "order",
            {
              name: "second",
              amount: 0.1 + 0.2,
              currency: "eur",
              effectiveStartDate: "2026-01-01",
              effectiveEndDate: "2026-12-31",
            },
            p,
          ),
        );
        expect(cfg.order.map((l) => l.name)).toStrictEqual(["first", "second"]);
        expect(cfg.order[1]).toStrictEqual({
          id: cfg.order[1]!.id,
          name: "second",
          amount: 0.3,
          currency: "EUR",
          effectiveStartDate: "2026-01-01",
          effectiveEndDate: "2026-12-31",
        });
        const ship = config(await post("shipping", LINES.shipping, p)).shipping[0]!;
        expect(ship.countries).toStrictEqual(["DE", "FR"]);
        const tiny = config(await post("order", { name: "tiny", amount: 0.00005, currency: "USD" }, p))
          .order[2]!;
        expect(tiny.amount).toBe(0.0001);
      });

      it("refuses a line of another type's shape, naming every wrong field", async () => {
        const res = await post("order", LINES.gateway);
        expect(res.status).toBe(400);
        expect((res.body as { message: string }).message).toBe("Bad Request");
        expect(errorKeys(res)).toStrictEqual([
          "line.amount",
          "line.fixedFee",
          "line.gateway",
          "line.percentRate",
        ]);
        const gw = await post("gateway", LINES.order);
        expect(errorKeys(gw)).toStrictEqual([
          "line.amount",
          "line.fixedFee",
          "line.gateway",
          "line.percentRate",
        ]);
      });

      it.each([
        ["unknown costType", { costType: "marketing", line: LINES.order }, ["costType"]],
        [
          "global_product_override is not a line type",
          { costType: "global_product_override", line: {} },
          ["costType"],
        ],
        ["no line", { costType: "order" }, ["line"]],
        ["unknown top-level key", { costType: "order", line: LINES.order, pixel: "x" }, ["pixel"]],
        ["negative amount", { costType: "order", line: { ...LINES.order, amount: -1 } }, ["line.amount"]],
        ["amount as text", { costType: "order", line: { ...LINES.order, amount: "0.85" } }, ["line.amount"]],
        [
          "rate above 100 %",
          { costType: "gateway", line: { ...LINES.gateway, percentRate: 101 } },
          ["line.percentRate"],
        ],
        [
          "bad currency",
          { costType: "order", line: { ...LINES.order, currency: "dollars" } },
          ["line.currency"],
        ],
        ["empty name", { costType: "order", line: { ...LINES.order, name: "" } }, ["line.name"]],
        [
          "bad date",
          { costType: "order", line: { ...LINES.order, effectiveStartDate: "2026-02-30" } },
          ["line.effectiveStartDate"],
        ],
        [
          "end before start",
          {
            costType: "order",
            line: { ...LINES.order, effectiveStartDate: "2026-03-01", effectiveEndDate: "2026-02-28" },
          },
          ["line.effectiveEndDate"],
        ],
        [
          "empty country list",
          { costType: "shipping", line: { ...LINES.shipping, countries: [] } },
          ["line.countries"],
        ],
        [
          "bad country",
          { costType: "shipping", line: { ...LINES.shipping, countries: ["DEU"] } },
          ["line.countries.0"],
        ],
        [
          "percentage variable line with an amount",
          { costType: "variable", line: { ...LINES.variable, percentRate: undefined, amount: 3 } },
          ["line.amount", "line.percentRate"],
        ],
        [
          "per-order variable line with a rate",
          { costType: "variable", line: { ...LINES.variable, type: "per_order" } },
          ["line.amount", "line.percentRate"],
        ],
        [
          "unknown variable type",
          { costType: "variable", line: { ...LINES.variable, type: "pct_profit" } },
          ["line.type"],
        ],
        [
          "unknown frequency",
          { costType: "fixed", line: { ...LINES.fixed, frequency: "hourly" } },
          ["line.frequency"],
        ],
      ])("400 for %s", async (_label, body, keys) => {
        const p = await fresh();
        const res = await call("POST", "/accounts/api/costs/lines", body, p);
        expect(res.status, res.text).toBe(400);
        expect(errorKeys(res)).toStrictEqual(keys);
        expect(bag(await call("GET", "/accounts/api/costs", undefined, p)).order).toStrictEqual([]);
        expect(await outbox(p.accountId)).toStrictEqual([]);
      });

      it("says which field is missing", async () => {
        const res = await post("fixed", { name: "Rent", currency: "USD", frequency: "monthly" });
        expect(res.status).toBe(400);
        const messages = (res.body as { errors: { message: string }[] }).errors.map((e) => e.message).sort();
        expect(messages).toStrictEqual(["line.amount is required", "line.category is required"]);
      });
    });

    describe("PUT /accounts/api/costs/lines/{lineId}", () => {
      it("changes only the fields in updates", async () => {
        const p = await fresh();
        const line = config(await post("gateway", LINES.gateway, p)).gateway[0]!;
        const put = (updates: unknown) =>
          call("PUT", `/accounts/api/costs/lines/${line.id}`, { costType: "gateway", updates }, p);
        const cfg = config(await put({ percentRate: 3.1, effectiveStartDate: "2026-02-01" }));
        expect(cfg.gateway).toStrictEqual([{ ...line, percentRate: 3.1, effectiveStartDate: "2026-02-01" }]);
        // A date set to null is unbounded again.
        expect(config(await put({ effectiveStartDate: null })).gateway[0]).toStrictEqual({
          ...line,
          percentRate: 3.1,
        });
      });

      it("switches a variable line's type, dropping the old rate field", async () => {
        const p = await fresh();
        const line = config(await post("variable", LINES.variable, p)).variable[0]!;
        const url = `/accounts/api/costs/lines/${line.id}`;
        const missing = await call("PUT", url, { costType: "variable", updates: { type: "per_order" } }, p);
        expect(missing.status).toBe(400);
        expect(errorKeys(missing)).toStrictEqual(["updates.amount"]);
        const cfg = config(
          await call("PUT", url, { costType: "variable", updates: { type: "per_order", amount: 1.25 } }, p),
        );
        const { percentRate: _dropped, ...rest } = line as typeof line & { percentRate: number };
        expect(cfg.variable[0]).toStrictEqual({ ...rest, type: "per_order", amount: 1.25 });
      });

      it("clears a shipping line's countries with null", async () => {
        const p = await fresh();
        const line = config(await post("shipping", LINES.shipping, p)).shipping[0]!;
        const cfg = config(
          await call(
            "PUT",
            `/accounts/api/costs/lines/${line.id}`,
            { costType: "shipping", updates: { countries: null } },
            p,
          ),
        );
        expect(cfg.shipping[0]).not.toHaveProperty("countries");
      });

      it.each([
        ["an empty update", {}, ["updates"]],
        ["a field of another type", { gateway: "paypal" }, ["updates.gateway"]],
        ["a negative amount", { amount: -5 }, ["updates.amount"]],
        ["an end before the stored start", { effectiveEndDate: "2025-12-31" }, ["updates.effectiveEndDate"]],
      ])("400 for %s", async (_label, updates, keys) => {
        const p = await fresh();
        const line = config(await post("order", { ...LINES.order, effectiveStartDate: "2026-01-01" }, p))
          .order[0]!;
        const res = await call(
          "PUT",
          `/accounts/api/costs/lines/${line.id}`,
          { costType: "order", updates },
          p,
        );
        expect(res.status, res.text).toBe(400);
        expect(errorKeys(res)).toStrictEqual(keys);
        expect(bag(await call("GET", "/accounts/api/costs", undefined, p)).order).toStrictEqual([line]);
      });

      it("404 alike for an unknown id, another account's line and a line of another type", async () => {
        const mine = config(await post("order", LINES.order)).order.at(-1)!;
        const theirs = config(await post("order", LINES.order, stranger)).order.at(-1)!;
        const put = (id: string, costType = "order") =>
          call("PUT", `/accounts/api/costs/lines/${id}`, { costType, updates: { amount: 1 } });
        const unknown = await put("01JZZZZZZZZZZZZZZZZZZZZZZZ");
        expect(unknown.status).toBe(404);
        expect(unknown.body).toStrictEqual({ message: "Cost line not found" });
        const foreign = await put(theirs.id);
        expect(foreign.status).toBe(404);
        expect(foreign.text).toBe(unknown.text);
        const otherType = await put(mine.id, "fixed");
        expect(otherType.status).toBe(404);
        expect(otherType.text).toBe(unknown.text);
        // Nothing changed on the other side.
        expect(bag(await call("GET", "/accounts/api/costs", undefined, stranger)).order.at(-1)).toStrictEqual(
          theirs,
        );
      });
    });

    describe("DELETE /accounts/api/costs/lines/{lineId}", () => {
      it("removes the line and answers the configuration", async () => {
        const p = await fresh();
        const [a, b] = [
          config(await post("fixed", LINES.fixed, p)).fixed[0]!,
          config(await post("fixed", { ...LINES.fixed, name: "Rent" }, p)).fixed[1]!,
        ];
        const cfg = config(
          await call("DELETE", `/accounts/api/costs/lines/${a.id}?costType=fixed`, undefined, p),
        );
        expect(cfg.fixed).toStrictEqual([b]);
        const again = await call("DELETE", `/accounts/api/costs/lines/${a.id}?costType=fixed`, undefined, p);
        expect(again.status).toBe(404);
      });

      it("needs costType (400) and answers 404 alike for unknown, foreign and other-type lines", async () => {
        const mine = config(await post("order", LINES.order)).order.at(-1)!;
        const theirs = config(await post("order", LINES.order, stranger)).order.at(-1)!;
        const noType = await call("DELETE", `/accounts/api/costs/lines/${mine.id}`);
        expect(noType.status).toBe(400);
        expect(errorKeys(noType)).toStrictEqual(["costType"]);
        const badType = await call(
          "DELETE",
          `/accounts/api/costs/lines/${mine.id}?costType=global_product_override`,
        );
        expect(badType.status).toBe(400);
        const unknown = await call("DELETE", "/accounts/api/costs/lines/nope?costType=order");
        expect(unknown.status).toBe(404);
        const foreign = await call("DELETE", `/accounts/api/costs/lines/${theirs.id}?costType=order`);
        expect(foreign.status).toBe(404);
        expect(foreign.text).toBe(unknown.text);
        const otherType = await call("DELETE", `/accounts/api/costs/lines/${mine.id}?costType=shipping`);
        expect(otherType.text).toBe(unknown.text);
        expect(bag(await call("GET", "/accounts/api/costs", undefined, stranger)).order).toContainEqual(
          theirs,
        );
      });
    });

    describe("global product override", () => {
      it("is set with PUT, replaced, read back and removed with DELETE", async () => {
        const p = await fresh();
        const url = "/accounts/api/costs/global-product-override";
        const set = config(await call("PUT", url, { type: "percent_of_price", value: 35 }, p));
        expect(set.global_product_override).toMatchObject({ type: "percent_of_price", value: 35 });
        expect(Date.parse(set.global_product_override!.updatedAt)).not.toBeNaN();
        const replaced = config(await call("PUT", url, { type: "fixed", value: 4.123456 }, p));
        expect(replaced.global_product_override).toMatchObject({ type: "fixed", value: 4.1235 });
        expect(
          (await call("GET", "/accounts/api/costs?type=global_product_override", undefined, p)).body,
        ).toStrictEqual({
          global_product_override: replaced.global_product_override,
        });
        expect(config(await call("DELETE", url, undefined, p)).global_product_override).toBeNull();
        expect(config(await call("DELETE", url, undefined, p)).global_product_override).toBeNull();
        const bad = await call("PUT", url, { type: "percent", value: -1 }, p);
        expect(bad.status).toBe(400);
        expect(errorKeys(bad)).toStrictEqual(["type", "value"]);
        const kinds = (await outbox(p.accountId)).map((e) => [e.kind, e.action]);
        expect(kinds).toStrictEqual([
          ["global_product_override", "created"],
          ["global_product_override", "updated"],
          ["global_product_override", "deleted"],
        ]);
      });
    });

    describe("recalculation trigger (outbox topic costs.changed)", () => {
      it.each(["order", "gateway", "shipping"] as const)(
        "%s lines: POST, PUT and DELETE each write one row describing the change",
        async (t) => {
          const p = await fresh();
          await app.stores.sql.query("UPDATE accounts SET timezone = 'Europe/Berlin' WHERE id = $1", [
            p.accountId,
          ]);
          const created = config(
            await post(
              t,
              { ...LINES[t], effectiveStartDate: "2026-03-01", effectiveEndDate: "2026-03-31" },
              p,
            ),
          )[t][0]!;
          const url = `/accounts/api/costs/lines/${created.id}`;
          const updated = config(
            await call("PUT", url, { costType: t, updates: { effectiveEndDate: null } }, p),
          )[t][0]!;
          // An update that changes nothing announces nothing.
          config(await call("PUT", url, { costType: t, updates: { effectiveEndDate: null } }, p));
          config(await call("DELETE", `${url}?costType=${t}`, undefined, p));
          const rows = await outbox(p.accountId);
          expect(rows.map((r) => r.action)).toStrictEqual(["created", "updated", "deleted"]);
          for (const r of rows) {
            expect(r).toMatchObject({
              v: 1,
              kind: "cost_line",
              accountId: p.accountId,
              pixelId: null,
              costType: t,
              variants: null,
              timezone: "Europe/Berlin",
              actor: `cli:${p.keyId}`,
            });
            expect(Date.parse(r.occurredAt)).not.toBeNaN();
          }
          expect(rows[0]!.changes).toStrictEqual([{ old: null, new: created }]);
          expect(rows[0]!.dateRange).toStrictEqual({ from: "2026-03-01", to: "2026-03-31" });
          expect(rows[1]!.changes).toStrictEqual([{ old: created, new: updated }]);
          expect(rows[1]!.dateRange).toStrictEqual({ from: "2026-03-01", to: null });
          // The deleted line travels whole, so the worker can find the orders it applied to.
          expect(rows[2]!.changes).toStrictEqual([{ old: updated, new: null }]);
        },
      );

      it("variable and fixed lines apply at report time: no row", async () => {
        const p = await fresh();
        for (const t of ["variable", "fixed"] as const) {
          const line = config(await post(t, LINES[t], p))[t][0]!;
          const url = `/accounts/api/costs/lines/${line.id}`;
          config(await call("PUT", url, { costType: t, updates: { name: "renamed" } }, p));
          config(await call("DELETE", `${url}?costType=${t}`, undefined, p));
        }
        expect(await outbox(p.accountId)).toStrictEqual([]);
      });

      it("is written in the change's transaction: when the outbox insert fails, the line is not stored", async () => {
        const p = await fresh();
        // A trigger refusing this account's outbox rows makes the insert fail after the line's INSERT ran.
        await app.stores.sql.exec(`
          CREATE FUNCTION refuse_outbox_${p.accountId.toLowerCase()}() RETURNS trigger AS $$
          BEGIN
            IF NEW.payload->>'accountId' = '${p.accountId}' THEN RAISE EXCEPTION 'outbox refused'; END IF;
            RETURN NEW;
          END $$ LANGUAGE plpgsql;
          CREATE TRIGGER refuse_outbox_${p.accountId.toLowerCase()} BEFORE INSERT ON outbox
            FOR EACH ROW EXECUTE FUNCTION refuse_outbox_${p.accountId.toLowerCase()}();`);
        try {
          const res = await post("order", LINES.order, p);
          expect(res.status).toBe(500);
          expect(bag(await call("GET", "/accounts/api/costs", undefined, p)).order).toStrictEqual([]);
          // Variable lines write no outbox row, so they are stored regardless.
          expect(config(await post("variable", LINES.variable, p)).variable).toHaveLength(1);
        } finally {
          await app.stores.sql.exec(`DROP TRIGGER refuse_outbox_${p.accountId.toLowerCase()} ON outbox`);
        }
      });
    });

    it("needs costs:write to write and costs:read to read", async () => {
      const reader = await app.pixelWithKey(["costs:read"]);
      const res = await post("order", LINES.order, reader);
      expect(res.status).toBe(403);
      expect(res.body).toStrictEqual({ message: "API key does not have the costs:write scope" });
      const writer = await app.pixelWithKey(["costs:write"]);
      expect((await call("GET", "/accounts/api/costs", undefined, writer)).status).toBe(403);
    });
  });
}

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
