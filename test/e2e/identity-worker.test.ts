/**
 * Identity resolution after the write (docs/identity.md), as `serve` runs it: the identity worker
 * files sightings in the background; GET /db-mgmt/api/identity/lag says how far it trails and, with
 * `waitMs`, waits for it; a merge it files reaches queries, cached answers included.
 *
 * Worked example: visitor anon-v lands from google (a touch) on Aug 9; an order of customer
 * v@example.com is placed Aug 10. Until an event links anon-v to that email, the order has no
 * touch: last click credits (none) 1 order / 50. Once the linking event is filed, google gets it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityAssigner } from "../../src/identity/assign.js";
import { IdentityGraph } from "../../src/identity/graph.js";
import { IdentityWorker } from "../../src/identity/worker.js";
import type { TestApp } from "../helpers/app.js";
import { sendOk } from "./ingest-helpers.js";
import { event, order, type Response, sums, touch } from "./query-fixtures.js";
import { type QuerySuite, startQuerySuite } from "./query-setup.js";

let suite: QuerySuite;
let app: TestApp;
beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  app = suite.app;
});
afterAll(async () => {
  await app?.services.identityWorker.stop();
  await app?.close();
});

interface Lag {
  messages: number;
  seconds: number;
  caughtUp: boolean;
  filed: number;
  p50Ms: number | null;
  p99Ms: number | null;
}
const lag = async (query = ""): Promise<{ status: number; body: Lag }> => {
  const res = await app.call("GET", `/db-mgmt/api/identity/lag${query}`, {
    key: suite.px.key,
    pixelId: suite.px.pixelId,
  });
  return { status: res.status, body: res.body as Lag };
};
const lastClick = (headers: Record<string, string> = {}): Promise<Response> =>
  suite.post(
    {
      dimension: "attribution.source",
      dateRange: { start: "2026-08-10", end: "2026-08-10" },
      timezone: "UTC",
      attributionModel: "last_click",
      attributionWindow: 30,
    },
    { path: "/db-mgmt/api/query-attribution", headers },
  );
const credit = (res: Response) => {
  const orders = sums(res, "attribution.orders");
  const revenue = sums(res, "attribution.revenue");
  return Object.fromEntries(Object.keys(orders).map((k) => [k, [orders[k], revenue[k]]]));
};

describe("the identity worker", () => {
  it("a merge filed after the write reaches queries, cached answers included", async () => {
    await suite.load.events([touch("anon-v", "2026-08-09T10:00:00Z", "utm_source=google&utm_medium=cpc")]);
    await suite.load.orders([
      order("OV", "2026-08-10T10:00:00Z", "USD", 50, { customer: { email: "v@example.com" } }),
    ]);
    expect(credit(await lastClick())).toEqual({ "(none)": [1, 50] });

    // The linking event is acknowledged; nobody files it yet (the worker is not running).
    await sendOk(app, suite.px, [
      event("page_view", "anon-v", "2026-08-11T10:00:00Z", { userProperties: { emails: ["v@example.com"] } }),
    ]);
    const behind = await lag();
    expect(behind.status).toBe(200);
    expect(behind.body.messages).toBe(1);
    expect(behind.body.caughtUp).toBe(false);
    expect(behind.body.seconds).toBeGreaterThanOrEqual(0);
    // The cached answer from before is still what there is to see.
    expect(credit(await lastClick())).toEqual({ "(none)": [1, 50] });

    // As in `serve`: the worker runs, and the lag endpoint waits for it.
    app.services.identityWorker.start();
    const caught = await lag("?waitMs=20000");
    expect(caught.body).toMatchObject({ messages: 0, seconds: 0, caughtUp: true });
    expect(caught.body.filed).toBeGreaterThanOrEqual(1);
    expect(caught.body.p50Ms).toBeGreaterThanOrEqual(0);
    // Without no-cache: the merge bumped the pixel's data version, so the cached answer is not reused.
    expect(credit(await lastClick())).toEqual({ google: [1, 50] });
    expect(credit(await lastClick({ "Cache-Control": "no-cache" }))).toEqual({ google: [1, 50] });
  });

  it("refuses a waitMs that is not 0-30000 ms, naming it", async () => {
    for (const bad of ["?waitMs=abc", "?waitMs=30001", "?waitMs=-1", "?wait=5"]) {
      const res = await lag(bad);
      expect(res.status, bad).toBe(400);
      expect(JSON.stringify(res.body), bad).toMatch(/waitMs|wait/);
    }
  });

  it("needs analytics:read", async () => {
    const writer = await app.pixelWithKey(["events:write"]);
    const res = await app.call("GET", "/db-mgmt/api/identity/lag", {
      key: writer.key,
      pixelId: writer.pixelId,
    });
    expect(res.status).toBe(403);
  });
});

describe("the identity worker when the warehouse refuses its links", () => {
  it("keeps the message, and its redelivery writes every link of the identities it touched", async () => {
    // One chDB per process: the suite's app, with its background worker stopped.
    await app.services.identityWorker.stop();
    const other = app;
    const px = await other.pixelWithKey(["events:write"]);
    // Two visitors, then an event that merges them.
    await sendOk(other, px, [event("page_view", "anon-a", "2026-08-01T10:00:00Z")]);
    await sendOk(other, px, [event("page_view", "anon-b", "2026-08-01T11:00:00Z")]);
    expect((await other.services.settle()).messages).toBe(0);
    await sendOk(other, px, [
      event("page_view", "anon-b", "2026-08-02T10:00:00Z", { userProperties: { userIds: ["u-1"] } }),
      event("page_view", "anon-a", "2026-08-02T11:00:00Z", { userProperties: { userIds: ["u-1"] } }),
    ]);
    // A real warehouse whose next identity_links insert fails (after the graph committed).
    const real = other.stores.warehouse;
    let refuse = true;
    const faulty = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === "insert") {
          return async (table: string, rows: readonly Record<string, unknown>[]) => {
            if (table === "identity_links" && refuse) {
              refuse = false;
              throw new Error("injected: warehouse refused the links");
            }
            return target.insert(table, rows);
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const worker = new IdentityWorker(
      other.stores.bus,
      new IdentityGraph(other.stores.identity),
      faulty,
      new IdentityAssigner(),
      {
        claimIdleMs: 0,
      },
    );
    expect(await worker.runOnce()).toEqual({ delivered: 1, failed: 1 });
    const links = async () =>
      Object.fromEntries(
        (
          await real.query<{ k: string; c: string }>(
            `SELECT concat(alias_type, ':', alias_value) AS k, argMax(canonical_id, version) AS c FROM identity_links
             WHERE pixel_id = {pixel:String} GROUP BY alias_type, alias_value`,
            { pixel: px.pixelId },
          )
        ).map((r) => [r.k, r.c]),
      );
    // The graph merged the two in Postgres; the warehouse still has them apart.
    const before = await links();
    expect(before["identity:anon-a"]).not.toBe(before["identity:anon-b"]);
    expect(before["user:u-1"]).toBeUndefined();
    // Redelivered (claimIdleMs 0): repair mode writes every alias of the merged identity.
    expect(await worker.runOnce()).toEqual({ delivered: 1, failed: 0 });
    const after = await links();
    const root = after["identity:anon-a"];
    expect(after["identity:anon-b"]).toBe(root);
    expect(after["user:u-1"]).toBe(root);
    expect((await worker.lag()).messages).toBe(0);
  });
});

describe("the identity worker behind a lag of large messages", () => {
  // Four requests of two new visitors each: four messages of two sightings, one pixel.
  const lagOfFour = async () => {
    await app.services.identityWorker.stop();
    const px = await app.pixelWithKey(["events:write"]);
    for (const n of [1, 2, 3, 4]) {
      await sendOk(app, px, [
        event("page_view", `anon-${n}a`, "2026-08-01T10:00:00Z"),
        event("page_view", `anon-${n}b`, "2026-08-01T11:00:00Z"),
      ]);
    }
    return px;
  };
  /**
   * A worker on the real stores whose filings, reads and links writes are recorded; `failFiling`
   * (1-based) throws in the graph, `failWrite` (1-based) in the warehouse, and `holdWrite` keeps
   * run n's links write (1-based) waiting until run n + 1's filing into the graph has ended.
   */
  const recorded = (opts: { failFiling?: number; failWrite?: number; holdWrite?: number } = {}) => {
    const filings: number[] = [];
    const asked: number[] = [];
    const steps: string[] = [];
    const filed = new Map<number, () => void>();
    const filedAt = (n: number) => new Promise<void>((resolve) => filed.set(n, resolve));
    const held = opts.holdWrite ? filedAt(opts.holdWrite + 1) : null;
    const graph = new IdentityGraph(app.stores.identity);
    const apply = graph.apply.bind(graph);
    graph.apply = async (pixelId, sightings, options) => {
      filings.push(sightings.length);
      const n = filings.length;
      steps.push(`file ${n}`);
      try {
        if (n === opts.failFiling) throw new Error("injected: graph unavailable");
        const result = await apply(pixelId, sightings, options);
        steps.push(`filed ${n}`);
        return result;
      } finally {
        filed.get(n)?.();
      }
    };
    const bus = app.stores.bus;
    const reading = new Proxy(bus, {
      get(target, prop, receiver) {
        if (prop === "read")
          return (...args: Parameters<typeof bus.read>) => {
            asked.push(args[3]?.count ?? -1);
            return target.read(...args);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const warehouse = app.stores.warehouse;
    let writes = 0;
    const writing = new Proxy(warehouse, {
      get(target, prop, receiver) {
        if (prop === "insert")
          return async (table: string, rows: readonly Record<string, unknown>[]) => {
            if (table !== "identity_links") return target.insert(table, rows);
            const n = ++writes;
            steps.push(`write ${n}`);
            if (n === opts.holdWrite) await held;
            if (n === opts.failWrite) throw new Error("injected: warehouse refused the links");
            await target.insert(table, rows);
            steps.push(`written ${n}`);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const worker = new IdentityWorker(reading, graph, writing, new IdentityAssigner(), {
      claimIdleMs: 0,
      maxSightings: 4,
    });
    return { worker, filings, asked, steps };
  };
  const identityLinks = async (pixelId: string) => {
    const rows = await app.stores.warehouse.query<{ n: string }>(
      "SELECT count() AS n FROM identity_links WHERE pixel_id = {pixel:String} AND alias_type = 'identity'",
      { pixel: pixelId },
    );
    return Number(rows[0]?.n);
  };

  it("files them in runs of at most maxSightings and asks for about four runs' worth next", async () => {
    const px = await lagOfFour();
    const { worker, filings, asked } = recorded();
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 0 });
    // Two filings of two messages each (2 + 2 sightings), not one of eight.
    expect(filings).toEqual([4, 4]);
    expect((await worker.lag()).messages).toBe(0);
    // Messages of two sightings: the next read asks for eight of them (four runs of four).
    await worker.runOnce();
    expect(asked).toEqual([100, 8]);
    expect(await identityLinks(px.pixelId)).toBe(8);
  });

  it("writes a run's links while the next run is filed into the graph, in run order", async () => {
    const px = await lagOfFour();
    // The first write waits until the second run is in the graph: written one after the other, it
    // would wait for ever.
    const { worker, steps } = recorded({ holdWrite: 1 });
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 0 });
    expect(steps).toEqual([
      "file 1",
      "filed 1",
      "file 2",
      "write 1",
      "filed 2",
      "written 1",
      "write 2",
      "written 2",
    ]);
    expect(await identityLinks(px.pixelId)).toBe(8);
  });

  it("leaves a pixel's later messages pending behind one that failed, and files them all next", async () => {
    await lagOfFour();
    const { worker, filings } = recorded({ failFiling: 1 });
    // The first run of two messages fails: the second run is not tried after it.
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 4 });
    expect(filings).toEqual([4]);
    expect((await worker.lag()).messages).toBe(4);
    // Redelivered in order, in two runs again.
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 0 });
    expect(filings).toEqual([4, 4, 4]);
    expect((await worker.lag()).messages).toBe(0);
  });

  it("writes the runs filed before a run whose filing failed, and leaves only that one pending", async () => {
    const px = await lagOfFour();
    // The first run's write waits until the second run's filing has failed: it is still written.
    const { worker, steps } = recorded({ holdWrite: 1, failFiling: 2 });
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 2 });
    expect(steps).toEqual(["file 1", "filed 1", "file 2", "write 1", "written 1"]);
    expect(await identityLinks(px.pixelId)).toBe(4);
    expect((await worker.lag()).messages).toBe(2);
    expect(await worker.runOnce()).toEqual({ delivered: 2, failed: 0 });
    expect(await identityLinks(px.pixelId)).toBe(8);
    expect((await worker.lag()).messages).toBe(0);
  });

  it("keeps a run filed into the graph pending when an earlier run's links write fails, and rewrites both", async () => {
    const px = await lagOfFour();
    // The first write is held until the second run is in the graph, then fails.
    const { worker, filings, steps } = recorded({ holdWrite: 1, failWrite: 1 });
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 4 });
    expect(filings).toEqual([4, 4]);
    // The second run's links are not written behind the failed first run's.
    expect(steps).toEqual(["file 1", "filed 1", "file 2", "write 1", "filed 2"]);
    expect(await identityLinks(px.pixelId)).toBe(0);
    expect((await worker.lag()).messages).toBe(4);
    // Redelivered in repair mode: every link of both runs is written.
    expect(await worker.runOnce()).toEqual({ delivered: 4, failed: 0 });
    expect(await identityLinks(px.pixelId)).toBe(8);
    expect((await worker.lag()).messages).toBe(0);
  });
});
