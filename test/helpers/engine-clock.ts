import type { WarehouseStore } from "../../src/stores/warehouse/port.js";

/** The engine's clock, as the text of a DateTime64(3, 'UTC'). */
export async function engineNow(wh: WarehouseStore): Promise<string> {
  const [row] = await wh.query<{ t: string }>("SELECT toString(now64(3, 'UTC')) AS t");
  return row!.t;
}

/**
 * A refresh cutoff after every row of `pixel` in `table` was stamped: the engine's clock, read again
 * until it has moved past the newest `ingested_at` (a condition, not a sleep).
 */
export async function cutoffAfterRows(wh: WarehouseStore, table: string, pixel: string): Promise<string> {
  let cutoff = await engineNow(wh);
  while (
    (
      await wh.query(
        `SELECT 1 FROM ${table} WHERE pixel_id = {p:String} AND ingested_at >= {c:DateTime64(3, 'UTC')}`,
        { p: pixel, c: cutoff },
      )
    ).length > 0
  )
    cutoff = await engineNow(wh);
  return cutoff;
}

/** Returns once the engine's clock is past `instant`, so the next insert is stamped after it. */
export async function clockPast(wh: WarehouseStore, instant: string): Promise<void> {
  while ((await engineNow(wh)) <= instant) {}
}
