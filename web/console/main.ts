import "../shared/base.css";
import "./console.css";
import type { EditorView } from "@codemirror/view";
import { ApiError, getJson, request } from "../shared/api.js";
import { type Chart, drawChart } from "../shared/chart.js";
import { append, clear, h } from "../shared/dom.js";
import { formatNumber } from "../shared/format.js";
import type { Credentials } from "../shared/session.js";
import { startPage } from "../shared/shell.js";
import { createEditor, type SchemaTable } from "./editor.js";

/** The answer of POST /db-mgmt/api/sql (docs/sql-console.md). */
interface SqlResult {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
  rowsRead: number;
  bytesRead: number;
  limit: number;
}

const SQL_KEY = "pixelhouse.console.sql";
const DEFAULT_SQL = `SELECT toDate(created_at) AS day, count() AS orders, sum(total_price) AS revenue
FROM orders
GROUP BY day
ORDER BY day`;
const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 50_000;
/** Rows put into the grid at once; the rest on request (the chart and the CSV have them all). */
const GRID_PAGE = 1000;

const schemaOf = (creds: Credentials) =>
  getJson<{ tables: SchemaTable[] }>(creds, "/db-mgmt/api/sql/schema").then((r) => r.tables);

let verified: { creds: Credentials; tables: SchemaTable[] } | undefined;

startPage({
  page: "console",
  needs: "the analytics:read scope",
  async verify(creds) {
    verified = { creds, tables: await schemaOf(creds) };
  },
  start(creds, main) {
    const tables = verified?.creds === creds ? Promise.resolve(verified.tables) : schemaOf(creds);
    main.append(h("p", { class: "muted loading" }, "Loading the schema…"));
    tables.then(
      (t) => {
        clear(main);
        consolePage(creds, main, t);
      },
      (err: unknown) => {
        clear(main);
        main.append(
          h(
            "div",
            { class: "error-panel", role: "alert" },
            h("strong", {}, "The schema could not be read"),
            h("pre", {}, (err as Error).message),
          ),
        );
      },
    );
  },
});

