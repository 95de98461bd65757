import { AccountService } from "./accounts/service.js";
import { ClickHouseHttpService } from "./clickhouse-http/service.js";
import type { Config } from "./config.js";
import { defaultConsoleThreads } from "./console/limits.js";
import { ConsoleService } from "./console/service.js";
import { RECALC_GROUP, RecalcService, RecalcWorker } from "./costs/recalc.js";
import { CostService } from "./costs/service.js";
import { DashboardService } from "./dashboards/service.js";
import { CreditShapes } from "./derived/credit-cells.js";
import { FreshIds } from "./derived/fresh-ids.js";
import { DERIVED_CONSUMER, DerivedWorker } from "./derived/worker.js";
import { OutboxRelay } from "./events/relay.js";
import { DestinationService } from "./forwarding/destinations.js";
import { Forwarder } from "./forwarding/service.js";
import { IdentityAssigner } from "./identity/assign.js";
import { IdentityFeed } from "./identity/feed.js";
import { IdentityGraph } from "./identity/graph.js";
import { IDENTITY_GROUP, IdentityWorker } from "./identity/worker.js";
import { GroupCommitter } from "./ingest/group.js";
import { IngestService } from "./ingest/service.js";
import { JourneyService } from "./journeys/service.js";
import { ApiKeyService } from "./keys/service.js";
import type { Logger } from "./log.js";
import { registerConsumer, registerWarehouseActivity } from "./metrics.js";
import { PixelService } from "./pixels/service.js";
import { loadVariantCostFacts } from "./products/facts.js";
import { ProductService } from "./products/service.js";
import { StatementReaders } from "./query/readers.js";
import { QueryService } from "./query/service.js";
import { creditCellsSql } from "./query/sources/credit-cells.js";
import { DataVersions } from "./shared/data-version.js";
import type { Stores } from "./stores/index.js";
import { LazyWarehouse } from "./stores/warehouse/lazy.js";
import { OwnSession } from "./stores/warehouse/session.js";
import { SyncService } from "./sync/service.js";

/** Every business service, built once per process over the opened stores. */
export interface Services {
  keys: ApiKeyService;
  accounts: AccountService;
  pixels: PixelService;
  ingest: IngestService;
  /** Group commit of ingestion; drained on shutdown. */
  ingestGroups: GroupCommitter;
  destinations: DestinationService;
  /** Forwarding queue, worker and dead letters (the worker runs only in `serve`). */
  forwarder: Forwarder;
  sync: SyncService;
  /** Per-pixel data versions the query cache keys on. */
  versions: DataVersions;
  queries: QueryService;
  /** One order's touches and credit (docs/journeys.md). */
  journeys: JourneyService;
  /** The analysts' SQL console (docs/sql-console.md). */
  console: ConsoleService;
  /** Dashboard views (docs/dashboards.md). */
  dashboards: DashboardService;
  /** ClickHouse's HTTP interface over the console (docs/bi.md). */
  clickhouse: ClickHouseHttpService;
  costs: CostService;
  products: ProductService;
  /** Outbox → event bus (runs only in `serve`; docs/events.md). */
  relay: OutboxRelay;
  /** Per-order cost snapshots (docs/costs.md "Per-order snapshots"). */
  recalc: RecalcService;
  /** Consumer of orders.changed / costs.changed (runs only in `serve`). */
  recalcWorker: RecalcWorker;
  /** Files identity sightings into the graph (runs in `serve`; `catchUp` elsewhere; docs/identity.md). */
  identityWorker: IdentityWorker;
  /** Keeps the derived tables current (runs in `serve` when DERIVED_TABLES; docs/derived-tables.md). */
  derivedWorker: DerivedWorker;
  /**
   * Moves everything written so far to where queries see it: outbox → bus, then the identity worker,
   * then the derived tables with no margin, for a caller that knows its writes are done (tests, the CLI
   * after an import). `derived: false` leaves the derived tables behind (tests of the raw fallback).
   * Returns the identity lag left.
   */
  settle(timeoutMs?: number, options?: { derived?: boolean }): ReturnType<IdentityWorker["catchUp"]>;
}

