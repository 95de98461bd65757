import { z } from "zod";
import { route } from "../http/route.js";
import { GRID_COLUMNS, SPARKLINE_SIZE } from "./layout.js";
import {
  CHART_TYPES,
  copyViewBody,
  createViewBody,
  dashboardViewSchema,
  LAYOUT_MODES,
  presetViewBody,
  SECTION_TYPES,
  updateViewBody,
  viewParams,
} from "./schemas.js";
import type { DashboardService } from "./service.js";

/**
 * createdBy / updatedBy of a view written with an API key are empty strings (docs/dashboards.md); a
 * signed-in user, should the service ever have one, would be named here instead.
 */
const KEY_AUTHOR = "";

const BASE = "/accounts/api/dashboard/views";
const viewResponse = z.object({ dashboardView: dashboardViewSchema });
const NOT_FOUND = {
  "404": '`{"message":"Dashboard view not found"}` — for a missing id and for another pixel\'s id alike',
};
const DEFAULTS =
  `Response-only fields are filled when left out: chartType \`${CHART_TYPES[0]}\`, layoutMode ` +
  `\`${LAYOUT_MODES[0]}\`, sectionType \`${SECTION_TYPES[0]}\`. Settings may be subsets: defaultSettings ` +
  "over the built-in defaults, each section's settings over defaultSettings. Measure keys must be in the " +
  "catalog and filters must compile (400 naming the path). Docs: docs/dashboards.md.";

export function dashboardRoutes(views: DashboardService) {
  return [
    route({
      method: "get",
      path: BASE,
      auth: "dashboards:read",
      tag: "Dashboards",
      summary: "List the pixel's dashboard views, ordered by `order`",
      description: "Ties in `order` are broken by creation time, then id.",
      response: z.object({ dashboardViews: z.array(dashboardViewSchema) }),
      handler: async ({ principal }) => ({ dashboardViews: await views.list(principal) }),
    }),
    route({
      method: "post",
      path: BASE,
      auth: "dashboards:write",
      tag: "Dashboards",
      summary: "Create a view from a full configuration",
      description: `\`order\` left out places the view after the pixel's last one. ${DEFAULTS}`,
      body: createViewBody,
      response: viewResponse,
      handler: async ({ principal, body }) => ({
        dashboardView: await views.create(principal, body, KEY_AUTHOR),
      }),
    }),
    route({
      method: "post",
      path: `${BASE}/from-preset`,
      auth: "dashboards:write",
      tag: "Dashboards",
      summary: "Create a view of sparkline widgets laid out automatically",
      description:
        `One sparkline per entry, ${SPARKLINE_SIZE.columns} columns × ${SPARKLINE_SIZE.rows} rows, placed left ` +
        `to right and wrapping at the ${GRID_COLUMNS}-column grid's edge (${GRID_COLUMNS / SPARKLINE_SIZE.columns} ` +
        "per row). The configuration: last_click over 30 days, granularity day, the last 30 days up to today " +
        "in the account's timezone, no filters, no sections. Unknown measure keys → 400. Docs: docs/dashboards.md.",
      body: presetViewBody,
      response: viewResponse,
      handler: async ({ principal, body }) => ({
        dashboardView: await views.fromPreset(principal, body, KEY_AUTHOR),
      }),
    }),
    route({
      method: "get",
      path: `${BASE}/:dashboardViewId`,
      auth: "dashboards:read",
      tag: "Dashboards",
      summary: "Read one view",
      params: viewParams,
      response: viewResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params }) => ({
        dashboardView: await views.get(principal, params.dashboardViewId),
      }),
    }),
    route({
      method: "patch",
      path: `${BASE}/:dashboardViewId`,
      auth: "dashboards:write",
      tag: "Dashboards",
      summary: "Change a view's name, configuration or order",
      description: `Any of the three; a configuration replaces the stored one whole. ${DEFAULTS}`,
      params: viewParams,
      body: updateViewBody,
      response: viewResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params, body }) => ({
        dashboardView: await views.update(principal, params.dashboardViewId, body, KEY_AUTHOR),
      }),
    }),
    route({
      method: "delete",
      path: `${BASE}/:dashboardViewId`,
      auth: "dashboards:write",
      tag: "Dashboards",
      summary: "Delete a view",
      params: viewParams,
      response: z.object({ deleted: z.literal(true), dashboardViewId: z.string() }),
      responses: NOT_FOUND,
      handler: ({ principal, params }) => views.remove(principal, params.dashboardViewId),
    }),
    route({
      method: "post",
      path: `${BASE}/:dashboardViewId/copy`,
      auth: "dashboards:write",
      tag: "Dashboards",
      summary: "Copy a view",
      description:
        'The body is optional. `name` defaults to "<name> (copy)" (the source name shortened to fit 200 ' +
        "characters), `order` to after the pixel's last view. The configuration is copied as stored.",
      params: viewParams,
      body: copyViewBody,
      response: viewResponse,
      responses: NOT_FOUND,
      handler: async ({ principal, params, body }) => ({
        dashboardView: await views.copy(principal, params.dashboardViewId, body ?? {}, KEY_AUTHOR),
      }),
    }),
  ];
}
