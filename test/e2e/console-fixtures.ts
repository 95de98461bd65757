import { type IncomingHttpHeaders, request } from "node:http";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";

/** Where each pixel's marker sits in each analyst table (fx_rates is global: no marker). */
export const MARKER_COLUMNS: Record<string, string> = {
  events: "event_id",
  orders: "order_id",
  order_lines: "sku",
  refunds: "refund_id",
  order_costs: "order_id",
  ad_entities: "entity_id",
  ad_metrics: "entity_id",
  identities: "alias_value",
};

export const marker = (tag: string, table: string) => `MARK${tag}_${table}`;

/**
 * One marker row per pixel in every pixel table (touchpoints too, which no analyst table exposes),
 * plus `extraEvents` plain events for the caller that runs runaway queries.
 */
export async function insertMarkers(
  wh: WarehouseStore,
  pixelId: string,
  tag: string,
  extraEvents = 0,
): Promise<void> {
  const t = "2026-03-01 10:00:00.000";
  const events = [
    { pixel_id: pixelId, event_id: marker(tag, "events"), name: "purchase", event_time: t, received_at: t },
  ];
  for (let i = 0; i < extraEvents; i++) {
    events.push({
      pixel_id: pixelId,
      event_id: `${tag}_bulk_${i}`,
      name: "page_view",
      event_time: t,
      received_at: t,
    });
  }
  await wh.insert("events", events);
  await wh.insert("touchpoints", [
    { pixel_id: pixelId, event_id: marker(tag, "touchpoints"), touch_time: t },
  ]);
  await wh.insert("orders", [
    {
      pixel_id: pixelId,
      order_id: marker(tag, "orders"),
      created_at: t,
      currency: "USD",
      version: 2,
      updated_at: t,
    },
  ]);
  await wh.insert("order_lines", [
    // The version-1 line belongs to a replaced order version: the analyst table must not show it.
    {
      pixel_id: pixelId,
      order_id: marker(tag, "orders"),
      line_index: 0,
      sku: marker(tag, "order_lines"),
      version: 2,
    },
    {
      pixel_id: pixelId,
      order_id: marker(tag, "orders"),
      line_index: 1,
      sku: `${tag}_stale_line`,
      version: 1,
    },
  ]);
  await wh.insert("refunds", [
    {
      pixel_id: pixelId,
      refund_id: marker(tag, "refunds"),
      order_id: marker(tag, "orders"),
      created_at: t,
      version: 1,
    },
  ]);
  await wh.insert("order_costs", [
    { pixel_id: pixelId, order_id: marker(tag, "order_costs"), version: 1, computed_at: t },
  ]);
  await wh.insert("ad_entities", [
    {
      pixel_id: pixelId,
      platform: "facebook",
      level: "campaign",
      entity_id: marker(tag, "ad_entities"),
      source_created_at: t,
      source_updated_at: t,
      version: 1,
    },
  ]);
  await wh.insert("ad_metrics_daily", [
    {
      pixel_id: pixelId,
      platform: "facebook",
      level: "campaign",
      entity_id: marker(tag, "ad_metrics"),
      date: "2026-03-01",
      version: 1,
    },
  ]);
  await wh.insert("identity_links", [
    {
      pixel_id: pixelId,
      alias_type: "email",
      alias_value: marker(tag, "identities"),
      canonical_id: `${tag}_canonical`,
      first_seen: t,
      version: 1,
    },
  ]);
}

export interface RawCsvAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  trailers: NodeJS.Dict<string>;
  complete: boolean;
}

/**
 * A CSV request of the SQL console read with node:http, which (unlike fetch) shows trailers and
 * whether the body came whole.
 */
export function rawCsv(
  baseUrl: string,
  px: { key: string; pixelId: string },
  text: string,
  limit: number,
): Promise<RawCsvAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/db-mgmt/api/sql`,
      {
        method: "POST",
        headers: { "x-api-key": px.key, "x-pixel-id": px.pixelId, "content-type": "application/json" },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("error", () => undefined);
        res.on("close", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            trailers: { ...res.trailers },
            complete: res.complete,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ pixelId: px.pixelId, sql: text, format: "csv", limit }));
  });
}
