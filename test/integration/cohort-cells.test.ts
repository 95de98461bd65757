/**
 * The cohort cells' builds (docs/derived-tables.md, "cohort_cells") over a real warehouse: what a
 * build writes, when the worker builds again, which slot it writes, and that a failed build is not the
 * other derived tables' failure. Whether queries answer from them exactly as from raw orders is
 * test/e2e/derived-tables.test.ts's.
 *
 * Worked example (UTC, month cohorts, USD): customer a orders 10.00 on 01-10 and 5.00 on 01-20, then
 * 7.50 on 02-03; customer b orders 20.00 on 02-14. Cells: cohort January — period 0: 1 retained, 2
 * orders, 15.00; period 1: 1 retained, 1 order, 7.50; cohort February — period 0: 1, 1, 20.00. A late
 * order of b on 01-31 (4.00) moves b to the January cohort: the next build has January period 0 at 2
 * retained, 3 orders, 19.00 and January period 1 at 2 retained, 2 orders, 27.50, and no February cohort.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WATERMARK } from "../../src/derived/conversion-touches.js";
import { DerivedWorker } from "../../src/derived/worker.js";
import { migrate } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { type Opened, openChdb, openPglite } from "../helpers/stores.js";

let wh: Opened<WarehouseStore>;
let sql: Opened<SqlStore>;
beforeAll(async () => {
  wh = await openChdb();
  sql = await openPglite();
  await migrate(sql.store, wh.store);
});
afterAll(async () => {
  await wh?.close();
  await sql?.close();
});

const worker = (
  options: {
    marginMs?: number;
    fail?: boolean | (() => boolean);
    interval?: number;
    masks?: number[];
    sliceOrders?: number;
  } = {},
) =>
  new DerivedWorker(wh.store, {
    marginMs: options.marginMs ?? 0,
    cohortIntervalMs: options.interval ?? 0,
    ...(options.sliceOrders ? { customerSliceOrders: options.sliceOrders } : {}),
    exclusive: (key, fn) => sql.store.exclusive(key, fn),
    cohortTarget: async () => {
      if (typeof options.fail === "function" ? options.fail() : options.fail)
        throw new Error("account store down");
      return { timezones: ["UTC"], masks: options.masks ?? [1] };
    },
  });

const order = (pixel: string, id: string, customer: string, day: string, price: number, version = 1) => ({
  pixel_id: pixel,
  order_id: id,
  created_at: `2026-${day} 12:00:00.000`,
  currency: "USD",
  total_price: price,
  financial_status: "paid",
  customer_id: customer,
  version,
});

/** The worked example's first four orders: customer a's three, customer b's one. */
const workedExample = (pixel: string) => [
  order(pixel, "a1", "a", "01-10", 10),
  order(pixel, "a2", "a", "01-20", 5),
  order(pixel, "a3", "a", "02-03", 7.5),
  order(pixel, "b1", "b", "02-14", 20),
];

interface Build {
  slot: number;
  built_version: string;
  cutoff: string;
  fresh_after: string;
}
/** The pixel's current build (the table keeps the latest per pixel), undefined before any. */
const latest = async (pixel: string): Promise<Build | undefined> =>
  (
    await wh.store.query<Build>(
      `SELECT slot, toString(built_version) AS built_version, toString(cutoff) AS cutoff,
         toString(fresh_after) AS fresh_after
       FROM cohort_builds FINAL WHERE pixel_id = {p:String}`,
      { p: pixel },
    )
  )[0];

/** The month cells of a slot in UTC for the default counting: `cohort/period` → [retained, orders, revenue]. */
async function cells(pixel: string, slot: number): Promise<Record<string, [number, number, number]>> {
  const rows = await wh.store.query<{ cohort: string; period: number; r: number; o: number; v: number }>(
    `SELECT toString(cohort) AS cohort, period, sum(retained) AS r, sum(orders) AS o, toFloat64(sum(revenue)) AS v
     FROM cohort_cells FINAL
     WHERE pixel_id = {p:String} AND slot = {s:UInt8} AND timezone = 'UTC' AND granularity = 'month' AND mask = 1
       AND orders != 0
     GROUP BY cohort, period ORDER BY cohort, period`,
    { p: pixel, s: slot },
  );
  return Object.fromEntries(
    rows.map((x) => [`${x.cohort}/${x.period}`, [Number(x.r), Number(x.o), Number(x.v)]]),
  );
}

