/**
 * Dashboard views over HTTP (docs/dashboards.md): create,
 * get, list, update, delete, copy and from-preset with good, bad and foreign ids; the strict
 * configuration (response-only fields filled with their defaults, settings as subsets, measure keys
 * from the catalog, filters the query engine accepts); the preset's sparkline layout without overlap;
 * the 404 for a missing id and for another pixel's id compared byte for byte. Runs on PGlite, and on
 * the Postgres server when TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DashboardView } from "../../src/dashboards/schemas.js";
import { MEASURES } from "../../src/query/measures.js";
import { addDays, dayIn } from "../../src/shared/days.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { TEST_DATABASE_URL } from "../helpers/env.js";

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
type Res = Awaited<ReturnType<TestApp["call"]>>;

const BASE = "/accounts/api/dashboard/views";
const NOT_FOUND_TEXT = '{"message":"Dashboard view not found"}';
const SECTION_ID = "7d1c6a43-2f7b-4c1e-9d55-0c4f9e0b7a11";

/** A full configuration as a client sends it: no response-only fields, settings as subsets. */
const configuration = () => ({
  attributionModel: "first_click",
  attributionWindow: 7,
  granularity: "none",
  dateRange: { start: "2026-01-01", end: "2026-01-31" },
  grid: { maxWidth: 1200 },
  widgets: [
    {
      id: "w-revenue",
      title: "Revenue by channel",
      layout: { x: 0, y: 0, rows: 4, columns: 6 },
      dataConfig: {
        measures: ["orders.total_revenue", "orders.count"],
        dimensions: ["attribution.channel"],
        filters: [{ field: "orders.country", op: "in", value: ["DE", "FR"] }],
      },
    },
  ],
  filters: { and: [{ field: "orders.source_name", op: "equals", value: "web" }] },
  sections: [
    {
      id: SECTION_ID,
      title: "Acquisition",
      widgets: [
        {
          id: "w-orders",
          title: "Orders",
          chartType: "line",
          layout: { x: 6, y: 0, rows: 2, columns: 6, minColumns: 3, static: true },
          dataConfig: { measures: ["orders.count"] },
          sourceWidgetId: "w-revenue",
        },
      ],
      settings: {
        density: "spacious",
        filters: { and: [{ field: "orders.gateway", op: "equals", value: "stripe" }] },
      },
    },
  ],
  defaultSettings: { pacing: true },
});

const errorKeys = (res: Res) =>
  ((res.body as { errors?: { key: string }[] }).errors ?? []).map((e) => e.key).sort();
const errorText = (res: Res) =>
  ((res.body as { errors?: { message: string }[] }).errors ?? []).map((e) => e.message).join("\n");

/** Every cell of a 12-column grid covered by at most one widget, none past the right edge. */
function assertNoOverlap(layouts: { x: number; y: number; columns: number; rows: number }[]) {
  const taken = new Map<string, number>();
  layouts.forEach((l, i) => {
    expect(l.x + l.columns, `widget ${i} crosses the right edge`).toBeLessThanOrEqual(12);
    for (let c = l.x; c < l.x + l.columns; c++)
      for (let r = l.y; r < l.y + l.rows; r++) {
        const other = taken.get(`${c},${r}`);
        expect(other, `widgets ${other} and ${i} share cell ${c},${r}`).toBeUndefined();
        taken.set(`${c},${r}`, i);
      }
  });
}

const adapters = [
  { name: "pglite", sql: "pglite" as const, available: true },
  { name: "postgres", sql: "postgres" as const, available: !!TEST_DATABASE_URL },
];

