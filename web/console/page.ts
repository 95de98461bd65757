import { ApiError, request } from "../shared/api.js";
import { h } from "../shared/dom.js";
import type { Credentials } from "../shared/session.js";
import { createChartPanel } from "./chart-panel.js";
import { downloadCsv } from "./csv-download.js";
import { createEditor, runOnModEnter } from "./editor.js";
import { createEditorCard } from "./editor-card.js";
import { isBadLimit, LIMIT_MESSAGE, type SqlResult, sqlRequest } from "./query.js";
import { createResults } from "./results.js";
import { completionSchema, type SchemaTable } from "./schema.js";
import { createSidebar } from "./sidebar.js";

const SQL_KEY = "pixelhouse.console.sql";
const DEFAULT_SQL = `SELECT toDate(created_at) AS day, count() AS orders, sum(total_price) AS revenue
FROM orders
GROUP BY day
ORDER BY day`;

const messageOf = (err: unknown) => (err instanceof ApiError ? err.message : String(err));

/**
 * The console once connected: sidebar, editor card, results and chart, wired together. The runs'
 * state is here: `.work`'s data-run (idle, running, done, error), which the browser tests wait on.
 */
export function consolePage(creds: Credentials, main: HTMLElement, tables: SchemaTable[]): void {
  // Only the latest run may show its answer: an earlier one that ends later is dropped.
  let seq = 0;
  const card = createEditorCard({ onRun: () => void run(), onCsv: () => void saveCsv() });
  const chart = createChartPanel();
  const results = createResults({
    chart: chart.element,
    onTab: (tab) => chart.setVisible(tab === "chart"),
  });
  const sidebar = createSidebar(tables, (name) => editor.insert(name));
  const work = h("div", { class: "work", "data-run": "idle" }, card.element, results.elements);
  main.append(h("div", { class: "console" }, sidebar, work));

  const editor = createEditor({
    parent: card.editorBox,
    doc: sessionStorage.getItem(SQL_KEY) ?? DEFAULT_SQL,
    completion: completionSchema(tables),
    onRun: () => void run(),
    onChange: (doc) => sessionStorage.setItem(SQL_KEY, doc),
  });
  editor.focus();
  runOnModEnter(window, () => void run());

  async function run() {
    if (!editor.text().trim()) return;
    const limitText = card.limitText();
    if (isBadLimit(limitText)) {
      results.showError(LIMIT_MESSAGE);
      work.dataset.run = "error";
      return;
    }
    const mine = ++seq;
    work.dataset.run = "running";
    card.setRunning(true);
    card.setStatus("Running…");
    results.hideError();
    try {
      const res = await request(
        creds,
        "POST",
        "/db-mgmt/api/sql",
        sqlRequest(creds.pixelId, editor.text(), limitText),
      );
      const answer = (await res.json()) as SqlResult;
      if (mine !== seq) return;
      card.setStatus("");
      results.show(answer);
      chart.setResult(answer);
      work.dataset.run = "done";
    } catch (err) {
      if (mine !== seq) return;
      card.setStatus("");
      chart.setResult(null);
      results.fail(messageOf(err));
      work.dataset.run = "error";
    } finally {
      if (mine === seq) card.setRunning(false);
    }
  }

  async function saveCsv() {
    card.setDownloading(true);
    results.hideError();
    try {
      card.setStatus(
        await downloadCsv(creds, sqlRequest(creds.pixelId, editor.text(), card.limitText(), "csv")),
      );
    } catch (err) {
      results.showError(messageOf(err));
    } finally {
      card.setDownloading(false);
    }
  }
}
