/**
 * The derived-tables worker over a real warehouse: an incremental refresh ends with the same rows as
 * a full build of the same data, and a round with nothing new does nothing.
 *
 * Worked example: visitor v1 has touches at 10:00 (google) and 12:00 (facebook) on 03-01; order o1 of
 * v1 at 11:00 holds the 10:00 touch only (the 12:00 one came after it). A merge of v2 into v1 and a
 * touch of v2 at 09:00 arrive later: o1 then holds 09:00 and 10:00, and o2 (v2's order at 13:00, read
 * through the merge) holds all three — exactly what a build from scratch gives.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DerivedWorker } from "../../src/derived/worker.js";
import { migrate } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
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
    expect(await rows()).toEqual({ o1: ["e10:google"], o2: [] });
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
});
