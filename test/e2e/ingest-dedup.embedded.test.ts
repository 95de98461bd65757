/**
 * The dedup suite (dedup-cases.ts) over the embedded stores: SqlDedupStore in PGlite, chDB; plus the
 * warehouse backstop across partitions, which does not depend on the dedup store.
 */
import { expect, it } from "vitest";
import { startTestApp } from "../helpers/app.js";
import { DEDUP_TEST_ENV, dedupSuite } from "./dedup-cases.js";
import { eventCount, sendOk } from "./ingest-helpers.js";

dedupSuite("eventId dedup, embedded (SQL dedup in PGlite)", {
  start: () => startTestApp({ env: DEDUP_TEST_ENV }),
  dedup: "sql",
  enabled: true,
  extra(app) {
    it.each([
      ["a day later (a retry without timestamp after midnight)", "1 DAY"],
      ["a month later (another partition)", "40 DAY"],
    ])(
      "warehouse backstop: a second copy of (pixel, eventId) stored %s never counts twice",
      async (_label, shift) => {
        const px = await app().pixelWithKey(["events:write"]);
        const id = `backstop-shift-${Math.random().toString(36).slice(2, 10)}`;
        await sendOk(app(), px, [{ name: "purchase", eventId: id, eventProperties: { value: 3 } }]);
        await app().stores.warehouse.command(
          `INSERT INTO events SELECT * REPLACE (event_time + INTERVAL ${shift} AS event_time)
         FROM events WHERE pixel_id = {pixel:String} AND event_id = {id:String}`,
          { pixel: px.pixelId, id },
        );
        const distinct = await app().stores.warehouse.query<{ n: number }>(
          "SELECT count(DISTINCT event_id) AS n FROM events WHERE pixel_id = {pixel:String}",
          { pixel: px.pixelId },
        );
        // Measures count distinct ids, so it never counts twice. The table collapses copies of the same
        // day and name on merge (dedup-cases.ts); a copy on another day stays a second row by design:
        // the sorting key keeps time locality for queries (docs/ingestion.md, "backstop").
        expect(distinct[0]!.n).toBe(1);
        await app().stores.warehouse.command("OPTIMIZE TABLE events FINAL");
        expect(await eventCount(app(), px.pixelId, id)).toBe(2);
      },
    );
  },
});