/** The warehouse's merges running now and its active parts, in its own database (the metrics gauges). */
const WAREHOUSE_ACTIVITY_SQL = `SELECT
  (SELECT count() FROM system.merges WHERE database = currentDatabase()) AS merges,
  (SELECT count() FROM system.parts WHERE active AND database = currentDatabase()) AS parts`;

export function buildServices(stores: Stores, config: Config, log: Logger): Services {
  const versions = new DataVersions(stores.kv);
  const assigner = new IdentityAssigner();
  const identityWorker = new IdentityWorker(
    stores.bus,
    new IdentityGraph(stores.identity),
    new OwnSession(stores.warehouse),
    assigner,
    {
      log,
      onChanged: (pixelIds) => versions.bump(pixelIds),
    },
  );
  const identity = new IdentityFeed(stores.bus, assigner, () => identityWorker.wake());
  const destinations = new DestinationService(stores.sql, {
    onError: (err) => log.warn({ err }, "invalid destination config"),
  });
  const forwarder = new Forwarder(stores.sql, destinations, {
    onError: (err) => log.warn({ err }, "forwarding worker error"),
  });
  const ingestGroups = new GroupCommitter(
    {
      dedup: stores.dedup,
      warehouse: stores.warehouse,
      identity,
      forwarder: forwarder.queue,
      log,
      onStored: (pixelIds) => versions.bump(pixelIds),
    },
    {
      maxRows: config.INGEST_FLUSH_ROWS,
      maxDelayMs: config.INGEST_FLUSH_MS,
      concurrency: config.INGEST_GROUPS,
      dedupWait: { inflightWaitMs: config.DEDUP_INFLIGHT_WAIT_MS },
    },
  );
  const relay = new OutboxRelay(stores.sql, stores.bus, {
    onError: (err) => log.warn({ err }, "outbox relay error; retrying"),
  });
  const recalc = new RecalcService(
    stores.sql,
    new OwnSession(stores.warehouse),
    stores.kv,
    versions,
    (pixelId, keys) => loadVariantCostFacts(stores.sql, pixelId, keys),
  );
  const accounts = new AccountService(stores.sql, () => relay.wake());
  const recalcWorker = new RecalcWorker(stores.bus, recalc, { log });
  // What `pixelhouse status`, /readyz and the lag gauges of /metrics ask (docs/operations.md).
  registerConsumer("outbox-relay", () => relay.backlog());
  registerConsumer("forwarding", () => forwarder.queue.backlog());
  registerConsumer(RECALC_GROUP, () => recalcWorker.lag());
  registerConsumer(IDENTITY_GROUP, () => identityWorker.lag());
  registerWarehouseActivity(async () => {
    // A scrape never opens a warehouse nothing else has opened, nor waits long on one that hangs.
    if (stores.warehouse instanceof LazyWarehouse && !stores.warehouse.opened) return null;
    const [row] = await stores.warehouse.query<{ merges: string; parts: string }>(
      WAREHOUSE_ACTIVITY_SQL,
      {},
      { signal: AbortSignal.timeout(5_000) },
    );
    return { merges: Number(row?.merges ?? 0), parts: Number(row?.parts ?? 0) };
  });
  // 0 readers: statements run on the warehouse's own connection.
  const readers =
    config.QUERY_READERS > 0
      ? new StatementReaders(() => stores.warehouse.openReader(), config.QUERY_READERS)
      : undefined;
  const freshIds = new FreshIds(readers ?? stores.warehouse, config.DERIVED_COHORT_INTERVAL_MS);
  const creditShapes = new CreditShapes(stores.warehouse);
  const queries = new QueryService({
    sql: stores.sql,
    warehouse: stores.warehouse,
    kv: stores.kv,
    versions,
    log,
    accountCacheMs: config.ACCOUNT_CACHE_MS,
    ...(readers ? { readers } : {}),
    ...(config.DERIVED_TABLES
      ? {
          fresh: (
            pixelId: string,
            version: string,
            options?: { customers?: boolean; creditHours?: boolean },
          ) => freshIds.of(pixelId, version, options),
          credits: {
            of: (pixelId: string, shapes: readonly string[]) => creditShapes.of(pixelId, shapes),
            ask: (pixelId: string, shape: string) => creditShapes.ask(pixelId, shape),
          },
          cohortBuild: (pixelId: string, version: string, wanted: { timezone: string; mask: number }) =>
            freshIds.cohorts(pixelId, version, wanted),
        }
      : {}),
  });
  const derivedWorker = new DerivedWorker(new OwnSession(stores.warehouse), {
    log,
    marginMs: config.DERIVED_MARGIN_MS,
    pollIntervalMs: config.DERIVED_REFRESH_MS,
    exclusive: (key, fn) => stores.sql.exclusive(key, fn),
    cohortTarget: (pixelId) => queries.cohortTarget(pixelId),
    cohortIntervalMs: config.DERIVED_COHORT_INTERVAL_MS,
    creditIntervalMs: config.DERIVED_CREDIT_INTERVAL_MS,
    creditCells: creditCellsSql,
  });
  if (config.DERIVED_TABLES) {
    registerConsumer(DERIVED_CONSUMER, async () => {
      const lag = await derivedWorker.lag();
      return { messages: lag.pixels, seconds: lag.seconds };
    });
  }
  const console = new ConsoleService(stores.warehouse, {
    limits: {
      maxExecutionSeconds: config.CONSOLE_MAX_EXECUTION_SECONDS,
      maxRowsToRead: config.CONSOLE_MAX_ROWS_TO_READ,
      maxBytesToRead: config.CONSOLE_MAX_BYTES_TO_READ,
      maxMemoryBytes: config.CONSOLE_MAX_MEMORY_BYTES,
      maxResultBytes: config.CONSOLE_MAX_RESULT_BYTES,
      maxThreads: config.CONSOLE_MAX_THREADS ?? defaultConsoleThreads(config.CONSOLE_READERS),
    },
    readers: config.CONSOLE_READERS,
    readersPerPixel: config.CONSOLE_READERS_PER_PIXEL,
    queueTimeoutMs: config.CONSOLE_QUEUE_TIMEOUT_MS,
    ...(config.CLICKHOUSE_CONSOLE_USER
      ? { user: { username: config.CLICKHOUSE_CONSOLE_USER, password: config.CLICKHOUSE_CONSOLE_PASSWORD } }
      : {}),
  });
  const keys = new ApiKeyService(stores.sql, stores.keySecret, config.KEY_CACHE_MS, (err, task) =>
    log.warn(
      { err },
      task === "last-used"
        ? "could not record key last_used_at"
        : "could not re-read a cached key (it is served until its cache time is up)",
    ),
  );
  return {
    keys,
    accounts,
    pixels: new PixelService(stores.sql),
    ingest: new IngestService(ingestGroups),
    ingestGroups,
    destinations,
    forwarder,
    sync: new SyncService(stores.sql, stores.warehouse, identity, stores.bus, (pixelId) =>
      pixelId === null ? versions.bumpGlobal() : versions.bump([pixelId]),
    ),
    versions,
    queries,
    journeys: new JourneyService(readers ?? stores.warehouse),
    console,
    clickhouse: new ClickHouseHttpService(keys, console, stores.warehouse, {
      database: config.CLICKHOUSE_DATABASE,
      maxRows: config.CLICKHOUSE_HTTP_MAX_ROWS,
    }),
    dashboards: new DashboardService(stores.sql),
    costs: new CostService(stores.sql, (accountId) => versions.bumpAccount(accountId)),
    products: new ProductService(stores.sql),
    relay,
    recalc,
    recalcWorker,
    identityWorker,
    derivedWorker,
    async settle(timeoutMs, options) {
      while ((await relay.runOnce()).claimed > 0);
      const lag = await identityWorker.catchUp(timeoutMs);
      if (config.DERIVED_TABLES && options?.derived !== false) await derivedWorker.runOnce(0);
      return lag;
    },
  };
}