describe("cohort cells", () => {
  it("a build writes the snapshot's cells; a late order builds the other slot; the first stays as it was (worked example)", async () => {
    await wh.store.insert("orders", workedExample("px_c"));
    const w = worker();
    await w.runOnce(0);
    const first = await latest("px_c");
    expect(first?.slot).toBe(0);
    const january = {
      "2026-01-01/0": [1, 2, 15],
      "2026-01-01/1": [1, 1, 7.5],
      "2026-02-01/0": [1, 1, 20],
    };
    expect(await cells("px_c", 0)).toEqual(january);
    // Nothing new: no build.
    await w.runOnce(0);
    expect(await latest("px_c")).toEqual(first);

    await wh.store.insert("orders", [order("px_c", "b0", "b", "01-31", 4)]);
    await w.runOnce(0);
    const second = await latest("px_c");
    expect(second?.slot).toBe(1);
    expect(BigInt(second!.built_version)).toBeGreaterThan(BigInt(first!.built_version));
    expect(await cells("px_c", 1)).toEqual({
      "2026-01-01/0": [2, 3, 19],
      "2026-01-01/1": [2, 2, 27.5],
    });
    expect(await cells("px_c", 0)).toEqual(january);

    // A third build goes back to slot 0, its February cell written with zeros.
    await wh.store.insert("orders", [order("px_c", "a3", "a", "02-03", 8.5, 2)]);
    await w.runOnce(0);
    const third = await latest("px_c");
    expect(third?.slot).toBe(0);
    expect(BigInt(third!.built_version)).toBeGreaterThan(BigInt(second!.built_version));
    expect(await cells("px_c", 0)).toEqual({
      "2026-01-01/0": [2, 3, 19],
      "2026-01-01/1": [2, 2, 28.5],
    });
  });

  it("a build in parts of whole customers writes the same cells, and so does the next one", async () => {
    await wh.store.insert("orders", workedExample("px_p"));
    // One part per order's worth of customers: four parts here.
    const w = worker({ sliceOrders: 1 });
    await w.runOnce(0);
    expect(await cells("px_p", 0)).toEqual({
      "2026-01-01/0": [1, 2, 15],
      "2026-01-01/1": [1, 1, 7.5],
      "2026-02-01/0": [1, 1, 20],
    });
    await wh.store.insert("orders", [order("px_p", "b0", "b", "01-31", 4)]);
    await w.runOnce(0);
    expect(await cells("px_p", 1)).toEqual({
      "2026-01-01/0": [2, 3, 19],
      "2026-01-01/1": [2, 2, 27.5],
    });
  });

  it("with the margin, a few new order rows wait for the next build (queries correct for them)", async () => {
    await wh.store.insert("orders", [order("px_m", "m1", "m", "03-01", 10)]);
    const w = worker({ marginMs: 60_000 });
    // A first build is due whatever the margin: its cutoff is the watermark, behind the clock.
    await w.runOnce(0);
    const built = await latest("px_m");
    expect(built).toBeDefined();
    await wh.store.insert("orders", [order("px_m", "m2", "m", "03-02", 10)]);
    await w.runOnce();
    expect(await latest("px_m")).toEqual(built);
  });

  it("a settling build vouches only for rows older than the margin; once it has passed, a build replaces it", async () => {
    await wh.store.insert("orders", [order("px_s", "s1", "s", "03-01", 10)]);
    await worker({ marginMs: 3_600_000 }).runOnce(0);
    const first = await latest("px_s");
    // Read up to the clock: rows of the hour before its cutoff count as new for queries.
    expect(first!.fresh_after < first!.cutoff).toBe(true);
    // A worker whose margin has passed (here: none) builds it again with nothing new to refresh,
    // vouching for every row up to its cutoff.
    await worker({ marginMs: 0 }).runOnce();
    const second = await latest("px_s");
    expect(second?.built_version).not.toBe(first?.built_version);
    expect(second?.fresh_after).toBe(second?.cutoff);
    await worker({ marginMs: 0 }).runOnce();
    expect(await latest("px_s")).toEqual(second);
  });

  it("a build never follows the previous one within the least interval, settling or not", async () => {
    await wh.store.insert("orders", [order("px_i", "i1", "i", "03-01", 10)]);
    const w = worker({ interval: 3_600_000 });
    await w.runOnce(0);
    const built = await latest("px_i");
    await wh.store.insert("orders", [order("px_i", "i2", "i", "03-02", 10)]);
    await w.runOnce(0);
    expect(await latest("px_i")).toEqual(built);
  });

  it("a build that fails leaves the other derived tables refreshed and the pixel without a build", async () => {
    await wh.store.insert("orders", [order("px_f", "f1", "f", "03-01", 10)]);
    const refreshed = await worker({ fail: true }).runOnce(0);
    expect(refreshed.find((r) => r.pixelId === "px_f")?.refreshed).toBe(true);
    const [mark] = await wh.store.query<{ n: number }>(
      `SELECT count() AS n FROM derived_watermarks WHERE pixel_id = 'px_f' AND name = '${WATERMARK}'`,
    );
    expect(Number(mark?.n)).toBe(1);
    expect(await latest("px_f")).toBeUndefined();
    // The next round builds it (its derived tables are current, so only the cohort step runs).
    await worker().runOnce(0);
    expect(await latest("px_f")).toBeDefined();
  });

  it("a failed build is tried again only after the interval; an account whose queries cannot use cells gets none", async () => {
    await wh.store.insert("orders", [order("px_b", "b1", "b", "03-01", 10)]);
    let failing = true;
    const w = worker({ fail: () => failing, interval: 3_600_000 });
    await w.runOnce(0);
    failing = false;
    await w.runOnce(0);
    expect(await latest("px_b")).toBeUndefined();
    // Another process (no failure remembered) builds it.
    await worker().runOnce(0);
    expect(await latest("px_b")).toBeDefined();

    // Stored settings with an enabled exclusion filter: no mask to build for.
    await wh.store.insert("orders", [order("px_x", "x1", "x", "03-01", 10)]);
    await worker({ masks: [] }).runOnce(0);
    expect(await latest("px_x")).toBeUndefined();
  });
});
