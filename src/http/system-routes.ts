import { z } from "zod";
import type { Stores } from "../stores/index.js";
import { route } from "./route.js";

const readinessSchema = z.object({
  status: z.enum(["ready", "unavailable"]),
  stores: z.record(
    z.string(),
    z.object({ adapter: z.string(), ok: z.boolean(), error: z.string().optional() }),
  ),
});

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

export function systemRoutes(stores: Stores) {
  return [
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
        if (down.length) {
          res.status(503).json({
            status: "unavailable",
            message: `store not ready: ${down.map(([n, s]) => `${n} (${s.adapter})`).join(", ")}`,
            stores: out,
          });
          return undefined;
        }
        return { status: "ready", stores: out };
      },
    }),
  ];
}
