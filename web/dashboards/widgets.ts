import { ApiError, type Measure, postJson } from "../shared/api.js";
import { type Chart, type ChartSeries, drawChart } from "../shared/chart.js";
import { clear, h } from "../shared/dom.js";
import { type DateRange, deltaTone, formatDelta, formatValue, shortLabel } from "../shared/format.js";
import type { Credentials } from "../shared/session.js";
import { DEFAULT_HALF_LIFE_DAYS, type Drill, type WidgetQuery } from "./drill.js";

// --- the dashboards API's shapes (docs/dashboards.md) ------------------------------------------------

export interface Layout {
  x: number;
  y: number;
  columns: number;
  rows: number;
}
export type Filter = Record<string, unknown>;
export interface Widget {
  id: string;
  title: string;
  chartType: "bar" | "line" | "area" | "sparkline" | "kpi" | "table" | "pie";
  layout: Layout;
  dataConfig: { measures: string[]; dimensions: string[]; filters: Filter[] };
}
export interface Section {
  id: string;
  title: string;
  ordinal: number;
  collapsed: boolean;
  hidden: boolean;
  widgets: Widget[];
  sectionType: "default" | "summary";
  settings: {
    density: string;
    theme: string;
    backgroundColor: string;
    headerStyle: string;
    filters: Filter;
  };
}
export interface DashboardView {
  id: string;
  name: string;
  order: number;
  configuration: {
    attributionModel: string;
    attributionWindow: number;
    attributionHalfLifeDays?: number;
    granularity: string;
    dateRange: DateRange;
    currency?: string;
    grid: { maxWidth: number };
    widgets: Widget[];
    filters: Filter;
    sections: Section[];
  };
}

// --- the query API's answer (docs/query.md) ----------------------------------------------------------

type Row = Record<string, string | number | null>;
interface Detail {
  measure: string;
  primarySum: number | null;
  compareSum: number | null;
  percentDiff: number | null;
  preferredTrendDirection: string;
}
interface Result {
  dimension?: string;
  dimensionValue?: string;
  dimensionValues?: Record<string, string>;
  data: { primary: Row[]; compare: Row[] };
  measureDetails: Detail[];
}

/** Grid geometry: one row of the 12-column grid is ROW_PX high, cells are GAP_PX apart (dashboards.css). */
const ROW_PX = 72;
const GAP_PX = 12;
const PARALLEL = 4;
const DIMENSION_VALUES = 12;
const ORDERS_MEASURE = "attribution.orders";

const isEmptyFilter = (f: Filter | undefined) =>
  !f || (Array.isArray((f as { and?: unknown[] }).and) && (f as { and: unknown[] }).and.length === 0);

/** The view's filter, the section's and the widget's own: all apply. */
function combineFilters(parts: (Filter | undefined)[]): Filter | undefined {
  const kept = parts.filter((f): f is Filter => !isEmptyFilter(f));
  if (kept.length === 0) return undefined;
  return kept.length === 1 ? kept[0] : { and: kept };
}

interface Pending {
  widget: Widget;
  section: Section | null;
  body: HTMLElement;
  card: HTMLElement;
}

/** Renders widget cards, and fills them with query API answers a few at a time. */
export class WidgetRenderer {
  private pending: Pending[] = [];
  private charts: Chart[] = [];
  private active = 0;
  private destroyed = false;

  constructor(
    private readonly ctx: {
      creds: Credentials;
      measures: Map<string, Measure>;
      view: DashboardView;
      dateRange: DateRange;
      compareDateRange: DateRange | null;
      currency: string;
      /** Opens the orders credited to a row of a table by an attribution dimension. */
      openOrders?: (drill: Drill) => void;
    },
  ) {}

  destroy(): void {
    this.destroyed = true;
    this.pending = [];
    for (const c of this.charts) c.destroy();
    this.charts = [];
  }

  private measure(key: string): Measure {
    return (
      this.ctx.measures.get(key) ?? {
        key,
        title: key,
        shortTitle: key,
        description: "",
        valueType: "number",
        isPercentage: false,
        preferredTrendDirection: "neutral",
      }
    );
  }

  private fmt(key: string, v: number | null | undefined, compact = false): string {
    return formatValue(v, this.measure(key).valueType, this.ctx.currency, { compact });
  }

