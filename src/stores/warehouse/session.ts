import { LazyWarehouse } from "./lazy.js";
import type { Params, QueryOptions, QueryStats, ReaderOptions, WarehouseStore } from "./port.js";

/**
 * A warehouse connection of one background worker's own: a reader opened on first use. chDB runs a
 * session's statements one at a time, so a worker's statements on the main session (a derived-table
 * refresh: 50–150 ms) queue the ingestion INSERTs behind them; on a session of its own they run
 * beside them. On chDB its calls also run one at a time, because a reader binds values as session
 * parameters, which two callers at once would overwrite (the worker's loop and a lag probe, say); a
 * ClickHouse server's reader is a client whose requests bind their own values, and is not serialized.
 * A stream holds its turn until it is read to the end or left (`return`): a caller must not use the
 * same session inside its loop. The reader belongs to the store it came from and is closed with it;
 * `close` here closes nothing.
 */
export class OwnSession implements WarehouseStore {
  private readonly lazy: LazyWarehouse;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly parent: WarehouseStore) {
    this.lazy = new LazyWarehouse(parent.kind, parent.database, () => parent.openReader());
  }

  get kind(): WarehouseStore["kind"] {
    return this.parent.kind;
  }
  get database(): string {
    return this.parent.database;
  }
  get streamStartBlocks(): boolean {
    return this.parent.streamStartBlocks;
  }
  get materializedCte(): boolean {
    return this.parent.materializedCte;
  }

  /** Waits for the calls before it; the returned function lets the next one go. */
  private async turn(): Promise<() => void> {
    if (this.parent.kind !== "chdb") return () => {};
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const before = this.tail;
    this.tail = before.then(() => mine);
    await before;
    return done;
  }

  private async serial<T>(work: () => Promise<T>): Promise<T> {
    const done = await this.turn();
    try {
      return await work();
    } finally {
      done();
    }
  }

  query<T = Record<string, unknown>>(sql: string, params?: Params, options?: QueryOptions): Promise<T[]> {
    return this.serial(() => this.lazy.query<T>(sql, params, options));
  }

  queryWithStats<T = Record<string, unknown>>(
    sql: string,
    params?: Params,
    options?: QueryOptions,
  ): Promise<{ rows: T[]; stats: QueryStats }> {
    return this.serial(() => this.lazy.queryWithStats<T>(sql, params, options));
  }

  queryText(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ text: string; stats: QueryStats }> {
    return this.serial(() => this.lazy.queryText(sql, params, options));
  }

  queryBytes(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): Promise<{ bytes: Uint8Array; stats: QueryStats }> {
    return this.serial(() => this.lazy.queryBytes(sql, params, options));
  }

  async *queryStream(
    sql: string,
    params: Params | undefined,
    options: QueryOptions & { format: string },
  ): AsyncIterable<Uint8Array> {
    const done = await this.turn();
    try {
      yield* this.lazy.queryStream(sql, params, options);
    } finally {
      done();
    }
  }

  openReader(options?: ReaderOptions): Promise<WarehouseStore> {
    return this.parent.openReader(options);
  }

  command(sql: string, params?: Params, options?: QueryOptions): Promise<void> {
    return this.serial(() => this.lazy.command(sql, params, options));
  }

  insert(table: string, rows: readonly Record<string, unknown>[], options?: QueryOptions): Promise<void> {
    return this.serial(() => this.lazy.insert(table, rows, options));
  }

  ping(): Promise<void> {
    return this.serial(() => this.lazy.ping());
  }

  async close(): Promise<void> {}
}
