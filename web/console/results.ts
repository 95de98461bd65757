import { append, clear, h } from "../shared/dom.js";
import { renderGrid } from "./grid.js";
import type { SqlResult } from "./query.js";
import { resultStats } from "./result-format.js";

export type ResultTab = "table" | "chart";

export interface Results {
  /** The error panel, the empty-state card and the results card, in page order. */
  elements: HTMLElement[];
  show(result: SqlResult): void;
  /** A failed run: its message, and the previous result hidden so it cannot be read as this query's. */
  fail(message: string): void;
  /** A message that leaves the shown result as it is (a bad limit, a failed download). */
  showError(message: string): void;
  hideError(): void;
}

/**
 * The answer of a run: the stats line (row count, applied limit, time, rows and bytes read, the
 * truncated badge), the Table / Chart tabs with the grid, and the error panel. The chart's element is
 * placed under the Chart tab; `onTab` says which tab is open.
 */
export function createResults(options: { chart: HTMLElement; onTab: (tab: ResultTab) => void }): Results {
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
  const card = h(
    "section",
    { class: "card results", id: "results" },
    h(
      "div",
      { class: "results-head" },
      stats,
      h("div", { class: "tabs", role: "tablist" }, tabTable, tabChart),
    ),
    tableView,
    options.chart,
  );
  card.hidden = true;
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

  const open = (tab: ResultTab) => {
    tabTable.setAttribute("aria-selected", String(tab === "table"));
    tabChart.setAttribute("aria-selected", String(tab === "chart"));
    tableView.hidden = tab !== "table";
    options.onTab(tab);
  };
  tabTable.addEventListener("click", () => open("table"));
  tabChart.addEventListener("click", () => open("chart"));
  open("table");

  const showError = (message: string) => {
    errorText.textContent = message;
    errorPanel.hidden = false;
  };

  return {
    elements: [errorPanel, empty, card],
    show(r) {
      empty.hidden = true;
      card.hidden = false;
      clear(stats);
      append(
        stats,
        resultStats(r).map((s) =>
          h("span", { class: s.class, id: s.id, ...(s.title ? { title: s.title } : {}) }, s.text),
        ),
      );
      renderGrid(tableView, r);
    },
    fail(message) {
      card.hidden = true;
      showError(message);
    },
    showError,
    hideError() {
      errorPanel.hidden = true;
    },
  };
}