for (const adapter of adapters.filter((a) => a.available)) {
  describe(`dashboard views over HTTP (${adapter.name})`, () => {
    let app: TestApp;
    let px: Pixel;
    let stranger: Pixel;
    beforeAll(async () => {
      app = await startTestApp({ sql: adapter.sql });
      px = await app.pixelWithKey(["dashboards:write"]);
      stranger = await app.pixelWithKey(["dashboards:write"]);
    });
    afterAll(() => app?.close());

    const call = (method: string, path: string, body?: unknown, who: Pixel = px) =>
      app.call(method, path, { key: who.key, pixelId: who.pixelId, ...(body !== undefined ? { body } : {}) });
    const view = (res: Res): DashboardView => {
      expect(res.status, res.text).toBe(200);
      return (res.body as { dashboardView: DashboardView }).dashboardView;
    };
    const create = async (body: Record<string, unknown> = {}, who: Pixel = px) =>
      view(await call("POST", BASE, { name: "Overview", configuration: configuration(), ...body }, who));
    const list = async (who: Pixel = px) => {
      const res = await call("GET", BASE, undefined, who);
      expect(res.status, res.text).toBe(200);
      return (res.body as { dashboardViews: DashboardView[] }).dashboardViews;
    };
    /** A pixel of its own, so its list starts empty. */
    const fresh = () => app.pixelWithKey(["dashboards:write"]);

    describe("POST /accounts/api/dashboard/views", () => {
      it("creates a view, filling response-only fields and settings with their documented defaults", async () => {
        const before = Date.now();
        const v = await create({ order: 4 });
        expect(v.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(v).toMatchObject({
          pixelId: px.pixelId,
          type: "view",
          name: "Overview",
          createdBy: "",
          updatedBy: "",
          order: 4,
        });
        expect(Date.parse(v.createdAt)).toBeGreaterThanOrEqual(before - 1000);
        expect(v.updatedAt).toBe(v.createdAt);
        const c = v.configuration;
        expect(Object.keys(c)).toStrictEqual([
          "attributionModel",
          "attributionWindow",
          "granularity",
          "dateRange",
          "grid",
          "widgets",
          "filters",
          "sections",
          "defaultSettings",
        ]);
        expect(c.widgets[0]).toStrictEqual({
          id: "w-revenue",
          title: "Revenue by channel",
          chartType: "bar",
          layout: {
            x: 0,
            y: 0,
            rows: 4,
            columns: 6,
            minColumns: 1,
            maxColumns: 12,
            minRows: 1,
            maxRows: 100,
            static: false,
          },
          dataConfig: {
            measures: ["orders.total_revenue", "orders.count"],
            dimensions: ["attribution.channel"],
            filters: [{ field: "orders.country", op: "in", value: ["DE", "FR"] }],
          },
        });
        const defaults = {
          density: "compact",
          pacing: true,
          theme: "default",
          backgroundColor: "",
          headerStyle: "default",
          filters: { and: [] },
        };
        expect(c.defaultSettings).toStrictEqual(defaults);
        const section = c.sections[0]!;
        expect(section).toMatchObject({
          id: SECTION_ID,
          title: "Acquisition",
          ordinal: 0,
          collapsed: false,
          hidden: false,
          layoutMode: "auto",
          sectionType: "default",
        });
        // A section's subset lies over the view's defaultSettings, a given key replacing it.
        expect(section.settings).toStrictEqual({
          ...defaults,
          density: "spacious",
          filters: { and: [{ field: "orders.gateway", op: "equals", value: "stripe" }] },
        });
        expect(section.widgets[0]).toMatchObject({
          chartType: "line",
          sourceWidgetId: "w-revenue",
          layout: { x: 6, minColumns: 3, maxColumns: 12, static: true },
        });
      });

      it("answers GET with the same view, and accepts its own response back unchanged", async () => {
        const v = await create();
        const got = view(await call("GET", `${BASE}/${v.id}`));
        expect(got).toStrictEqual(v);
        // A client that read a view may send it back whole, response-only fields included.
        const again = view(await call("PATCH", `${BASE}/${v.id}`, { configuration: got.configuration }));
        expect(again.configuration).toStrictEqual(v.configuration);
      });

      it("places a view without an order after the pixel's last one", async () => {
        const p = await fresh();
        expect((await create({}, p)).order).toBe(0);
        expect((await create({ order: 10 }, p)).order).toBe(10);
        expect((await create({}, p)).order).toBe(11);
        expect((await create({ order: -3 }, p)).order).toBe(-3);
        expect((await create({}, p)).order).toBe(12);
      });

      it("names an unknown measure key and where it sits", async () => {
        const cfg = configuration();
        cfg.sections[0]!.widgets[0]!.dataConfig.measures = ["orders.count", "orders.unicorns"];
        const res = await call("POST", BASE, { name: "x", configuration: cfg });
        expect(res.status).toBe(400);
        expect(errorKeys(res)).toStrictEqual(["configuration.sections.0.widgets.0.dataConfig.measures.1"]);
        expect(errorText(res)).toContain('"orders.unicorns"');
        expect((res.body as { errors: { path: string[] }[] }).errors[0]!.path).toStrictEqual([
          "configuration",
          "sections",
          "0",
          "widgets",
          "0",
          "dataConfig",
          "measures",
          "1",
        ]);
      });

      type Cfg = ReturnType<typeof configuration> & Record<string, unknown>;
      const bad: [string, (c: Cfg) => unknown, string[]][] = [
        [
          "an unknown key in a widget",
          (c) => Object.assign(c.widgets[0]!, { colour: "red" }),
          ["configuration.widgets.0.colour"],
        ],
        [
          "an unknown top-level configuration key",
          (c) => Object.assign(c, { theme: "x" }),
          ["configuration.theme"],
        ],
        ["a missing configuration field", (c) => delete (c as Partial<Cfg>).grid, ["configuration.grid"]],
        [
          "a layout that is not an integer",
          (c) => Object.assign(c.widgets[0]!.layout, { rows: 2.5 }),
          ["configuration.widgets.0.layout.rows"],
        ],
        [
          "a layout past the grid's right edge",
          (c) => Object.assign(c.widgets[0]!.layout, { x: 8, columns: 6 }),
          ["configuration.widgets.0.layout.columns"],
        ],
        [
          "a negative position",
          (c) => Object.assign(c.widgets[0]!.layout, { y: -1 }),
          ["configuration.widgets.0.layout.y"],
        ],
        [
          "a size outside its own bounds",
          (c) => Object.assign(c.widgets[0]!.layout, { minColumns: 8 }),
          ["configuration.widgets.0.layout.columns"],
        ],
        [
          "a section id that is not a UUID",
          (c) => Object.assign(c.sections[0]!, { id: "s1" }),
          ["configuration.sections.0.id"],
        ],
        [
          "an unknown setting",
          (c) => Object.assign(c.defaultSettings, { font: "serif" }),
          ["configuration.defaultSettings.font"],
        ],
        [
          "a setting outside its list",
          (c) => Object.assign(c.sections[0]!.settings, { density: "dense" }),
          ["configuration.sections.0.settings.density"],
        ],
        [
          "a chart type outside its list",
          (c) => Object.assign(c.widgets[0]!, { chartType: "radar" }),
          ["configuration.widgets.0.chartType"],
        ],
        [
          "a filter not in canonical form",
          (c) => Object.assign(c, { filters: { field: "orders.country", operator: "equals", value: "DE" } }),
          ["configuration.filters"],
        ],
        [
          "an unknown filter field",
          (c) =>
            Object.assign(c, { filters: { not: { field: "orders.colour", op: "equals", value: "red" } } }),
          ["configuration.filters.not.field"],
        ],
        [
          "an operator the field's type does not take",
          (c) =>
            Object.assign(c.widgets[0]!.dataConfig, {
              filters: [{ field: "orders.total_price", op: "contains", value: "9" }],
            }),
          ["configuration.widgets.0.dataConfig.filters.0.op"],
        ],
        [
          "an unknown dimension",
          (c) => Object.assign(c.widgets[0]!.dataConfig, { dimensions: ["orders.colour"] }),
          ["configuration.widgets.0.dataConfig.dimensions.0"],
        ],
        [
          "a widget id used twice in the view",
          (c) => Object.assign(c.sections[0]!.widgets[0]!, { id: "w-revenue" }),
          ["configuration.sections.0.widgets.0.id"],
        ],
        [
          "a date range ending before it starts",
          (c) => Object.assign(c, { dateRange: { start: "2026-02-01", end: "2026-01-31" } }),
          ["configuration.dateRange.end"],
        ],
        [
          "an impossible date",
          (c) => Object.assign(c, { dateRange: { start: "2026-02-30", end: "2026-03-01" } }),
          ["configuration.dateRange.start"],
        ],
        [
          "a day a query cannot take",
          (c) => Object.assign(c, { dateRange: { start: "0001-01-01", end: "2026-03-01" } }),
          ["configuration.dateRange.start"],
        ],
        [
          "an attribution window outside the list",
          (c) => Object.assign(c, { attributionWindow: 3 }),
          ["configuration.attributionWindow"],
        ],
        [
          "a widget without measures",
          (c) => Object.assign(c.widgets[0]!.dataConfig, { measures: [] }),
          ["configuration.widgets.0.dataConfig.measures"],
        ],
      ];
      it.each(bad)("refuses %s with 400 naming the path", async (_name, change, keys) => {
        const cfg = configuration() as Cfg;
        change(cfg);
        const res = await call("POST", BASE, { name: "x", configuration: cfg });
        expect(res.status, res.text).toBe(400);
        expect((res.body as { message: string }).message).toBe("Bad Request");
        expect(errorKeys(res)).toStrictEqual(keys);
      });

      it("refuses a blank or missing name, an unknown body key and a fractional order", async () => {
        for (const [body, keys] of [
          [{ name: "   ", configuration: configuration() }, ["name"]],
          [{ configuration: configuration() }, ["name"]],
          [{ name: "x", configuration: configuration(), pixel: "p" }, ["pixel"]],
          [{ name: "x", configuration: configuration(), order: 1.5 }, ["order"]],
          [{ name: "x" }, ["configuration"]],
        ] as const) {
          const res = await call("POST", BASE, body);
          expect(res.status, res.text).toBe(400);
          expect(errorKeys(res)).toStrictEqual(keys);
        }
      });
    });

    describe("GET /accounts/api/dashboard/views", () => {
      it("lists the pixel's views ordered by order, never another pixel's", async () => {
        const p = await fresh();
        const c = await create({ name: "C", order: 3 }, p);
        const a = await create({ name: "A", order: 1 }, p);
        const b1 = await create({ name: "B1", order: 2 }, p);
        const b2 = await create({ name: "B2", order: 2 }, p);
        await create({ name: "theirs", order: 0 }, stranger);
        const views = await list(p);
        expect(views.map((v) => v.name)).toStrictEqual(["A", "B1", "B2", "C"]);
        expect(views[0]).toStrictEqual(a);
        expect(views.map((v) => v.id)).toStrictEqual([a.id, b1.id, b2.id, c.id]);
        expect(await list(await fresh())).toStrictEqual([]);
      });
    });

    describe("PATCH /accounts/api/dashboard/views/{id}", () => {
      it("changes only what it is given and stamps updatedAt", async () => {
        const v = await create({ order: 7 });
        await new Promise((r) => setTimeout(r, 5));
        const renamed = view(await call("PATCH", `${BASE}/${v.id}`, { name: "Renamed" }));
        expect(renamed).toMatchObject({
          id: v.id,
          name: "Renamed",
          order: 7,
          createdAt: v.createdAt,
          updatedBy: "",
        });
        expect(renamed.configuration).toStrictEqual(v.configuration);
        expect(Date.parse(renamed.updatedAt)).toBeGreaterThan(Date.parse(v.updatedAt));

        const moved = view(await call("PATCH", `${BASE}/${v.id}`, { order: -1 }));
        expect(moved).toMatchObject({ name: "Renamed", order: -1 });

        const cfg = configuration();
        cfg.widgets[0]!.layout = { x: 0, y: 3, rows: 1, columns: 12 };
        cfg.sections = [];
        const reconfigured = view(await call("PATCH", `${BASE}/${v.id}`, { configuration: cfg }));
        expect(reconfigured.configuration.sections).toStrictEqual([]);
        expect(reconfigured.configuration.widgets[0]!.layout).toMatchObject({ y: 3, columns: 12 });
        expect(view(await call("GET", `${BASE}/${v.id}`))).toStrictEqual(reconfigured);
      });

      it("refuses an empty patch, an unknown key and a bad configuration, changing nothing", async () => {
        const v = await create();
        const empty = await call("PATCH", `${BASE}/${v.id}`, {});
        expect(empty.status).toBe(400);
        expect(errorText(empty)).toContain("at least one of name, configuration, order");
        const unknown = await call("PATCH", `${BASE}/${v.id}`, { name: "x", type: "view" });
        expect(unknown.status).toBe(400);
        expect(errorKeys(unknown)).toStrictEqual(["type"]);
        const cfg = configuration();
        cfg.widgets[0]!.dataConfig.measures = ["nope"];
        const badMeasure = await call("PATCH", `${BASE}/${v.id}`, { name: "changed", configuration: cfg });
        expect(badMeasure.status).toBe(400);
        expect(errorKeys(badMeasure)).toStrictEqual(["configuration.widgets.0.dataConfig.measures.0"]);
        expect(view(await call("GET", `${BASE}/${v.id}`))).toStrictEqual(v);
      });
    });

    describe("the reporting currency a view opens in", () => {
      it("is kept when given (after dateRange), absent otherwise, and a bad code is a 400 naming it", async () => {
        const plain = await create();
        expect(Object.keys(plain.configuration)).not.toContain("currency");
        const eur = await create({ configuration: { ...configuration(), currency: "eur" } });
        expect(eur.configuration.currency).toBe("EUR");
        const keys = Object.keys(eur.configuration);
        expect(keys.indexOf("currency")).toBe(keys.indexOf("dateRange") + 1);
        const changed = view(
          await call("PATCH", `${BASE}/${plain.id}`, {
            configuration: { ...plain.configuration, currency: "GBP" },
          }),
        );
        expect(changed.configuration.currency).toBe("GBP");
        const bad = await call("POST", BASE, {
          name: "x",
          configuration: { ...configuration(), currency: "EURO" },
        });
        expect(bad.status).toBe(400);
        expect(errorKeys(bad)).toContain("configuration.currency");
      });
    });

    describe("GET /accounts/api/key", () => {
      it("answers the calling key's id, pixel and scopes (never its secret)", async () => {
        const res = await call("GET", "/accounts/api/key");
        expect(res.status, res.text).toBe(200);
        // A write scope brings its read scope (src/keys/scopes.ts).
        expect(res.body).toStrictEqual({
          key: {
            id: expect.any(String),
            pixelId: px.pixelId,
            scopes: ["dashboards:read", "dashboards:write"],
          },
        });
        expect(res.text).not.toContain(px.key);
        expect((await app.call("GET", "/accounts/api/key")).status).toBe(401);
      });
    });

    describe("POST /accounts/api/dashboard/views/{id}/copy", () => {
      it('copies a view as "<name> (copy)" after the last one, with or without a body', async () => {
        const p = await fresh();
        const v = await create({ name: "Weekly", order: 2 }, p);
        const copy = view(await call("POST", `${BASE}/${v.id}/copy`, undefined, p));
        expect(copy.id).not.toBe(v.id);
        expect(copy).toMatchObject({
          name: "Weekly (copy)",
          order: 3,
          createdBy: "",
          updatedBy: "",
          pixelId: p.pixelId,
        });
        expect(copy.configuration).toStrictEqual(v.configuration);
        const named = view(await call("POST", `${BASE}/${v.id}/copy`, { name: "Monthly", order: 0 }, p));
        expect(named).toMatchObject({ name: "Monthly", order: 0 });
        const defaulted = view(await call("POST", `${BASE}/${copy.id}/copy`, {}, p));
        expect(defaulted.name).toBe("Weekly (copy) (copy)");
        expect((await list(p)).map((x) => x.name)).toStrictEqual([
          "Monthly",
          "Weekly",
          "Weekly (copy)",
          "Weekly (copy) (copy)",
        ]);
        // The copy is independent of its source.
        await call("DELETE", `${BASE}/${v.id}`, undefined, p);
        expect(view(await call("GET", `${BASE}/${copy.id}`, undefined, p)).name).toBe("Weekly (copy)");
      });

      it("shortens a long source name so the copy's name still fits 200 characters", async () => {
        const v = await create({ name: `${"é".repeat(197)}😀x` });
        const copy = view(await call("POST", `${BASE}/${v.id}/copy`));
        expect(copy.name.length).toBeLessThanOrEqual(200);
        expect(copy.name).toBe(`${"é".repeat(193)} (copy)`);
      });

      it("refuses an unknown body key or a blank name", async () => {
        const v = await create();
        for (const [body, key] of [
          [{ title: "x" }, "title"],
          [{ name: "" }, "name"],
        ] as const) {
          const res = await call("POST", `${BASE}/${v.id}/copy`, body);
          expect(res.status).toBe(400);
          expect(errorKeys(res)).toStrictEqual([key]);
        }
      });
    });

    describe("POST /accounts/api/dashboard/views/from-preset", () => {
      it("lays sparklines out left to right, four to a row, without overlap", async () => {
        const measures = MEASURES.slice(0, 10);
        const res = await call("POST", `${BASE}/from-preset`, {
          name: "KPIs",
          widgets: measures.map((m, i) =>
            i === 0 ? { measure: m.key, title: "Headline" } : { measure: m.key },
          ),
        });
        const v = view(res);
        expect(Object.keys(res.body as object)).toStrictEqual(["dashboardView"]);
        const widgets = v.configuration.widgets;
        expect(widgets.map((w) => w.dataConfig.measures)).toStrictEqual(measures.map((m) => [m.key]));
        expect(widgets.map((w) => w.title)).toStrictEqual([
          "Headline",
          ...measures.slice(1).map((m) => m.title),
        ]);
        expect(widgets.every((w) => w.chartType === "sparkline")).toBe(true);
        expect(widgets.map((w) => [w.layout.x, w.layout.y])).toStrictEqual([
          [0, 0],
          [3, 0],
          [6, 0],
          [9, 0],
          [0, 2],
          [3, 2],
          [6, 2],
          [9, 2],
          [0, 4],
          [3, 4],
        ]);
        for (const w of widgets) {
          expect(w.layout).toMatchObject({ columns: 3, rows: 2, static: false });
          expect(w.id).toMatch(/^[0-9a-f-]{36}$/);
        }
        expect(new Set(widgets.map((w) => w.id)).size).toBe(widgets.length);
        assertNoOverlap(widgets.map((w) => w.layout));
        expect(v.configuration).toMatchObject({
          attributionModel: "last_click",
          attributionWindow: 30,
          granularity: "day",
          sections: [],
          filters: { and: [] },
        });
        expect(view(await call("GET", `${BASE}/${v.id}`))).toStrictEqual(v);
        // What the preset built is a configuration the create endpoint itself accepts.
        const recreated = view(await call("POST", BASE, { name: "again", configuration: v.configuration }));
        expect(recreated.configuration).toStrictEqual(v.configuration);
      });

      it("covers the last 30 days up to today in the account's timezone", async () => {
        const p = await fresh();
        await app.stores.sql.query("UPDATE accounts SET timezone = 'Pacific/Kiritimati' WHERE id = $1", [
          p.accountId,
        ]);
        const before = dayIn("Pacific/Kiritimati", Date.now());
        const v = view(
          await call(
            "POST",
            `${BASE}/from-preset`,
            { name: "Tz", widgets: [{ measure: "orders.count" }] },
            p,
          ),
        );
        const after = dayIn("Pacific/Kiritimati", Date.now());
        const { start, end } = v.configuration.dateRange;
        expect([before, after]).toContain(end);
        expect(start).toBe(addDays(end, -29));
      });

      it("refuses unknown measure keys naming each, and other bad bodies", async () => {
        const res = await call("POST", `${BASE}/from-preset`, {
          name: "x",
          widgets: [
            { measure: "orders.count" },
            { measure: "orders.nope", title: "?" },
            { measure: "ads.nope" },
          ],
        });
        expect(res.status).toBe(400);
        expect(errorKeys(res)).toStrictEqual(["widgets.1.measure", "widgets.2.measure"]);
        expect(errorText(res)).toContain('"orders.nope"');
        for (const [body, key] of [
          [{ name: "x", widgets: [] }, "widgets"],
          [{ name: "x", widgets: [{ measure: "orders.count", chartType: "bar" }] }, "widgets.0.chartType"],
          [{ widgets: [{ measure: "orders.count" }] }, "name"],
          [{ name: "x", widgets: [{ measure: "orders.count" }], layout: "grid" }, "layout"],
        ] as const) {
          const r = await call("POST", `${BASE}/from-preset`, body);
          expect(r.status, r.text).toBe(400);
          expect(errorKeys(r)).toStrictEqual([key]);
        }
      });
    });

    describe("DELETE /accounts/api/dashboard/views/{id}", () => {
      it("deletes a view once; then it is not found", async () => {
        const v = await create();
        const res = await call("DELETE", `${BASE}/${v.id}`);
        expect(res.status).toBe(200);
        expect(res.body).toStrictEqual({ deleted: true, dashboardViewId: v.id });
        expect((await call("GET", `${BASE}/${v.id}`)).text).toBe(NOT_FOUND_TEXT);
        const again = await call("DELETE", `${BASE}/${v.id}`);
        expect(again.status).toBe(404);
        expect(again.text).toBe(NOT_FOUND_TEXT);
        expect((await list()).map((x) => x.id)).not.toContain(v.id);
      });
    });

    describe("missing and foreign ids", () => {
      const operations: [string, string, (id: string) => string, unknown][] = [
        ["GET", "get", (id) => `${BASE}/${id}`, undefined],
        ["PATCH", "update", (id) => `${BASE}/${id}`, { name: "hijacked" }],
        ["DELETE", "delete", (id) => `${BASE}/${id}`, undefined],
        ["POST", "copy", (id) => `${BASE}/${id}/copy`, { name: "stolen" }],
      ];
      it.each(operations)(
        "%s (%s) answers a byte-identical 404 for a missing id and for another pixel's id",
        async (method, _op, path, body) => {
          const theirs = await create({ name: "Theirs" }, stranger);
          const missing = await call(method, path("01ZZZZZZZZZZZZZZZZZZZZZZZZ"), body);
          const malformed = await call(method, path("not%20an%20id"), body);
          const foreign = await call(method, path(theirs.id), body);
          for (const res of [missing, malformed, foreign]) {
            expect(res.status).toBe(404);
            expect(res.headers.get("content-type")).toBe(missing.headers.get("content-type"));
          }
          expect(missing.text).toBe(NOT_FOUND_TEXT);
          expect(foreign.text).toBe(missing.text);
          expect(malformed.text).toBe(missing.text);
          // The other pixel's view is untouched and nothing was copied into ours.
          expect(view(await call("GET", `${BASE}/${theirs.id}`, undefined, stranger))).toStrictEqual(theirs);
          expect((await list()).some((x) => x.name === "stolen" || x.name === "hijacked")).toBe(false);
        },
      );
    });

    describe("scopes", () => {
      it("reads with dashboards:read, writes only with dashboards:write (which also reads)", async () => {
        const reader = await app.pixelWithKey(["dashboards:read"]);
        expect((await call("GET", BASE, undefined, reader)).status).toBe(200);
        const refused = await call("POST", BASE, { name: "x", configuration: configuration() }, reader);
        expect(refused.status).toBe(403);
        expect(refused.text).toBe('{"message":"API key does not have the dashboards:write scope"}');
        const other = await app.pixelWithKey(["costs:read"]);
        const noRead = await call("GET", BASE, undefined, other);
        expect(noRead.status).toBe(403);
        expect(noRead.text).toBe('{"message":"API key does not have the dashboards:read scope"}');
        const writer = await app.pixelWithKey(["dashboards:write"]);
        const v = await create({}, writer);
        expect(view(await call("GET", `${BASE}/${v.id}`, undefined, writer)).id).toBe(v.id);
      });
    });

    describe("OpenAPI", () => {
      it("documents every dashboard path from the zod schemas", async () => {
        const res = await app.call("GET", "/openapi.json");
        const doc = res.body as {
          paths: Record<
            string,
            Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>
          >;
        };
        expect(Object.keys(doc.paths[BASE]!).sort()).toStrictEqual(["get", "post"]);
        expect(Object.keys(doc.paths[`${BASE}/{dashboardViewId}`]!).sort()).toStrictEqual([
          "delete",
          "get",
          "patch",
        ]);
        expect(doc.paths[`${BASE}/{dashboardViewId}/copy`]!.post).toBeDefined();
        const preset = JSON.stringify(doc.paths[`${BASE}/from-preset`]!.post!.requestBody);
        expect(preset).toContain('"measure"');
        const created = JSON.stringify(doc.paths[BASE]!.post!.responses["200"]);
        for (const field of ["chartType", "layoutMode", "sectionType", "minColumns", "createdBy"])
          expect(created).toContain(`"${field}"`);
        expect(doc.paths[`${BASE}/{dashboardViewId}`]!.get!.responses["404"]).toBeDefined();
      });
    });
  });
}
