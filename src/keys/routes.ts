import { z } from "zod";
import { route } from "../http/route.js";

/** What the caller's own key may do: pages use it to offer only what the key allows. */
export function keyRoutes() {
  return [
    route({
      method: "get",
      path: "/accounts/api/key",
      auth: "any-key",
      tag: "Account",
      summary: "The calling key: its id, pixel and scopes",
      description:
        "Any valid key may read itself (never its secret). The web pages use the scopes to show editing " +
        "controls only to keys that can write.",
      response: z.object({
        key: z.object({ id: z.string(), pixelId: z.string(), scopes: z.array(z.string()) }),
      }),
      handler: ({ principal }) => ({
        key: { id: principal.keyId, pixelId: principal.pixelId, scopes: [...principal.scopes].sort() },
      }),
    }),
  ];
}
