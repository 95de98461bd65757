/**
 * The derived-tables worker over a real warehouse: an incremental refresh ends with the same rows as
 * a full build of the same data, and a round with nothing new does nothing.
 *
 * Worked example: visitor v1 has touches at 10:00 (google) and 12:00 (facebook) on 03-01; order o1 of
 * v1 at 11:00 holds the 10:00 touch only (the 12:00 one came after it). A merge of v2 into v1 and a
 * touch of v2 at 09:00 arrive later: o1 then holds 09:00 and 10:00, and o2 (v2's order at 13:00, read
 * through the merge) holds all three — exactly what a build from scratch gives. Before the merge o2
 * has no touch, and so no row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WATERMARK } from "../../src/derived/conversion-touches.js";
import { customerHoursRefreshSql } from "../../src/derived/customer-hours.js";
import { orderFactsRefreshSql } from "../../src/derived/order-facts.js";
import { orderHoursRefreshSql } from "../../src/derived/order-hours.js";
import { DerivedWorker } from "../../src/derived/worker.js";
import { migrate } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { clockPast, cutoffAfterRows } from "../helpers/engine-clock.js";
import { type Opened, openChdb, openPglite } from "../helpers/stores.js";

let wh: Opened<WarehouseStore>;
let sql: Opened<SqlStore>;
let worker: DerivedWorker;
beforeAll(async () => {
  wh = await openChdb();
  sql = await openPglite();
  await migrate(sql.store, wh.store);
  worker = new DerivedWorker(wh.store, {
    marginMs: 0,
    exclusive: (key, fn) => sql.store.exclusive(key, fn),
  });
});
afterAll(async () => {
  await wh?.close();
  await sql?.close();
});

const touch = (id: string, cid: string, at: string, source: string) => ({
  pixel_id: "px",
  canonical_id: cid,
  identity_id: cid,
  event_id: id,
  touch_time: `2026-03-01 ${at}:00.000`,
  source,
  channel: "paid",
});
const orderRow = (id: string, cid: string, at: string) => ({
  pixel_id: "px",
  order_id: id,
  created_at: `2026-03-01 ${at}:00.000`,
  currency: "USD",
  canonical_id: cid,
  version: 1,
});

/** Every order's touches as (event id, source), newest build of each. */
async function rows(): Promise<Record<string, string[]>> {
  const r = await wh.store.query<{ order_id: string; touches: string[] }>(
    `SELECT order_id, arrayMap(t -> concat(t.event_id, ':', toString(t.source)), touches) AS touches
     FROM conversion_touches FINAL WHERE pixel_id = 'px' ORDER BY order_id`,
  );
  return Object.fromEntries(r.map((x) => [x.order_id, x.touches]));
}

