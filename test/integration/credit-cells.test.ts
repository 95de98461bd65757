/**
 * The credit cells' builds and refreshes (docs/derived-tables.md, "credit_cells") over a real
 * warehouse: what a build of an asked shape writes, that a refresh after late data ends with the
 * cells a build from scratch gives, and which asked shapes get built. Whether queries answer from them
 * exactly as from raw data is test/e2e/derived-tables.test.ts's.
 *
 * Worked example, shape last_click:30:attribution.source. Visitor v1 touches google at 03-01 09:00
 * and facebook at 10:30; v2 touches klaviyo at 03-02 08:00; v3 never touches. Orders: o1 of v1 at
 * 03-01 11:00, 100.00 USD, paid, refunded 10.00 USD on 03-05; o2 of v2 at 03-02 12:00, 50.00 EUR,
 * paid; o3 of v3 at 03-02 14:30, 20.00 USD, pending (an hour of its own: only the merge changes it). Cells (hour, status, value, currency, day,
 * refund → attributed, amount):
 *   03-01 11h paid facebook USD 03-01 0 → 1, 100; 03-01 11h paid facebook USD 03-05 1 → 0, 10;
 *   03-02 12h paid klaviyo EUR 03-02 0 → 1, 50;   03-02 14h pending (none) USD 03-02 0 → 1, 20.
 * Late: v3 merged into v1 (o3 now last-clicks facebook), o2 voided and refunded 5.00 EUR on 03-03, o1
 * moved to 03-03 15:00. After the refresh:
 *   03-03 15h paid facebook USD 03-03 0 → 1, 100; 03-03 15h paid facebook USD 03-05 1 → 0, 10;
 *   03-02 12h voided klaviyo EUR 03-02 0 → 1, 50; 03-02 12h voided klaviyo EUR 03-03 1 → 0, 5;
 *   03-02 14h pending facebook USD 03-02 0 → 1, 20;
 * and the rows the hours had before are written empty (rows = 0).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CREDIT_SHAPES } from "../../src/derived/credit-cells.js";
import { FreshIds } from "../../src/derived/fresh-ids.js";
import { DerivedWorker } from "../../src/derived/worker.js";
import { creditCellsBuild, creditCellsSql, parseCreditShape } from "../../src/query/sources/credit-cells.js";
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
    creditCells: creditCellsSql,
  });
});
afterAll(async () => {
  await wh?.close();
  await sql?.close();
});

const SHAPE = "last_click:30:attribution.source";

const touch = (pixel: string, id: string, cid: string, at: string, source: string) => ({
  pixel_id: pixel,
  canonical_id: cid,
  identity_id: cid,
  event_id: id,
  touch_time: `2026-03-${at}:00.000`,
  source,
  channel: "paid",
});
const order = (
  pixel: string,
  id: string,
  cid: string,
  at: string,
  currency: string,
  price: number,
  status = "paid",
  version = 1,
) => ({
  pixel_id: pixel,
  order_id: id,
  created_at: `2026-03-${at}:00.000`,
  currency,
  total_price: price,
  financial_status: status,
  canonical_id: cid,
  version,
});
const refund = (
  pixel: string,
  id: string,
  orderId: string,
  at: string,
  currency: string,
  amount: number,
) => ({
  pixel_id: pixel,
  refund_id: id,
  order_id: orderId,
  created_at: `2026-03-${at}:00.000`,
  currency,
  amount,
  version: 1,
});

/** The pixel's live cells, one line each: hour status value currency day refund → attributed amount. */
async function cells(pixel: string, shape = SHAPE): Promise<string[]> {
  const rows = await wh.store.query<{ line: string }>(
    `SELECT concat(formatDateTime(hour, '%m-%d %Hh'), ' ', toString(financial_status), ' ', value, ' ',
        toString(currency), ' ', formatDateTime(fx_day, '%m-%d'), ' ', toString(refund), ' → ',
        toString(attributed), ', ', toString(round(amount, 4))) AS line
     FROM credit_cells FINAL WHERE pixel_id = {p:String} AND shape = {s:String} AND rows != 0 ORDER BY line`,
    { p: pixel, s: shape },
  );
  return rows.map((r) => r.line);
}

/** Until the engine's clock is past the latest row's stamp by more than a millisecond (the margin). */
async function waitPastMargin(): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const [row] = await wh.store.query<{ ok: number | string }>(
      "SELECT now64(3, 'UTC') - toIntervalMillisecond(2) > (SELECT max(ingested_at) FROM identity_links) AS ok",
    );
    if (Number(row?.ok) === 1) return;
  }
  throw new Error("the engine's clock did not move");
}

const ask = (pixel: string, shape: string) =>
  wh.store.insert("credit_shapes", [{ pixel_id: pixel, shape, built_version: 0 }]);

const built = async (pixel: string): Promise<string[]> =>
  (
    await wh.store.query<{ shape: string }>(
      `SELECT shape FROM credit_shapes WHERE pixel_id = {p:String} GROUP BY shape HAVING max(built_version) > 0 ORDER BY shape`,
      { p: pixel },
    )
  ).map((r) => r.shape);

