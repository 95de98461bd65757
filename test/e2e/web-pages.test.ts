/**
 * The /console and /dashboards pages in a real browser: playwright-core drives Debian's
 * chromium headless against the real app on embedded stores, holding orders (sync API) and page views
 * (events API) of the last weeks. The console: connect once, type a query, Ctrl+Enter, rows with the
 * row count, applied limit and truncation; an engine error and a refusal; the chart; the CSV. The
 * dashboards: a preset view and a configured one with a section, every widget filled from the query
 * API with formatted values and drawn charts; a table by attribution channel opening the orders
 * credited to a row and an order's journey; the model picker with time decay's half-life.
 * Throughout: the key lives in sessionStorage only, never in a URL, and the Content-Security-Policy
 * reports no violation. Screenshots go to test-artifacts/.
 *
 * Skipped when /usr/bin/chromium or playwright-core is missing (as test/e2e/ingest-collect.test.ts),
 * except under REQUIRE_SERVER_STORES=1 (CI, whose .ci/run installs chromium), where that fails.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { touchShares } from "../../src/query/attribution-models.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { REQUIRE_SERVER_STORES } from "../helpers/env.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));
/** The first series colour of the charts (web/shared/chart.ts PALETTE[0]), as RGB. */
const SERIES_RGB: [number, number, number] = [0x4f, 0x46, 0xe5];

