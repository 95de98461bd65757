/**
 * Forwarding is queued inside the ingestion pipeline, held until the events are stored: released when
 * the write succeeds, dropped when it fails, and sent after the hold if the process dies in between —
 * so an acknowledged event is never lost to its destinations.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EventRow } from "../../src/shared/event-row.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { type Pixel, sendEvents, sendOk } from "./ingest-helpers.js";

let app: TestApp;
let px: Pixel;
beforeAll(async () => {
  app = await startTestApp();
  px = await app.pixelWithKey(["events:write"]);
  // The worker does not run in tests (only `serve` starts it), so queued rows stay to be inspected.
  await app.services.destinations.add({
    pixelId: px.pixelId,
    kind: "webhook",
    config: { url: "http://127.0.0.1:9/hook" },
    eventNames: ["purchase"],
  });
});
afterAll(async () => {
  await app?.close();
});

const deliveries = async (eventId: string) =>
  (
    await app.stores.sql.query<{ due: boolean; hold_token: string | null }>(
      "SELECT next_attempt_at <= now() AS due, hold_token FROM deliveries WHERE event_id = $1",
      [eventId],
    )
  ).rows;

it("an acknowledged event is queued for its destinations and due at once", async () => {
  await sendOk(app, px, [
    { name: "purchase", eventId: "fw-1" },
    { name: "page_view", eventId: "fw-2" },
  ]);
  expect(await deliveries("fw-1")).toEqual([{ due: true, hold_token: null }]);
  expect(await deliveries("fw-2")).toEqual([]); // filtered out by the destination's event names
});

it("a failed write drops the held deliveries; the retry queues them once", async () => {
  await app.stores.warehouse.command("RENAME TABLE events TO events_off");
  try {
    const res = await sendEvents(app, px, [{ name: "purchase", eventId: "fw-3" }]);
    expect(res.status).toBe(503);
    expect(await deliveries("fw-3")).toEqual([]);
  } finally {
    await app.stores.warehouse.command("RENAME TABLE events_off TO events");
  }
  await sendOk(app, px, [{ name: "purchase", eventId: "fw-3" }]);
  expect(await deliveries("fw-3")).toEqual([{ due: true, hold_token: null }]);
});

it("deliveries held by a process that died before releasing them become due after the hold", async () => {
  const token = "died-before-release";
  await app.services.forwarder.enqueue(
    px.pixelId,
    [{ row: { ...(await lastRow()), event_id: "fw-4" }, originalIp: "" }],
    { token, ms: 120_000 },
  );
  const [row] = (
    await app.stores.sql.query<{ wait: number }>(
      "SELECT extract(epoch FROM next_attempt_at - now())::int AS wait FROM deliveries WHERE hold_token = $1",
      [token],
    )
  ).rows;
  // Not due yet, but queued: the worker sends it when the hold ends.
  expect(row!.wait).toBeGreaterThan(100);
  expect(row!.wait).toBeLessThanOrEqual(120);
});

async function lastRow() {
  const [row] = await app.stores.warehouse.query<Record<string, unknown>>(
    "SELECT * FROM events WHERE pixel_id = {p:String} AND event_id = 'fw-1'",
    { p: px.pixelId },
  );
  // A stored row has the EventRow columns (the warehouse prints them in the same shapes).
  return row as unknown as EventRow;
}
