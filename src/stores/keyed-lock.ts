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
