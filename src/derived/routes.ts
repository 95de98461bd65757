import { z } from "zod";
import { lagWaitQuery, readUntil } from "../http/lag-query.js";
import { route } from "../http/route.js";
import type { DerivedWorker } from "./worker.js";

const lagResponse = z.object({
  pixels: z.number().int().describe("pixels with rows ingested after their derived tables' watermark"),
  seconds: z.number().describe("age of the oldest such row; 0 when caught up"),
  caughtUp: z.boolean(),
  refreshes: z.number().int().describe("refreshes this process ran (of the last 10,000 kept)"),
  p50Ms: z
    .number()
    .nullable()
    .describe("per refresh, how long the oldest row it covered had waited since ingested; median"),
  p99Ms: z.number().nullable(),
});

export function derivedRoutes(worker: DerivedWorker) {
  return [
    route({
      method: "get",
      path: "/db-mgmt/api/derived/lag",
      auth: "analytics:read",
      tag: "Query",
      summary: "How far the derived tables trail the raw data",
      description:
        "Attribution answers from derived tables where they are current and from raw data elsewhere, so " +
        "answers are complete either way (docs/derived-tables.md); this says how much is still answered " +
        "raw. `pixels` counts pixels with rows past their watermark, `seconds` the age of the oldest. " +
        "With `waitMs` the answer waits until nothing is behind or the time is up. Service-wide.",
      query: lagWaitQuery,
      response: lagResponse,
      handler: async ({ query }) => {
        worker.wake();
        const lag = await readUntil(
          () => worker.lag(),
          (l) => l.pixels === 0,
          query.waitMs ?? 0,
          20,
          500,
        );
        const f = worker.freshness();
        return { ...lag, caughtUp: lag.pixels === 0, refreshes: f.refreshes, p50Ms: f.p50, p99Ms: f.p99 };
      },
    }),
  ];
}
