import { deleteResource, type Measure, patchJson, postJson } from "../shared/api.js";
import { h } from "../shared/dom.js";
import type { Credentials } from "../shared/session.js";
import { DEFAULT_HALF_LIFE_DAYS, halfLifeOf, MODELS } from "./drill.js";
import type { DashboardView, Widget } from "./widgets.js";

/*
 * Editing dashboard views through the dashboard endpoints (docs/dashboards.md): create from a preset,
 * rename, copy, delete, reorder, save the range / model (and time decay's half-life) / window /
 * currency, add a table widget.
 * Shown only to a key with dashboards:write; the page itself stays the same for a read-only key.
 */

export const VIEWS = "/accounts/api/dashboard/views";

/** What the page gives the editor: the key, the measures catalog, and how to show a changed list. */
export interface EditorContext {
  creds: Credentials;
  measures: Map<string, Measure>;
  /** The views in list order (the page's copy; the editor replaces entries it changes). */
  views: DashboardView[];
  /** Redraws the list and opens `openId` (or keeps the open view). */
  refresh(openId?: string): void;
  /** Shows an API error where the user acted. */
  fail(err: unknown): void;
}

const WINDOWS = [1, 7, 14, 30, 60, 90, -1] as const;
/** Dimensions a table widget can be split by: the ones people ask of attribution and orders. */
export const TABLE_DIMENSIONS = [
  ["attribution.channel", "Channel"],
  ["attribution.source", "Source"],
  ["attribution.campaign", "Campaign"],
  ["orders.country", "Country"],
] as const;

/** Checkboxes of every measure, grouped by the first part of its key. */
function measurePicker(
  measures: Map<string, Measure>,
  idPrefix: string,
  checked: string[] = [],
): HTMLElement {
  const box = h("fieldset", { class: "measure-picker" }, h("legend", {}, "Measures"));
  for (const m of measures.values()) {
    box.append(
      h(
        "label",
        { class: "check" },
        h("input", {
          type: "checkbox",
          name: `${idPrefix}-measure`,
          value: m.key,
          ...(checked.includes(m.key) ? { checked: true } : {}),
        }),
        ` ${m.title}`,
      ),
    );
  }
  return box;
}

const checkedMeasures = (form: HTMLElement, idPrefix: string) =>
  [...form.querySelectorAll<HTMLInputElement>(`input[name="${idPrefix}-measure"]:checked`)].map(
    (i) => i.value,
  );

/** The "New dashboard" button of the list and its form: a name and the measures to chart. */
export function newViewControl(ctx: EditorContext): HTMLElement {
  const wrap = h("div", { class: "new-view" });
  const open = h("button", { type: "button", id: "new-view", class: "primary" }, "New dashboard");
  const form = h("form", { class: "card editor-form", id: "new-view-form", hidden: true });
  const name = h("input", {
    id: "new-view-name",
    required: true,
    maxlength: 200,
    "aria-label": "Dashboard name",
  });
  const status = h("p", { class: "form-status", role: "status" });
  form.append(
    h("label", {}, "Name ", name),
    measurePicker(ctx.measures, "new-view"),
    h(
      "div",
      { class: "form-buttons" },
      h("button", { type: "submit" }, "Create"),
      h("button", { type: "button", onclick: () => (form.hidden = true) }, "Cancel"),
    ),
    status,
  );
  open.addEventListener("click", () => {
    form.hidden = !form.hidden;
    if (!form.hidden) name.focus();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const measures = checkedMeasures(form, "new-view");
    if (measures.length === 0) {
      status.textContent = "Pick at least one measure.";
      return;
    }
    try {
      const { dashboardView } = await postJson<{ dashboardView: DashboardView }>(
        ctx.creds,
        `${VIEWS}/from-preset`,
        {
          name: name.value.trim(),
          widgets: measures.map((measure) => ({ measure })),
        },
      );
      ctx.views.push(dashboardView);
      form.hidden = true;
      form.reset();
      ctx.refresh(dashboardView.id);
    } catch (err) {
      status.textContent = (err as Error).message;
    }
  });
  wrap.append(open, form);
  return wrap;
}

