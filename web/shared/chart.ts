import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { shortLabel } from "./format.js";

/**
 * uPlot charts of labelled points: x is the point's position (0..n-1) and the axis shows its label,
 * so dates, hours and text categories all chart the same way, evenly spaced.
 */

export const PALETTE = ["#4f46e5", "#0891b2", "#d97706", "#db2777", "#16a34a", "#7c3aed", "#dc2626"];
export const COMPARE_COLOR = "#94a3b8";

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color?: string;
  /** A compare period: grey (dashed when a line), not counted in data-points. */
  compare?: boolean;
}

export interface ChartSpec {
  kind: "line" | "area" | "bar" | "sparkline";
  labels: string[];
  /** What the x labels are (the legend's first entry). */
  xLabel?: string;
  series: ChartSeries[];
  /** Formats y values: axis ticks (compact) and the legend. */
  format?: (v: number, compact: boolean) => string;
  /** Whole-number y ticks only (counts). */
  integer?: boolean;
  /**
   * Series whose values are an order of magnitude apart from the first one's get a second y axis on
   * the right (orders next to revenue); for charts whose series share no unit.
   */
  secondAxis?: boolean;
  height?: number;
}

export interface Chart {
  destroy(): void;
}

const plain = (v: number, compact: boolean) =>
  new Intl.NumberFormat("en-US", compact ? { notation: "compact", maximumFractionDigits: 1 } : {}).format(v);

function alpha(hex: string, a: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

/** 1, 2, 5, 10, 20, 50… (whole-number tick steps). */
const INTEGER_STEPS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

const maxAbs = (values: (number | null)[]) =>
  values.reduce<number>((m, v) => (v === null ? m : Math.max(m, Math.abs(v))), 0);

/** Draws the chart into `el` (emptied first) at the element's width, following its resizes. */
export function drawChart(el: HTMLElement, spec: ChartSpec): Chart {
  el.replaceChildren();
  const n = spec.labels.length;
  const format = spec.format ?? plain;
  const spark = spec.kind === "sparkline";
  const bar = spec.kind === "bar";
  const shown = spec.series.filter((s) => !s.compare);
  el.dataset.points = String(shown.reduce((k, s) => k + s.values.filter((v) => v !== null).length, 0));
  el.dataset.series = String(shown.length);
  el.classList.add("chart");

  // The right axis: series ≥ 10× apart from the first (only when asked, never for sparklines).
  const firstMax = maxAbs(spec.series[0]?.values ?? []);
  const onRight = spec.series.map((s, k) => {
    if (!spec.secondAxis || spark || k === 0) return false;
    const m = maxAbs(s.values);
    return firstMax > 0 && m > 0 && (m / firstMax >= 10 || firstMax / m >= 10);
  });
  const dual = onRight.some(Boolean);

  const xs = spec.labels.map((_, i) => i);
  const slot = 0.8 / Math.max(spec.series.length, 1);
  const series: uPlot.Series[] = [
    {
      label: spec.xLabel ?? "",
      value: (_u, v) => (v === null || v === undefined ? "" : (spec.labels[v] ?? "")),
    },
    ...spec.series.map((s, k): uPlot.Series => {
      const color = s.compare ? COMPARE_COLOR : (s.color ?? PALETTE[k % PALETTE.length]!);
      const base: uPlot.Series = {
        label: onRight[k] ? `${s.label} (right)` : s.label,
        scale: onRight[k] ? "y2" : "y",
        stroke: color,
        width: spark ? 1.5 : 2,
        value: (_u, v) =>
          v === null || v === undefined ? "—" : onRight[k] ? plain(v, false) : format(v, false),
        points: { show: !spark && n <= 40, size: 5 },
        spanGaps: false,
      };
      if (bar) {
        return {
          ...base,
          fill: alpha(color, 0.85),
          width: 0,
          points: { show: false },
          paths: uPlot.paths.bars!({
            size: [1, Number.POSITIVE_INFINITY],
            disp: {
              x0: {
                unit: 1 as uPlot.Series.BarsPathBuilderFacetUnit,
                values: () => xs.map((x) => x - 0.4 + k * slot),
              },
              size: {
                unit: 1 as uPlot.Series.BarsPathBuilderFacetUnit,
                values: () => xs.map(() => slot * 0.9),
              },
            },
          }),
        };
      }
      if (s.compare) return { ...base, dash: [4, 4], width: 1.5, points: { show: false } };
      if (spark || spec.kind === "area") return { ...base, fill: alpha(color, spark ? 0.12 : 0.18) };
      return base;
    }),
  ];
  const height = spec.height ?? (spark ? 56 : 300);
  const yRange = (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => {
    const lo = Math.min(0, min ?? 0);
    const hi = Math.max(max ?? 0, lo + (spec.integer ? 1 : 1e-9));
    return spark ? [lo, hi + (hi - lo) * 0.1] : uPlot.rangeNum(lo, hi, 0.1, true);
  };
  const yAxis = (scale: string, side: 1 | 3, fmt: (v: number, compact: boolean) => string): uPlot.Axis => ({
    scale,
    side,
    stroke: "#64748b",
    grid: { show: side === 3, stroke: "#eef2f7" },
    ticks: { show: false },
    ...(spec.integer || scale === "y2" ? { incrs: INTEGER_STEPS } : {}),
    values: (_u, splits) => splits.map((v) => fmt(v, true)),
    size: (_u, values) => (values ? Math.max(...values.map((v) => String(v).length)) * 7 + 18 : 48),
  });
  const opts: uPlot.Options = {
    width: Math.max(el.clientWidth, 120),
    height,
    series,
    legend: { show: !spark, live: !spark },
    cursor: spark ? { show: false } : { drag: { x: false, y: false } },
    padding: spark ? [4, 2, 2, 2] : [12, dual ? 4 : 12, 0, 4],
    scales: {
      x: {
        time: false,
        range: (): uPlot.Range.MinMax => (bar || n < 2 ? [-0.5, Math.max(n - 0.5, 0.5)] : [0, n - 1]),
      },
      y: { range: yRange },
      ...(dual ? { y2: { range: yRange } } : {}),
    },
    axes: spark
      ? [{ show: false }, { show: false }]
      : [
          {
            stroke: "#64748b",
            grid: { show: false },
            ticks: { stroke: "#e2e8f0" },
            splits: (u) => {
              const room = Math.max(1, Math.floor(u.bbox.width / devicePixelRatio / 72));
              const step = Math.max(1, Math.ceil(n / room));
              return xs.filter((i) => i % step === 0);
            },
            values: (_u, splits) => splits.map((i) => shortLabel(spec.labels[i] ?? "")),
          },
          yAxis("y", 3, format),
          ...(dual ? [yAxis("y2", 1, plain)] : []),
        ],
  };
  const data: uPlot.AlignedData = [xs, ...spec.series.map((s) => s.values)];
  const plot = new uPlot(opts, data, el);
  const resize = new ResizeObserver(() => {
    const width = Math.max(el.clientWidth, 120);
    if (width !== plot.width) plot.setSize({ width, height });
  });
  resize.observe(el);
  return {
    destroy() {
      resize.disconnect();
      plot.destroy();
    },
  };
}
