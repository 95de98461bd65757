import { route } from "../http/route.js";
import { journeyParams, journeyQuery, journeyResponse } from "./schemas.js";
import { IDENTITY_LINKS_LIMIT, type JourneyService, OLDER_TOUCHES_LIMIT } from "./service.js";

export function journeyRoutes(journeys: JourneyService) {
  return [
    route({
      method: "get",
      path: "/db-mgmt/api/orders/:orderId/journey",
      auth: "analytics:read",
      tag: "Analytics",
      summary:
        "An order's journey: its value, the touches behind it with each one's credit under every model",
      description:
        "The touches attribution joins to the order (its identity, merges resolved one hop, at or before the " +
        "order), in time order, each with its landing page, the identity links that joined it, and its share " +
        "of the order under every model for `window` (0 before the window, `inWindow: false`). The value is " +
        "the order's net revenue in `currency`: the total at its UTC day's rate, each refund at its own " +
        `day's (400 when a rate is missing). At most ${OLDER_TOUCHES_LIMIT} touches before the window and ` +
        `${IDENTITY_LINKS_LIMIT} identity links are listed. Docs: docs/journeys.md.`,
      params: journeyParams,
      query: journeyQuery,
      response: journeyResponse,
      responses: {
        "404": '`{"message":"Order not found"}` — for a missing order and for another pixel\'s order alike',
      },
      rateLimit: "query",
      handler: ({ principal, params, query }) =>
        journeys.journey(principal.pixelId, params.orderId, {
          currency: query.currency,
          window: query.window,
          halfLifeDays: query.halfLifeDays,
        }),
    }),
  ];
}