/** Orders the views as listed, then writes `order` for every view whose position changed. */
async function saveOrder(ctx: EditorContext, views: DashboardView[]): Promise<void> {
  for (let i = 0; i < views.length; i++) {
    const v = views[i]!;
    const order = (i + 1) * 10;
    if (v.order === order) continue;
    const { dashboardView } = await patchJson<{ dashboardView: DashboardView }>(
      ctx.creds,
      `${VIEWS}/${encodeURIComponent(v.id)}`,
      { order },
    );
    views[i] = dashboardView;
  }
  ctx.views.splice(0, ctx.views.length, ...views);
}

/** The open view's editing controls: settings to save, rename, copy, move, delete, add a table. */
export function viewEditor(
  ctx: EditorContext,
  view: DashboardView,
  current: () => { start: string; end: string; currency: string },
): {
  settings: HTMLElement;
  actions: HTMLElement;
  model: HTMLSelectElement;
  window: HTMLSelectElement;
  halfLife: HTMLInputElement;
} {
  const replace = (updated: DashboardView) => {
    const i = ctx.views.findIndex((v) => v.id === updated.id);
    if (i >= 0) ctx.views[i] = updated;
  };
  const patch = async (body: unknown) => {
    const { dashboardView } = await patchJson<{ dashboardView: DashboardView }>(
      ctx.creds,
      `${VIEWS}/${encodeURIComponent(view.id)}`,
      body,
    );
    replace(dashboardView);
    return dashboardView;
  };
  const guarded = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      ctx.fail(err);
    }
  };

  const model = h("select", { id: "view-model", "aria-label": "Attribution model" });
  for (const [v, label] of MODELS) model.append(h("option", { value: v }, label));
  model.value = view.configuration.attributionModel;
  const halfLife = h("input", {
    id: "view-half-life",
    type: "number",
    min: 1,
    max: 90,
    step: "any",
    size: 4,
    value: String(view.configuration.attributionHalfLifeDays ?? DEFAULT_HALF_LIFE_DAYS),
    "aria-label": "Half-life in days",
    title: "time decay: a touch this many days before the order counts half as much as one at the order",
  });
  const halfLifeLabel = h("label", { id: "view-half-life-label" }, "Half-life (days)", halfLife);
  const showHalfLife = () => {
    halfLifeLabel.hidden = model.value !== "time_decay";
  };
  model.addEventListener("change", showHalfLife);
  showHalfLife();
  const window = h("select", { id: "view-window", "aria-label": "Attribution window" });
  for (const w of WINDOWS)
    window.append(h("option", { value: String(w) }, w === -1 ? "Unlimited" : `${w} days`));
  window.value = String(view.configuration.attributionWindow);

  const save = h(
    "button",
    {
      type: "button",
      id: "save-view",
      onclick: guarded(async () => {
        const c = current();
        const half = halfLifeOf(halfLife.value);
        const updated = await patch({
          configuration: {
            ...view.configuration,
            dateRange: { start: c.start, end: c.end },
            attributionModel: model.value,
            attributionWindow: Number(window.value),
            // Kept under the other models too, so switching back to time decay finds it.
            ...(model.value === "time_decay" && half !== null ? { attributionHalfLifeDays: half } : {}),
            currency: c.currency,
          },
        });
        ctx.refresh(updated.id);
      }),
    },
    "Save view",
  );
  const settings = h(
    "div",
    { class: "controls edit-controls" },
    h("label", {}, "Model", model),
    halfLifeLabel,
    h("label", {}, "Window", window),
    save,
  );

  // Rename: the name becomes an input until saved.
  const renameForm = h("form", { class: "inline-form", id: "rename-form", hidden: true });
  const nameInput = h("input", {
    id: "rename-input",
    value: view.name,
    maxlength: 200,
    required: true,
    "aria-label": "New name",
  });
  renameForm.append(nameInput, h("button", { type: "submit" }, "Save name"));
  renameForm.addEventListener("submit", (e) => {
    e.preventDefault();
    void guarded(async () => {
      const updated = await patch({ name: nameInput.value.trim() });
      ctx.refresh(updated.id);
    })();
  });

  const index = () => ctx.views.findIndex((v) => v.id === view.id);
  const move = (by: -1 | 1) =>
    guarded(async () => {
      const list = [...ctx.views];
      const i = index();
      const j = i + by;
      if (i < 0 || j < 0 || j >= list.length) return;
      [list[i], list[j]] = [list[j]!, list[i]!];
      await saveOrder(ctx, list);
      ctx.refresh(view.id);
    });

  const del = h("button", { type: "button", id: "delete-view", class: "danger" }, "Delete");
  del.addEventListener(
    "click",
    guarded(async () => {
      // Two steps, no browser dialog: the first click asks, the second deletes.
      if (del.dataset.confirm !== "1") {
        del.dataset.confirm = "1";
        del.textContent = "Confirm delete";
        return;
      }
      await deleteResource(ctx.creds, `${VIEWS}/${encodeURIComponent(view.id)}`);
      ctx.views.splice(index(), 1);
      location.hash = "";
      ctx.refresh();
    }),
  );

  const tableForm = tableWidgetForm(ctx, view, patch);
  const actions = h(
    "div",
    { class: "view-actions", role: "toolbar", "aria-label": "Edit this dashboard" },
    h(
      "button",
      {
        type: "button",
        id: "rename-view",
        onclick: () => {
          renameForm.hidden = !renameForm.hidden;
          if (!renameForm.hidden) nameInput.focus();
        },
      },
      "Rename",
    ),
    h(
      "button",
      {
        type: "button",
        id: "copy-view",
        onclick: guarded(async () => {
          const { dashboardView } = await postJson<{ dashboardView: DashboardView }>(
            ctx.creds,
            `${VIEWS}/${encodeURIComponent(view.id)}/copy`,
            {},
          );
          ctx.views.push(dashboardView);
          ctx.refresh(dashboardView.id);
        }),
      },
      "Copy",
    ),
    h(
      "button",
      { type: "button", id: "move-up", onclick: move(-1), "aria-label": "Move up in the list" },
      "Move up",
    ),
    h(
      "button",
      { type: "button", id: "move-down", onclick: move(1), "aria-label": "Move down in the list" },
      "Move down",
    ),
    h(
      "button",
      { type: "button", id: "add-table", onclick: () => (tableForm.hidden = !tableForm.hidden) },
      "Add table",
    ),
    del,
    renameForm,
    tableForm,
  );
  return { settings, actions, model, window, halfLife };
}

