import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Config } from "../config.js";
import { NotFoundError, UnauthorizedError } from "../errors.js";
import { consumerReport, registry } from "../metrics.js";
import type { Stores } from "../stores/index.js";
import { route } from "./route.js";

const readinessSchema = z.object({
  status: z.enum(["ready", "unavailable"]),
  stores: z.record(
    z.string(),
    z.object({ adapter: z.string(), ok: z.boolean(), error: z.string().optional() }),
  ),
  consumers: z
    .record(
      z.string(),
      z.object({
        ok: z.boolean(),
        messages: z.number().nullable(),
        seconds: z.number().nullable(),
        deadLetters: z.number().optional(),
      }),
    )
    .describe(
      "background consumers: ok=false when behind CONSUMER_MAX_LAG_SECONDS or unreadable (informational: readiness is the stores')",
    ),
});

const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

async function probe(ping: () => Promise<void>, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return null;
  } catch (err) {
    // The probe is public: say what failed, never the store's own text (hosts, users).
    return (err as Error).message.startsWith("no answer within") ? (err as Error).message : "not reachable";
  } finally {
    clearTimeout(timer);
  }
}

export function systemRoutes(
  stores: Stores,
  config: Pick<Config, "METRICS_TOKEN" | "CONSUMER_MAX_LAG_SECONDS">,
) {
  return [
    route({
      method: "get",
      path: "/metrics",
      auth: "public",
      tag: "Operations",
      summary: "Prometheus metrics (text format), with `Authorization: Bearer METRICS_TOKEN`",
      description:
        "Served on the service's port only when METRICS_TOKEN is set (404 otherwise), and always, without " +
        "a token, on METRICS_PORT when that is set. Metrics and alerts: docs/operations.md.",
      produces: "text/plain",
      response: z.string(),
      handler: async ({ req, res }) => {
        const token = config.METRICS_TOKEN;
        if (!token)
          throw new NotFoundError("metrics are not served on this port (set METRICS_TOKEN or METRICS_PORT)");
        const given = /^Bearer\s+(.+)$/i.exec(req.get("authorization") ?? "")?.[1] ?? "";
        if (!sameToken(given, token)) throw new UnauthorizedError();
        res.setHeader("Content-Type", registry.contentType);
        res.send(await registry.metrics());
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/healthz",
      auth: "public",
      tag: "Operations",
      summary: "Liveness: the process is up",
      response: z.object({ status: z.literal("ok") }),
      handler: () => ({ status: "ok" }),
    }),
    route({
      method: "get",
      path: "/readyz",
      auth: "public",
      tag: "Operations",
      summary: "Readiness: every store answers (503 names the ones that do not)",
      response: readinessSchema,
      handler: async ({ res }) => {
        const entries = [
          ["sql", stores.sql.kind, () => stores.sql.ping()],
          ["warehouse", stores.warehouse.kind, () => stores.warehouse.ping()],
          ["kv", stores.kv.kind, () => stores.kv.ping()],
        ] as const;
        const results = await Promise.all(entries.map(([, , ping]) => probe(ping, 2000)));
        const out: z.infer<typeof readinessSchema>["stores"] = {};
        entries.forEach(([name, adapter], i) => {
          const error = results[i];
          out[name] = error ? { adapter, ok: false, error } : { adapter, ok: true };
        });
        const down = Object.entries(out).filter(([, s]) => !s.ok);
        const consumers = await consumerReport(config.CONSUMER_MAX_LAG_SECONDS);
        if (down.length) {
          res.status(503).json({
            status: "unavailable",
            message: `store not ready: ${down.map(([n, s]) => `${n} (${s.adapter})`).join(", ")}`,
            stores: out,
            consumers,
          });
          return undefined;
        }
        return { status: "ready", stores: out, consumers };
      },
    }),
  ];
}
