import type { AddressInfo } from "node:net";
import { createApp } from "./app.js";
import { createDemoOnFirstStart } from "./bootstrap.js";
import { clickhouseApp } from "./clickhouse-http/routes.js";
import { type Config, storeModes } from "./config.js";
import { loadDemo } from "./demo/load.js";
import { createLogger } from "./log.js";
import { serveMetrics } from "./metrics-server.js";
import { buildServices } from "./services.js";
import { openStores } from "./stores/index.js";
import { migrate } from "./stores/migrations.js";
import { webBundle } from "./web/assets.js";

/** Process entry for `serve`: config → stores → migrations → app → listen; graceful shutdown. */
export async function serve(config: Config, options: { json?: boolean } = {}): Promise<void> {
  const log = createLogger(config.LOG_LEVEL);
  const started = performance.now();
  const stores = await openStores(config, "serve (npm start)");
  await migrate(stores.sql, stores.warehouse);
  const services = buildServices(stores, config, log);
  // The identity graph opens lazily (commands that never file skip it); the service files at once.
  await services.identityWorker.ready();
  const demo = await createDemoOnFirstStart(config, stores, services);
  const app = createApp({ config, stores, services, log });
  const server = app.listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const metrics =
    config.METRICS_PORT === undefined
      ? undefined
      : await serveMetrics(config.METRICS_HOST, config.METRICS_PORT);
  const clickhouse =
    config.CLICKHOUSE_HTTP_PORT === undefined
      ? undefined
      : clickhouseApp(services.clickhouse, log).listen(config.CLICKHOUSE_HTTP_PORT, config.HOST);
  if (clickhouse) {
    await new Promise<void>((resolve, reject) => {
      clickhouse.once("listening", resolve);
      clickhouse.once("error", reject);
    });
  }
  const { port } = server.address() as AddressInfo;
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "localhost" : config.HOST;
  const url = `http://${host}:${port}`;
  // The web pages' bundle is built now, in the background, so the first visit to /console does not
  // wait for esbuild; a failure is logged and retried on the first request.
  webBundle().catch((err: unknown) => log.warn({ err }, "web pages not bundled yet; retried on first visit"));
  services.forwarder.start();
  services.relay.start();
  services.recalcWorker.start();
  services.identityWorker.start();
  if (config.DERIVED_TABLES) services.derivedWorker.start();
  // Dedup housekeeping: fold acknowledged groups, forget ids past the window.
  const prune = () =>
    stores.dedup
      .prune()
      .catch((err: unknown) => log.warn({ err }, "dedup prune failed; retried next minute"));
  const pruneTimer = setInterval(prune, 60_000);
  pruneTimer.unref();
  log.info(
    { url, stores: storeModes(config), ms: Math.round(performance.now() - started) },
    "pixelhouse ready",
  );
  // bin/pixelhouse.mjs sizes libuv's pool for chDB; a process started some other way may not have.
  const threadpool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  if (stores.warehouse.kind === "chdb" && threadpool < config.CONSOLE_READERS + config.QUERY_READERS + 4) {
    log.warn(
      { threadpool, consoleReaders: config.CONSOLE_READERS, queryReaders: config.QUERY_READERS },
      "UV_THREADPOOL_SIZE leaves fewer than 4 threads beside the console and query readers: runaway " +
        "queries can stall ingestion on chDB (set it to CONSOLE_READERS + QUERY_READERS + 8)",
    );
  }
  // Shutdown stops a first-start demo load between steps and waits for it before closing the stores.
  const demoAbort = new AbortController();
  let demoLoad: Promise<unknown> = Promise.resolve();
  if (demo) {
    // The small demo store loads in the background: the service answers at once, and the first
    // queries see real-looking numbers within seconds.
    const t0 = performance.now();
    demoLoad = loadDemo(services, stores, {
      pixelId: demo.pixelId,
      scale: "small",
      seed: 42,
      signal: demoAbort.signal,
    }).then(
      (s) =>
        log.info(
          {
            ms: Math.round(performance.now() - t0),
            events: s.eventsIngested,
            orders: s.orders,
            products: s.products,
          },
          "demo store loaded",
        ),
      (err: unknown) => {
        if (demoAbort.signal.aborted)
          log.warn("demo store load stopped by shutdown; `npx pixelhouse demo` completes it");
        else log.error({ err }, "demo store could not be loaded; `npx pixelhouse demo` retries it");
      },
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    clearInterval(pruneTimer);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    demoAbort.abort();
    server.close(async () => {
      await demoLoad;
      await services.ingestGroups.drain();
      await services.forwarder.stop();
      await services.relay.stop();
      await services.recalcWorker.stop();
      await services.identityWorker.stop();
      await services.derivedWorker.stop();
      metrics?.server.close();
      clickhouse?.close();
      await stores.close();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  // Announced only now: whoever reads the ready line may signal at once (a supervisor, a test).
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ url, stores: storeModes(config), ...(metrics ? { metricsUrl: metrics.url } : {}), ...(clickhouse ? { clickhouseUrl: `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${(clickhouse.address() as AddressInfo).port}` } : {}), ...(demo ? { demo: { pixelId: demo.pixelId, key: demo.key } } : {}) })}\n`,
    );
  } else if (demo) {
    process.stdout.write(
      [
        "",
        "A demo account and pixel were created on this first start. Its all-scopes API key (shown only once):",
        `  ${demo.key}`,
        "Try:",
        `  curl -s ${url}/accounts/api/account -H 'x-api-key: ${demo.key}' -H 'x-pixel-id: ${demo.pixelId}'`,
        `SQL console: ${url}/console · dashboards: ${url}/dashboards (paste the key there)`,
        `API reference: ${url}/docs`,
        "",
      ].join("\n"),
    );
  }
}
