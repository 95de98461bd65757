import { accountRoutes } from "./accounts/routes.js";
import type { Config } from "./config.js";
import { consoleRoutes } from "./console/routes.js";
import { costRoutes } from "./costs/routes.js";
import { dashboardRoutes } from "./dashboards/routes.js";
import { derivedRoutes } from "./derived/routes.js";
import { buildOpenApi } from "./http/openapi.js";
import { type RouteDef, route } from "./http/route.js";
import { systemRoutes } from "./http/system-routes.js";
import { identityRoutes } from "./identity/routes.js";
import { ingestRoutes } from "./ingest/routes.js";
import { journeyRoutes } from "./journeys/routes.js";
import { productRoutes } from "./products/routes.js";
import { queryRoutes } from "./query/routes.js";
import type { Services } from "./services.js";
import type { Stores } from "./stores/index.js";
import { syncRoutes } from "./sync/routes.js";
import { VERSION } from "./version.js";

/**
 * The route table: every endpoint with its method, path, scope and schemas, in one list. The app
 * mounts it, /openapi.json is generated from it, and the auth test walks it.
 */
export function routeTable(services: Services, stores: Stores, config: Config): RouteDef[] {
  const routes: RouteDef[] = [
    ...systemRoutes(stores, config),
    ...accountRoutes(services.accounts),
    ...syncRoutes(services.sync),
    ...queryRoutes(services.queries),
    ...journeyRoutes(services.journeys),
    ...identityRoutes(services.identityWorker),
    ...derivedRoutes(services.derivedWorker),
    ...consoleRoutes(services.console),
    ...dashboardRoutes(services.dashboards),
    ...costRoutes(services.costs),
    ...productRoutes(services.products),
    ...ingestRoutes({
      ingest: services.ingest,
      pixels: services.pixels,
      kv: stores.kv,
      ipPrefix: { v4PrefixBits: config.IP_V4_PREFIX_BITS, v6PrefixBits: config.IP_V6_PREFIX_BITS },
      trustProxy: config.TRUST_PROXY,
      collectPerSecond: config.RATE_COLLECT_PER_SEC,
    }),
  ];
  let doc: object | undefined;
  routes.push(
    route({
      method: "get",
      path: "/openapi.json",
      auth: "public",
      tag: "Operations",
      summary: "This API's OpenAPI 3.1 document",
      handler: () => {
        doc ??= buildOpenApi(routes, VERSION);
        return doc;
      },
    }),
  );
  return routes;
}
