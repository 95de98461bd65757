import { type Chart, drawChart } from "../shared/chart.js";
import { clear, h } from "../shared/dom.js";
import { chartData } from "./chart-data.js";
import type { SqlResult } from "./query.js";

export interface ChartPanel {
  element: HTMLElement;
  /** The result to chart, or null when there is none (a failed run). */
  setResult(result: SqlResult | null): void;
  /** The Chart tab opened or left: the chart is drawn only while it can be seen. */
  setVisible(visible: boolean): void;
}

/** The chart of a result (uPlot), as lines or bars, with a note saying what is drawn against what. */
export function createChartPanel(): ChartPanel {
  let result: SqlResult | null = null;
  let visible = false;
  let kind: "line" | "bar" = "line";
  let chart: Chart | null = null;

  const box = h("div", { class: "chart-box", id: "chart" });
  const note = h("span", { class: "muted", id: "chart-note" });
  const kindButtons = (["line", "bar"] as const).map((k) =>
    h(
      "button",
      {
        type: "button",
        class: "seg",
        id: `chart-${k}`,
        onclick: () => {
          kind = k;
          draw();
        },
      },
      k === "line" ? "Line" : "Bar",
    ),
  );
  const element = h(
    "div",
    { class: "chart-view", id: "chart-view" },
    h("div", { class: "chart-controls" }, h("div", { class: "segmented" }, kindButtons), note),
    box,
  );
  element.hidden = true;

  const destroy = () => {
    chart?.destroy();
    chart = null;
  };

  function draw() {
    for (const b of kindButtons) b.setAttribute("aria-pressed", String(b.id === `chart-${kind}`));
    destroy();
    clear(box);
    const data = result && chartData(result);
    if (!data) return;
    if ("empty" in data) {
      note.textContent = "";
      box.append(h("p", { class: "muted none" }, data.empty));
      return;
    }
    note.textContent = data.note;
    chart = drawChart(box, {
      kind,
      labels: data.labels,
      xLabel: data.xLabel,
      integer: data.integer,
      secondAxis: true,
      series: data.series,
      height: 340,
    });
  }

  return {
    element,
    setResult(r) {
      result = r;
      // A hidden chart is not kept up to date: it is drawn afresh when its tab opens.
      if (r && visible) draw();
      else destroy();
    },
    setVisible(v) {
      visible = v;
      element.hidden = !v;
      if (v) draw();
    },
  };
}
