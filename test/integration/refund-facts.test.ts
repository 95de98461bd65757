/**
 * refund_facts_hourly over a real warehouse: an incremental refresh ends with the same groups as a
 * build from scratch, through a refund moved to another hour (its old version merged away), its
 * order's status and time changing, a new refund, and the order of a stored refund arriving late.
 *
 * Worked example (pixel rf): o1 (paid, USD, 03-01 09:15) has r1 (03-02 08:10, 2.50) and r2 (03-02
 * 08:40, 1.00); o2 (pending, EUR, 03-01 10:20) has r3 (03-03 14:00, 3.00); r4 (03-02 08:30, 9.00)
 * belongs to o9, not stored yet, so it counts nowhere. Built: 03-02 08:00 holds 2 refunds of 3.50
 * under o1's hour; 03-03 14:00 one pending EUR refund of 3.00 under 03-01 10:00. Then r2 moves to 11:05
 * and the engine merges its old version away, o2 is paid and moved to 13:30, r5 (03-04 09:00, 0.75)
 * is added to o1, and o9 (paid, 03-01 20:00) arrives: 08:00 keeps r1 alone and gains r4 under o9's
 * hour, 11:00 holds r2, 14:00 holds r3 as paid under 13:00 (its pending group written with 0), 03-04
 * 09:00 holds r5.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WATERMARK } from "../../src/derived/conversion-touches.js";
import { refundFactsRefreshSql, refundHoursRefreshSql } from "../../src/derived/refund-facts.js";
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
  worker = new DerivedWorker(wh.store, { marginMs: 0, exclusive: (key, fn) => sql.store.exclusive(key, fn) });
});
afterAll(async () => {
  await wh?.close();
  await sql?.close();
});

const order = (id: string, at: string, status: string, currency: string, version = 1, pixel = "rf") => ({
  pixel_id: pixel,
  order_id: id,
  created_at: `2026-03-${at}:00.000`,
  currency,
  total_price: "20.00",
  financial_status: status,
  customer_id: `c-${id}`,
  version,
});
const refund = (
  id: string,
  orderId: string,
  at: string,
  amount: string,
  currency: string,
  version = 1,
  pixel = "rf",
) => ({
  pixel_id: pixel,
  refund_id: id,
  order_id: orderId,
  created_at: `2026-03-${at}:00.000`,
  amount,
  currency,
  version,
});

/** Every group of `pixel`, "hour | order hour | currency | status | refunds | amount". */
const groups = async (all = false, pixel = "rf") =>
  (
    await wh.store.query<{ g: string }>(
      `SELECT concat(toString(hour), ' | ', toString(order_hour), ' | ', currency, ' | ', financial_status, ' | ',
         toString(refunds), ' | ', toString(amount)) AS g
       FROM refund_facts_hourly FINAL WHERE pixel_id = {p:String}${all ? "" : " AND refunds > 0"} ORDER BY g`,
      { p: pixel },
    )
  ).map((r) => r.g);

