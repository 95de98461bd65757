import { z } from "zod";
import { route } from "../http/route.js";
import { actorOf } from "../keys/service.js";
import {
  configQuery,
  configSchema,
  createLineBody,
  deleteLineQuery,
  lineParams,
  overrideSchema,
  updateLineBody,
} from "./schemas.js";
import type { CostService } from "./service.js";

const configResponse = z.object({ config: configSchema });
const RECALC =
  "Writes a `costs.changed` outbox row in the same transaction, which triggers the per-order COGS " +
  "recalculation — except for `variable` and `fixed` lines, which apply at report time.";

export function costRoutes(costs: CostService) {
  return [
    route({
      method: "get",
      path: "/accounts/api/costs",
      auth: "costs:read",
      tag: "Costs",
      summary: "Read the account's cost configuration, whole or one type",
      description:
        "Without `type`, every cost type: `order`, `gateway`, `shipping`, `variable`, `fixed` (lines in " +
        "creation order) and `global_product_override` (object or null). With `type`, an object with that " +
        "key only. Docs: docs/costs.md.",
      query: configQuery,
      response: configSchema.partial(),
      handler: ({ principal, query }) => costs.config(principal.accountId, query.type),
    }),
    route({
      method: "post",
      path: "/accounts/api/costs/lines",
      auth: "costs:write",
      tag: "Costs",
      summary: "Append a cost line; the server assigns its ULID",
      description: `The shape of \`line\` is chosen by \`costType\`; other fields are refused. ${RECALC}`,
      body: createLineBody,
      response: configResponse,
      handler: async ({ principal, body }) => ({
        config: await costs.addLine(principal.accountId, body, actorOf(principal)),
      }),
    }),
    route({
      method: "put",
      path: "/accounts/api/costs/lines/:lineId",
      auth: "costs:write",
      tag: "Costs",
      summary: "Change some fields of a cost line",
      description:
        "Only the fields in `updates` change; the result must still be a valid line of its type. A date set " +
        "to null becomes unbounded. A `costType` other than the line's answers 404 like an unknown id. " +
        RECALC,
      params: lineParams,
      body: updateLineBody,
      response: configResponse,
      responses: { "404": "No such line of this type in the account" },
      handler: async ({ principal, params, body }) => ({
        config: await costs.updateLine(principal.accountId, params.lineId, body, actorOf(principal)),
      }),
    }),
    route({
      method: "delete",
      path: "/accounts/api/costs/lines/:lineId",
      auth: "costs:write",
      tag: "Costs",
      summary: "Delete a cost line (costType required)",
      description: `The deleted line travels in the outbox row so the affected orders can be found. ${RECALC}`,
      params: lineParams,
      query: deleteLineQuery,
      response: configResponse,
      responses: { "404": "No such line of this type in the account" },
      handler: async ({ principal, params, query }) => ({
        config: await costs.deleteLine(
          principal.accountId,
          params.lineId,
          query.costType,
          actorOf(principal),
        ),
      }),
    }),
    route({
      method: "put",
      path: "/accounts/api/costs/global-product-override",
      auth: "costs:write",
      tag: "Costs",
      summary: "Set the global product override (COGS tier 3)",
      description:
        "`percent_of_price`: `value` percent of the variant's current price; `fixed`: `value` per unit in " +
        "the account currency. Used for variants with no COG line and no store cost on the order's day. " +
        "Triggers the per-order COGS recalculation.",
      body: overrideSchema,
      response: configResponse,
      handler: async ({ principal, body }) => ({
        config: await costs.setOverride(principal.accountId, body, actorOf(principal)),
      }),
    }),
    route({
      method: "delete",
      path: "/accounts/api/costs/global-product-override",
      auth: "costs:write",
      tag: "Costs",
      summary: "Remove the global product override",
      description: "Answers the configuration whether or not an override was set.",
      response: configResponse,
      handler: async ({ principal }) => ({
        config: await costs.clearOverride(principal.accountId, actorOf(principal)),
      }),
    }),
  ];
}
