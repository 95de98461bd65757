/**
 * Runs functions one at a time per key within this process (other keys go on in parallel). Callers
 * that must also exclude other processes take a store lock inside it.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(fn, fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      // The last caller of a key leaves nothing behind.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** At most `size` holders at once; the others wait in arrival order. */
export class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held < this.size) this.held++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      // A waiter takes the slot over as it is; otherwise it is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.held--;
    }
  }
}
