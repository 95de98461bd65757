import { clear, h } from "../shared/dom.js";
import { formatNumber } from "../shared/format.js";
import type { SqlResult } from "./query.js";
import { cellOf, isNumericType } from "./result-format.js";

/** Rows put into the grid at once; the rest on request (the chart and the CSV have them all). */
export const GRID_PAGE = 1000;

/**
 * The result's first `upTo` rows as a table in `target` (emptied first): each column's name and type,
 * numbers right-aligned, NULL marked; "Show more" adds five pages.
 */
export function renderGrid(target: HTMLElement, r: SqlResult, upTo = GRID_PAGE): void {
  clear(target);
  if (r.columns.length === 0) return;
  const numeric = r.columns.map((c) => isNumericType(c.type));
  const shown = r.rows.slice(0, upTo);
  const head = h(
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
  );
  const body = shown.map((row, n) =>
    h(
      "tr",
      {},
      h("td", { class: "rownum" }, String(n + 1)),
      row.map((v, i) => {
        const cell = cellOf(v, numeric[i] === true);
        return h("td", { class: cell.class, ...(cell.title ? { title: cell.title } : {}) }, cell.text);
      }),
    ),
  );
  target.append(h("table", { class: "grid", id: "grid" }, h("thead", {}, head), h("tbody", {}, body)));
  if (r.rows.length === 0) target.append(h("p", { class: "muted none" }, "The query returned no rows."));
  if (r.rows.length > shown.length) {
    target.append(
      h(
        "div",
        { class: "more" },
        `Showing ${formatNumber(shown.length, 0)} of ${formatNumber(r.rows.length, 0)} rows. `,
        h(
          "button",
          { type: "button", class: "link", onclick: () => renderGrid(target, r, upTo + GRID_PAGE * 5) },
          "Show more",
        ),
      ),
    );
  }
}
