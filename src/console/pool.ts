import type { ReaderOptions, WarehouseStore } from "../stores/warehouse/port.js";

/**
 * Console queries run on reader connections of their own, at most `size` at once, opened on first
 * use. With chDB a session runs one query at a time, so a runaway query holds only its own reader:
 * ingestion, the query API and other console callers keep answering while it runs to its limit.
 */
export class ReaderPool {
  private readonly idle: WarehouseStore[] = [];
  private readonly waiting: ((reader: WarehouseStore) => void)[] = [];
  private opened = 0;
  private opening: Promise<void> | undefined;

  constructor(
    private readonly open: (options: ReaderOptions) => Promise<WarehouseStore>,
    private readonly options: ReaderOptions,
    private readonly size: number,
  ) {}

  async use<T>(work: (reader: WarehouseStore) => Promise<T>): Promise<T> {
    const reader = await this.acquire();
    try {
      return await work(reader);
    } finally {
      this.release(reader);
    }
  }

  private async acquire(): Promise<WarehouseStore> {
    const ready = this.idle.pop();
    if (ready) return ready;
    if (this.opened < this.size) {
      this.opened++;
      try {
        // Opening a chDB session is serialised so two first requests never race on the engine.
        const previous = this.opening;
        let done!: () => void;
        this.opening = new Promise<void>((resolve) => {
          done = resolve;
        });
        await previous;
        try {
          return await this.open(this.options);
        } finally {
          done();
        }
      } catch (err) {
        this.opened--;
        throw err;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(reader: WarehouseStore): void {
    const next = this.waiting.shift();
    if (next) next(reader);
    else this.idle.push(reader);
  }
}
