import { type Config, ConfigError, loadConfig } from "../config.js";
import { AppError } from "../errors.js";
import { createLogger } from "../log.js";
import { buildServices, type Services } from "../services.js";
import { DataDirLockedError } from "../stores/data-dir-lock.js";
import { IdentityThreadError } from "../stores/identity/port.js";
import { openStores, StoreConfigError, type Stores } from "../stores/index.js";
import { KvUnavailableError } from "../stores/kv/port.js";
import { MigrationError, migrate } from "../stores/migrations.js";
import { SqlUnavailableError } from "../stores/sql/port.js";
import { WarehouseUnavailableError } from "../stores/warehouse/port.js";

export interface CliContext {
  config: Config;
  stores: Stores;
  services: Services;
}

/** Opens config, stores (applying pending migrations) and services for one command, then closes them. */
export async function withContext<T>(purpose: string, fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL);
  // The warehouse opens only if the command queries it (keys, pixels, destinations never do).
  const stores = await openStores(config, purpose, { lazyWarehouse: true });
  try {
    await migrate(stores.sql, stores.warehouse);
    return await fn({ config, stores, services: buildServices(stores, config, log) });
  } finally {
    await stores.close();
  }
}

/**
 * Runs a writing command with the relay and the identity worker going alongside it, so identities
 * are filed while it writes; then, with `wait`, until everything it wrote is filed (an embedded
 * store has no other process to do it until the next `serve`). Returns the lag left.
 */
export async function whileFilingIdentities<T>(
  services: Services,
  wait: boolean,
  fn: () => Promise<T>,
): Promise<{ result: T; lag: { messages: number; seconds: number } }> {
  await services.identityWorker.ready();
  services.relay.start();
  services.identityWorker.start();
  try {
    const result = await fn();
    await services.relay.stop();
    await services.identityWorker.stop();
    const lag = wait ? await services.settle(24 * 3_600_000) : await services.identityWorker.lag();
    return { result, lag };
  } finally {
    await services.relay.stop();
    await services.identityWorker.stop();
  }
}

const UNREACHABLE: [new (...a: never[]) => Error, string][] = [
  [SqlUnavailableError, "the Postgres store (DATABASE_URL, or PGlite in DATA_DIR)"],
  [WarehouseUnavailableError, "the ClickHouse store (CLICKHOUSE_URL, or chDB in DATA_DIR)"],
  [KvUnavailableError, "the Redis store (REDIS_URL)"],
  [IdentityThreadError, "the identity graph (LevelDB in DATA_DIR/identity)"],
];

/** Errors a user can act on print one line; anything else prints its stack. */
export function reportCliError(err: unknown): never {
  for (const [type, store] of UNREACHABLE) {
    if (err instanceof type) {
      process.stderr.write(`pixelhouse: could not reach ${store}: ${err.message.split("\n")[0]}\n`);
      process.exit(1);
    }
  }
  const expected =
    err instanceof ConfigError ||
    err instanceof StoreConfigError ||
    err instanceof DataDirLockedError ||
    err instanceof MigrationError ||
    err instanceof AppError;
  if (expected) process.stderr.write(`pixelhouse: ${(err as Error).message}\n`);
  else process.stderr.write(`pixelhouse: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(err instanceof DataDirLockedError ? 3 : 1);
}

/** `--json` prints one JSON document; otherwise the human lines. */
export function output(json: boolean | undefined, data: unknown, human: string[]): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human.join("\n")}\n`);
}
