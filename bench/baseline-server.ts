/**
 * The bare baseline for bench:ingest: node:http + JSON.parse + one warehouse INSERT per batch, on the
 * same embedded warehouse and events table, with none of validation, dedup, identity or enrichment.
 */
import http from "node:http";
import { join } from "node:path";
import { ChdbWarehouse } from "../src/stores/warehouse/chdb.js";
import { formatDateTime } from "../src/stores/warehouse/port.js";

const dir = process.argv[2]!;
const wh = await ChdbWarehouse.open(join(dir, "ch"), "pixelhouse");
await wh.command(
  "CREATE TABLE IF NOT EXISTS events_baseline (pixel_id String, event_id String, name String, event_time DateTime64(3, 'UTC'), properties String) ENGINE = MergeTree ORDER BY (pixel_id, event_id)",
);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        events: { name: string; eventId: string }[];
      };
      const now = formatDateTime(new Date());
      await wh.insert(
        "events_baseline",
        body.events.map((e) => ({
          pixel_id: "bench",
          event_id: e.eventId,
          name: e.name,
          event_time: now,
          properties: JSON.stringify(e),
        })),
      );
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on("SIGTERM", () => {
  server.close(async () => {
    await wh.close();
    process.exit(0);
  });
});
