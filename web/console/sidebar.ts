import { clear, h } from "../shared/dom.js";
import { filterSchema, type SchemaTable } from "./schema.js";

/**
 * The schema sidebar: the tables with their descriptions and typed columns, and a filter box. A click
 * on a name hands it to `onInsert` (the page puts it at the editor's cursor).
 */
export function createSidebar(tables: SchemaTable[], onInsert: (name: string) => void): HTMLElement {
  const filter = h("input", {
    type: "search",
    id: "schema-filter",
    placeholder: "Filter tables and columns",
    "aria-label": "Filter tables and columns",
  });
  const list = h("div", { class: "tables" });
  const render = () => {
    clear(list);
    for (const { table, columns, open } of filterSchema(tables, filter.value)) {
      list.append(
        h(
          "details",
          { class: "table", "data-table": table.name, ...(open ? { open: true } : {}) },
          h(
            "summary",
            {},
            h("span", { class: "tname" }, table.name),
            h("span", { class: "count", title: "columns" }, String(table.columns.length)),
          ),
          h("p", { class: "tdesc" }, table.description),
          h(
            "button",
            { type: "button", class: "link insert-table", onclick: () => onInsert(table.name) },
            "Insert name",
          ),
          h(
            "ul",
            { class: "columns" },
            columns.map((c) => columnItem(c, onInsert)),
          ),
        ),
      );
    }
  };
  filter.addEventListener("input", render);
  render();
  return h(
    "aside",
    { class: "schema card", "aria-label": "Schema" },
    h("div", { class: "side-head" }, h("h2", {}, "Tables"), filter),
    list,
  );
}

function columnItem(c: SchemaTable["columns"][number], onInsert: (name: string) => void): HTMLElement {
  return h(
    "li",
    {},
    h(
      "button",
      {
        type: "button",
        class: "col",
        title: c.description ? `${c.description} — click to insert` : "Click to insert",
        onclick: () => onInsert(c.name),
      },
      h("span", { class: "cname" }, c.name),
      h("span", { class: "ctype" }, c.type),
    ),
    c.description ? h("div", { class: "cdesc" }, c.description) : null,
  );
}
