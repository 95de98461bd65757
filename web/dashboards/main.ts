import "../shared/base.css";
import "./dashboards.css";
import { getJson, keyScopes, type Measure } from "../shared/api.js";
import { clear, h } from "../shared/dom.js";
import { type ComparePeriod, comparePeriod, type DateRange, formatRange, isDay } from "../shared/format.js";
import type { Credentials } from "../shared/session.js";
import { startPage } from "../shared/shell.js";
import { attributionText, halfLifeOf } from "./drill.js";
import { type EditorContext, newViewControl, VIEWS, viewEditor } from "./editor.js";
import { ordersPanel } from "./orders-panel.js";
import { type DashboardView, type Section, type Widget, WidgetRenderer } from "./widgets.js";

const COMPARE_KEY = "pixelhouse.dashboards.compare";
const CURRENCY_KEY = "pixelhouse.dashboards.currency";

const listViews = (creds: Credentials) =>
  getJson<{ dashboardViews: DashboardView[] }>(creds, VIEWS).then((r) => r.dashboardViews);

let verified: { creds: Credentials; views: DashboardView[]; writable: boolean } | undefined;

startPage({
  page: "dashboards",
  needs: "the dashboards:read and analytics:read scopes",
  async verify(creds) {
    const [views, scopes] = await Promise.all([listViews(creds), keyScopes(creds)]);
    verified = { creds, views, writable: scopes.has("dashboards:write") };
  },
  start(creds, main) {
    const state =
      verified?.creds === creds
        ? Promise.resolve(verified)
        : Promise.all([listViews(creds), keyScopes(creds)]).then(([views, scopes]) => ({
            views,
            writable: scopes.has("dashboards:write"),
          }));
    const measures = getJson<{ measures: Measure[] }>(creds, "/db-mgmt/api/measures").then((r) => r.measures);
    main.append(h("p", { class: "muted loading" }, "Loading dashboards…"));
    Promise.all([state, measures]).then(
      ([st, m]) => {
        clear(main);
        dashboardsPage(creds, main, st.views, new Map(m.map((x) => [x.key, x])), st.writable);
      },
      (err: unknown) => {
        clear(main);
        main.append(
          h(
            "div",
            { class: "error-panel", role: "alert" },
            h("strong", {}, "The dashboards could not be read"),
            h("pre", {}, (err as Error).message),
          ),
        );
      },
    );
  },
});

function widgetCount(v: DashboardView): number {
  return v.configuration.widgets.length + v.configuration.sections.reduce((n, s) => n + s.widgets.length, 0);
}

