import { describe, expect, it } from "vitest";
import { ConsoleBusyError, ConsoleSaturatedError } from "../../src/console/errors.js";
import { ReaderPool } from "../../src/console/pool.js";
import { ConsoleService, READER_TIMEOUT_MARGIN_MS } from "../../src/console/service.js";
import type { ReaderOptions, WarehouseStore } from "../../src/stores/warehouse/port.js";

/** A pool over fake readers; `hold(pixel)` keeps a reader until the returned release is called. */
function pool(limits: { size: number; perPixel: number; queueTimeoutMs?: number }) {
  let opened = 0;
  const p = new ReaderPool(
    async () => ({ id: ++opened }) as unknown as WarehouseStore,
    {},
    { queueTimeoutMs: 200, holdLimitMs: 30_000, ...limits },
  );
  const hold = (pixel: string, signal?: AbortSignal) => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let got!: (id: number) => void;
    const reader = new Promise<number>((r) => {
      got = r;
    });
    const done = p.use(
      pixel,
      async (r) => {
        got((r as unknown as { id: number }).id);
        await released;
      },
      signal,
    );
    return { reader, release, done };
  };
  return { p, hold, opened: () => opened };
}

describe("ReaderPool", () => {
  it("opens readers on first use, up to its size, and reuses them", async () => {
    const { p, hold, opened } = pool({ size: 3, perPixel: 3 });
    const x = hold("a");
    const y = hold("b");
    expect([await x.reader, await y.reader].sort()).toEqual([1, 2]);
    x.release();
    await x.done;
    const z = hold("c");
    expect(await z.reader).toBe(1);
    expect(opened()).toBe(2);
    expect(p.held()).toBe(2);
    y.release();
    z.release();
    await Promise.all([y.done, z.done]);
    expect(p.held()).toBe(0);
  });

  it("caps one pixel's readers: its next query waits while other pixels still get one", async () => {
    const { p, hold } = pool({ size: 4, perPixel: 2, queueTimeoutMs: 5000 });
    const a1 = hold("a");
    const a2 = hold("a");
    await Promise.all([a1.reader, a2.reader]);
    const a3 = hold("a");
    const b1 = hold("b");
    await b1.reader;
    expect(p.held("a")).toBe(2);
    expect(p.held("b")).toBe(1);
    // a3 gets a reader as soon as one of a's own is released, not before.
    a1.release();
    await a3.reader;
    expect(p.held("a")).toBe(2);
    for (const h of [a2, a3, b1]) h.release();
    await Promise.all([a1.done, a2.done, a3.done, b1.done]);
  });

  it("refuses with 429 and Retry-After when the pixel holds its share past the wait", async () => {
    const { hold } = pool({ size: 4, perPixel: 2 });
    const held = [hold("a"), hold("a")];
    await Promise.all(held.map((h) => h.reader));
    const err = await hold("a").done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConsoleBusyError);
    expect((err as ConsoleBusyError).status).toBe(429);
    expect((err as Error).message).toMatch(/2 already running \(CONSOLE_READERS_PER_PIXEL\)/);
    // The oldest of the pixel's queries ends at the latest after its 30 s limit.
    const retry = Number((err as ConsoleBusyError).headers()["Retry-After"]);
    expect(retry).toBeGreaterThanOrEqual(29);
    expect(retry).toBeLessThanOrEqual(30);
    for (const h of held) h.release();
  });

  it("refuses with 503 when other pixels hold every reader past the wait", async () => {
    const { hold } = pool({ size: 2, perPixel: 1 });
    const held = [hold("a"), hold("b")];
    await Promise.all(held.map((h) => h.reader));
    const err = await hold("c").done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConsoleSaturatedError);
    expect((err as ConsoleSaturatedError).status).toBe(503);
    expect((err as Error).message).toMatch(/all 2 console readers/);
    expect((err as ConsoleSaturatedError).headers()["Retry-After"]).toBeDefined();
    for (const h of held) h.release();
  });

  it("serves waiters first come, first served among pixels under their cap", async () => {
    const { hold } = pool({ size: 2, perPixel: 2, queueTimeoutMs: 5000 });
    const first = [hold("a"), hold("a")];
    await Promise.all(first.map((h) => h.reader));
    const order: string[] = [];
    const b = hold("b");
    const c = hold("c");
    void b.reader.then(() => order.push("b"));
    void c.reader.then(() => order.push("c"));
    first[0]!.release();
    await b.reader;
    first[1]!.release();
    await c.reader;
    expect(order).toEqual(["b", "c"]);
    b.release();
    c.release();
    await Promise.all([b.done, c.done]);
  });

  it("lets a caller that went away leave the queue at once", async () => {
    const { p, hold } = pool({ size: 1, perPixel: 1, queueTimeoutMs: 60_000 });
    const a = hold("a");
    await a.reader;
    const gone = new AbortController();
    const waiting = hold("b", gone.signal);
    gone.abort(new Error("client closed"));
    await expect(waiting.done).rejects.toThrow("client closed");
    a.release();
    await a.done;
    // The reader went back to the pool, not to the departed waiter.
    const next = hold("c");
    expect(await next.reader).toBe(1);
    expect(p.held()).toBe(1);
    next.release();
  });

  it("never counts a pixel beyond CONSOLE_READERS when its cap is larger", async () => {
    const { p, hold } = pool({ size: 2, perPixel: 8 });
    const held = [hold("a"), hold("a")];
    await Promise.all(held.map((h) => h.reader));
    const err = await hold("a").done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConsoleBusyError);
    expect(p.held("a")).toBe(2);
    for (const h of held) h.release();
  });
});

describe("ConsoleService readers", () => {
  it("open with an HTTP timeout past the query's own time limit, up to the 3600 s maximum", async () => {
    for (const seconds of [30, 3600]) {
      const opened: ReaderOptions[] = [];
      const reader = {
        queryText: async () => {
          throw new Error("stop here");
        },
      } as unknown as WarehouseStore;
      const warehouse = {
        database: "db",
        command: async () => undefined,
        openReader: async (o: ReaderOptions) => {
          opened.push(o);
          return reader;
        },
      } as unknown as WarehouseStore;
      const service = new ConsoleService(warehouse, {
        limits: { maxExecutionSeconds: seconds, maxRowsToRead: 1, maxBytesToRead: 1, maxMemoryBytes: 1 },
        readers: 1,
      });
      await expect(service.run("px", { sql: "SELECT 1" })).rejects.toThrow("stop here");
      expect(opened).toEqual([
        { database: "db_console", requestTimeoutMs: seconds * 1000 + READER_TIMEOUT_MARGIN_MS },
      ]);
    }
  });
});
