import { z } from "zod";
import { lagWaitQuery, readUntil } from "../http/lag-query.js";
import { route } from "../http/route.js";
import type { IdentityWorker } from "./worker.js";

const lagResponse = z.object({
  messages: z.number().int().describe("sightings messages published and not yet filed"),
  seconds: z.number().describe("age of the oldest of them; 0 when caught up"),
  caughtUp: z.boolean(),
  filed: z.number().int().describe("messages this process has filed since it started"),
  p50Ms: z
    .number()
    .nullable()
    .describe("publish → links in the warehouse, median of the last 10,000 filed here"),
  p99Ms: z.number().nullable(),
});

export function identityRoutes(worker: IdentityWorker) {
  return [
    route({
      method: "get",
      path: "/db-mgmt/api/identity/lag",
      auth: "analytics:read",
      tag: "Query",
      summary: "How far identity resolution trails the write path",
      description:
        "Identity merges are filed by a background worker after the write is acknowledged " +
        "(docs/identity.md); until then a merge is not visible to queries. `messages` counts what is " +
        "still to file across every process, `seconds` is how old the oldest is. With `waitMs` the " +
        "answer waits until nothing is left or the time is up, so a script can load data and then " +
        "query with every merge in place. The figures are service-wide, not per pixel.",
      query: lagWaitQuery,
      response: lagResponse,
      handler: async ({ query }) => {
        worker.wake();
        const lag = await readUntil(
          () => worker.lag(),
          (l) => l.messages === 0,
          query.waitMs ?? 0,
          5,
          200,
        );
        const f = worker.freshness();
        return { ...lag, caughtUp: lag.messages === 0, filed: f.count, p50Ms: f.p50, p99Ms: f.p99 };
      },
    }),
  ];
}
