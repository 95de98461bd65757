import { randomUUID } from "node:crypto";
import { updateViewBody } from "../dashboards/schemas.js";
import type { DashboardService } from "../dashboards/service.js";
import type { SqlExecutor } from "../stores/sql/port.js";

/** The measures a store owner looks at first, one sparkline each, in reading order. */
const OVERVIEW_MEASURES = [
  "orders.total_revenue",
  "orders.count",
  "orders.aov",
  "ads.spend",
  "profit.mer",
  "profit.net_profit",
  "customers.new",
  "attribution.roas",
];

export const OVERVIEW_NAME = "Overview";

/**
 * The demo store's "Overview" dashboard view, so /dashboards shows charts on the first visit: the
 * preset's sparklines of OVERVIEW_MEASURES and, below them, a full-width table of attributed orders,
 * revenue and AOV by channel (ROAS needs spend, which only ad-entity dimensions carry). Made through
 * the dashboard service and checked like a request; made once (a view of that name is left as is).
 */
export async function createOverview(dashboards: DashboardService, sql: SqlExecutor, pixelId: string) {
  const { rows } = await sql.query<{ account_id: string }>("SELECT account_id FROM pixels WHERE id = $1", [
    pixelId,
  ]);
  if (!rows[0]) return;
  const owner = { keyId: "demo", pixelId, accountId: rows[0].account_id, scopes: new Set<never>() };
  if ((await dashboards.list(owner)).some((v) => v.name === OVERVIEW_NAME)) return;
  const view = await dashboards.fromPreset(
    owner,
    { name: OVERVIEW_NAME, widgets: OVERVIEW_MEASURES.map((measure) => ({ measure })) },
    "",
  );
  const below = Math.max(...view.configuration.widgets.map((w) => w.layout.y + w.layout.rows));
  const table = {
    id: randomUUID(),
    title: "Attribution by channel",
    chartType: "table",
    layout: { x: 0, y: below, rows: 6, columns: 12 },
    dataConfig: {
      measures: ["attribution.orders", "attribution.revenue", "attribution.aov"],
      dimensions: ["attribution.channel"],
      filters: [],
    },
  };
  const patch = updateViewBody.parse({
    configuration: { ...view.configuration, widgets: [...view.configuration.widgets, table] },
  });
  await dashboards.update(owner, view.id, patch, "");
}