type Chromium = {
  launch(o: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser>;
};

/** playwright-core when installed (never installed by the tests themselves). */
async function loadChromium(): Promise<Chromium | null> {
  try {
    const name = "playwright-core";
    const mod = (await import(name)) as { chromium?: Chromium };
    return mod.chromium ?? null;
  } catch {
    return null;
  }
}

const chromium = await loadChromium();
const skipReason = !existsSync(CHROMIUM)
  ? `${CHROMIUM} does not exist`
  : !chromium
    ? "the package playwright-core is not installed"
    : "";
if (skipReason && REQUIRE_SERVER_STORES) {
  throw new Error(`web page browser tests cannot run under REQUIRE_SERVER_STORES=1: ${skipReason}`);
}
if (skipReason) console.warn(`web page browser tests skipped: ${skipReason}`);

type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
type Json = Record<string, unknown>;

// The browser globals the in-page callbacks touch (the root tsconfig has no DOM library; the callbacks
// run in the page, so they reach them through globalThis).
interface El {
  innerText: string;
  dataset: Record<string, string | undefined>;
}
interface Canvas {
  width: number;
  height: number;
  getContext(kind: "2d"): {
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}
interface Win {
  document: {
    cookie: string;
    querySelectorAll(selector: string): { length: number };
    addEventListener(
      type: string,
      listener: (e: { violatedDirective: string; blockedURI: string }) => void,
    ): void;
  };
  sessionStorage: { getItem(key: string): string | null };
  localStorage: Record<string, string>;
  location: { href: string };
  getComputedStyle(el: unknown): { gridColumn: string; gridRow: string };
}

let app: TestApp;
let px: Pixel;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every URL the page requested, and every CSP violation or page error it reported. */
let requested: string[] = [];
let problems: string[] = [];

const DAY_MS = 86_400_000;
const now = Date.now();
const dayAgo = (n: number) => new Date(now - n * DAY_MS).toISOString().slice(0, 10);
const at = (n: number, time = "12:00:00") => `${dayAgo(n)}T${time}Z`;
const COUNTRIES = ["US", "DE", "FR"];

beforeAll(async () => {
  if (skipReason) return;
  app = await startTestApp({ env: { RATE_QUERY_PER_SEC: "1000" } });
  px = await app.pixelWithKey(["analytics:read", "dashboards:write"]);
  // The last 20 days: order i (1..20) i days ago, 10·i USD, country by i mod 3 — 20 orders, 2,100 USD
  // (US 630, DE 700, FR 770). The compare period (30..59 days ago): 10 orders of 50 USD, US.
  const orders = [];
  for (let i = 1; i <= 20; i++) {
    orders.push({
      id: `o${i}`,
      createdAt: at(i),
      updatedAt: at(i),
      currency: "USD",
      totalPrice: 10 * i,
      subtotalPrice: 10 * i,
      financialStatus: "paid",
      country: COUNTRIES[i % 3],
      customer: { id: `c${i % 7}` },
    });
  }
  for (let i = 0; i < 10; i++) {
    orders.push({
      id: `old${i}`,
      createdAt: at(35 + i),
      updatedAt: at(35 + i),
      currency: "USD",
      totalPrice: 50,
      subtotalPrice: 50,
      financialStatus: "paid",
      country: "US",
      customer: { id: `old-c${i}` },
    });
  }
  const synced = await app.services.sync.upsert("orders", px.pixelId, orders);
  expect(synced.rejected).toEqual([]);
  const { key: ingestKey } = await app.services.keys.create({
    pixelId: px.pixelId,
    scopes: ["events:write"],
    expiresAt: null,
  });
  const events = Array.from({ length: 40 }, (_, i) => ({
    name: "page_view",
    eventId: `pv-${i}`,
    identityId: `visitor-${i % 9}`,
    timestamp: at(1 + (i % 20), "09:30:00"),
    page: { url: `https://shop.example/products/${i % 5}` },
  }));
  const sent = await app.call("POST", "/tr/api/events", {
    key: ingestKey,
    pixelId: px.pixelId,
    body: { events },
  });
  expect(sent.status, sent.text).toBe(200);

  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium!.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
  await context.addInitScript(() => {
    (globalThis as unknown as Win).document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page = await context.newPage();
  page.on("request", (r) => requested.push(r.url()));
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && /CSP|Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
});

afterEach(() => {
  if (skipReason) return;
  const [seen, urls] = [problems, requested];
  problems = [];
  requested = [];
  expect(seen, "CSP violations and page errors").toEqual([]);
  for (const url of urls) {
    expect(url, "the key never appears in a URL").not.toContain(px.key);
    expect(url.startsWith(app.url), `only the service itself is contacted: ${url}`).toBe(true);
  }
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/**
 * Opens a page in the shared tab; connects through the form when this tab holds no key yet (each
 * test can run alone; in a full run only the first one meets the form).
 */
async function open(path: "/console" | "/dashboards") {
  if (!page.url().startsWith(`${app.url}${path}`)) await page.goto(`${app.url}${path}`);
  const first = await page.waitForSelector("#connect, .console, .dashboards");
  if ((await first.getAttribute("id")) === "connect") {
    await page.fill("#pixel-id", px.pixelId);
    await page.fill("#api-key", px.key);
    await page.click("#connect button[type=submit]");
    await page.waitForSelector(".console, .dashboards");
  }
}

const shot = (name: string, on: Page = page) =>
  on.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });

/**
 * Replaces the editor's text by typing, runs it with Ctrl+Enter, and waits for the run to end (the
 * page marks the run `running` on the key press, then `done` or `error`).
 */
async function typeAndRun(sql: string) {
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.type(sql);
  await page.keyboard.press("Escape"); // closes a completion popup, if one is open
  await page.keyboard.press("Control+Enter");
  await page.waitForSelector('.work:is([data-run="done"], [data-run="error"])');
}

/** Pixels of the first series colour on the canvas inside `selector`. */
function seriesPixels(selector: string): Promise<number> {
  return page.$eval(
    `${selector} canvas`,
    (canvas, rgb) => {
      const c = canvas as unknown as Canvas;
      const { data } = c.getContext("2d")!.getImageData(0, 0, c.width, c.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        const near =
          Math.abs(data[i]! - rgb[0]) < 40 &&
          Math.abs(data[i + 1]! - rgb[1]) < 40 &&
          Math.abs(data[i + 2]! - rgb[2]) < 40;
        if (near && data[i + 3]! > 160) n++;
      }
      return n;
    },
    SERIES_RGB,
  );
}

const text = (selector: string) => page.locator(selector).innerText();

describe.skipIf(!!skipReason)("the web pages in headless chromium", () => {
  it("console: the key is entered once, a typed query runs with Ctrl+Enter and shows rows, count, limit", async () => {
    await page.goto(`${app.url}/console`);
    await page.waitForSelector("#connect");
    await shot("console-connect");
    await page.fill("#pixel-id", px.pixelId);
    await page.fill("#api-key", px.key);
    await page.click("#connect button[type=submit]");
    await page.waitForSelector(".cm-content");
    // The schema sidebar lists the analyst tables with their columns and types.
    await page.waitForSelector('details[data-table="orders"]');
    await page.click('details[data-table="orders"] summary');
    expect(await text('details[data-table="orders"]')).toMatch(/total_price\s*Decimal\(18, 4\)/);

    await typeAndRun(
      "SELECT country, count() AS orders, sum(total_price) AS revenue FROM orders GROUP BY country ORDER BY country",
    );
    await page.waitForSelector("#grid tbody tr");
    expect(await text("#row-count")).toBe("3 rows");
    expect(await text("#applied-limit")).toBe("limit 1,000");
    expect(await text("#elapsed")).toMatch(/^[\d,.]+ ms$/);
    expect(await page.locator("#truncated").count()).toBe(0);
    const head = await page.$$eval("#grid thead th", (ths) =>
      ths.map((th) => (th as unknown as El).innerText.replace(/\s+/g, " ")),
    );
    expect(head).toEqual(["#", "country LowCardinality(String)", "orders UInt64", "revenue Decimal(38, 4)"]);
    const rows = await page.$$eval("#grid tbody tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent)),
    );
    expect(rows).toEqual([
      ["DE", "7", "700"],
      ["FR", "7", "770"],
      ["US", "16", "1130"],
    ]);
    await shot("console-results");

    // A smaller limit: stated, and the cut is flagged.
    await page.fill("#limit", "2");
    await page.click("#run");
    await page.waitForSelector('.work[data-run="done"]');
    expect(await text("#row-count")).toBe("2 rows");
    expect(await text("#applied-limit")).toBe("limit 2");
    expect(await text("#truncated")).toBe("truncated at 2 rows");
    await page.fill("#limit", "1000");

    // The key: in this tab's sessionStorage, nowhere else, never in the address.
    const stored = await page.evaluate(() => ({
      session: (globalThis as unknown as Win).sessionStorage.getItem("pixelhouse.apiKey"),
      local: JSON.stringify({ ...(globalThis as unknown as Win).localStorage }),
      cookie: (globalThis as unknown as Win).document.cookie,
      href: (globalThis as unknown as Win).location.href,
    }));
    expect(stored.session).toBe(px.key);
    expect(stored.local).not.toContain(px.key);
    expect(stored.cookie).toBe("");
    expect(stored.href).toBe(`${app.url}/console`);
  });

  it("console: an engine error and a refusal show the API's message", async () => {
    await open("/console");
    await typeAndRun("SELECT no_such_column FROM orders");
    expect(await page.getAttribute(".work", "data-run")).toBe("error");
    expect(await text("#error-message")).toContain("no_such_column");
    expect(await page.isHidden("#results"), "the previous result is not shown under the error").toBe(true);
    await shot("console-error");

    await typeAndRun("SELECT name FROM system.tables");
    expect(await text("#error-message")).toMatch(/^Refused: .*system/);

    // A good query clears the error.
    await typeAndRun("SELECT count() AS n FROM events");
    expect(await page.isHidden("#error")).toBe(true);
    expect(await text("#row-count")).toBe("1 row");
    expect(await page.$eval("#grid tbody td:nth-child(2)", (td) => td.textContent)).toBe("40");
  });

  it("console: completion offers the schema's tables and typed columns, and ClickHouse functions", async () => {
    await open("/console");
    await page.click(".cm-content");
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type("SELECT orders.total_p");
    await page.keyboard.press("Control+Space");
    const option = page.locator(".cm-tooltip-autocomplete li", { hasText: /^total_price/ });
    await option.waitFor();
    expect(await option.innerText()).toMatch(/total_price\s*Decimal\(18, 4\)/);
    // A click, not Enter: CodeMirror ignores an accept within 75 ms of the list changing.
    await option.click();
    expect(await page.locator(".cm-content").innerText()).toBe("SELECT orders.total_price");

    await page.keyboard.type(", toStartOfMon");
    await page.keyboard.press("Control+Space");
    await page.locator(".cm-tooltip-autocomplete li", { hasText: /^toStartOfMonth/ }).click();
    await page.keyboard.type(" FROM ord");
    await page.keyboard.press("Control+Space");
    await page.locator(".cm-tooltip-autocomplete li", { hasText: /^order_lines/ }).waitFor();
    await page.keyboard.press("Escape");
    expect(await page.locator(".cm-content").innerText()).toBe(
      "SELECT orders.total_price, toStartOfMonth FROM ord",
    );
    // Keywords, functions and types are highlighted as such.
    const classes = await page.$$eval(".cm-line span", (spans) =>
      spans.map((sp) => `${sp.textContent}:${sp.className === "" ? "" : "styled"}`),
    );
    expect(classes).toEqual(
      expect.arrayContaining(["SELECT:styled", "toStartOfMonth:styled", "FROM:styled"]),
    );
  });

  it("console: the chart is one click away and draws the result, as lines and as bars", async () => {
    await open("/console");
    await typeAndRun(
      "SELECT toDate(created_at) AS day, count() AS orders, sum(total_price) AS revenue FROM orders GROUP BY day ORDER BY day",
    );
    expect(await text("#row-count")).toBe("30 rows");
    await page.click("#tab-chart");
    await page.waitForSelector("#chart canvas");
    expect(await page.getAttribute("#chart", "data-points")).toBe("60"); // 30 rows × 2 numeric columns
    expect(await text("#chart-note")).toBe("orders, revenue by day");
    expect(await seriesPixels("#chart")).toBeGreaterThan(200);
    await shot("console-chart-line");

    await page.click("#chart-bar");
    await page.waitForSelector('#chart-bar[aria-pressed="true"]');
    expect(await page.getAttribute("#chart", "data-points")).toBe("60");
    expect(await seriesPixels("#chart")).toBeGreaterThan(200);
    await shot("console-chart-bar");
    await page.click("#tab-table");
  });

  it("console: Download CSV saves the result as CSV from the API", async () => {
    await open("/console");
    await typeAndRun("SELECT country, count() AS orders FROM orders GROUP BY country ORDER BY country");
    expect(await text("#row-count")).toBe("3 rows");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#csv")]);
    expect(download.suggestedFilename()).toBe("query.csv");
    const csv = readFileSync((await download.path())!, "utf8");
    expect(csv.trim().split("\n")).toEqual(['"country","orders"', '"DE",7', '"FR",7', '"US",16']);
  });

  it("dashboards: a preset view renders its sparklines with real data, formatted, against the compare period", async () => {
    const preset = await app.call("POST", "/accounts/api/dashboard/views/from-preset", {
      key: px.key,
      pixelId: px.pixelId,
      body: {
        name: "Store KPIs",
        widgets: [
          { measure: "orders.count", title: "Orders" },
          { measure: "orders.total_revenue", title: "Revenue" },
          { measure: "orders.aov" },
          { measure: "customers.repeat_rate" },
        ],
      },
    });
    expect(preset.status, preset.text).toBe(200);
    const view = (preset.body as { dashboardView: { id: string } }).dashboardView;

    // From the console by the navigation: the key is not asked for again in this tab.
    await open("/console");
    await page.click('nav a[href="/dashboards"]');
    await page.waitForSelector(`.view-link[data-view-id="${view.id}"]`);
    expect(await page.locator("#connect").count()).toBe(0);
    await page.click(`.view-link[data-view-id="${view.id}"]`);
    await waitForWidgets(4);
    expect(await text("#view-name")).toBe("Store KPIs");
    expect(await text("#view-period")).toMatch(/ · compared with .+ · by day · last click, 30-day window$/);

    const values = await widgetValues();
    expect(values.map((v) => v.value)).toEqual([
      "20",
      "$2,100.00",
      "$105.00",
      expect.stringMatching(/^\d+(\.\d+)?%$/),
    ]);
    expect(values.map((v) => v.type)).toEqual(["count", "currency", "currency", "percent"]);
    // 20 orders against 10 in the 30 days before; 2,100 USD against 500.
    expect(values[0]!.delta).toBe("+100%");
    expect(values[1]!.delta).toBe("+320%");
    // One point a day; AOV and repeat rate have none on the 10 days without orders (a ratio of 0 / 0).
    const ids = await widgetIds();
    const points = [];
    for (const id of ids) {
      const sel = `.widget[data-widget-id="${id}"] .spark`;
      points.push(Number(await page.getAttribute(sel, "data-points")));
      expect(await seriesPixels(sel), `${id} is drawn`).toBeGreaterThan(30);
    }
    expect(points).toEqual([30, 30, 20, 20]);
    await shot("dashboards-preset");
  });

  it("dashboards: a configured view renders KPI, line, sparkline, and a section's bar chart and table", async () => {
    const created = await app.call("POST", "/accounts/api/dashboard/views", {
      key: px.key,
      pixelId: px.pixelId,
      body: {
        name: "Sales overview",
        configuration: {
          attributionModel: "last_click",
          attributionWindow: 30,
          granularity: "day",
          dateRange: { start: dayAgo(29), end: dayAgo(0) },
          grid: { maxWidth: 1440 },
          widgets: [
            {
              id: "kpi",
              title: "Revenue and AOV",
              chartType: "kpi",
              layout: { x: 0, y: 0, columns: 4, rows: 2 },
              dataConfig: { measures: ["orders.total_revenue", "orders.aov"] },
            },
            {
              id: "line",
              title: "Orders and page views",
              chartType: "line",
              layout: { x: 4, y: 0, columns: 8, rows: 4 },
              dataConfig: { measures: ["orders.count", "events.page_views"] },
            },
            {
              id: "repeat",
              title: "Repeat rate",
              chartType: "sparkline",
              layout: { x: 0, y: 2, columns: 4, rows: 2 },
              dataConfig: { measures: ["customers.repeat_rate"] },
            },
          ],
          filters: { and: [] },
          sections: [
            {
              id: randomUUID(),
              title: "By country",
              widgets: [
                {
                  id: "bars",
                  title: "Revenue by country",
                  chartType: "bar",
                  layout: { x: 0, y: 0, columns: 6, rows: 4 },
                  dataConfig: { measures: ["orders.total_revenue"], dimensions: ["orders.country"] },
                },
                {
                  id: "table",
                  title: "Orders by country",
                  chartType: "table",
                  layout: { x: 6, y: 0, columns: 6, rows: 4 },
                  dataConfig: {
                    measures: ["orders.count", "orders.total_revenue"],
                    dimensions: ["orders.country"],
                  },
                },
              ],
            },
          ],
        },
      },
    });
    expect(created.status, created.text).toBe(200);
    const view = (created.body as { dashboardView: { id: string } }).dashboardView;

    await open("/dashboards");
    await page.reload(); // a reload keeps the key (same tab)
    await page.waitForSelector(`.view-link[data-view-id="${view.id}"]`);
    await page.click(`.view-link[data-view-id="${view.id}"]`);
    await waitForWidgets(5);
    expect(await text("#view-name")).toBe("Sales overview");

    // Laid out on the stored 12-column grid.
    const placement = await page.$$eval(".widget", (ws) =>
      ws.map((w) => {
        const style = (globalThis as unknown as Win).getComputedStyle(w);
        return [(w as unknown as El).dataset.widgetId, style.gridColumn, style.gridRow];
      }),
    );
    expect(placement).toEqual([
      ["kpi", "1 / span 4", "1 / span 2"],
      ["line", "5 / span 8", "1 / span 4"],
      ["repeat", "1 / span 4", "3 / span 2"],
      ["bars", "1 / span 6", "1 / span 4"],
      ["table", "7 / span 6", "1 / span 4"],
    ]);
    expect(await page.locator(".section summary h2").innerText()).toBe("By country");

    const kpi = await page.$$eval('.widget[data-widget-id="kpi"] .value', (vs) =>
      vs.map((v) => v.textContent),
    );
    expect(kpi).toEqual(["$2,100.00", "$105.00"]);

    expect(Number(await page.getAttribute('.widget[data-widget-id="line"] .wchart', "data-points"))).toBe(60);
    expect(await page.getAttribute('.widget[data-widget-id="line"] .wchart', "data-series")).toBe("2");
    expect(await seriesPixels('.widget[data-widget-id="line"] .wchart')).toBeGreaterThan(100);
    expect(await text('.widget[data-widget-id="line"] .u-legend')).toMatch(/Orders[\s\S]*Page views/);

    expect(Number(await page.getAttribute('.widget[data-widget-id="bars"] .wchart', "data-points"))).toBe(3);
    expect(await seriesPixels('.widget[data-widget-id="bars"] .wchart')).toBeGreaterThan(500);

    const table = await page.$$eval('.widget[data-widget-id="table"] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
    );
    // Ordered by the first measure, descending; revenue as money; the change against the previous 30 days.
    expect(table.map((r) => r.slice(0, 3))).toEqual(
      expect.arrayContaining([
        ["FR", "7", "$770.00"],
        ["DE", "7", "$700.00"],
        ["US", "6", "$630.00"],
      ]),
    );
    expect(table).toHaveLength(3);
    await shot("dashboards-configured");

    // No comparison: the deltas go, the values stay.
    await page.selectOption("#compare", "none");
    await waitForWidgets(5);
    expect(await page.locator('.widget[data-widget-id="kpi"] .delta').count()).toBe(0);
    expect(
      await page.$$eval('.widget[data-widget-id="kpi"] .value', (vs) => vs.map((v) => v.textContent)),
    ).toEqual(["$2,100.00", "$105.00"]);
    await page.selectOption("#compare", "previous_period");

    expect(
      await page.evaluate(() => (globalThis as unknown as Win).sessionStorage.getItem("pixelhouse.apiKey")),
    ).toBe(px.key);
    expect(page.url()).toBe(`${app.url}/dashboards#${view.id}`);
  });

  it("dashboards: create from a preset, rename, save range/model/window/currency, add a table, copy, reorder, delete — shown numbers equal the API's", async () => {
    // EUR at 0.5 per USD on every day of the data, so the saved currency shows half the USD figures.
    const rates = Array.from({ length: 70 }, (_, i) => ({
      date: dayAgo(i),
      currency: "EUR",
      unitsPerUsd: 0.5,
    }));
    expect((await app.services.sync.upsert("fx-rates", null, rates)).rejected).toEqual([]);
    const api = (method: string, path: string, body?: unknown) =>
      app.call(method, path, { key: px.key, pixelId: px.pixelId, ...(body === undefined ? {} : { body }) });
    const listIds = () =>
      page.$$eval(".view-link", (as) => as.map((a) => (a as unknown as El).dataset.viewId ?? ""));

    await open("/dashboards");
    await page.click("#new-view");
    await page.fill("#new-view-name", "Edited");
    await page.check('#new-view-form input[value="orders.count"]');
    await page.check('#new-view-form input[value="orders.total_revenue"]');
    await page.click('#new-view-form button[type="submit"]');
    await page.waitForFunction(() => (globalThis as unknown as Win).location.href.includes("#"));
    await page.locator("#view-name", { hasText: "Edited" }).waitFor();
    await waitForWidgets(2);
    const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
    expect((await api("GET", `/accounts/api/dashboard/views/${id}`)).status).toBe(200);

    // Rename.
    await page.click("#rename-view");
    await page.fill("#rename-input", "Edited KPIs");
    await page.click('#rename-form button[type="submit"]');
    await page.locator("#view-name", { hasText: "Edited KPIs" }).waitFor();
    expect(
      ((await api("GET", `/accounts/api/dashboard/views/${id}`)).body as { dashboardView: { name: string } })
        .dashboardView.name,
    ).toBe("Edited KPIs");

    // Range (the last 10 days), model, window and currency, saved.
    await page.fill("#range-start", dayAgo(10));
    await page.dispatchEvent("#range-start", "change");
    await page.fill("#range-end", dayAgo(1));
    await page.dispatchEvent("#range-end", "change");
    await page.selectOption("#view-model", "first_click");
    await page.selectOption("#view-window", "7");
    await page.fill("#currency", "EUR");
    await page.dispatchEvent("#currency", "change");
    await page.click("#save-view");
    await page.waitForFunction(
      () => (globalThis as unknown as Win).document.querySelectorAll("#view-period").length === 1,
    );
    await waitForWidgets(2);
    const saved = (await api("GET", `/accounts/api/dashboard/views/${id}`)).body as {
      dashboardView: { configuration: Record<string, unknown> };
    };
    expect(saved.dashboardView.configuration).toMatchObject({
      dateRange: { start: dayAgo(10), end: dayAgo(1) },
      attributionModel: "first_click",
      attributionWindow: 7,
      currency: "EUR",
    });
    expect(await text("#view-period")).toMatch(/first click, 7-day window$/);
    // The numbers shown are the query API's for the saved range in EUR: orders 1..10 days ago, 10 of
    // them, 10 · (1 + … + 10) = 550 USD = 275 EUR.
    const answer = await api("POST", "/db-mgmt/api/query", {
      pixelId: px.pixelId,
      measures: ["orders.count", "orders.total_revenue"],
      dateRange: { start: dayAgo(10), end: dayAgo(1) },
      granularity: "none",
      currency: "EUR",
      timezone: "UTC",
    });
    const totals = (
      answer.body as { results: { measureDetails: { measure: string; primarySum: number }[] }[] }
    ).results[0]!.measureDetails;
    expect(totals.map((d) => d.primarySum)).toEqual([10, 275]);
    expect((await widgetValues()).map((v) => v.value)).toEqual(["10", "€275.00"]);

    // A table widget beside the sparklines: orders by country over the saved range.
    await page.click("#add-table");
    await page.selectOption("#table-dimension", "orders.country");
    await page.check('#table-form input[value="orders.count"]');
    await page.click('#table-form button[type="submit"]');
    await waitForWidgets(3);
    const cells = await page.$$eval('.widget[data-chart-type="table"] tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
    );
    // i = 1..10: i mod 3 = 0 → US (3, 6, 9), 1 → DE (1, 4, 7, 10), 2 → FR (2, 5, 8).
    expect(Object.fromEntries(cells.map((c) => [c[0], c[1]]))).toEqual({ DE: "4", FR: "3", US: "3" });
    await shot("dashboards-edited");

    // Copy, then move the copy above the original; the API lists them in the same order.
    await page.click("#copy-view");
    await page.locator("#view-name", { hasText: "Edited KPIs (copy)" }).waitFor();
    const copyId = decodeURIComponent(new URL(page.url()).hash.slice(1));
    expect(copyId).not.toBe(id);
    const before = await listIds();
    expect(before.indexOf(copyId)).toBe(before.indexOf(id) + 1);
    await page.click("#move-up");
    await page.waitForFunction(
      ([a, b]) => {
        const ids = [
          ...(
            globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<El> } }
          ).document.querySelectorAll(".view-link"),
        ].map((x) => x.dataset.viewId);
        return ids.indexOf(a) + 1 === ids.indexOf(b);
      },
      [copyId, id],
    );
    const fromApi = (
      (await api("GET", "/accounts/api/dashboard/views")).body as { dashboardViews: { id: string }[] }
    ).dashboardViews.map((v) => v.id);
    expect(fromApi).toEqual(await listIds());

    // Delete the copy: two clicks, then it is gone from the list and the API.
    await page.click("#delete-view");
    await page.locator("#delete-view", { hasText: "Confirm delete" }).waitFor();
    await page.click("#delete-view");
    await page.waitForFunction(
      (gone) =>
        !(globalThis as unknown as Win).document.querySelectorAll(`.view-link[data-view-id="${gone}"]`)
          .length,
      copyId,
    );
    expect((await api("GET", `/accounts/api/dashboard/views/${copyId}`)).status).toBe(404);
    expect(await listIds()).toContain(id);
  });

  it("dashboards: a table by attribution channel opens the orders credited to a row, and an order's journey", async () => {
    // A pixel of its own, so the figures of the other tests stay as they are. Linear over 30 days:
    //   J1 alice Aug 10 10:00 $100: tiktok Jun 20 (51 days back: outside), google cpc Aug 1, facebook Aug 9
    //      → paid_search 50 %, paid_social 50 %
    //   J2 bob   Aug 11 12:00 $60:  facebook Aug 11 08:00 → paid_social 100 %
    //   J3 carol Aug 12 09:00 $40:  no touch → (none)
    const jx = await app.pixelWithKey(["analytics:read", "dashboards:write", "events:write"]);
    const orders = [
      ["J1", "2026-08-10T10:00:00Z", 100, "alice"],
      ["J2", "2026-08-11T12:00:00Z", 60, "bob"],
      ["J3", "2026-08-12T09:00:00Z", 40, "carol"],
    ] as const;
    const synced = await app.services.sync.upsert(
      "orders",
      jx.pixelId,
      orders.map(([id, createdAt, totalPrice, customer]) => ({
        id,
        createdAt,
        updatedAt: createdAt,
        currency: "USD",
        totalPrice,
        subtotalPrice: totalPrice,
        financialStatus: "paid",
        customer: { id: customer },
      })),
    );
    expect(synced.rejected).toEqual([]);
    const touch = (who: string, timestamp: string, query: string) => ({
      name: "page_view",
      identityId: `anon-${who}`,
      timestamp,
      page: { url: `https://shop.example/landing?${query}` },
      userProperties: { storeYIds: [who] },
    });
    const touches = [
      touch("alice", "2026-06-20T10:00:00Z", "utm_source=tiktok&utm_medium=paid_social"),
      touch("alice", "2026-08-01T10:00:00Z", "utm_source=google&utm_medium=cpc&utm_campaign=summer"),
      touch("alice", "2026-08-09T10:00:00Z", "utm_source=facebook&utm_medium=paid_social&fbclid=f1"),
      touch("bob", "2026-08-11T08:00:00Z", "utm_source=facebook&utm_medium=paid_social"),
    ];
    const sent = await app.call("POST", "/tr/api/events", {
      key: jx.key,
      pixelId: jx.pixelId,
      body: { events: touches },
    });
    expect(sent.status, sent.text).toBe(200);
    expect((await app.services.settle()).messages).toBe(0);
    const api = (method: string, path: string, body?: unknown) =>
      app.call(method, path, { key: jx.key, pixelId: jx.pixelId, ...(body === undefined ? {} : { body }) });
    const created = await api("POST", "/accounts/api/dashboard/views", {
      name: "Attribution",
      configuration: {
        attributionModel: "linear",
        attributionWindow: 30,
        granularity: "none",
        dateRange: { start: "2026-08-10", end: "2026-08-12" },
        grid: { maxWidth: 1440 },
        widgets: [
          {
            id: "by-channel",
            title: "Orders by channel",
            chartType: "table",
            layout: { x: 0, y: 0, columns: 12, rows: 4 },
            dataConfig: {
              measures: ["attribution.orders", "attribution.revenue"],
              dimensions: ["attribution.channel"],
            },
          },
        ],
        filters: { and: [] },
        sections: [],
      },
    });
    expect(created.status, created.text).toBe(200);
    const viewId = (created.body as { dashboardView: { id: string } }).dashboardView.id;

    const tab = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const p = await tab.newPage();
    const urls: string[] = [];
    const seen: string[] = [];
    const bodies: Json[] = [];
    p.on("request", (r) => {
      urls.push(r.url());
      if (r.method() === "POST" && r.url().includes("/db-mgmt/api/")) bodies.push(r.postDataJSON() as Json);
    });
    p.on("pageerror", (err) => seen.push(`page error: ${err.message}`));
    p.on("console", (m) => {
      if (m.type() === "error" && /CSP|Content Security Policy/i.test(m.text())) seen.push(m.text());
    });
    const rowsOf = (selector: string) =>
      p.$$eval(selector, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
      );
    const panel = (view: string) =>
      p.waitForSelector(`#orders-panel[data-view="${view}"][data-state="ready"]`);
    const table = '.widget[data-widget-id="by-channel"]';
    const ready = () => p.waitForSelector(`${table}[data-state="ready"]`);
    try {
      await p.goto(`${app.url}/dashboards#${viewId}`);
      await p.fill("#pixel-id", jx.pixelId);
      await p.fill("#api-key", jx.key);
      await p.click("#connect button[type=submit]");
      await ready();
      expect(await p.locator("#view-period").innerText()).toMatch(/ · linear, 30-day window$/);
      // Every model is offered; the half-life only under time decay.
      expect(await p.$$eval("#view-model option", (os) => os.map((o) => o.getAttribute("value")))).toEqual([
        "last_click",
        "first_click",
        "any_click",
        "linear",
        "time_decay",
        "position_based",
      ]);
      expect(await p.isHidden("#view-half-life")).toBe(true);

      // The orders figure of the paid_social row: J2 whole, half of J1.
      await p.click(`${table} button.drill[data-dimension-value="paid_social"]`);
      await panel("orders");
      expect(await p.locator("#orders-panel-title").innerText()).toBe("Orders credited to paid_social");
      expect(await p.locator("#orders-panel-subtitle").innerText()).toMatch(
        /^Channel · linear, 30-day window · /,
      );
      expect(await rowsOf("#credited-orders tbody tr")).toEqual([
        ["J2", "2026-08-11 12:00:00 UTC", "$60.00", "100%"],
        ["J1", "2026-08-10 10:00:00 UTC", "$100.00", "50%"],
      ]);
      expect(await p.locator("#orders-page").innerText()).toBe("1–2 of 2");
      expect(await p.isDisabled("#orders-next")).toBe(true);
      expect(bodies.at(-1)).toMatchObject({
        dimension: "attribution.channel",
        dimensionValue: "paid_social",
        dateRange: { start: "2026-08-10", end: "2026-08-12" },
        attributionModel: "linear",
        attributionWindow: 30,
        attributionHalfLifeDays: 7,
        currency: "USD",
        offset: 0,
      });
      await shot("dashboards-orders-panel", p);

      // J1's journey: its three touches in time order, the one before the window dimmed and credited nothing.
      await p.click('#credited-orders tr[data-order-id="J1"] button.order-link');
      await panel("journey");
      expect(await p.locator("#orders-panel-title").innerText()).toBe("Order J1");
      expect(await p.locator("#journey-value").innerText()).toContain("$100.00");
      const touchRows = await rowsOf("#journey-touches tbody tr");
      expect(touchRows.map((r) => [r[0], r[2], r[3], r[4]])).toEqual([
        ["2026-06-20 10:00:00 UTC", "paid_social", "tiktok", "paid_social"],
        ["2026-08-01 10:00:00 UTC", "paid_search", "google", "cpc"],
        ["2026-08-09 10:00:00 UTC", "paid_social", "facebook", "paid_social"],
      ]);
      expect(touchRows.map((r) => r[1])).toEqual(["51 d", "9 d", "1 d"]);
      expect(touchRows[1]![5]).toBe("summer");
      // Campaign, the six credits, click id, the ad ids, landing page, identity.
      expect(touchRows[2]![12]).toBe("fbclid");
      expect(touchRows[1]![16]).toBe(
        "https://shop.example/landing?utm_source=google&utm_medium=cpc&utm_campaign=summer",
      );
      expect(touchRows[1]![17]).toMatch(/^anon-alice/);
      expect(
        await p.$$eval("#journey-touches tbody tr", (trs) =>
          trs.map((tr) => (tr as unknown as El).dataset.inWindow),
        ),
      ).toEqual(["false", "true", "true"]);
      const opacity = await p.$eval("#journey-touches tbody tr.outside td", (td) =>
        Number(
          (globalThis as unknown as { getComputedStyle(e: unknown): { opacity: string } }).getComputedStyle(
            td,
          ).opacity,
        ),
      );
      expect(opacity).toBeLessThan(1);
      const credit = (model: string) =>
        p.$$eval(`#journey-touches tbody td[data-model="${model}"]`, (tds) =>
          tds.map((td) => td.textContent),
        );
      expect(await credit("first_click")).toEqual(["0%", "100%", "0%"]);
      expect(await credit("last_click")).toEqual(["0%", "0%", "100%"]);
      expect(await credit("any_click")).toEqual(["0%", "100%", "100%"]);
      expect(await credit("linear")).toEqual(["0%", "50%", "50%"]);
      expect(await credit("position_based")).toEqual(["0%", "50%", "50%"]);
      const decay = touchShares("time_decay", [
        { time: Date.parse("2026-08-01T10:00:00Z"), eventId: "a" },
        { time: Date.parse("2026-08-09T10:00:00Z"), eventId: "b" },
      ]).map((x) => `${Number((x * 100).toFixed(2))}%`);
      expect(await credit("time_decay")).toEqual(["0%", ...decay]);
      expect(await p.getAttribute('#journey-touches th[data-model="linear"]', "class")).toContain("current");
      expect(await p.locator("#journey-merges li").count()).toBeGreaterThan(0);
      expect(
        urls.some((u) => u.includes("/db-mgmt/api/orders/J1/journey?window=30&currency=USD&halfLifeDays=7")),
      ).toBe(true);
      await shot("dashboards-journey", p);

      // Back to the list, then Escape closes the panel.
      await p.click("#journey-back");
      await panel("orders");
      await p.keyboard.press("Escape");
      await p.waitForSelector("#orders-panel", { state: "hidden" });

      // Time decay with a 14-day half-life: the widget asks with it, it is saved, and the listing and
      // the journey ask with it too.
      await p.selectOption("#view-model", "time_decay");
      await p.waitForSelector("#view-half-life", { state: "visible" });
      await p.fill("#view-half-life", "14");
      const [asked] = await Promise.all([
        p.waitForRequest(
          (r) =>
            r.url().endsWith("/db-mgmt/api/query") &&
            r.postData()?.includes('"time_decay"') === true &&
            r.postData()?.includes('"attributionHalfLifeDays":14') === true,
        ),
        p.dispatchEvent("#view-half-life", "change"),
      ]);
      expect(asked.postDataJSON()).toMatchObject({
        attributionModel: "time_decay",
        attributionHalfLifeDays: 14,
      });
      await ready();
      expect(await p.locator("#view-period").innerText()).toMatch(
        / · time decay \(half-life 14 days\), 30-day window$/,
      );
      await p.click("#save-view");
      await p.waitForFunction(
        (id) => (globalThis as unknown as Win).location.href.endsWith(`#${id}`),
        viewId,
      );
      await ready();
      const saved = (await api("GET", `/accounts/api/dashboard/views/${viewId}`)).body as {
        dashboardView: { configuration: Json };
      };
      expect(saved.dashboardView.configuration).toMatchObject({
        attributionModel: "time_decay",
        attributionHalfLifeDays: 14,
      });
      await p.click(`${table} button.drill[data-dimension-value="paid_search"]`);
      await panel("orders");
      expect(bodies.at(-1)).toMatchObject({ attributionModel: "time_decay", attributionHalfLifeDays: 14 });
      expect((await rowsOf("#credited-orders tbody tr")).map((r) => r[0])).toEqual(["J1"]);
      await p.click('#credited-orders tr[data-order-id="J1"] button.order-link');
      await panel("journey");
      expect(urls.some((u) => u.includes("/journey?window=30&currency=USD&halfLifeDays=14"))).toBe(true);
      expect(await p.getAttribute('#journey-touches th[data-model="time_decay"]', "class")).toContain(
        "current",
      );
    } finally {
      await tab.close();
    }
    expect(seen, "CSP violations and page errors").toEqual([]);
    for (const url of urls) {
      expect(url, "the key never appears in a URL").not.toContain(jx.key);
      expect(url.startsWith(app.url), `only the service itself is contacted: ${url}`).toBe(true);
    }
  });

  it("dashboards: a key with dashboards:read only sees the views, no editing controls, and is told why", async () => {
    const { key } = await app.services.keys.create({
      pixelId: px.pixelId,
      scopes: ["analytics:read", "dashboards:read"],
      expiresAt: null,
    });
    const reader = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const p = await reader.newPage();
    try {
      await p.goto(`${app.url}/dashboards`);
      await p.fill("#pixel-id", px.pixelId);
      await p.fill("#api-key", key);
      await p.click("#connect button[type=submit]");
      await p.waitForSelector(".dashboards");
      await p.locator("#read-only").waitFor();
      expect(await p.locator("#read-only").innerText()).toMatch(/dashboards:read.*dashboards:write/s);
      expect(await p.locator(".view-link").count()).toBeGreaterThan(0);
      await p.click(".view-link");
      await p.waitForSelector(".widget");
      for (const control of [
        "#new-view",
        "#save-view",
        "#rename-view",
        "#copy-view",
        "#delete-view",
        "#add-table",
      ]) {
        expect(await p.locator(control).count(), control).toBe(0);
      }
    } finally {
      await reader.close();
    }
  });
});

/** Waits until `n` widgets are on the page and none is loading; fails with any widget's error. */
async function waitForWidgets(n: number) {
  await page.waitForFunction(
    (count) =>
      (globalThis as unknown as Win).document.querySelectorAll(".widget").length === count &&
      (globalThis as unknown as Win).document.querySelectorAll('.widget[data-state="loading"]').length === 0,
    n,
  );
  const errors = await page.$$eval('.widget[data-state="error"]', (ws) =>
    ws.map((w) => `${(w as unknown as El).dataset.widgetId}: ${(w as unknown as El).innerText}`),
  );
  expect(errors).toEqual([]);
}

function widgetIds(): Promise<string[]> {
  return page.$$eval(".widget", (ws) => ws.map((w) => (w as unknown as El).dataset.widgetId ?? ""));
}

function widgetValues(): Promise<{ value: string; type: string; delta: string }[]> {
  return page.$$eval(".widget", (ws) =>
    ws.map((w) => ({
      value: w.querySelector(".value")?.textContent ?? "",
      type: (w.querySelector(".value") as unknown as El | null)?.dataset.valueType ?? "",
      delta: w.querySelector(".delta")?.textContent ?? "",
    })),
  );
}