  /** The card of one widget, placed on the 12-column grid by its stored layout. */
  card(widget: Widget, section: Section | null): HTMLElement {
    const l = widget.layout;
    const title =
      widget.title ||
      widget.dataConfig.measures.map((m) => this.measure(m).shortTitle).join(", ") ||
      "Widget";
    const body = h("div", { class: "wbody" }, h("div", { class: "wloading", "aria-label": "Loading" }));
    const card = h(
      "article",
      {
        class: `widget card kind-${widget.chartType}`,
        "data-widget-id": widget.id,
        "data-chart-type": widget.chartType,
        "data-state": "loading",
      },
      h(
        "header",
        { class: "whead" },
        h(
          "h3",
          { title: widget.dataConfig.measures.map((m) => this.measure(m).description || m).join("\n") },
          title,
        ),
        widget.dataConfig.dimensions.length
          ? h(
              "span",
              { class: "wdim", title: widget.dataConfig.dimensions.join(", ") },
              `by ${widget.dataConfig.dimensions.map(fieldLabel).join(", ").toLowerCase()}`,
            )
          : null,
      ),
      body,
    );
    // Custom properties (set through the CSSOM, which the CSP allows), so narrow screens can stack.
    card.style.setProperty("--grid-column", `${l.x + 1} / span ${l.columns}`);
    card.style.setProperty("--grid-row", `${l.y + 1} / span ${l.rows}`);
    this.pending.push({ widget, section, body, card });
    return card;
  }

  /** Starts the queries of the cards that are visible (a closed section's wait until it opens). */
  run(): void {
    while (this.active < PARALLEL && !this.destroyed) {
      const i = this.pending.findIndex((p) => p.card.isConnected && !p.card.closest("details:not([open])"));
      if (i < 0) return;
      const [p] = this.pending.splice(i, 1);
      this.active++;
      void this.fill(p!).finally(() => {
        this.active--;
        this.run();
      });
    }
  }

  private query(w: Widget, section: Section | null): WidgetQuery & Record<string, unknown> {
    const config = this.ctx.view.configuration;
    const byDimension = w.dataConfig.dimensions.length > 0;
    const series =
      ["sparkline", "line", "area"].includes(w.chartType) || (!byDimension && w.chartType !== "kpi");
    const filters = combineFilters([config.filters, section?.settings.filters, ...w.dataConfig.filters]);
    const granularity =
      w.chartType === "kpi" || (byDimension && !series)
        ? "none"
        : config.granularity === "none"
          ? "day"
          : config.granularity;
    return {
      pixelId: this.ctx.creds.pixelId,
      measures: w.dataConfig.measures,
      dimensions: w.dataConfig.dimensions,
      dateRange: this.ctx.dateRange,
      ...(this.ctx.compareDateRange ? { compareDateRange: this.ctx.compareDateRange } : {}),
      granularity,
      attributionModel: config.attributionModel,
      attributionWindow: config.attributionWindow,
      attributionHalfLifeDays: config.attributionHalfLifeDays ?? DEFAULT_HALF_LIFE_DAYS,
      currency: this.ctx.currency,
      ...(filters ? { filters } : {}),
      ...(byDimension ? { limit: DIMENSION_VALUES } : {}),
    };
  }

  private async fill(p: Pending): Promise<void> {
    const { widget, body, card } = p;
    let answer: { results?: Result[] };
    try {
      answer = await this.post(this.query(widget, p.section));
    } catch (err) {
      if (this.destroyed) return;
      clear(body);
      body.append(
        h("p", { class: "werror", role: "alert" }, err instanceof ApiError ? err.message : String(err)),
      );
      card.dataset.state = "error";
      return;
    }
    if (this.destroyed) return;
    clear(body);
    if (!answer.results) {
      body.append(h("p", { class: "werror" }, "The warehouse could not answer; try Refresh."));
      card.dataset.state = "error";
      return;
    }
    const results = answer.results;
    card.dataset.state = "ready";
    const byDimension = widget.dataConfig.dimensions.length > 0;
    switch (widget.chartType) {
      case "kpi":
        this.kpi(body, results[0], widget);
        break;
      case "sparkline":
        this.sparkline(body, results[0], widget);
        break;
      case "table":
        this.table(body, results, widget, p.section);
        break;
      default:
        if (byDimension) this.dimensionBars(body, results, widget);
        else this.timeChart(body, results[0], widget);
    }
  }

