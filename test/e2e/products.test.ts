/**
 * Products and variant costs over HTTP (docs/products.md): catalog search (matching, case, LIKE characters,
 * limits, keyset paging that stays stable while products are added), the variant cost record (Form A)
 * and resolved cost (Form B, every tier), COG lines (append, the closing rule, partial updates),
 * handling fees, 404 for unknown and foreign variants and lines with identical bodies, and the
 * `costs.changed` outbox rows. The catalog arrives through the sync endpoint, as in production. Runs
 * on PGlite, and on the Postgres server when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CostsChanged } from "../../src/events/costs-changed.js";
import type { Product, ProductVariant, VariantSummary } from "../../src/products/schemas.js";
import { dayIn } from "../../src/shared/days.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { skipReason, TEST_DATABASE_URL } from "../helpers/env.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
type Res = Awaited<ReturnType<TestApp["call"]>>;
type Json = Record<string, unknown>;
interface Page {
  items: Product[];
  nextCursor?: string;
}

const SCOPES = ["costs:read", "costs:write", "sync:write"];
const errorKeys = (res: Res) =>
  ((res.body as { errors?: { key: string }[] }).errors ?? []).map((e) => e.key).sort();

const variant = (id: string, sku: string, title: string, extra: Json = {}) => ({
  id,
  sku,
  title,
  currency: "EUR",
  currentPrice: 59.99,
  inventory: 7,
  ...extra,
});
const product = (id: string, title: string, variants: Json[], extra: Json = {}) => ({
  id,
  title,
  handle: title.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
  vendor: "Acme",
  productType: "Apparel",
  tags: ["demo"],
  imageUrls: [`https://cdn.example.com/${id}.jpg`],
  variants,
  updatedAt: "2026-03-01T10:00:00Z",
  ...extra,
});

const CATALOG = [
  product("p-a", "Linen Shirt", [variant("a-s", "LS-S", "S"), variant("a-m", "LS-M", "M")]),
  product("p-b", "Canvas Tote", [variant("b-1", "CT-1", "Default")]),
  product("p-c", "Wool Scarf", [variant("c-1", "WS-1", "Pure wool"), variant("c-2", "WS-2", "LINEN blend")]),
  product("p-d", "Rain Jacket", [variant("d-1", "XLINEN-9", "One size"), variant("d-2", "RJ-2", "Two size")]),
  product("p-e", "ÉCOLE Bag", [variant("e-1", "EB-1", "Default")]),
  product("p-f", "100% Cotton Tee", [variant("f-1", "CT-100", "Default")]),
  product("p-g", "Under_score", [variant("g-1", "US-1", "Default")]),
  product("p-h", "Cost Test Shirt", [
    variant("h-1", "CTS-1", "Store cost", {
      storeCostHistory: [
        { cost: 9.2, effectiveStartDate: "2024-01-01", effectiveEndDate: "2025-12-31" },
        { cost: 10, effectiveStartDate: "2026-01-01", effectiveEndDate: null },
      ],
      raw: { weight_grams: 250 },
    }),
    variant("h-2", "CTS-2", "No cost"),
    variant("h-3", "CTS-3", "COG rules"),
    variant("h-4", "CTS-4", "Fees"),
  ]),
];

const adapters = [
  { name: "pglite", sql: "pglite" as const, available: true },
  { name: "postgres", sql: "postgres" as const, available: !!TEST_DATABASE_URL },
];

for (const adapter of adapters.filter((a) => a.available)) {
  describe(`products over HTTP (${adapter.name})`, () => {
    let app: TestApp;
    let px: Pixel;
    let stranger: Pixel;

    const call = (method: string, path: string, body?: unknown, who: Pixel = px) =>
      app.call(method, path, { key: who.key, pixelId: who.pixelId, ...(body !== undefined ? { body } : {}) });
    const sync = async (records: unknown[], who: Pixel = px) => {
      const res = await call("POST", "/accounts/api/sync/products", { records }, who);
      expect(res.status, res.text).toBe(200);
      expect((res.body as { rejected: unknown[] }).rejected).toStrictEqual([]);
    };
    const ok = <T>(res: Res): T => {
      expect(res.status, res.text).toBe(200);
      return res.body as T;
    };
    const search = (query: string, who: Pixel = px) =>
      call("GET", `/accounts/api/products/search${query}`, undefined, who);
    const costOf = (pid: string, vid: string, query = "", who: Pixel = px) =>
      call("GET", `/accounts/api/products/${pid}/${vid}/cost${query}`, undefined, who);
    const resolved = async (pid: string, vid: string, at: string) =>
      ok<{ productCost: Json }>(await costOf(pid, vid, `?resolved=true&at=${at}`)).productCost;
    const addCog = (pid: string, vid: string, body: unknown, who: Pixel = px) =>
      call("POST", `/accounts/api/products/${pid}/${vid}/cogs`, body, who);
    const putCog = (pid: string, vid: string, cogId: string, body: unknown, who: Pixel = px) =>
      call("PUT", `/accounts/api/products/${pid}/${vid}/cogs/${cogId}`, body, who);
    const outbox = async (pixelId: string) =>
      (
        await app.stores.sql.query<{ payload: CostsChanged }>(
          "SELECT payload FROM outbox WHERE topic = 'costs.changed' AND payload->>'pixelId' = $1 ORDER BY id",
          [pixelId],
        )
      ).rows.map((r) => r.payload);

    beforeAll(async () => {
      app = await startTestApp({ sql: adapter.sql });
      px = await app.pixelWithKey(SCOPES);
      stranger = await app.pixelWithKey(SCOPES);
      await sync(CATALOG);
      await sync([product("p-a", "Linen Trousers", [variant("z-1", "LINEN-Z", "Foreign")])], stranger);
    });
    afterAll(() => app?.close());

    describe("GET /accounts/api/products/search", () => {
      const ids = (page: Page) => page.items.map((p) => p.id);

      it("matches product title, variant title and SKU, case-insensitively", async () => {
        const page = ok<Page>(await search("?q=linen"));
        expect(ids(page)).toStrictEqual(["p-a", "p-c", "p-d"]);
        expect(page).not.toHaveProperty("nextCursor");
        const [shirt, scarf, jacket] = page.items;
        // The product title matched: every variant. Otherwise only the variants that matched.
        expect(shirt!.variants.map((v) => v.id)).toStrictEqual(["a-m", "a-s"]); // by variant id
        expect(scarf!.variants.map((v) => v.id)).toStrictEqual(["c-2"]);
        expect(jacket!.variants.map((v) => v.id)).toStrictEqual(["d-1"]);
        expect(shirt).toStrictEqual({
          id: "p-a",
          title: "Linen Shirt",
          vendor: "Acme",
          variants: [
            { id: "a-m", productId: "p-a", sku: "LS-M", title: "M", handlingFee: 0, manualCostHistory: [] },
            { id: "a-s", productId: "p-a", sku: "LS-S", title: "S", handlingFee: 0, manualCostHistory: [] },
          ],
        });
        expect(ids(ok<Page>(await search("?q=LiNeN")))).toStrictEqual(["p-a", "p-c", "p-d"]);
        expect(ids(ok<Page>(await search("?q=xlinen-9")))).toStrictEqual(["p-d"]);
      });

      it("folds non-ASCII letters and takes %, _ and \\ literally", async () => {
        expect(ids(ok<Page>(await search(`?q=${encodeURIComponent("école")}`)))).toStrictEqual(["p-e"]);
        expect(ids(ok<Page>(await search("?q=%25")))).toStrictEqual(["p-f"]);
        expect(ids(ok<Page>(await search("?q=_")))).toStrictEqual(["p-g"]);
        expect(ids(ok<Page>(await search("?q=%5C")))).toStrictEqual([]);
        expect(ids(ok<Page>(await search("?q=nothing-like-this")))).toStrictEqual([]);
      });

      it("lists the whole catalog of the key's pixel for an empty or blank term", async () => {
        const all = CATALOG.map((p) => p.id).sort();
        expect(ids(ok<Page>(await search("")))).toStrictEqual(all);
        expect(ids(ok<Page>(await search("?q=%20%20")))).toStrictEqual(all);
        expect(ids(ok<Page>(await search("?q=Trousers")))).toStrictEqual([]);
        expect(ids(ok<Page>(await search("?q=Trousers", stranger)))).toStrictEqual(["p-a"]);
      });

      it.each([
        ["?limit=0", ["limit"]],
        ["?limit=101", ["limit"]],
        ["?limit=abc", ["limit"]],
        ["?limit=2.5", ["limit"]],
        ["?limit=-1", ["limit"]],
        ["?page=2", ["page"]],
        ["?q=a&q=b", ["q"]],
        [`?q=${"x".repeat(201)}`, ["q"]],
        ["?cursor=not*a*cursor", ["cursor"]],
        [`?cursor=${Buffer.from('{"v":2}').toString("base64url")}`, ["cursor"]],
      ])("400 for %s", async (query, keys) => {
        const res = await search(query);
        expect(res.status, res.text).toBe(400);
        expect(errorKeys(res)).toStrictEqual(keys);
      });

      describe("paging", () => {
        let bulk: Pixel;
        const id = (n: number) => `bulk-${String(n).padStart(3, "0")}`;
        beforeAll(async () => {
          bulk = await app.pixelWithKey(SCOPES);
          // Even numbers now; odd ones are added while a client pages.
          await sync(
            Array.from({ length: 57 }, (_, i) =>
              product(id(i * 2), `Bulk item ${i * 2}`, [variant(`${id(i * 2)}-v`, `BK-${i * 2}`, "Default")]),
            ),
            bulk,
          );
        });

        async function walk(
          query: string,
          limit: number,
          between?: (page: number, position: string) => Promise<void>,
        ) {
          const seen: string[] = [];
          let cursor: string | undefined;
          let pages = 0;
          do {
            const res = await search(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, bulk);
            const page = ok<Page>(res);
            expect(page.items.length).toBeLessThanOrEqual(limit);
            seen.push(...ids(page));
            cursor = page.nextCursor;
            pages++;
            if (cursor && between) await between(pages, seen[seen.length - 1]!);
          } while (cursor);
          return { seen, pages };
        }

        it("walks every matching product once, nextCursor absent on the last page", async () => {
          const { seen, pages } = await walk("?q=bulk", 10);
          expect(pages).toBe(6);
          expect(seen).toStrictEqual(Array.from({ length: 57 }, (_, i) => id(i * 2)));
          const first = ok<Page>(await search("?q=bulk", bulk));
          expect(first.items).toHaveLength(25);
          expect(first.nextCursor).toEqual(expect.any(String));
        });

        it("a full last page has no nextCursor", async () => {
          const { seen, pages } = await walk("?q=item%201", 5);
          // "item 1" matches 10, 12, …, 18 and 100…112: 5 + 7 = 12 products → pages of 5, 5, 2.
          expect(pages).toBe(3);
          expect(seen).toHaveLength(12);
          const exact = await walk("?q=item%201", 6);
          expect(exact.pages).toBe(2);
        });

        it("stays stable while products are added: no duplicate, no gap", async () => {
          const before = new Set((await walk("?q=bulk", 100)).seen); // the catalog as it was
          const added: { pid: string; position: string }[] = [];
          const { seen } = await walk("?q=bulk", 7, async (_page, position) => {
            // After each page, one product sorting before the position and one far ahead arrive.
            const early = id(Number(position.slice(5)) - 1);
            const late = id(201 + added.length);
            for (const pid of [early, late]) added.push({ pid, position });
            await sync(
              [early, late].map((pid) =>
                product(pid, `Bulk item added ${pid}`, [variant(`${pid}-v`, `BK-${pid}`, "Default")]),
              ),
              bulk,
            );
          });
          expect(new Set(seen).size).toBe(seen.length);
          for (const pid of before) expect(seen).toContain(pid);
          // Ids have one length and only digits vary, so every collation orders them like this.
          expect([...seen].sort()).toStrictEqual(seen);
          for (const a of added)
            expect({ ...a, seen: seen.includes(a.pid) }).toStrictEqual({ ...a, seen: a.pid > a.position });
          expect(added.some((a) => a.pid > a.position)).toBe(true);
        });

        it("refuses a cursor with another search term", async () => {
          const first = ok<Page>(await search("?q=bulk&limit=5", bulk));
          const res = await search(`?q=item&limit=5&cursor=${first.nextCursor}`, bulk);
          expect(res.status).toBe(400);
          expect(errorKeys(res)).toStrictEqual(["cursor"]);
        });
      });
    });

    describe("GET /accounts/api/products/{productId}/{variantId}/cost", () => {
      it("Form A: the stored record with its product's details and both histories", async () => {
        const { productCost } = ok<{ productCost: ProductVariant }>(await costOf("p-h", "h-1"));
        expect(productCost).toStrictEqual({
          productId: "p-h",
          variantId: "h-1",
          sku: "CTS-1",
          variantTitle: "Store cost",
          productTitle: "Cost Test Shirt",
          handle: "cost-test-shirt",
          vendor: "Acme",
          productType: "Apparel",
          status: "ACTIVE",
          tags: ["demo"],
          imageUrls: ["https://cdn.example.com/p-h.jpg"],
          currency: "EUR",
          currentPrice: 59.99,
          handlingFee: 0,
          storeCostHistory: [
            {
              id: expect.any(String),
              cost: 9.2,
              effectiveStartDate: "2024-01-01",
              effectiveEndDate: "2025-12-31",
            },
            { id: expect.any(String), cost: 10, effectiveStartDate: "2026-01-01", effectiveEndDate: null },
          ],
          manualCostHistory: [],
          variant: { weight_grams: 250, inventoryQuantity: 7 },
          pixelId: px.pixelId,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        });
        expect(
          ok<{ productCost: unknown }>(await costOf("p-h", "h-1", "?resolved=false")).productCost,
        ).toStrictEqual(productCost);
      });

      it("200 with null for an unknown, a foreign or a mismatched variant — byte-identical", async () => {
        const unknown = await costOf("p-h", "nope");
        expect(unknown.status).toBe(200);
        expect(unknown.text).toBe('{"productCost":null}');
        expect((await costOf("p-a", "z-1")).text).toBe(unknown.text); // the stranger's variant
        expect((await costOf("p-a", "h-1")).text).toBe(unknown.text); // variant of another product
        expect((await costOf("p-h", "nope", "?resolved=true")).text).toBe(unknown.text);
        expect((await costOf("p-a", "z-1", "?resolved=true")).text).toBe(unknown.text);
      });

      it.each([
        ["?resolved=yes", ["resolved"]],
        ["?at=2026-01-01", ["at"]],
        ["?resolved=true&at=2026-13-01", ["at"]],
        ["?verbose=1", ["verbose"]],
      ])("400 for %s", async (query, keys) => {
        const res = await costOf("p-h", "h-1", query);
        expect(res.status).toBe(400);
        expect(errorKeys(res)).toStrictEqual(keys);
      });

      it("Form B walks the tiers: variant_cog, store_cost, global_override, default", async () => {
        const p = await app.pixelWithKey(SCOPES);
        await sync([CATALOG.at(-1)!], p);
        const at = async (day: string) =>
          ok<{ productCost: Json }>(await costOf("p-h", "h-1", `?resolved=true&at=${day}`, p)).productCost;
        const storeLines = ok<{ productCost: ProductVariant }>(await costOf("p-h", "h-1", "", p)).productCost
          .storeCostHistory;

        // Before any line: the default, 0 in the account currency.
        expect(await at("2023-06-01")).toStrictEqual({
          effectiveCost: 0,
          handlingFee: 0,
          currency: "USD",
          handlingFeeCurrency: "USD",
          source: "default",
          activeCogLine: null,
          date: "2023-06-01",
        });
        // Store cost in the variant's currency.
        expect(await at("2025-06-01")).toMatchObject({
          effectiveCost: 9.2,
          currency: "EUR",
          source: "store_cost",
          activeCogLine: storeLines[0],
        });
        expect(await at("2026-06-01")).toMatchObject({ effectiveCost: 10, source: "store_cost" });

        // The override: a percentage of the current price (exact decimals), or a fixed amount.
        await call(
          "PUT",
          "/accounts/api/costs/global-product-override",
          { type: "percent_of_price", value: 35 },
          p,
        );
        expect(await at("2023-06-01")).toMatchObject({
          effectiveCost: 20.9965,
          currency: "EUR",
          source: "global_override",
          activeCogLine: null,
        });
        expect(await at("2025-06-01")).toMatchObject({ source: "store_cost" });
        await call("PUT", "/accounts/api/costs/global-product-override", { type: "fixed", value: 4.5 }, p);
        expect(await at("2023-06-01")).toMatchObject({
          effectiveCost: 4.5,
          currency: "USD",
          source: "global_override",
        });

        // A manual COG line wins over all of them on its days.
        const cog = ok<{ variant: VariantSummary }>(
          await addCog(
            "p-h",
            "h-1",
            { cost: 12.5, effectiveStartDate: "2026-02-01", description: "new supplier" },
            p,
          ),
        ).variant.manualCostHistory[0]!;
        expect(await at("2026-03-01")).toMatchObject({
          effectiveCost: 12.5,
          currency: "USD",
          source: "variant_cog",
          activeCogLine: cog,
        });
        expect(await at("2026-01-31")).toMatchObject({ effectiveCost: 10, source: "store_cost" });
      });

      it("Form B resolves today in the account's timezone when no day is given", async () => {
        const p = await app.pixelWithKey(SCOPES);
        await sync([CATALOG.at(-1)!], p);
        await app.stores.sql.query("UPDATE accounts SET timezone = 'Pacific/Kiritimati' WHERE id = $1", [
          p.accountId,
        ]);
        const before = dayIn("Pacific/Kiritimati", Date.now());
        const { productCost } = ok<{ productCost: Json }>(await costOf("p-h", "h-2", "?resolved=true", p));
        const after = dayIn("Pacific/Kiritimati", Date.now());
        expect([before, after]).toContain(productCost.date);
        expect(productCost).toMatchObject({ source: "default", effectiveCost: 0 });
      });
    });

    describe("COG lines", () => {
      const history = (res: Res) => ok<{ variant: VariantSummary }>(res).variant.manualCostHistory;

      it("POST appends a line; a new open-ended line closes the open-ended one before it", async () => {
        const a = history(await addCog("p-h", "h-3", { cost: 10, effectiveStartDate: "2026-01-01" }));
        expect(a).toStrictEqual([
          {
            id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
            cost: 10,
            effectiveStartDate: "2026-01-01",
            effectiveEndDate: null,
          },
        ]);
        const b = history(
          await addCog("p-h", "h-3", {
            cost: 11,
            effectiveStartDate: "2026-03-01",
            effectiveEndDate: null,
            description: "raise",
          }),
        );
        expect(b).toStrictEqual([
          { ...a[0], effectiveEndDate: "2026-02-28" },
          {
            id: expect.any(String),
            cost: 11,
            effectiveStartDate: "2026-03-01",
            effectiveEndDate: null,
            description: "raise",
          },
        ]);
        // A bounded line closes nothing: it wins on its own days and the open line resumes after it.
        const c = history(
          await addCog("p-h", "h-3", {
            cost: 9,
            effectiveStartDate: "2026-04-01",
            effectiveEndDate: "2026-04-30",
          }),
        );
        expect(c.map((l) => [l.cost, l.effectiveStartDate, l.effectiveEndDate])).toStrictEqual([
          [10, "2026-01-01", "2026-02-28"],
          [11, "2026-03-01", null],
          [9, "2026-04-01", "2026-04-30"],
        ]);
        expect(await resolved("p-h", "h-3", "2026-04-15")).toMatchObject({
          effectiveCost: 9,
          source: "variant_cog",
        });
        expect(await resolved("p-h", "h-3", "2026-05-01")).toMatchObject({ effectiveCost: 11 });
        expect(await resolved("p-h", "h-3", "2026-02-28")).toMatchObject({ effectiveCost: 10 });

        // Two open-ended lines may not start on the same day.
        const dup = await addCog("p-h", "h-3", { cost: 12, effectiveStartDate: "2026-03-01" });
        expect(dup.status).toBe(400);
        expect(errorKeys(dup)).toStrictEqual(["effectiveStartDate"]);

        const rows = (await outbox(px.pixelId)).filter((r) => r.kind === "variant_cog");
        const closing = rows[1]!;
        expect(closing).toMatchObject({
          v: 1,
          kind: "variant_cog",
          action: "created",
          accountId: px.accountId,
          pixelId: px.pixelId,
          costType: null,
          variants: [{ productId: "p-h", variantId: "h-3" }],
          dateRange: { from: "2026-01-01", to: null },
          timezone: "UTC",
          actor: `cli:${px.keyId}`,
        });
        expect(closing.changes).toStrictEqual([
          { old: a[0], new: b[0] },
          { old: null, new: b[1] },
        ]);
        expect(rows[2]!.dateRange).toStrictEqual({ from: "2026-04-01", to: "2026-04-30" });
        expect(rows).toHaveLength(3);
      });

      it("PUT changes only the supplied fields and refuses a line ending before it starts", async () => {
        const [line] = history(
          await addCog("p-h", "h-4", {
            cost: 5,
            effectiveStartDate: "2026-05-01",
            effectiveEndDate: "2026-05-31",
            description: "x",
          }),
        );
        const url = (id: string) => [`p-h`, "h-4", id] as const;
        expect(history(await putCog(...url(line!.id), { cost: 5.55555 }))).toStrictEqual([
          { ...line, cost: 5.5556 },
        ]);
        expect(
          history(await putCog(...url(line!.id), { description: null, effectiveEndDate: null })),
        ).toStrictEqual([
          { id: line!.id, cost: 5.5556, effectiveStartDate: "2026-05-01", effectiveEndDate: null },
        ]);
        const inverted = await putCog(...url(line!.id), { effectiveEndDate: "2026-04-30" });
        expect(inverted.status).toBe(400);
        expect(errorKeys(inverted)).toStrictEqual(["effectiveEndDate"]);
        const both = await putCog(...url(line!.id), {
          effectiveStartDate: "2026-06-02",
          effectiveEndDate: "2026-06-01",
        });
        expect(errorKeys(both)).toStrictEqual(["effectiveEndDate"]);
        await putCog(...url(line!.id), { effectiveEndDate: "2026-06-30" });
        const late = await putCog(...url(line!.id), { effectiveStartDate: "2026-07-01" });
        expect(late.status).toBe(400);
        expect(errorKeys(late)).toStrictEqual(["effectiveStartDate"]);
        for (const body of [{}, { cost: -1 }, { cost: "5" }, { id: "x" }]) {
          const res = await putCog(...url(line!.id), body);
          expect({ body, status: res.status }).toStrictEqual({ body, status: 400 });
        }
        const rows = (await outbox(px.pixelId)).filter(
          (r) => r.kind === "variant_cog" && r.action === "updated" && r.variants?.[0]?.variantId === "h-4",
        );
        expect(rows).toHaveLength(3);
        expect(rows[0]!.changes).toStrictEqual([{ old: line, new: { ...line, cost: 5.5556 } }]);
      });

      it.each([
        ["no cost", { effectiveStartDate: "2026-01-01" }, ["cost"]],
        ["negative cost", { cost: -0.01, effectiveStartDate: "2026-01-01" }, ["cost"]],
        ["no start", { cost: 1 }, ["effectiveStartDate"]],
        [
          "a date-time start",
          { cost: 1, effectiveStartDate: "2026-01-01T00:00:00Z" },
          ["effectiveStartDate"],
        ],
        [
          "end before start",
          { cost: 1, effectiveStartDate: "2026-01-02", effectiveEndDate: "2026-01-01" },
          ["effectiveEndDate"],
        ],
        ["an unknown field", { cost: 1, effectiveStartDate: "2026-01-01", currency: "USD" }, ["currency"]],
      ])("POST: 400 for %s", async (_label, body, keys) => {
        const res = await addCog("p-h", "h-2", body);
        expect(res.status).toBe(400);
        expect(errorKeys(res)).toStrictEqual(keys);
      });

      it("404 alike for unknown, foreign and mismatched variants and for unknown, store and other variants' lines", async () => {
        const notFound = await addCog("p-h", "nope", { cost: 1, effectiveStartDate: "2026-01-01" });
        expect(notFound.status).toBe(404);
        expect(notFound.body).toStrictEqual({ message: "Variant not found" });
        const body = { cost: 1, effectiveStartDate: "2026-01-01" };
        expect((await addCog("p-a", "z-1", body)).text).toBe(notFound.text); // the stranger's variant
        expect((await addCog("p-b", "a-s", body)).text).toBe(notFound.text); // another product's variant
        expect((await putCog("p-a", "z-1", "01J0000000000000000000000", { cost: 1 })).text).toBe(
          notFound.text,
        );
        expect(
          (await call("PUT", "/accounts/api/products/p-a/z-1/handling-fee", { handlingFee: 1 })).text,
        ).toBe(notFound.text);

        const lineNotFound = await putCog("p-h", "h-2", "01J0000000000000000000000", { cost: 1 });
        expect(lineNotFound.status).toBe(404);
        expect(lineNotFound.body).toStrictEqual({ message: "COG line not found" });
        const record = ok<{ productCost: ProductVariant }>(await costOf("p-h", "h-1")).productCost;
        expect((await putCog("p-h", "h-1", record.storeCostHistory[0]!.id, { cost: 1 })).text).toBe(
          lineNotFound.text,
        );
        const other = history(await addCog("p-h", "h-2", { cost: 3, effectiveStartDate: "2020-01-01" }))[0]!;
        expect((await putCog("p-h", "h-4", other.id, { cost: 1 })).text).toBe(lineNotFound.text);
        // The stranger cannot reach our line through their own variant either.
        const theirs = await putCog("p-a", "z-1", other.id, { cost: 1 }, stranger);
        expect(theirs.text).toBe(lineNotFound.text);
        expect(history(await putCog("p-h", "h-2", other.id, { description: "still mine" }))[0]).toMatchObject(
          { cost: 3 },
        );
      });
    });

    describe("PUT /accounts/api/products/{productId}/{variantId}/handling-fee", () => {
      it("sets the fee, announces a change once, and refuses bad values", async () => {
        const put = (body: unknown) => call("PUT", "/accounts/api/products/p-b/b-1/handling-fee", body);
        const res = ok<{ variant: VariantSummary }>(await put({ handlingFee: 1.23456 }));
        expect(res.variant).toStrictEqual({
          id: "b-1",
          productId: "p-b",
          sku: "CT-1",
          title: "Default",
          handlingFee: 1.2346,
          manualCostHistory: [],
        });
        ok(await put({ handlingFee: 1.2346 })); // no change: no second row
        const rows = (await outbox(px.pixelId)).filter((r) => r.kind === "handling_fee");
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({
          action: "updated",
          variants: [{ productId: "p-b", variantId: "b-1" }],
          dateRange: { from: null, to: null },
          changes: [{ old: { handlingFee: 0 }, new: { handlingFee: 1.2346 } }],
        });
        expect(ok<{ productCost: ProductVariant }>(await costOf("p-b", "b-1")).productCost.handlingFee).toBe(
          1.2346,
        );
        expect(await resolved("p-b", "b-1", "2026-01-01")).toMatchObject({
          handlingFee: 1.2346,
          handlingFeeCurrency: "USD",
        });
        for (const [body, keys] of [
          [{ handlingFee: -1 }, ["handlingFee"]],
          [{}, ["handlingFee"]],
          [{ handlingFee: "1" }, ["handlingFee"]],
          [{ handlingFee: 1, note: "x" }, ["note"]],
        ] as const) {
          const bad = await put(body);
          expect({ body, status: bad.status, keys: errorKeys(bad) }).toStrictEqual({
            body,
            status: 400,
            keys,
          });
        }
      });

      it("shows manual COG lines in search results", async () => {
        const page = ok<Page>(await search("?q=cts-3"));
        expect(page.items[0]!.variants[0]!.manualCostHistory.map((l) => l.cost)).toStrictEqual([10, 11, 9]);
      });
    });

    it("needs costs:read to read and costs:write to write", async () => {
      const reader = await app.pixelWithKey(["costs:read"]);
      const denied = await addCog("p-h", "h-1", { cost: 1, effectiveStartDate: "2026-01-01" }, reader);
      expect(denied.status).toBe(403);
      expect(denied.body).toStrictEqual({ message: "API key does not have the costs:write scope" });
      const writer = await app.pixelWithKey(["costs:write"]);
      expect((await search("", writer)).status).toBe(403);
    });
  });
}

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