/** A table widget: one dimension, the measures picked, a full-width row under the other widgets. */
function tableWidgetForm(
  ctx: EditorContext,
  view: DashboardView,
  patch: (body: unknown) => Promise<DashboardView>,
): HTMLFormElement {
  const form = h("form", { class: "card editor-form", id: "table-form", hidden: true });
  const title = h("input", {
    id: "table-title",
    maxlength: 200,
    "aria-label": "Table title",
    placeholder: "Title",
  });
  const dimension = h("select", { id: "table-dimension", "aria-label": "Table dimension" });
  for (const [key, label] of TABLE_DIMENSIONS) dimension.append(h("option", { value: key }, label));
  const status = h("p", { class: "form-status", role: "status" });
  form.append(
    h("label", {}, "Title ", title),
    h("label", {}, "Rows by ", dimension),
    measurePicker(ctx.measures, "table"),
    h("button", { type: "submit" }, "Add the table"),
    status,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const measures = checkedMeasures(form, "table");
    if (measures.length === 0) {
      status.textContent = "Pick at least one measure.";
      return;
    }
    const c = view.configuration;
    const bottom = c.widgets.reduce((y, w) => Math.max(y, w.layout.y + w.layout.rows), 0);
    const label = TABLE_DIMENSIONS.find(([k]) => k === dimension.value)?.[1] ?? dimension.value;
    const widget: Widget = {
      id: `table-${Date.now().toString(36)}`,
      title: title.value.trim() || `By ${label.toLowerCase()}`,
      chartType: "table",
      layout: { x: 0, y: bottom, columns: 12, rows: 4 },
      dataConfig: { measures, dimensions: [dimension.value], filters: [] },
    };
    try {
      const updated = await patch({ configuration: { ...c, widgets: [...c.widgets, widget] } });
      ctx.refresh(updated.id);
    } catch (err) {
      status.textContent = (err as Error).message;
    }
  });
  return form;
}