describe("credit cells", () => {
  it("a build of an asked shape, then a refresh after late data, equal a build from scratch (worked example)", async () => {
    const px = "cc1";
    await wh.store.insert("touchpoints", [
      touch(px, "t1", "v1", "01 09:00", "google"),
      touch(px, "t2", "v1", "01 10:30", "facebook"),
      touch(px, "t3", "v2", "02 08:00", "klaviyo"),
    ]);
    await wh.store.insert("orders", [
      order(px, "o1", "v1", "01 11:00", "USD", 100),
      order(px, "o2", "v2", "02 12:00", "EUR", 50),
      order(px, "o3", "v3", "02 14:30", "USD", 20, "pending"),
    ]);
    await wh.store.insert("refunds", [refund(px, "r1", "o1", "05 10:00", "USD", 10)]);
    await worker.runOnce(0);
    // Nothing asked: nothing built.
    expect(await built(px)).toEqual([]);
    expect(await cells(px)).toEqual([]);

    await ask(px, SHAPE);
    await worker.runOnce(0);
    expect(await built(px)).toEqual([SHAPE]);
    expect(await cells(px)).toEqual([
      "03-01 11h paid facebook USD 03-01 0 → 1, 100",
      "03-01 11h paid facebook USD 03-05 1 → 0, 10",
      "03-02 12h paid klaviyo EUR 03-02 0 → 1, 50",
      "03-02 14h pending (none) USD 03-02 0 → 1, 20",
    ]);

    await wh.store.insert("identity_links", [
      { pixel_id: px, alias_type: "canonical", alias_value: "v3", canonical_id: "v1", version: 2 },
    ]);
    await wh.store.insert("orders", [
      order(px, "o2", "v2", "02 12:00", "EUR", 50, "voided", 2),
      order(px, "o1", "v1", "03 15:00", "USD", 100, "paid", 2),
    ]);
    await wh.store.insert("refunds", [refund(px, "r2", "o2", "03 09:00", "EUR", 5)]);
    const refreshed = await worker.runOnce(0);
    expect(refreshed.map((r) => [r.pixelId, r.full])).toEqual([[px, false]]);
    const incremental = await cells(px);
    expect(incremental).toEqual([
      "03-02 12h voided klaviyo EUR 03-02 0 → 1, 50",
      "03-02 12h voided klaviyo EUR 03-03 1 → 0, 5",
      "03-02 14h pending facebook USD 03-02 0 → 1, 20",
      "03-03 15h paid facebook USD 03-03 0 → 1, 100",
      "03-03 15h paid facebook USD 03-05 1 → 0, 10",
    ]);
    // The hours' earlier rows are there, emptied.
    const [emptied] = await wh.store.query<{ n: string }>(
      "SELECT toString(count()) AS n FROM credit_cells FINAL WHERE pixel_id = {p:String} AND rows = 0",
      { p: px },
    );
    expect(Number(emptied?.n)).toBe(4);

    // From scratch: the same live cells.
    await wh.store.command(
      "ALTER TABLE credit_cells DELETE WHERE pixel_id = {p:String}",
      { p: px },
      {
        settings: { mutations_sync: 1 },
      },
    );
    await wh.store.command(
      "ALTER TABLE credit_shapes DELETE WHERE pixel_id = {p:String}",
      { p: px },
      {
        settings: { mutations_sync: 1 },
      },
    );
    await ask(px, SHAPE);
    await worker.runOnce(0);
    expect(await cells(px)).toEqual(incremental);
  });

  it("without a credited field a shape counts touched conversions; every model and window of a field is its own shape", async () => {
    const px = "cc2";
    await wh.store.insert("touchpoints", [
      touch(px, "t1", "v1", "01 09:00", "google"),
      touch(px, "t2", "v1", "01 10:30", "facebook"),
    ]);
    await wh.store.insert("orders", [
      order(px, "o1", "v1", "01 11:00", "USD", 100),
      order(px, "o2", "v2", "01 11:30", "USD", 30),
    ]);
    await worker.runOnce(0);
    for (const shape of ["touched:30:", "first_click:30:attribution.source", "linear:30:attribution.source"])
      await ask(px, shape);
    await worker.runOnce(0);
    expect(await built(px)).toEqual([
      "first_click:30:attribution.source",
      "linear:30:attribution.source",
      "touched:30:",
    ]);
    // o2 has no touch: a conversion, not attributed (a cell of its own: not touched).
    expect(await cells(px, "touched:30:")).toEqual([
      "03-01 11h paid  USD 03-01 0 → 0, 0",
      "03-01 11h paid  USD 03-01 0 → 1, 100",
    ]);
    const [conversions] = await wh.store.query<{ n: string }>(
      "SELECT toString(sum(conversions)) AS n FROM credit_cells FINAL WHERE pixel_id = {p:String} AND shape = 'touched:30:' AND rows != 0",
      { p: px },
    );
    expect(conversions?.n).toBe("2");
    expect(await cells(px, "first_click:30:attribution.source")).toEqual([
      "03-01 11h paid (none) USD 03-01 0 → 1, 30",
      "03-01 11h paid google USD 03-01 0 → 1, 100",
    ]);
    expect(await cells(px, "linear:30:attribution.source")).toEqual([
      "03-01 11h paid (none) USD 03-01 0 → 1, 30",
      "03-01 11h paid facebook USD 03-01 0 → 0.5, 50",
      "03-01 11h paid google USD 03-01 0 → 0.5, 50",
    ]);
  });

  it("the cells follow at most every interval (a settle at once), and queries credit the hours changed since one by one", async () => {
    const px = "cc4";
    await wh.store.insert("touchpoints", [touch(px, "t1", "v1", "01 09:00", "google")]);
    await wh.store.insert("orders", [
      order(px, "o1", "v1", "01 11:00", "USD", 100),
      order(px, "o2", "v2", "05 16:00", "USD", 40),
    ]);
    await worker.runOnce(0);
    await ask(px, SHAPE);
    await worker.runOnce(0);
    const before = [
      "03-01 11h paid google USD 03-01 0 → 1, 100",
      "03-05 16h paid (none) USD 03-05 0 → 1, 40",
    ];
    expect(await cells(px)).toEqual(before);
    const fresh = (version: string) => new FreshIds(wh.store).of(px, version, { creditHours: true });
    expect((await fresh("a")).creditHours).toEqual([]);

    // v2 merged into v1: o2's credit moves to google. A round that is not a settle, within the
    // interval: the other tables follow, the cells do not, and a query credits o2's hour one by one.
    await wh.store.insert("identity_links", [
      { pixel_id: px, alias_type: "canonical", alias_value: "v2", canonical_id: "v1", version: 2 },
    ]);
    const lagging = new DerivedWorker(wh.store, {
      marginMs: 1,
      creditIntervalMs: 3_600_000,
      exclusive: (key, fn) => sql.store.exclusive(key, fn),
      creditCells: creditCellsSql,
    });
    await waitPastMargin();
    expect((await lagging.runOnce()).map((r) => r.pixelId)).toContain(px);
    expect(await cells(px)).toEqual(before);
    const behind = await fresh("b");
    expect(behind.ids).toEqual([]);
    // The merge rebuilt every order of v1's identity in conversion_touches: o1's hour too.
    expect(behind.creditHours).toEqual(["2026-03-01 11:00:00.000", "2026-03-05 16:00:00.000"]);

    // A settle brings them up: nothing left to credit one by one.
    await worker.runOnce(0);
    expect(await cells(px)).toEqual([
      "03-01 11h paid google USD 03-01 0 → 1, 100",
      "03-05 16h paid google USD 03-05 0 → 1, 40",
    ]);
    expect((await fresh("c")).creditHours).toEqual([]);
  });

  it("a pixel whose build fails waits the interval and stops no other pixel's", async () => {
    let attempts = 0;
    const failing = new DerivedWorker(wh.store, {
      marginMs: 0,
      exclusive: (key, fn) => sql.store.exclusive(key, fn),
      creditCells: (key, span) => {
        const shape = parseCreditShape(key);
        if (key.startsWith("first_click:") && span.start.startsWith("toDateTime64(makeDate")) {
          attempts++;
          throw new Error("the engine refused it");
        }
        return shape ? creditCellsBuild(shape, span) : null;
      },
    });
    for (const px of ["cc5a", "cc5b"]) {
      await wh.store.insert("touchpoints", [touch(px, "t1", "v1", "01 09:00", "google")]);
      await wh.store.insert("orders", [order(px, "o1", "v1", "01 11:00", "USD", 100)]);
    }
    await failing.runOnce(0);
    await ask("cc5a", "first_click:30:attribution.source");
    await ask("cc5b", SHAPE);
    await failing.runOnce(0);
    expect(await built("cc5a")).toEqual([]);
    expect(await built("cc5b")).toEqual([SHAPE]);
    expect(await cells("cc5b")).toEqual(["03-01 11h paid google USD 03-01 0 → 1, 100"]);
    const tried = attempts;
    expect(tried).toBeGreaterThan(0);
    // Within the interval (30 s by default) the failed pixel is not tried again.
    await failing.runOnce(0);
    expect(attempts).toBe(tried);
  });

  it(`builds at most ${MAX_CREDIT_SHAPES} shapes per pixel, and never a key that names no shape`, async () => {
    const px = "cc3";
    await wh.store.insert("orders", [order(px, "o1", "v1", "01 11:00", "USD", 10)]);
    await worker.runOnce(0);
    const keys = ["first_click", "last_click", "any_click", "linear"].flatMap((m) =>
      [1, 7, 14, 30, 60, 90, -1].map((w) => `${m}:${w}:attribution.channel`),
    );
    await ask(px, "bogus:1:attribution.channel");
    for (const k of keys) await ask(px, k);
    await worker.runOnce(0);
    const done = await built(px);
    expect(done).toHaveLength(MAX_CREDIT_SHAPES);
    expect(done).not.toContain("bogus:1:attribution.channel");
    // Nothing more is built on later rounds.
    await worker.runOnce(0);
    expect(await built(px)).toHaveLength(MAX_CREDIT_SHAPES);
  });
});