describe("DerivedWorker", () => {
  it("an incremental refresh equals a build from scratch; a round with nothing new does nothing", async () => {
    await wh.store.insert("touchpoints", [
      touch("e10", "v1", "10:00", "google"),
      touch("e12", "v1", "12:00", "facebook"),
    ]);
    await wh.store.insert("orders", [orderRow("o1", "v1", "11:00"), orderRow("o2", "v2", "13:00")]);
    const first = await worker.runOnce(0);
    expect(first.map((r) => [r.pixelId, r.full])).toEqual([["px", true]]);
    // o2 has no touch (v2 has none yet): no row.
    expect(await rows()).toEqual({ o1: ["e10:google"] });
    expect(await worker.runOnce(0)).toEqual([]);

    await wh.store.insert("identity_links", [
      { pixel_id: "px", alias_type: "canonical", alias_value: "v2", canonical_id: "v1", version: 2 },
    ]);
    await wh.store.insert("touchpoints", [touch("e09", "v2", "09:00", "tiktok")]);
    const second = await worker.runOnce(0);
    expect(second.map((r) => [r.pixelId, r.full, r.refreshed])).toEqual([["px", false, true]]);
    const incremental = await rows();
    expect(incremental).toEqual({
      o1: ["e09:tiktok", "e10:google"],
      o2: ["e09:tiktok", "e10:google", "e12:facebook"],
    });

    await wh.store.command("TRUNCATE TABLE conversion_touches");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    const rebuilt = await worker.runOnce(0);
    expect(rebuilt.map((r) => r.full)).toEqual([true]);
    expect(await rows()).toEqual(incremental);
    expect(await worker.lag()).toEqual({ pixels: 0, seconds: 0 });
  });

  it("order facts and customers per hour: an incremental refresh equals a build from scratch through a status change, orders moved within and across months and an emptied group", async () => {
    const facts = async () =>
      (
        await wh.store.query<{
          h: string;
          cur: string;
          st: string;
          n: string;
          total: string;
        }>(
          `SELECT toString(f.hour) AS h, toString(f.currency) AS cur, toString(f.financial_status) AS st,
             toString(any(f.orders)) AS n, toString(any(f.total_price)) AS total
           FROM order_facts_hourly AS f FINAL WHERE f.pixel_id = 'fx' AND f.orders > 0
           GROUP BY h, cur, st ORDER BY h, cur, st`,
        )
      ).map((r) => ({
        hour: r.h,
        currency: r.cur,
        status: r.st,
        orders: r.n,
        total: r.total,
      }));
    // "hour key kinds previous-counted-hour" of every customer-hour holding an order.
    const customerHours = async () =>
      (
        await wh.store.query<{ row: string }>(
          `SELECT concat(toString(hour), ' ', customer_key, ' ', toString(kinds), ' ', toString(prev)) AS row
           FROM customer_hours FINAL WHERE pixel_id = 'fx' AND kinds != 0 ORDER BY hour, customer_key`,
        )
      ).map((r) => r.row);
    const o = (id: string, at: string, total: string, extra: Record<string, unknown> = {}) => ({
      pixel_id: "fx",
      order_id: id,
      created_at: at,
      currency: "USD",
      total_price: total,
      financial_status: "paid",
      customer_id: "c1",
      canonical_id: "v1",
      version: 1,
      is_deleted: 0,
      ...extra,
    });
    await wh.store.insert("orders", [
      o("o1", "2026-03-01 09:15:00.000", "10.00"),
      o("o2", "2026-03-01 10:45:00.000", "5.50"),
      o("o3", "2026-03-01 11:30:00.000", "7.00", {
        currency: "EUR",
        financial_status: "pending",
        customer_id: "c2",
      }),
    ]);
    await worker.runOnce(0);
    expect(await facts()).toEqual([
      {
        hour: "2026-03-01 09:00:00.000",
        currency: "USD",
        status: "paid",
        orders: "1",
        total: "10",
      },
      {
        hour: "2026-03-01 10:00:00.000",
        currency: "USD",
        status: "paid",
        orders: "1",
        total: "5.5",
      },
      {
        hour: "2026-03-01 11:00:00.000",
        currency: "EUR",
        status: "pending",
        orders: "1",
        total: "7",
      },
    ]);

    const none = "1900-01-01 00:00:00.000";
    expect(await customerHours()).toEqual([
      `2026-03-01 09:00:00.000 c:c1 1 ${none}`,
      "2026-03-01 10:00:00.000 c:c1 1 2026-03-01 09:00:00.000",
      `2026-03-01 11:00:00.000 c:c2 2 ${none}`,
    ]);

    // o3 paid now; o2 moved to April (the sync's tombstone hides it in March, one version below the new
    // row); o1 moved from 09:15 to 12:05 the same day — in place, and merged away before the refresh,
    // so only order_hours still says the rollups count it at 09:00.
    await wh.store.insert("orders", [
      o("o3", "2026-03-01 11:30:00.000", "7.00", { currency: "EUR", customer_id: "c2", version: 2 }),
      o("o2", "2026-03-01 10:45:00.000", "0", { version: 2, is_deleted: 1 }),
      o("o2", "2026-04-02 09:10:00.000", "5.50", { version: 3 }),
      o("o1", "2026-03-01 12:05:00.000", "10.00", { version: 2 }),
    ]);
    await wh.store.command("OPTIMIZE TABLE orders FINAL");
    expect((await worker.runOnce(0)).map((r) => [r.pixelId, r.full])).toEqual([["fx", false]]);
    const incremental = await facts();
    expect(incremental).toEqual([
      {
        hour: "2026-03-01 11:00:00.000",
        currency: "EUR",
        status: "paid",
        orders: "1",
        total: "7",
      },
      {
        hour: "2026-03-01 12:00:00.000",
        currency: "USD",
        status: "paid",
        orders: "1",
        total: "10",
      },
      {
        hour: "2026-04-02 09:00:00.000",
        currency: "USD",
        status: "paid",
        orders: "1",
        total: "5.5",
      },
    ]);
    // The emptied group is written again with nothing in it, so its old sums never come back.
    const emptied = await wh.store.query<{ n: string }>(
      "SELECT toString(orders) AS n FROM order_facts_hourly FINAL WHERE pixel_id = 'fx' AND financial_status = 'pending'",
    );
    expect(emptied).toEqual([{ n: "0" }]);
    const customersIncremental = await customerHours();
    expect(customersIncremental).toEqual([
      `2026-03-01 11:00:00.000 c:c2 1 ${none}`,
      `2026-03-01 12:00:00.000 c:c1 1 ${none}`,
      "2026-04-02 09:00:00.000 c:c1 1 2026-03-01 12:00:00.000",
    ]);

    await wh.store.command("TRUNCATE TABLE order_facts_hourly");
    await wh.store.command("TRUNCATE TABLE customer_hours");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    expect((await worker.runOnce(0)).every((r) => r.full)).toBe(true);
    expect(await facts()).toEqual(incremental);
    expect(await customerHours()).toEqual(customersIncremental);

    // A first build in parts (here one part per order's worth of customers) writes the same rows.
    const parts = new DerivedWorker(wh.store, {
      marginMs: 0,
      exclusive: (key, fn) => sql.store.exclusive(key, fn),
      customerSliceOrders: 1,
    });
    await wh.store.command("TRUNCATE TABLE customer_hours");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    expect((await parts.runOnce(0)).every((r) => r.full)).toBe(true);
    expect(await customerHours()).toEqual(customersIncremental);
  });

  it("a version landing in the middle of a refresh, its predecessor merged away, leaves no stale hour or customer", async () => {
    // o9 (guest) at 09:15 is built. v2 (cust-y, 13:05) lands before a refresh begins; the refresh files
    // the places and rebuilds the rollup from them; then v3 (cust-z, 16:05) lands and the engine merges
    // v2 away before customer_hours is rebuilt. Wherever the rollups counted o9 in that refresh must be
    // in order_hours, so the next round removes it there: both tables then equal a build from scratch.
    const o = (version: number, at: string, customer: string) => ({
      pixel_id: "mid",
      order_id: "o9",
      created_at: `2026-05-01 ${at}:00.000`,
      currency: "USD",
      total_price: "9.00",
      financial_status: "paid",
      customer_id: customer,
      version,
    });
    const state = async () => ({
      facts: await wh.store.query(
        "SELECT toString(hour) AS h, orders FROM order_facts_hourly FINAL WHERE pixel_id = 'mid' AND orders > 0 ORDER BY h",
      ),
      customers: await wh.store.query(
        "SELECT toString(hour) AS h, customer_key, kinds FROM customer_hours FINAL WHERE pixel_id = 'mid' AND kinds != 0 ORDER BY h",
      ),
    });
    await wh.store.insert("orders", [o(1, "09:15", "")]);
    await worker.runOnce(0);
    const [{ w }] = (await wh.store.query<{ w: string }>(
      "SELECT toString(max(watermark)) AS w FROM derived_watermarks WHERE pixel_id = 'mid'",
    )) as [{ w: string }];
    await wh.store.insert("orders", [o(2, "13:05", "cust-y")]);
    // The refresh began after v2 was stamped (the clock moved past it).
    const cutoff = await cutoffAfterRows(wh.store, "orders", "mid");
    const params = {
      pixel: "mid",
      version: String(Date.parse(`${cutoff.replace(" ", "T")}Z`)),
      since: w,
      cutoff,
    };
    await wh.store.command(orderHoursRefreshSql("since"), params);
    await wh.store.command(orderFactsRefreshSql("since"), params);
    // v3 lands after the refresh began, and v2 is merged away.
    await clockPast(wh.store, cutoff);
    await wh.store.insert("orders", [o(3, "16:05", "cust-z")]);
    await wh.store.command("OPTIMIZE TABLE orders FINAL");
    await wh.store.command(customerHoursRefreshSql("since"), params);
    await wh.store.insert("derived_watermarks", [
      { pixel_id: "mid", name: WATERMARK, watermark: cutoff, written_at: cutoff },
    ]);

    await worker.runOnce(0);
    const incremental = await state();
    expect(incremental).toEqual({
      facts: [{ h: "2026-05-01 16:00:00.000", orders: 1 }],
      customers: [{ h: "2026-05-01 16:00:00.000", customer_key: "c:cust-z", kinds: 1 }],
    });
    for (const table of ["order_facts_hourly", "customer_hours", "derived_watermarks"])
      await wh.store.command(`TRUNCATE TABLE ${table}`);
    await worker.runOnce(0);
    expect(await state()).toEqual(incremental);
  });

  it("a watermark set with no margin is checked again once the margin has passed: a row stamped before it but stored after the refresh is covered", async () => {
    const margin = 300;
    const careful = new DerivedWorker(wh.store, {
      marginMs: margin,
      exclusive: (key, fn) => sql.store.exclusive(key, fn),
    });
    await wh.store.insert("orders", [{ ...orderRow("q1", "w1", "11:00"), pixel_id: "late" }]);
    await careful.runOnce(0);
    const [{ w }] = (await wh.store.query<{ w: string }>(
      "SELECT toString(max(watermark)) AS w FROM derived_watermarks WHERE pixel_id = 'late'",
    )) as [{ w: string }];
    // An insert that was stamped before the watermark but became visible only now.
    await wh.store.insert("touchpoints", [
      { ...touch("eL", "w1", "10:00", "google"), pixel_id: "late", ingested_at: w },
    ]);
    // The row is covered once the margin has passed (rounds before that may or may not see it due).
    const covered = async () => {
      const [row] = await wh.store.query<{ touches: string[] }>(
        "SELECT arrayMap(t -> t.event_id, touches) AS touches FROM conversion_touches FINAL WHERE pixel_id = 'late'",
      );
      return row?.touches ?? [];
    };
    const deadline = Date.now() + 10_000;
    while ((await covered()).length === 0) {
      expect(Date.now(), "the pixel came due for its second look").toBeLessThan(deadline);
      await careful.runOnce();
      if ((await covered()).length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(await covered()).toEqual(["eL"]);
    // Checked once: nothing is due any more.
    expect(await careful.pending()).not.toContain("late");
  });

  it("a round resolves the touches of its conversions through their own merges, even where a stored link left a second hop (worked example)", async () => {
    // Links a→b, b→c, e→c: b was merged into c, but a's link still names b (a second hop, which a
    // late or out-of-order link write can leave behind). Order o1 is stored on b, so it belongs to c,
    // and so does the touch on e. A new touch on a makes a round rebuild o1 (a resolves to b, whose
    // order it is): its touches must still include e's, as a build from scratch gives.
    const px = (row: Record<string, unknown>) => ({ ...row, pixel_id: "chain" });
    const link = (from: string, to: string, version: number) => ({
      pixel_id: "chain",
      alias_type: "canonical",
      alias_value: from,
      canonical_id: to,
      version,
    });
    const touches = async () =>
      Object.fromEntries(
        (
          await wh.store.query<{ order_id: string; touches: string[] }>(
            `SELECT order_id, arrayMap(t -> t.event_id, touches) AS touches
             FROM conversion_touches FINAL WHERE pixel_id = 'chain' ORDER BY order_id`,
          )
        ).map((r) => [r.order_id, r.touches]),
      );
    await wh.store.insert("identity_links", [link("a", "b", 1), link("b", "c", 2), link("e", "c", 3)]);
    await wh.store.insert("orders", [px(orderRow("o1", "b", "12:00"))]);
    await wh.store.insert("touchpoints", [px(touch("eE", "e", "10:00", "google"))]);
    await worker.runOnce(0);
    expect(await touches()).toEqual({ o1: ["eE"] });

    await wh.store.insert("touchpoints", [px(touch("eA", "a", "11:00", "facebook"))]);
    await worker.runOnce(0);
    const incremental = await touches();
    expect(incremental).toEqual({ o1: ["eE"] });

    await wh.store.command("TRUNCATE TABLE conversion_touches");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    await worker.runOnce(0);
    expect(await touches()).toEqual(incremental);
  });
});
