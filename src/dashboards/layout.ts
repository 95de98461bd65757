/**
 * The dashboard grid (docs/dashboards.md): 12 columns wide, rows of unbounded count. Positions and
 * sizes are integers in grid cells; `x` counts columns from the left, `y` rows from the top.
 */
export const GRID_COLUMNS = 12;
/** Tallest a widget may be, in rows; keeps a stored layout renderable. */
export const MAX_ROWS = 100;
/** Lowest row a widget may start on (100 rows of 100 widgets stacked is far past any real view). */
export const MAX_Y = 10_000;

export interface WidgetLayout {
  x: number;
  y: number;
  rows: number;
  columns: number;
  minColumns: number;
  maxColumns: number;
  minRows: number;
  maxRows: number;
  static: boolean;
}

export type WidgetSize = Pick<
  WidgetLayout,
  "columns" | "rows" | "minColumns" | "maxColumns" | "minRows" | "maxRows"
>;

/**
 * Size of a preset sparkline widget: a quarter of the grid wide, so four sit side by side, and two
 * rows tall (a headline number over its trend line). It may be resized between half and double width.
 */
export const SPARKLINE_SIZE: WidgetSize = {
  columns: 3,
  rows: 2,
  minColumns: 2,
  maxColumns: 6,
  minRows: 2,
  maxRows: 4,
};

/**
 * Lays widgets out in reading order: left to right from the top-left cell, starting a new row when
 * the next widget would cross the right edge. A row is as tall as its tallest widget, so widgets of
 * different heights never overlap. A widget wider than the grid is narrowed to the grid's width.
 */
export function flowLayout(sizes: readonly WidgetSize[], columns = GRID_COLUMNS): WidgetLayout[] {
  const out: WidgetLayout[] = [];
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const size of sizes) {
    const width = Math.min(size.columns, columns);
    if (x + width > columns) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    out.push({
      x,
      y,
      rows: size.rows,
      columns: width,
      minColumns: Math.min(size.minColumns, width),
      maxColumns: Math.min(Math.max(size.maxColumns, width), columns),
      minRows: Math.min(size.minRows, size.rows),
      maxRows: Math.max(size.maxRows, size.rows),
      static: false,
    });
    x += width;
    rowHeight = Math.max(rowHeight, size.rows);
  }
  return out;
}

/** Preset sparklines: `count` widgets of SPARKLINE_SIZE, four to a row. */
export const sparklineLayout = (count: number): WidgetLayout[] =>
  flowLayout(Array.from({ length: count }, () => SPARKLINE_SIZE));