const NUMERIC = /^(Nullable\()?(LowCardinality\()?(U?Int\d+|Float\d+|Decimal\d*|BFloat16)\b/;
const isNumericType = (type: string) => NUMERIC.test(type);

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** Records of a CSV text: newlines outside quoted fields (a quote inside one is doubled). */
function csvRecords(text: string): number {
  let records = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 10 && !quoted) records++;
  }
  return records;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${formatNumber(v, 1)} ${units[u]}`;
}

function consolePage(creds: Credentials, main: HTMLElement, tables: SchemaTable[]) {
  let editor: EditorView;
  let result: SqlResult | null = null;
  let chart: Chart | null = null;
  let chartKind: "line" | "bar" = "line";
  let view: "table" | "chart" = "table";
  let seq = 0;

  // --- schema sidebar ---------------------------------------------------------------------------
  const filter = h("input", {
    type: "search",
    id: "schema-filter",
    placeholder: "Filter tables and columns",
    "aria-label": "Filter tables and columns",
  });
  const tableList = h("div", { class: "tables" });
  const insert = (text: string) => {
    const { from, to } = editor.state.selection.main;
    editor.dispatch({ changes: { from, to, insert: text }, selection: { anchor: from + text.length } });
    editor.focus();
  };
  const renderTables = () => {
    const q = filter.value.trim().toLowerCase();
    clear(tableList);
    for (const table of tables) {
      const tableHit = !q || table.name.toLowerCase().includes(q);
      const cols = table.columns.filter((c) => tableHit || c.name.toLowerCase().includes(q));
      if (!tableHit && cols.length === 0) continue;
      tableList.append(
        h(
          "details",
          { class: "table", "data-table": table.name, ...(q ? { open: true } : {}) },
          h(
            "summary",
            {},
            h("span", { class: "tname" }, table.name),
            h("span", { class: "count", title: "columns" }, String(table.columns.length)),
          ),
          h("p", { class: "tdesc" }, table.description),
          h(
            "button",
            { type: "button", class: "link insert-table", onclick: () => insert(table.name) },
            "Insert name",
          ),
          h(
            "ul",
            { class: "columns" },
            cols.map((c) =>
              h(
                "li",
                {},
                h(
                  "button",
                  {
                    type: "button",
                    class: "col",
                    title: c.description ? `${c.description} — click to insert` : "Click to insert",
                    onclick: () => insert(c.name),
                  },
                  h("span", { class: "cname" }, c.name),
                  h("span", { class: "ctype" }, c.type),
                ),
                c.description ? h("div", { class: "cdesc" }, c.description) : null,
              ),
            ),
          ),
        ),
      );
    }
  };
  filter.addEventListener("input", renderTables);
  renderTables();
  const sidebar = h(
    "aside",
    { class: "schema card", "aria-label": "Schema" },
    h("div", { class: "side-head" }, h("h2", {}, "Tables"), filter),
    tableList,
  );

  // --- editor and toolbar -------------------------------------------------------------------------
  const editorBox = h("div", { class: "editor", id: "editor" });
  const limit = h("input", {
    id: "limit",
    type: "number",
    min: 1,
    max: MAX_LIMIT,
    step: 1,
    value: DEFAULT_LIMIT,
    "aria-label": "Row limit",
  });
  const runButton = h(
    "button",
    { type: "button", class: "primary", id: "run", title: "Run (Ctrl+Enter / ⌘+Enter)" },
    "Run",
    h("kbd", {}, /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘ ↵" : "Ctrl ↵"),
  );
  const csvButton = h("button", { type: "button", class: "secondary", id: "csv" }, "Download CSV");
  const status = h("span", { class: "run-status", id: "run-status", role: "status" });
  const editorCard = h(
    "section",
    { class: "card editor-card" },
    h(
      "div",
      { class: "card-head" },
      h("h1", {}, "SQL console"),
      h("span", { class: "muted" }, "ClickHouse SQL over this pixel's tables — read-only"),
    ),
    editorBox,
    h(
      "div",
      { class: "toolbar" },
      runButton,
      h("label", { class: "limit", for: "limit" }, "Limit", limit),
      status,
      h("span", { class: "spacer" }),
      csvButton,
    ),
  );

  // --- error and results ----------------------------------------------------------------------------
  const errorText = h("pre", { id: "error-message" });
  const errorPanel = h(
    "div",
    { class: "error-panel", id: "error", role: "alert" },
    h("strong", {}, "The query failed"),
    errorText,
  );
  errorPanel.hidden = true;

  const stats = h("div", { class: "stats", id: "stats" });
  const tabTable = h("button", { type: "button", role: "tab", id: "tab-table", class: "tab" }, "Table");
  const tabChart = h("button", { type: "button", role: "tab", id: "tab-chart", class: "tab" }, "Chart");
  const tableView = h("div", { class: "grid-wrap", id: "table-view" });
  const chartBox = h("div", { class: "chart-box", id: "chart" });
  const chartNote = h("span", { class: "muted", id: "chart-note" });
  const kindButtons = (["line", "bar"] as const).map((k) =>
    h(
      "button",
      {
        type: "button",
        class: "seg",
        id: `chart-${k}`,
        onclick: () => {
          chartKind = k;
          renderChart();
        },
      },
      k === "line" ? "Line" : "Bar",
    ),
  );
  const chartView = h(
    "div",
    { class: "chart-view", id: "chart-view" },
    h("div", { class: "chart-controls" }, h("div", { class: "segmented" }, kindButtons), chartNote),
    chartBox,
  );
  const results = h(
    "section",
    { class: "card results", id: "results" },
    h(
      "div",
      { class: "results-head" },
      stats,
      h("div", { class: "tabs", role: "tablist" }, tabTable, tabChart),
    ),
    tableView,
    chartView,
  );
  results.hidden = true;
  const empty = h(
    "div",
    { class: "card empty", id: "empty" },
    h("p", {}, "Write a query and press ", h("kbd", {}, "Ctrl ↵"), " or Run."),
    h(
      "p",
      { class: "muted" },
      "Every table holds only this pixel's rows. Results stop at the limit (default 1,000, at most 50,000); " +
        "the CSV download runs the query again with the same limit.",
    ),
  );

  const work = h("div", { class: "work", "data-run": "idle" }, editorCard, errorPanel, empty, results);
  main.append(h("div", { class: "console" }, sidebar, work));

  editor = createEditor({
    parent: editorBox,
    doc: sessionStorage.getItem(SQL_KEY) ?? DEFAULT_SQL,
    tables,
    onRun: () => void run(),
    onChange: (doc) => sessionStorage.setItem(SQL_KEY, doc),
  });
  editor.focus();

  // Ctrl/Cmd+Enter outside the editor runs too (the editor handles its own and stops the event).
  window.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.defaultPrevented) {
      ev.preventDefault();
      void run();
    }
  });
  runButton.addEventListener("click", () => void run());
  csvButton.addEventListener("click", () => void downloadCsv());
  tabTable.addEventListener("click", () => show("table"));
  tabChart.addEventListener("click", () => show("chart"));
  show("table");

  function appliedLimit(): number | undefined {
    const n = Number(limit.value);
    return Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT ? n : undefined;
  }

  function body(format?: "csv") {
    const n = appliedLimit();
    return {
      pixelId: creds.pixelId,
      sql: editor.state.doc.toString(),
      ...(n !== undefined ? { limit: n } : {}),
      ...(format ? { format } : {}),
    };
  }

  function showError(message: string) {
    errorText.textContent = message;
    errorPanel.hidden = false;
  }

  async function run() {
    const text = editor.state.doc.toString().trim();
    if (!text) return;
    if (limit.value && appliedLimit() === undefined) {
      showError(`The limit must be a whole number from 1 to ${formatNumber(MAX_LIMIT, 0)}.`);
      work.dataset.run = "error";
      return;
    }
    const mine = ++seq;
    work.dataset.run = "running";
    runButton.disabled = true;
    status.textContent = "Running…";
    errorPanel.hidden = true;
    try {
      const res = await request(creds, "POST", "/db-mgmt/api/sql", body());
      const answer = (await res.json()) as SqlResult;
      if (mine !== seq) return;
      result = answer;
      status.textContent = "";
      renderResult();
      work.dataset.run = "done";
    } catch (err) {
      if (mine !== seq) return;
      status.textContent = "";
      // The previous result would read as this query's: it goes.
      result = null;
      chart?.destroy();
      chart = null;
      results.hidden = true;
      showError(err instanceof ApiError ? err.message : String(err));
      work.dataset.run = "error";
    } finally {
      if (mine === seq) runButton.disabled = false;
    }
  }

  async function downloadCsv() {
    csvButton.disabled = true;
    errorPanel.hidden = true;
    try {
      const res = await request(creds, "POST", "/db-mgmt/api/sql", body("csv"));
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = h("a", { href: url, download: "query.csv" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      const rows = res.headers.get("x-row-count");
      if (rows) {
        status.textContent = `CSV: ${formatNumber(Number(rows), 0)} rows${res.headers.get("x-truncated") === "true" ? " (truncated at the limit)" : ""}`;
      } else {
        // A long CSV streams, and its count comes as HTTP trailers, which fetch does not show: count here.
        const n = csvRecords(await blob.text()) - 1;
        const limit = Number(res.headers.get("x-row-limit"));
        status.textContent = `CSV: ${formatNumber(n, 0)} rows${n === limit ? " (the limit: there may be more)" : ""}`;
      }
    } catch (err) {
      showError(err instanceof ApiError ? err.message : String(err));
    } finally {
      csvButton.disabled = false;
    }
  }

  function show(which: "table" | "chart") {
    view = which;
    tabTable.setAttribute("aria-selected", String(which === "table"));
    tabChart.setAttribute("aria-selected", String(which === "chart"));
    tableView.hidden = which !== "table";
    chartView.hidden = which !== "chart";
    if (which === "chart") renderChart();
  }

  function renderResult() {
    if (!result) return;
    empty.hidden = true;
    results.hidden = false;
    const r = result;
    clear(stats);
    append(
      stats,
      h(
        "span",
        { class: "stat strong", id: "row-count" },
        `${formatNumber(r.rowCount, 0)} ${r.rowCount === 1 ? "row" : "rows"}`,
      ),
      h(
        "span",
        { class: "stat", id: "applied-limit", title: "The row limit applied to this query" },
        `limit ${formatNumber(r.limit, 0)}`,
      ),
      h("span", { class: "stat", id: "elapsed" }, `${formatNumber(r.elapsedMs, 1)} ms`),
      h(
        "span",
        { class: "stat muted", id: "read" },
        `read ${formatNumber(r.rowsRead, 0)} rows, ${bytes(r.bytesRead)}`,
      ),
      r.truncated
        ? h(
            "span",
            { class: "badge warn", id: "truncated", title: "The query had more rows than the limit" },
            `truncated at ${formatNumber(r.limit, 0)} rows`,
          )
        : null,
    );
    renderTable(GRID_PAGE);
    if (view === "chart") renderChart();
    else if (chart) {
      chart.destroy();
      chart = null;
    }
  }

  function renderTable(upTo: number) {
    const r = result;
    if (!r) return;
    clear(tableView);
    if (r.columns.length === 0) return;
    const numeric = r.columns.map((c) => isNumericType(c.type));
    const shown = r.rows.slice(0, upTo);
    const table = h(
      "table",
      { class: "grid", id: "grid" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { class: "rownum" }, "#"),
          r.columns.map((c, i) =>
            h(
              "th",
              { class: numeric[i] ? "num" : "" },
              h("div", { class: "colname" }, c.name),
              h("div", { class: "coltype" }, c.type),
            ),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        shown.map((row, n) =>
          h(
            "tr",
            {},
            h("td", { class: "rownum" }, String(n + 1)),
            row.map((v, i) => {
              const text = cellText(v);
              return h(
                "td",
                {
                  class: `${numeric[i] ? "num" : ""}${v === null ? " null" : ""}`,
                  ...(text.length > 60 ? { title: text } : {}),
                },
                text,
              );
            }),
          ),
        ),
      ),
    );
    tableView.append(table);
    if (r.rows.length === 0) tableView.append(h("p", { class: "muted none" }, "The query returned no rows."));
    if (r.rows.length > shown.length) {
      tableView.append(
        h(
          "div",
          { class: "more" },
          `Showing ${formatNumber(shown.length, 0)} of ${formatNumber(r.rows.length, 0)} rows. `,
          h(
            "button",
            { type: "button", class: "link", onclick: () => renderTable(upTo + GRID_PAGE * 5) },
            "Show more",
          ),
        ),
      );
    }
  }

  function renderChart() {
    for (const b of kindButtons) b.setAttribute("aria-pressed", String(b.id === `chart-${chartKind}`));
    chart?.destroy();
    chart = null;
    clear(chartBox);
    const r = result;
    if (!r || r.columns.length === 0) return;
    const single = r.columns.length === 1;
    const labels = r.rows.map((row, i) => (single ? String(i + 1) : cellText(row[0])));
    const ys = r.columns
      .map((c, i) => ({ c, i }))
      .filter(
        ({ c, i }) =>
          (single || i > 0) &&
          (isNumericType(c.type) || r.rows.every((row) => row[i] === null || typeof row[i] === "number")),
      );
    if (r.rows.length === 0 || ys.length === 0) {
      chartNote.textContent = "";
      chartBox.append(
        h(
          "p",
          { class: "muted none" },
          r.rows.length === 0
            ? "No rows to chart."
            : "Nothing to chart: no column after the first holds numbers. Put the x value first and numbers after it.",
        ),
      );
      return;
    }
    chartNote.textContent = single
      ? `${r.columns[0]!.name} by row`
      : `${ys.map(({ c }) => c.name).join(", ")} by ${r.columns[0]!.name}`;
    chart = drawChart(chartBox, {
      kind: chartKind,
      labels,
      xLabel: single ? "row" : r.columns[0]!.name,
      integer: /^(Nullable\()?U?Int\d/.test(ys[0]!.c.type),
      secondAxis: true,
      series: ys.map(({ c, i }) => ({
        label: c.name,
        values: r.rows.map((row) => {
          const v = row[i];
          return v === null || v === undefined || v === "" ? null : Number(v);
        }),
      })),
      height: 340,
    });
  }
}
