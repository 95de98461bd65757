import { type WarehouseStore, WarehouseUnavailableError } from "../stores/warehouse/port.js";

/**
 * Reader connections for the query API's statements, at most `size` open, opened on first use.
 * chDB runs one query at a time per session and every bound query of the main session in one
 * process-wide queue, so the statements of one query (orders, refunds, ads × periods) and the queries
 * of a dashboard would otherwise wait on each other and on ingestion's inserts. On a readers' session
 * the values travel as session parameters and the statements run side by side. With a ClickHouse
 * server a reader is a client of its own.
 */
export class StatementReaders {
  private readonly idle: WarehouseStore[] = [];
  private readonly waiters: { resolve: (r: WarehouseStore) => void; reject: (err: unknown) => void }[] = [];
  private opened = 0;

  constructor(
    private readonly open: () => Promise<WarehouseStore>,
    private readonly size: number,
  ) {}

  /** Runs `work` on a reader of its own; a reader that reports the store unavailable is closed. */
  async run<T>(work: (reader: WarehouseStore) => Promise<T>): Promise<T> {
    const reader = await this.acquire();
    try {
      const out = await work(reader);
      this.release(reader);
      return out;
    } catch (err) {
      if (err instanceof WarehouseUnavailableError) this.discard(reader);
      else this.release(reader);
      throw err;
    }
  }

  /** `query` of the store, on a reader. */
  query<T = Record<string, unknown>>(
    sql: string,
    params?: Parameters<WarehouseStore["query"]>[1],
  ): Promise<T[]> {
    return this.run((r) => r.query<T>(sql, params));
  }

  private async acquire(): Promise<WarehouseStore> {
    const ready = this.idle.pop();
    if (ready) return ready;
    if (this.opened < this.size) {
      this.opened++;
      try {
        return await this.open();
      } catch (err) {
        this.opened--;
        throw err;
      }
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private release(reader: WarehouseStore): void {
    const next = this.waiters.shift();
    if (next) next.resolve(reader);
    else this.idle.push(reader);
  }

  private discard(reader: WarehouseStore): void {
    this.opened--;
    reader.close().catch(() => undefined);
    // The first waiter gets a fresh reader in place of the discarded one, or the failure to open it.
    const next = this.waiters.shift();
    if (next) {
      this.opened++;
      this.open().then(next.resolve, (err: unknown) => {
        this.opened--;
        next.reject(err);
      });
    }
  }
}
