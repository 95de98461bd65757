import express, { type Express } from "express";
import { clickhouseRouter } from "./clickhouse-http/routes.js";
import type { Config } from "./config.js";
import { collectPreflight } from "./http/cors.js";
import { decodablePath, parseQueryString } from "./http/decode.js";
import { docsRouter } from "./http/docs-page.js";
import { errorHandler, unmatched } from "./http/errors.js";
import { mountRoutes, requestId } from "./http/mount.js";
import { bucketRule } from "./http/rate-limit.js";
import type { Logger } from "./log.js";
import { routeTable } from "./routes.js";
import type { Services } from "./services.js";
import type { Stores } from "./stores/index.js";
import { webRouter } from "./web/routes.js";

export interface AppDeps {
  config: Config;
  stores: Stores;
  services: Services;
  log: Logger;
}

/** Express composition: request id → routes from the table → docs and web pages → 404/405 → the error handler. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", parseQueryString);
  app.use(requestId(deps.log));
  const routes = routeTable(deps.services, deps.stores, deps.config);
  app.use(decodablePath(routes));
  app.options("/tr/api/collect", collectPreflight);
  mountRoutes(app, routes, {
    keys: deps.services.keys,
    kv: deps.stores.kv,
    rates: {
      ingest: bucketRule(deps.config.RATE_INGEST_PER_SEC),
      query: bucketRule(deps.config.RATE_QUERY_PER_SEC),
    },
  });
  app.use("/clickhouse", clickhouseRouter(deps.services.clickhouse, deps.log));
  app.use(docsRouter());
  app.use(webRouter());
  app.use(unmatched(routes));
  app.use(errorHandler(deps.log));
  return app;
}
