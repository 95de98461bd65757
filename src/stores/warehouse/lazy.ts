import type { Params, QueryOptions, QueryStats, ReaderOptions, WarehouseStore } from "./port.js";

/**
 * A warehouse opened on first use. chDB alone costs ~150 MB of resident memory the moment it is
 * loaded, and most commands (keys, pixels, destinations) never touch the warehouse: they get this
 * instead, and pay only if they query. `whenOpened` hooks run once, right after the open (pending
 * warehouse migrations), before the first statement.
 */
export class LazyWarehouse implements WarehouseStore {
  private opening: Promise<WarehouseStore> | undefined;
  private closed = false;
  private readonly hooks: ((wh: WarehouseStore) => Promise<void>)[] = [];

  constructor(
    readonly kind: "clickhouse" | "chdb",
    readonly database: string,
    private readonly open: () => Promise<WarehouseStore>,
  ) {}

  get streamStartBlocks(): boolean {
    return this.kind === "chdb";
  }

  get materializedCte(): boolean {
    return this.kind === "chdb";
  }

  /** Whether the engine is loaded (a command that never queried leaves it false). */
  get opened(): boolean {
    return this.opening !== undefined;
  }

  /** Runs `hook` once the warehouse is open (at once when it already is). */
  async whenOpened(hook: (wh: WarehouseStore) => Promise<void>): Promise<void> {
    if (this.opening) await hook(await this.opening);
    else this.hooks.push(hook);
  }

  private store(): Promise<WarehouseStore> {
    if (this.closed) return Promise.reject(new Error("the warehouse store is closed"));
    this.opening ??= (async () => {
      const wh = await this.open();
      try {
        for (const hook of this.hooks) await hook(wh);
      } catch (err) {
        await wh.close().catch(() => {});
        throw err;
      }
      return wh;
    })();
    // A failed open is not remembered: the next call tries again (the engine may come back).
    this.opening.catch(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  async query<T = Record<string, unknown>>(
    sql: string,
    params?: Params,
    options?: QueryOptions,
  ): Promise<T[]> {
    return (await this.store()).query<T>(sql, params, options);
  }

  async queryWithStats<T = Record<string, unknown>>(
    sql: string,
    params?: Params,
    options?: QueryOptions,
  ): Promise<{ rows: T[]; stats: QueryStats }> {
    return (await this.store()).queryWithStats<T>(sql, params, options);
  }

  async queryText(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ text: string; stats: QueryStats }> {
    return (await this.store()).queryText(sql, params, options);
  }

  async queryBytes(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }> {
    return (await this.store()).queryBytes(sql, params, options);
  }

  async *queryStream(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): AsyncIterable<Uint8Array> {
    yield* (await this.store()).queryStream(sql, params, options);
  }

  async openReader(options?: ReaderOptions): Promise<WarehouseStore> {
    return (await this.store()).openReader(options);
  }

  async command(sql: string, params?: Params, options?: QueryOptions): Promise<void> {
    return (await this.store()).command(sql, params, options);
  }

  async insert(
    table: string,
    rows: readonly Record<string, unknown>[],
    options?: QueryOptions,
  ): Promise<void> {
    return (await this.store()).insert(table, rows, options);
  }

  async ping(): Promise<void> {
    return (await this.store()).ping();
  }

  async close(): Promise<void> {
    this.closed = true;
    const opening = this.opening;
    this.opening = undefined;
    if (opening) await (await opening.catch(() => null))?.close();
  }
}