describe("refund_facts_hourly", () => {
  it("an incremental refresh equals a build from scratch through moved refunds, order changes and a late order (worked example)", async () => {
    await wh.store.insert("orders", [
      order("o1", "01 09:15", "paid", "USD"),
      order("o2", "01 10:20", "pending", "EUR"),
    ]);
    await wh.store.insert("refunds", [
      refund("r1", "o1", "02 08:10", "2.50", "USD"),
      refund("r2", "o1", "02 08:40", "1.00", "USD"),
      refund("r3", "o2", "03 14:00", "3.00", "EUR"),
      refund("r4", "o9", "02 08:30", "9.00", "USD"),
    ]);
    expect(await worker.runOnce(0)).toMatchObject([{ pixelId: "rf", full: true }]);
    expect(await groups()).toEqual([
      "2026-03-02 08:00:00.000 | 2026-03-01 09:00:00.000 | USD | paid | 2 | 3.5",
      "2026-03-03 14:00:00.000 | 2026-03-01 10:00:00.000 | EUR | pending | 1 | 3",
    ]);

    await wh.store.insert("refunds", [
      refund("r2", "o1", "02 11:05", "1.00", "USD", 2),
      refund("r5", "o1", "04 09:00", "0.75", "USD"),
    ]);
    await wh.store.insert("orders", [
      order("o2", "01 13:30", "paid", "EUR", 2),
      order("o9", "01 20:00", "paid", "USD"),
    ]);
    await wh.store.command("OPTIMIZE TABLE refunds FINAL");
    await wh.store.command("OPTIMIZE TABLE orders FINAL");
    expect(await worker.runOnce(0)).toMatchObject([{ pixelId: "rf", full: false }]);
    const incremental = await groups();
    expect(incremental).toEqual([
      "2026-03-02 08:00:00.000 | 2026-03-01 09:00:00.000 | USD | paid | 1 | 2.5",
      "2026-03-02 08:00:00.000 | 2026-03-01 20:00:00.000 | USD | paid | 1 | 9",
      "2026-03-02 11:00:00.000 | 2026-03-01 09:00:00.000 | USD | paid | 1 | 1",
      "2026-03-03 14:00:00.000 | 2026-03-01 13:00:00.000 | EUR | paid | 1 | 3",
      "2026-03-04 09:00:00.000 | 2026-03-01 09:00:00.000 | USD | paid | 1 | 0.75",
    ]);
    // The group r3 left is written again with nothing in it, so its old sums never come back.
    expect((await groups(true)).filter((g) => g.includes("pending"))).toEqual([
      "2026-03-03 14:00:00.000 | 2026-03-01 10:00:00.000 | EUR | pending | 0 | 0",
    ]);
    const places = await wh.store.query<{ p: string }>(
      "SELECT concat(refund_id, ' ', toString(hour)) AS p FROM refund_hours FINAL WHERE pixel_id = 'rf' ORDER BY p",
    );
    expect(places.map((r) => r.p)).toEqual([
      "r1 2026-03-02 08:00:00.000",
      "r2 2026-03-02 08:00:00.000",
      "r2 2026-03-02 11:00:00.000",
      "r3 2026-03-03 14:00:00.000",
      "r4 2026-03-02 08:00:00.000",
      "r5 2026-03-04 09:00:00.000",
    ]);
    expect(await worker.runOnce(0)).toEqual([]);

    await wh.store.command("TRUNCATE TABLE refund_facts_hourly");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    expect(await worker.runOnce(0)).toMatchObject([{ pixelId: "rf", full: true }]);
    expect(await groups()).toEqual(incremental);
  });
  it("a round with only an order row rebuilds its refunds' groups", async () => {
    // o1 (paid, 03-10 09:00) has r1 (03-11 08:15, 4.00); then only the order changes: voided.
    await wh.store.insert("orders", [order("o1", "10 09:00", "paid", "USD", 1, "ord")]);
    await wh.store.insert("refunds", [refund("r1", "o1", "11 08:15", "4.00", "USD", 1, "ord")]);
    await worker.runOnce(0);
    expect(await groups(false, "ord")).toEqual([
      "2026-03-11 08:00:00.000 | 2026-03-10 09:00:00.000 | USD | paid | 1 | 4",
    ]);
    await wh.store.insert("orders", [order("o1", "10 09:00", "voided", "USD", 2, "ord")]);
    expect(await worker.runOnce(0)).toMatchObject([{ pixelId: "ord", full: false }]);
    expect(await groups(false, "ord")).toEqual([
      "2026-03-11 08:00:00.000 | 2026-03-10 09:00:00.000 | USD | voided | 1 | 4",
    ]);
  });

  it("a refund version landing in the middle of a refresh, its predecessor merged away, leaves no stale hour", async () => {
    // r9 (09:15) is built. v2 (11:05) lands before a refresh begins; the refresh files the places, then
    // v3 (16:05) lands and the engine merges v2 away before the rollup is rebuilt, which reads refunds as
    // the cutoff vouches for them (v3 is past it, so r9 counts nowhere in this round). The next round
    // rebuilds every hour r9 was or is in — 09:00 and 11:00 from refund_hours, 16:00 from its row — and
    // the rollup then equals a build from scratch.
    const r = (version: number, at: string) => refund("r9", "o9", `12 ${at}`, "3.00", "USD", version, "mid");
    await wh.store.insert("orders", [order("o9", "12 08:00", "paid", "USD", 1, "mid")]);
    await wh.store.insert("refunds", [r(1, "09:15")]);
    await worker.runOnce(0);
    const [{ w }] = (await wh.store.query<{ w: string }>(
      "SELECT toString(max(watermark)) AS w FROM derived_watermarks WHERE pixel_id = 'mid'",
    )) as [{ w: string }];
    await wh.store.insert("refunds", [r(2, "11:05")]);
    // The refresh began after v2 was stamped (the clock moved past it).
    const cutoff = await cutoffAfterRows(wh.store, "refunds", "mid");
    const params = {
      pixel: "mid",
      version: String(Date.parse(`${cutoff.replace(" ", "T")}Z`)),
      since: w,
      cutoff,
    };
    await wh.store.command(refundHoursRefreshSql("since"), params);
    // v3 lands after the refresh began, and v2 is merged away.
    await clockPast(wh.store, cutoff);
    await wh.store.insert("refunds", [r(3, "16:05")]);
    await wh.store.command("OPTIMIZE TABLE refunds FINAL");
    await wh.store.command(refundFactsRefreshSql("since"), params);
    await wh.store.insert("derived_watermarks", [
      { pixel_id: "mid", name: WATERMARK, watermark: cutoff, written_at: cutoff },
    ]);

    await worker.runOnce(0);
    const incremental = await groups(false, "mid");
    expect(incremental).toEqual(["2026-03-12 16:00:00.000 | 2026-03-12 08:00:00.000 | USD | paid | 1 | 3"]);
    await wh.store.command("TRUNCATE TABLE refund_facts_hourly");
    await wh.store.command("TRUNCATE TABLE derived_watermarks");
    await worker.runOnce(0);
    expect(await groups(false, "mid")).toEqual(incremental);
  });
});
