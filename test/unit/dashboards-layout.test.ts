/**
 * The dashboard grid layout (src/dashboards/layout.ts): the preset's sparklines four to a row, and
 * the flow rule for any sizes — reading order, wrapping at the 12-column edge, and no two widgets on
 * one cell, checked cell by cell against a brute-force occupancy map.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  flowLayout,
  GRID_COLUMNS,
  SPARKLINE_SIZE,
  sparklineLayout,
  type WidgetLayout,
  type WidgetSize,
} from "../../src/dashboards/layout.js";
import { copyName } from "../../src/dashboards/service.js";

/** The first pair of widgets sharing a grid cell, or null. */
function firstOverlap(layouts: readonly WidgetLayout[]): [number, number] | null {
  const owner = new Map<string, number>();
  for (const [i, l] of layouts.entries()) {
    for (let c = l.x; c < l.x + l.columns; c++)
      for (let r = l.y; r < l.y + l.rows; r++) {
        const key = `${c},${r}`;
        const other = owner.get(key);
        if (other !== undefined) return [other, i];
        owner.set(key, i);
      }
  }
  return null;
}

const sizeArb: fc.Arbitrary<WidgetSize> = fc.record({
  columns: fc.integer({ min: 1, max: 16 }),
  rows: fc.integer({ min: 1, max: 6 }),
  minColumns: fc.integer({ min: 1, max: 12 }),
  maxColumns: fc.integer({ min: 1, max: 12 }),
  minRows: fc.integer({ min: 1, max: 6 }),
  maxRows: fc.integer({ min: 1, max: 6 }),
});

describe("sparklineLayout (from-preset)", () => {
  it("places four 3×2 sparklines per row, left to right, then wraps", () => {
    expect(sparklineLayout(6).map((l) => [l.x, l.y, l.columns, l.rows])).toStrictEqual([
      [0, 0, 3, 2],
      [3, 0, 3, 2],
      [6, 0, 3, 2],
      [9, 0, 3, 2],
      [0, 2, 3, 2],
      [3, 2, 3, 2],
    ]);
    expect(sparklineLayout(1)[0]).toStrictEqual({
      x: 0,
      y: 0,
      ...SPARKLINE_SIZE,
      static: false,
    });
    expect(sparklineLayout(0)).toStrictEqual([]);
  });

  it.each([1, 3, 4, 5, 8, 13, 100])("lays %i sparklines out without overlap inside the grid", (n) => {
    const layouts = sparklineLayout(n);
    expect(layouts).toHaveLength(n);
    expect(firstOverlap(layouts)).toBeNull();
    for (const [i, l] of layouts.entries()) {
      expect(l.x + l.columns).toBeLessThanOrEqual(GRID_COLUMNS);
      expect(l).toMatchObject({ x: (i % 4) * 3, y: Math.floor(i / 4) * 2 });
    }
  });

  it("is as tall as its rows of four: two grid rows per started row", () => {
    for (const n of [1, 4, 5, 10, 12, 13]) {
      const height = Math.max(...sparklineLayout(n).map((l) => l.y + l.rows));
      expect(height).toBe(Math.ceil(n / 4) * 2);
    }
  });
});

describe("flowLayout", () => {
  it("starts a new row below the tallest widget of the row when the next one would cross the edge", () => {
    const size = (columns: number, rows: number): WidgetSize => ({
      columns,
      rows,
      minColumns: 1,
      maxColumns: 12,
      minRows: 1,
      maxRows: 10,
    });
    const layouts = flowLayout([size(5, 2), size(5, 4), size(3, 1), size(12, 1), size(20, 2)]);
    expect(layouts.map((l) => [l.x, l.y, l.columns])).toStrictEqual([
      [0, 0, 5],
      [5, 0, 5],
      [0, 4, 3],
      [0, 5, 12],
      [0, 6, 12],
    ]);
  });

  it("never overlaps, stays inside the grid, keeps reading order, and keeps each layout's bounds consistent", () => {
    fc.assert(
      fc.property(fc.array(sizeArb, { maxLength: 60 }), (sizes) => {
        const layouts = flowLayout(sizes);
        expect(layouts).toHaveLength(sizes.length);
        expect(firstOverlap(layouts)).toBeNull();
        for (const [i, l] of layouts.entries()) {
          expect(l.x).toBeGreaterThanOrEqual(0);
          expect(l.x + l.columns).toBeLessThanOrEqual(GRID_COLUMNS);
          expect(l.minColumns).toBeLessThanOrEqual(l.columns);
          expect(l.columns).toBeLessThanOrEqual(l.maxColumns);
          expect(l.maxColumns).toBeLessThanOrEqual(GRID_COLUMNS);
          expect(l.minRows).toBeLessThanOrEqual(l.rows);
          expect(l.rows).toBeLessThanOrEqual(l.maxRows);
          const prev = layouts[i - 1];
          if (!prev) {
            expect([l.x, l.y]).toStrictEqual([0, 0]);
            continue;
          }
          // Either right beside the previous widget on its row, or at the left edge of a lower row
          // because it would not have fit beside it.
          if (l.y === prev.y) expect(l.x).toBe(prev.x + prev.columns);
          else {
            expect(l.x).toBe(0);
            expect(l.y).toBeGreaterThan(prev.y);
            expect(prev.x + prev.columns + l.columns).toBeGreaterThan(GRID_COLUMNS);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("copyName", () => {
  it('appends " (copy)" and shortens by whole code points to stay within 200 characters', () => {
    expect(copyName("Weekly")).toBe("Weekly (copy)");
    expect(copyName("a".repeat(193))).toBe(`${"a".repeat(193)} (copy)`);
    expect(copyName("a".repeat(200))).toBe(`${"a".repeat(193)} (copy)`);
    // The emoji would straddle the cut: it goes whole rather than leave a lone surrogate.
    const cut = copyName(`${"a".repeat(192)}😀b`);
    expect(cut).toBe(`${"a".repeat(192)} (copy)`);
    expect(cut.isWellFormed()).toBe(true);
    // Trailing space left by the cut is dropped, so the suffix is not doubled-spaced.
    expect(copyName(`${"a".repeat(192)} bbbbbbbb`)).toBe(`${"a".repeat(192)} (copy)`);
  });
});