  /** POST /db-mgmt/api/query; a 429 is tried again once after its Retry-After. */
  private async post(body: unknown): Promise<{ results?: Result[] }> {
    try {
      return await postJson(this.ctx.creds, "/db-mgmt/api/query", body);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 429) throw err;
      await new Promise((r) => setTimeout(r, 1000));
      return postJson(this.ctx.creds, "/db-mgmt/api/query", body);
    }
  }

  /**
   * A table by one attribution dimension opens, per row, the orders credited to its value: from the
   * orders figure, or the value itself when the table shows no orders figure. The listing repeats the
   * widget's own query (range, model, window, currency, filters), so its orders are that figure's.
   */
  private drillOf(w: Widget, section: Section | null) {
    const [dimension, ...others] = w.dataConfig.dimensions;
    const open = this.ctx.openOrders;
    if (!open || !dimension?.startsWith("attribution.") || others.length) return null;
    const query = this.query(w, section);
    return {
      dimension,
      ordersCell: w.dataConfig.measures.includes(ORDERS_MEASURE) ? ORDERS_MEASURE : null,
      open: (value: string) => open({ query, dimension, value }),
    };
  }

  private chartHeight(widget: Widget, reserved: number): number {
    const cell = widget.layout.rows * ROW_PX + (widget.layout.rows - 1) * GAP_PX;
    return Math.max(40, cell - reserved);
  }

  private headline(key: string, d: Detail | undefined, big: boolean): HTMLElement {
    const m = this.measure(key);
    const tone = deltaTone(d?.percentDiff, m.preferredTrendDirection);
    return h(
      "div",
      { class: `headline${big ? " big" : ""}`, "data-measure": key },
      h(
        "span",
        { class: "value hvalue", "data-value-type": m.valueType, title: m.title },
        this.fmt(key, d?.primarySum ?? null),
      ),
      this.ctx.compareDateRange
        ? h(
            "span",
            { class: `delta ${tone}`, title: `Compare period: ${this.fmt(key, d?.compareSum ?? null)}` },
            formatDelta(d?.percentDiff),
          )
        : null,
    );
  }

  private kpi(body: HTMLElement, r: Result | undefined, w: Widget) {
    const several = w.dataConfig.measures.length > 1;
    const list = h("div", { class: `kpis${several ? " several" : ""}` });
    for (const key of w.dataConfig.measures) {
      const m = this.measure(key);
      const d = r?.measureDetails.find((x) => x.measure === key);
      list.append(
        h(
          "div",
          { class: "kpi", "data-measure": key },
          several ? h("div", { class: "klabel" }, m.shortTitle) : null,
          h(
            "span",
            { class: "value kvalue", "data-value-type": m.valueType, title: m.title },
            this.fmt(key, d?.primarySum ?? null),
          ),
          this.ctx.compareDateRange
            ? h(
                "div",
                { class: "vs" },
                h(
                  "span",
                  { class: `delta ${deltaTone(d?.percentDiff, m.preferredTrendDirection)}` },
                  formatDelta(d?.percentDiff),
                ),
                h("span", { class: "muted" }, ` vs ${this.fmt(key, d?.compareSum ?? null)}`),
              )
            : null,
        ),
      );
    }
    body.append(list);
  }

  private sparkline(body: HTMLElement, r: Result | undefined, w: Widget) {
    const key = w.dataConfig.measures[0]!;
    const d = r?.measureDetails.find((x) => x.measure === key);
    const box = h("div", { class: "spark" });
    body.append(this.headline(key, d, true), box);
    const rows = r?.data.primary ?? [];
    const compare = r?.data.compare ?? [];
    const series: ChartSeries[] = [
      { label: this.measure(key).shortTitle, values: rows.map((row) => num(row[key])) },
    ];
    if (this.ctx.compareDateRange && compare.length) {
      series.push({ label: "Compare", values: rows.map((_, i) => num(compare[i]?.[key])), compare: true });
    }
    this.charts.push(
      drawChart(box, {
        kind: "sparkline",
        labels: rows.map((row) => String(row.dt ?? "")),
        series,
        height: this.chartHeight(w, 92),
      }),
    );
  }

  private timeChart(body: HTMLElement, r: Result | undefined, w: Widget) {
    const rows = r?.data.primary ?? [];
    const compare = r?.data.compare ?? [];
    const keys = w.dataConfig.measures;
    const first = keys[0]!;
    const kind =
      w.chartType === "bar" || w.chartType === "pie" ? "bar" : w.chartType === "area" ? "area" : "line";
    const totals = h(
      "div",
      { class: "totals" },
      keys.slice(0, 4).map((k) =>
        h(
          "div",
          { class: "total" },
          h("span", { class: "tlabel" }, this.measure(k).shortTitle),
          this.headline(
            k,
            r?.measureDetails.find((x) => x.measure === k),
            false,
          ),
        ),
      ),
    );
    const box = h("div", { class: "wchart" });
    body.append(totals, box);
    const series: ChartSeries[] = keys.map((k) => ({
      label: this.measure(k).shortTitle,
      values: rows.map((row) => num(row[k])),
    }));
    if (this.ctx.compareDateRange && compare.length && kind !== "bar") {
      series.push({
        label: `${this.measure(first).shortTitle} (compare)`,
        values: rows.map((_, i) => num(compare[i]?.[first])),
        compare: true,
      });
    }
    this.charts.push(
      drawChart(box, {
        kind,
        labels: rows.map((row) => String(row.dt ?? "")),
        series,
        format: (v, compact) => this.fmt(first, v, compact),
        integer: this.measure(first).valueType === "count",
        xLabel: "Period",
        height: this.chartHeight(w, 128),
      }),
    );
  }

  private dimensionBars(body: HTMLElement, results: Result[], w: Widget) {
    const keys = w.dataConfig.measures;
    const first = keys[0]!;
    if (results.length === 0) {
      body.append(h("p", { class: "muted none" }, "No data in this period."));
      return;
    }
    const labels = results.map(dimLabel);
    const sum = (r: Result, k: string, which: "primarySum" | "compareSum") =>
      r.measureDetails.find((x) => x.measure === k)?.[which] ?? null;
    const series: ChartSeries[] = keys.map((k) => ({
      label: this.measure(k).shortTitle,
      values: results.map((r) => sum(r, k, "primarySum")),
    }));
    if (this.ctx.compareDateRange && keys.length === 1) {
      series.push({
        label: "Compare period",
        values: results.map((r) => sum(r, first, "compareSum")),
        compare: true,
      });
    }
    const box = h("div", { class: "wchart" });
    body.append(box);
    this.charts.push(
      drawChart(box, {
        kind: "bar",
        labels,
        series,
        format: (v, compact) => this.fmt(first, v, compact),
        integer: this.measure(first).valueType === "count",
        xLabel: w.dataConfig.dimensions.map(fieldLabel).join(" · "),
        height: this.chartHeight(w, 70),
      }),
    );
  }

  private table(body: HTMLElement, results: Result[], w: Widget, section: Section | null) {
    const keys = w.dataConfig.measures;
    const byDimension = w.dataConfig.dimensions.length > 0;
    const drill = this.drillOf(w, section);
    const head = h(
      "tr",
      {},
      h("th", {}, byDimension ? w.dataConfig.dimensions.map(fieldLabel).join(" · ") : "Period"),
      keys.map((k) => h("th", { class: "num" }, this.measure(k).shortTitle)),
      byDimension && this.ctx.compareDateRange ? h("th", { class: "num" }, "Change") : null,
    );
    const rows: HTMLElement[] = [];
    if (byDimension) {
      for (const r of results) {
        const d = (k: string) => r.measureDetails.find((x) => x.measure === k);
        const value = drill ? (r.dimensionValues?.[drill.dimension] ?? r.dimensionValue ?? "") : "";
        const open = (text: string) =>
          h(
            "button",
            {
              type: "button",
              class: "link drill",
              "data-dimension-value": value,
              title: `The orders credited to ${dimLabel(r)}`,
              onclick: () => drill?.open(value),
            },
            text,
          );
        rows.push(
          h(
            "tr",
            {},
            h("td", {}, drill && !drill.ordersCell ? open(dimLabel(r)) : dimLabel(r)),
            keys.map((k) =>
              h(
                "td",
                { class: "num value", "data-value-type": this.measure(k).valueType, "data-measure": k },
                drill?.ordersCell === k ? open(this.fmt(k, d(k)?.primarySum)) : this.fmt(k, d(k)?.primarySum),
              ),
            ),
            this.ctx.compareDateRange
              ? h(
                  "td",
                  {
                    class: `num delta ${deltaTone(d(keys[0]!)?.percentDiff, this.measure(keys[0]!).preferredTrendDirection)}`,
                  },
                  formatDelta(d(keys[0]!)?.percentDiff),
                )
              : null,
          ),
        );
      }
    } else {
      for (const row of results[0]?.data.primary ?? []) {
        rows.push(
          h(
            "tr",
            {},
            h("td", {}, shortLabel(String(row.dt ?? ""))),
            keys.map((k) =>
              h(
                "td",
                { class: "num value", "data-value-type": this.measure(k).valueType },
                this.fmt(k, num(row[k])),
              ),
            ),
          ),
        );
      }
    }
    body.append(
      h(
        "div",
        { class: "wtable" },
        h("table", {}, h("thead", {}, head), h("tbody", {}, rows)),
        rows.length ? null : h("p", { class: "muted none" }, "No data in this period."),
      ),
    );
  }
}

function num(v: unknown): number | null {
  if (v === null || v === undefined || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function dimLabel(r: Result): string {
  if (r.dimensionValues)
    return Object.values(r.dimensionValues)
      .map((v) => v || "(none)")
      .join(" · ");
  return r.dimensionValue || "(none)";
}

/** `orders.country` → `Country`, `attribution.utm_source` → `Utm source`. */
function fieldLabel(field: string): string {
  const name = field.slice(field.lastIndexOf(".") + 1).replace(/_/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
}