function dashboardsPage(
  creds: Credentials,
  main: HTMLElement,
  views: DashboardView[],
  measures: Map<string, Measure>,
  writable: boolean,
) {
  const list = h("nav", { class: "view-list", id: "view-list", "aria-label": "Dashboards" });
  const content = h("div", { class: "view-content", id: "view" });
  const count = h("span", { class: "count", id: "view-count" }, String(views.length));
  const problem = h("p", { class: "form-status error-text", id: "edit-error", role: "alert" });
  const editor: EditorContext = {
    creds,
    measures,
    views,
    refresh(openId) {
      problem.textContent = "";
      renderList();
      if (openId !== undefined && location.hash !== `#${encodeURIComponent(openId)}`) {
        location.hash = `#${encodeURIComponent(openId)}`; // hashchange opens it
      } else open();
    },
    fail(err) {
      problem.textContent = (err as Error).message;
    },
  };
  const side = writable
    ? h("div", { class: "side-edit" }, newViewControl(editor), problem)
    : h(
        "p",
        { class: "read-only-note", id: "read-only", role: "note" },
        "Read-only: this key has dashboards:read, so dashboards can be viewed but not created or changed " +
          "(that needs the dashboards:write scope).",
      );
  main.append(
    h(
      "div",
      { class: "dashboards" },
      h(
        "aside",
        { class: "card side" },
        h("div", { class: "side-head" }, h("h2", {}, "Dashboards"), count),
        side,
        list,
      ),
      content,
    ),
  );

  let renderer: WidgetRenderer | null = null;
  const panel = ordersPanel(creds);
  const compare = {
    kind: (sessionStorage.getItem(COMPARE_KEY) as ComparePeriod | null) ?? "previous_period",
  };
  let currency = sessionStorage.getItem(CURRENCY_KEY) ?? "USD";

  const renderList = () => {
    clear(list);
    count.textContent = String(views.length);
    for (const v of views) {
      list.append(
        h(
          "a",
          { href: `#${encodeURIComponent(v.id)}`, class: "view-link", "data-view-id": v.id },
          h("span", { class: "vname" }, v.name),
          h(
            "span",
            { class: "vmeta" },
            `${widgetCount(v)} widget${widgetCount(v) === 1 ? "" : "s"} · ${formatRange(v.configuration.dateRange)}`,
          ),
        ),
      );
    }
    if (views.length === 0) {
      list.append(
        h(
          "p",
          { class: "muted none" },
          writable
            ? "No dashboards yet. Make one with New dashboard."
            : "No dashboards yet, and this key cannot create one (it needs dashboards:write).",
        ),
      );
    }
  };
  renderList();

  const open = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const view = views.find((v) => v.id === id) ?? (id ? undefined : views[0]);
    for (const a of list.querySelectorAll<HTMLAnchorElement>(".view-link")) {
      a.setAttribute("aria-current", String(a.dataset.viewId === view?.id));
    }
    renderer?.destroy();
    renderer = null;
    panel.close();
    clear(content);
    if (!view) {
      content.append(
        h(
          "div",
          { class: "card empty" },
          id
            ? "This dashboard does not exist (or belongs to another pixel)."
            : "Pick a dashboard on the left.",
        ),
      );
      return;
    }
    renderView(view);
  };

  function renderView(saved: DashboardView) {
    // Changes made here apply at once and are kept only when saved.
    const view: DashboardView = structuredClone(saved);
    const config = view.configuration;
    // A view saved with a currency opens in it; the tab's last choice is for views without one.
    let shown = config.currency ?? currency;
    const range: DateRange = { ...config.dateRange };
    const start = h("input", {
      type: "date",
      id: "range-start",
      value: range.start,
      "aria-label": "Start date",
    });
    const end = h("input", { type: "date", id: "range-end", value: range.end, "aria-label": "End date" });
    const compareSelect = h(
      "select",
      { id: "compare", "aria-label": "Compare period" },
      h("option", { value: "previous_period" }, "Previous period"),
      h("option", { value: "previous_year" }, "Same period last year"),
      h("option", { value: "none" }, "No comparison"),
    );
    compareSelect.value = compare.kind;
    const currencyInput = h("input", {
      id: "currency",
      value: shown,
      maxlength: 3,
      size: 4,
      "aria-label": "Reporting currency",
      title: "ISO 4217 code: money measures are converted to it",
    });
    const subtitle = h("p", { class: "subtitle", id: "view-period" });
    const body = h("div", { class: "view-body", id: "view-body" });
    const head = h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", { id: "view-name" }, view.name), subtitle),
      h(
        "div",
        { class: "controls" },
        h("label", {}, "From", start),
        h("label", {}, "To", end),
        h("label", {}, "Compare", compareSelect),
        h("label", {}, "Currency", currencyInput),
        h("button", { type: "button", id: "refresh", onclick: () => draw() }, "Refresh"),
      ),
    );
    content.append(head);
    if (writable) {
      const edit = viewEditor(editor, saved, () => ({ start: start.value, end: end.value, currency: shown }));
      for (const control of [edit.model, edit.window, edit.halfLife]) {
        control.addEventListener("change", () => {
          const half = halfLifeOf(edit.halfLife.value);
          if (control === edit.halfLife && half === null) return;
          config.attributionModel = edit.model.value;
          config.attributionWindow = Number(edit.window.value);
          if (config.attributionModel === "time_decay" && half !== null)
            config.attributionHalfLifeDays = half;
          draw();
        });
      }
      content.append(edit.settings, edit.actions);
    }
    content.append(body);
    if (config.grid.maxWidth) content.style.maxWidth = `${config.grid.maxWidth}px`;

    const draw = () => {
      const r: DateRange = { start: start.value, end: end.value };
      if (!isDay(r.start) || !isDay(r.end) || r.start > r.end) {
        subtitle.textContent = "Pick a start date on or before the end date.";
        return;
      }
      const cmp = comparePeriod(r, compare.kind);
      subtitle.textContent =
        `${formatRange(r)}${cmp ? ` · compared with ${formatRange(cmp)}` : ""} · by ${config.granularity === "none" ? "total" : config.granularity}` +
        ` · ${attributionText(config.attributionModel, config.attributionWindow, config.attributionHalfLifeDays)}`;
      renderer?.destroy();
      // A listing opened under other settings would no longer match the figures it came from.
      panel.close();
      renderer = new WidgetRenderer({
        creds,
        measures,
        view,
        dateRange: r,
        compareDateRange: cmp,
        currency: shown,
        openOrders: (drill) => panel.open(drill),
      });
      clear(body);
      if (config.widgets.length) body.append(gridOf(config.widgets, null, renderer));
      const sections = [...config.sections].sort((a, b) => a.ordinal - b.ordinal).filter((s) => !s.hidden);
      for (const s of sections) body.append(sectionOf(s, renderer));
      if (!config.widgets.length && !sections.some((s) => s.widgets.length)) {
        body.append(h("div", { class: "card empty" }, "This dashboard has no widgets."));
      }
      renderer.run();
    };
    for (const input of [start, end]) input.addEventListener("change", draw);
    compareSelect.addEventListener("change", () => {
      compare.kind = compareSelect.value as ComparePeriod;
      sessionStorage.setItem(COMPARE_KEY, compare.kind);
      draw();
    });
    currencyInput.addEventListener("change", () => {
      const c = currencyInput.value.trim().toUpperCase();
      if (!/^[A-Z]{3}$/.test(c)) {
        currencyInput.value = shown;
        return;
      }
      shown = c;
      // A choice made here is the tab's choice too (a saved view's currency is not).
      currency = c;
      currencyInput.value = c;
      sessionStorage.setItem(CURRENCY_KEY, c);
      draw();
    });
    draw();
  }

  window.addEventListener("hashchange", open);
  open();
}

function gridOf(widgets: Widget[], section: Section | null, renderer: WidgetRenderer): HTMLElement {
  const grid = h("div", { class: "grid12" });
  for (const w of widgets) grid.append(renderer.card(w, section));
  return grid;
}

function sectionOf(s: Section, renderer: WidgetRenderer): HTMLElement {
  const settings = s.settings;
  const el = h("details", {
    class: `section density-${settings.density} theme-${settings.theme} header-${settings.headerStyle}${s.sectionType === "summary" ? " summary-band" : ""}`,
    "data-section-id": s.id,
    ...(s.collapsed ? {} : { open: true }),
  });
  if (settings.backgroundColor) el.style.backgroundColor = settings.backgroundColor;
  el.append(
    h(
      "summary",
      {},
      h("h2", {}, s.title || "Untitled section"),
      h("span", { class: "muted" }, `${s.widgets.length} widgets`),
    ),
    s.widgets.length
      ? gridOf(s.widgets, s, renderer)
      : h("p", { class: "muted none" }, "No widgets in this section."),
  );
  // A collapsed section queries when it is opened.
  el.addEventListener("toggle", () => {
    if (el.open) renderer.run();
  });
  return el;
}
