import { hash } from "node:crypto";
import { COSTS_CHANGED, type CostsChanged } from "../events/costs-changed.js";
import { Subscription } from "../events/subscription.js";
import type { Logger } from "../log.js";
import type { ConsumerState } from "../metrics.js";
import type { DataVersions } from "../shared/data-version.js";
import { fromNumeric } from "../shared/money.js";
import type { Bus, BusMessage } from "../stores/bus/port.js";
import type { KvStore } from "../stores/kv/port.js";
import type { SqlExecutor } from "../stores/sql/port.js";
import { formatDateTime, type Params, type WarehouseStore } from "../stores/warehouse/port.js";
import { CostResolver, type LoadVariantCostFacts, type VariantKey, variantKey } from "./resolve.js";
import type { StoredLine } from "./schemas.js";
import { readAccountFacts } from "./service.js";
import {
  computeSnapshot,
  FxTable,
  type Snapshot,
  type SnapshotContext,
  type SnapshotOrder,
  textUnits,
  unitsText,
} from "./snapshot.js";

/**
 * Per-order cost recalculation (docs/costs.md "Per-order snapshots"): finds the orders a change can
 * affect, computes their snapshots in batches (snapshot.ts) and writes a new `order_costs` version for
 * each order whose snapshot differs from the stored one — so running twice writes nothing. Progress is
 * committed per batch: the batch's rows are in the warehouse and the cursor (last order id) is in the
 * KV store under the run's checkpoint key, so a restarted run resumes after the last finished batch.
 */

export type RecalcMode = "all" | "missing";

export interface RecalcScope {
  pixelId: string;
  /** Exactly these orders (orders.changed). */
  orderIds?: readonly string[];
  /** Days of the account timezone, inclusive; null/absent = open. */
  from?: string | null;
  to?: string | null;
  /** Only orders with a line of one of these variants. */
  variants?: readonly VariantKey[] | null;
  /** Only orders paid through one of these gateways (case-insensitive). */
  gateways?: readonly string[] | null;
  /** Only orders shipped to one of these countries. */
  countries?: readonly string[] | null;
  /** `missing`: only orders without a snapshot; `all` (default): every order in scope. */
  mode?: RecalcMode;
}

export interface RecalcProgress {
  pixelId: string;
  total: number;
  scanned: number;
  written: number;
  unchanged: number;
}

export interface RecalcRunOptions {
  /** KV key holding the cursor of this run; a restarted run with the same key resumes there. */
  checkpointKey?: string;
  onProgress?: (p: RecalcProgress) => void;
  batchSize?: number;
}

/**
 * One batch as JSONCompactColumns: one array per column, parsed by a single JSON.parse with no object
 * per row. Stored amounts are integer ten-thousandths (JSON numbers) and the stored details come as
 * their SHA-256, so the read carries ~45 bytes instead of the ~200-byte JSON text per order.
 */
type BatchColumns = [
  orderId: string[],
  ts: number[],
  currency: string[],
  total: string[],
  gateway: string[],
  country: string[],
  lines: [productId: string, variantId: string, quantity: number][][],
  has: number[],
  storedVersion: number[],
  storedCurrency: string[],
  storedCogs: number[],
  storedHandling: number[],
  storedShipping: number[],
  storedGateway: number[],
  storedOrder: number[],
  storedDetailsHash: string[],
];

/** Decimal(18, 4) as its integer ten-thousandths; Decimal128 so that no amount can overflow the × 10^4. */
const units = (column: string) => `toInt64(toDecimal128(${column}, 4) * 10000)`;

/** A stored amount read as ten-thousandths equals a computed one (an amount beyond 2^53 never does). */
const sameUnits = (stored: number, computed: bigint) =>
  Number.isSafeInteger(stored) && Number(computed) === stored;

const detailsHash = (details: string) => hash("sha256", details, "base64");

const DEFAULT_BATCH = 50_000;

/**
 * Orders per INSERT: a batch's snapshots are written in runs of this many, each while the next run
 * is computed. Every INSERT has a fixed cost in the engine (a new part: ~10 ms embedded), which runs
 * of 5,000 already paid more than the overlap gave back.
 */
const WRITE_CHUNK = 10_000;

export class RecalcService {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly warehouse: WarehouseStore,
    private readonly kv: KvStore,
    private readonly versions: DataVersions,
    private readonly loadVariantCostFacts: LoadVariantCostFacts,
  ) {}

  /** The pixel's account id; null for an unknown pixel. */
  async accountOf(pixelId: string): Promise<string | null> {
    const { rows } = await this.sql.query<{ account_id: string }>(
      "SELECT account_id FROM pixels WHERE id = $1",
      [pixelId],
    );
    return rows[0]?.account_id ?? null;
  }

  async pixelsOf(accountId: string): Promise<string[]> {
    const { rows } = await this.sql.query<{ id: string }>(
      "SELECT id FROM pixels WHERE account_id = $1 ORDER BY id",
      [accountId],
    );
    return rows.map((r) => r.id);
  }

  private async context(accountId: string): Promise<Omit<SnapshotContext, "variants">> {
    const account = await readAccountFacts(this.sql, accountId);
    const { rows } = await this.sql.query<{
      id: string;
      cost_type: string;
      line: Record<string, unknown>;
      start: string | null;
      end: string | null;
    }>(
      `SELECT id, cost_type, line, effective_start::text AS start, effective_end::text AS "end"
       FROM cost_lines WHERE account_id = $1 AND cost_type IN ('order', 'gateway', 'shipping') ORDER BY id`,
      [accountId],
    );
    const lines = (type: string): StoredLine[] =>
      rows
        .filter((r) => r.cost_type === type)
        .map(
          (r) =>
            ({
              ...r.line,
              id: r.id,
              effectiveStartDate: r.start,
              effectiveEndDate: r.end,
            }) as StoredLine,
        );
    const fx = await this.warehouse.query<{ currency: string; date: string; rate: string }>(
      "SELECT currency, toString(date) AS date, toString(usd_rate) AS rate FROM fx_rates FINAL",
    );
    return {
      resolver: new CostResolver(account),
      timezone: account.timezone,
      orderLines: lines("order"),
      gatewayLines: lines("gateway"),
      shippingLines: lines("shipping"),
      fx: new FxTable(fx.map((r) => ({ currency: r.currency, date: r.date, usdRate: Number(r.rate) })))
        .lookup,
    };
  }

  /** The WHERE clause on `orders` for a scope, with its parameters. */
  private filter(scope: RecalcScope, timezone: string): { where: string; params: Params } {
    const parts = ["pixel_id = {pixel:String}"];
    const params: Record<string, Params[string]> = { pixel: scope.pixelId, tz: timezone };
    if (scope.orderIds) {
      parts.push("order_id IN {ids:Array(String)}");
      params.ids = [...scope.orderIds];
    }
    if (scope.from) {
      parts.push("toDate(created_at, {tz:String}) >= {from:Date}");
      params.from = scope.from;
    }
    if (scope.to) {
      parts.push("toDate(created_at, {tz:String}) <= {to:Date}");
      params.to = scope.to;
    }
    if (scope.variants) {
      // Over-broad on purpose (product and variant ids matched separately): an extra order is only
      // re-resolved, never rewritten, when its snapshot did not change.
      parts.push(`order_id IN (SELECT order_id FROM order_lines WHERE pixel_id = {pixel:String}
        AND variant_id IN {vids:Array(String)} AND product_id IN {pids:Array(String)})`);
      params.vids = [...new Set(scope.variants.map((v) => v.variantId))];
      params.pids = [...new Set(scope.variants.map((v) => v.productId))];
    }
    if (scope.gateways) {
      parts.push("lower(gateway) IN {gws:Array(String)}");
      params.gws = scope.gateways.map((g) => g.toLowerCase());
    }
    if (scope.countries) {
      parts.push("upper(country) IN {cs:Array(String)}");
      params.cs = scope.countries.map((c) => c.toUpperCase());
    }
    if (scope.mode === "missing") {
      parts.push("order_id NOT IN (SELECT order_id FROM order_costs WHERE pixel_id = {pixel:String})");
    }
    return { where: parts.join(" AND "), params };
  }

  /** How many orders a scope covers (for progress). */
  async count(scope: RecalcScope, timezone: string): Promise<number> {
    const { where, params } = this.filter(scope, timezone);
    const rows = await this.warehouse.query<{ n: string | number }>(
      `SELECT count() AS n FROM orders FINAL WHERE ${where}`,
      params,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * One batch of the scope after `cursor`: the orders, their current lines and their stored
   * snapshots. `sel` is referenced by all three reads; where the engine can, it runs once.
   */
  private readBatch(where: string, params: Params, cursor: string, n: number): Promise<BatchColumns | []> {
    const once = this.warehouse.materializedCte;
    return this.warehouse
      .queryText(
        `WITH sel AS ${once ? "MATERIALIZED " : ""}(SELECT order_id FROM orders FINAL WHERE ${where} AND order_id > {cursor:String}
                      ORDER BY order_id LIMIT {n:UInt32})
SELECT o.order_id, toUnixTimestamp64Milli(o.created_at), o.currency, toString(o.total_price), o.gateway, o.country,
  l.lines, s.order_id != '', s.version, s.currency, ${units("s.cogs")}, ${units("s.handling")},
  ${units("s.shipping")}, ${units("s.gateway")}, ${units("s.order_level")}, base64Encode(SHA256(s.details))
FROM (SELECT * FROM orders FINAL WHERE pixel_id = {pixel:String} AND order_id IN (SELECT order_id FROM sel)) AS o
LEFT JOIN (SELECT order_id, version,
             arrayMap(x -> (x.2, x.3, x.4), arraySort(x -> x.1, groupArray((line_index, product_id, variant_id, quantity)))) AS lines
           FROM order_lines FINAL WHERE pixel_id = {pixel:String} AND order_id IN (SELECT order_id FROM sel)
           GROUP BY order_id, version) AS l ON l.order_id = o.order_id AND l.version = o.version
LEFT JOIN (SELECT * FROM order_costs FINAL WHERE pixel_id = {pixel:String} AND order_id IN (SELECT order_id FROM sel)) AS s
  ON s.order_id = o.order_id
ORDER BY o.order_id
SETTINGS join_use_nulls = 0${once ? ", enable_materialized_cte = 1" : ""}`,
        { ...params, cursor, n },
        { format: "JSONCompactColumns" },
      )
      .then(({ text }) => (text.trim() ? (JSON.parse(text) as BatchColumns) : []));
  }

  /**
   * Recomputes the snapshots of every order in scope; writes only the ones that changed.
   *
   * A pipeline, so the engine's work overlaps this thread's: a run of snapshots is computed while the
   * previous run's INSERT and the next batch's read are in the engine (on one chDB session those two
   * queue behind each other; the computing overlaps both). Writes stay in order, one at a time, each
   * followed by its checkpoint — what a restart resumes from is still "every order up to the cursor
   * is written".
   */
  async recalc(scope: RecalcScope, options: RecalcRunOptions = {}): Promise<RecalcProgress> {
    const accountId = await this.accountOf(scope.pixelId);
    const progress: RecalcProgress = {
      pixelId: scope.pixelId,
      total: 0,
      scanned: 0,
      written: 0,
      unchanged: 0,
    };
    if (!accountId) return progress;
    const base = await this.context(accountId);
    const { where, params } = this.filter(scope, base.timezone);
    const batch = options.batchSize ?? DEFAULT_BATCH;
    const cursor = options.checkpointKey ? ((await this.kv.get(options.checkpointKey)) ?? "") : "";
    // A stage's promise may fail while another stage is awaited: marked handled here, its failure
    // is thrown where it is awaited.
    const started = <T>(p: Promise<T>): Promise<T> => {
      p.catch(() => {});
      return p;
    };
    let next: Promise<BatchColumns | []> | null = started(this.readBatch(where, params, cursor, batch));
    // The count is for progress only: it runs once the first read is done, beside the computing —
    // unless that read, from the start of the scope, came back short of a batch: then it read the
    // whole scope, and another scan of it would only take the cores from the computing.
    const total = started(
      next.then((cols) => {
        const n = cols[0]?.length ?? 0;
        return cursor === "" && n < batch ? n : this.count(scope, base.timezone);
      }),
    );
    let writing: Promise<void> = Promise.resolve();
    // The first report, with the total, goes out before the first write (or at the end when nothing
    // is in scope); then one after each write.
    let reported = false;
    try {
      while (next) {
        const cols: BatchColumns | [] = await next;
        next = null;
        const n: number = cols[0]?.length ?? 0;
        if (n === 0) break;
        const last = cols[0]?.[n - 1] as string;
        if (n === batch) next = started(this.readBatch(where, params, last, batch));
        const ctx = await this.batchContext(scope.pixelId, cols as BatchColumns, base);
        for (let from = 0; from < n; from += WRITE_CHUNK) {
          const to = Math.min(n, from + WRITE_CHUNK);
          const rows = this.computeRows(scope.pixelId, cols as BatchColumns, ctx, from, to);
          await writing;
          if (!reported) {
            progress.total = await total;
            options.onProgress?.({ ...progress });
            reported = true;
          }
          writing = started(this.writeRows(rows, to - from, cols[0]?.[to - 1] as string, progress, options));
        }
      }
      await writing;
      progress.total = await total;
      if (!reported) options.onProgress?.({ ...progress });
    } catch (err) {
      // Nothing is left running behind the failure: the write under way ends (and checkpoints) first.
      await writing.catch(() => {});
      await next?.catch(() => {});
      await total.catch(() => {});
      throw err;
    }
    if (options.checkpointKey) await this.kv.del(options.checkpointKey);
    if (progress.written > 0) await this.versions.bump([scope.pixelId]);
    return progress;
  }

  /** Writes the new snapshots of a run of orders, then commits progress: rows first, cursor after. */
  private async writeRows(
    rows: Record<string, unknown>[],
    scanned: number,
    cursor: string,
    progress: RecalcProgress,
    options: RecalcRunOptions,
  ): Promise<void> {
    if (rows.length) await this.warehouse.insert("order_costs", rows);
    progress.scanned += scanned;
    progress.unchanged += scanned - rows.length;
    progress.written += rows.length;
    if (options.checkpointKey) await this.kv.set(options.checkpointKey, cursor, 7 * 86_400_000);
    options.onProgress?.({ ...progress });
  }

  /** What the snapshots of a batch need beyond the account's facts: its variants' cost facts. */
  private async batchContext(
    pixelId: string,
    cols: BatchColumns,
    base: Omit<SnapshotContext, "variants">,
  ): Promise<SnapshotContext> {
    const keys = new Map<string, VariantKey>();
    for (const ls of cols[6]) {
      for (const [productId, variantId] of ls) {
        const k = { productId, variantId };
        const key = variantKey(k);
        if (!keys.has(key)) keys.set(key, k);
      }
    }
    return { ...base, variants: await this.loadVariantCostFacts(pixelId, [...keys.values()]) };
  }

  /** The new `order_costs` rows of the batch's orders `from` ≤ i < `to`: those whose snapshot changed. */
  private computeRows(
    pixelId: string,
    cols: BatchColumns,
    ctx: SnapshotContext,
    from: number,
    to: number,
  ): Record<string, unknown>[] {
    const [
      orderIds,
      ts,
      currency,
      total,
      gateway,
      country,
      lines,
      has,
      sv,
      scur,
      scogs,
      shand,
      sship,
      sgw,
      sord,
      shash,
    ] = cols;
    const now = Date.now();
    const computedAt = formatDateTime(new Date(now));
    const out: Record<string, unknown>[] = [];
    for (let i = from; i < to; i++) {
      const orderId = orderIds[i] as string;
      const totalText = total[i] as string;
      const order: SnapshotOrder = {
        orderId,
        createdAt: Number(ts[i]),
        currency: currency[i] as string,
        totalPrice: fromNumeric(totalText),
        totalUnits: textUnits(totalText),
        gateway: gateway[i] as string,
        country: country[i] as string,
        lines: (lines[i] ?? []).map(([productId, variantId, quantity]) => ({
          productId,
          variantId,
          quantity: Number(quantity),
        })),
      };
      const snap = computeSnapshot(order, ctx);
      const stored = Number(has[i]) === 1;
      // Amounts first: when one differs (the usual reason to be here) the details are not hashed.
      if (
        stored &&
        scur[i] === snap.currency &&
        sameUnits(scogs[i] as number, snap.cogs) &&
        sameUnits(shand[i] as number, snap.handling) &&
        sameUnits(sship[i] as number, snap.shipping) &&
        sameUnits(sgw[i] as number, snap.gateway) &&
        sameUnits(sord[i] as number, snap.orderLevel) &&
        shash[i] === detailsHash(snap.details)
      ) {
        continue;
      }
      const previous = stored ? Number(sv[i]) : 0;
      out.push(snapshotRow(pixelId, orderId, Math.max(now, previous + 1), computedAt, snap));
    }
    return out;
  }
}

export function snapshotRow(
  pixelId: string,
  orderId: string,
  version: number,
  computedAt: string,
  s: Snapshot,
): Record<string, unknown> {
  return {
    pixel_id: pixelId,
    order_id: orderId,
    version,
    computed_at: computedAt,
    currency: s.currency,
    cogs: unitsText(s.cogs),
    handling: unitsText(s.handling),
    shipping: unitsText(s.shipping),
    gateway: unitsText(s.gateway),
    order_level: unitsText(s.orderLevel),
    details: s.details,
  };
}

/** The recalculation scopes (one per pixel) a `costs.changed` payload calls for. */
export async function scopesOfCostsChanged(service: RecalcService, c: CostsChanged): Promise<RecalcScope[]> {
  const pixels = c.pixelId ? [c.pixelId] : await service.pixelsOf(c.accountId);
  const range = { from: c.dateRange.from, to: c.dateRange.to };
  const sides = c.changes.flatMap((ch) => [ch.old, ch.new]).filter((x): x is object => x !== null) as Record<
    string,
    unknown
  >[];
  let extra: Partial<RecalcScope> = {};
  if (c.kind === "variant_cog" || c.kind === "handling_fee") extra = { ...range, variants: c.variants ?? [] };
  else if (c.kind === "global_product_override") extra = {};
  else if (c.costType === "gateway") {
    extra = { ...range, gateways: [...new Set(sides.map((s) => String(s.gateway)))] };
  } else if (c.costType === "shipping") {
    const everyCountry = sides.some((s) => !Array.isArray(s.countries) || s.countries.length === 0);
    extra = {
      ...range,
      ...(everyCountry ? {} : { countries: [...new Set(sides.flatMap((s) => s.countries as string[]))] }),
    };
  } else extra = range;
  return pixels.map((pixelId) => ({ pixelId, ...extra, mode: "all" as const }));
}

export const RECALC_GROUP = "cogs-recalc";
/** Deliveries after which an orders.changed whose orders are still not readable is dropped. */
const MAX_EARLY_DELIVERIES = 5;

/**
 * The worker: one consumer group (`cogs-recalc`) on the `orders.changed` and `costs.changed` bus
 * streams (SyncService publishes the first, the relay moves `costs.changed` outbox rows to the
 * second, src/events/topics.ts). A handler that throws leaves its message pending for redelivery; a
 * message's checkpoint key is its producer's key (the outbox row id, or the ULID SyncService gave
 * the notice), so a
 * restarted recalculation resumes after its last committed batch.
 */
export class RecalcWorker {
  private readonly subs: Subscription[];

  constructor(
    private readonly bus: Bus,
    private readonly service: RecalcService,
    private readonly options: { log?: Logger; pollIntervalMs?: number; claimIdleMs?: number } = {},
  ) {
    const common = {
      group: RECALC_GROUP,
      batchSize: 20,
      claimIdleMs: options.claimIdleMs ?? 10 * 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      onError: (err: unknown, message?: BusMessage) =>
        options.log?.warn({ err, key: message?.key }, "cost recalculation failed; retried"),
    };
    this.subs = [
      new Subscription(bus, { ...common, stream: "orders.changed", handler: (m) => this.ordersChanged(m) }),
      new Subscription(bus, { ...common, stream: COSTS_CHANGED, handler: (m) => this.costsChanged(m) }),
    ];
  }

  start(): this {
    for (const s of this.subs) s.start();
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all(this.subs.map((s) => s.stop()));
  }

  /** What the group has not acknowledged on its two streams; seconds of the oldest. */
  async lag(): Promise<ConsumerState> {
    const now = Date.now();
    const parts = await Promise.all(
      ["orders.changed", COSTS_CHANGED].map((s) => this.bus.backlog(s, RECALC_GROUP)),
    );
    const oldest = parts.reduce<number | null>(
      (min, b) => (b.oldestAt === null ? min : min === null ? b.oldestAt : Math.min(min, b.oldestAt)),
      null,
    );
    return {
      messages: parts.reduce((n, b) => n + b.messages, 0),
      seconds: oldest === null ? 0 : Math.max(0, (now - oldest) / 1000),
    };
  }

  /** Handles everything delivered now (tests and the CLI drive the worker with this). */
  async runOnce(): Promise<{ delivered: number; failed: number }> {
    let delivered = 0;
    let failed = 0;
    for (const s of this.subs) {
      for (;;) {
        const r = await s.runOnce();
        delivered += r.delivered;
        failed += r.failed;
        if (r.delivered === 0 || r.failed > 0) break;
      }
    }
    return { delivered, failed };
  }

  private progress(key: string) {
    return (p: RecalcProgress) => this.options.log?.info({ key, ...p }, "cost recalculation progress");
  }

  private async ordersChanged(m: BusMessage): Promise<void> {
    const { pixelId, orderIds } = m.payload as { pixelId: string; orderIds: string[] };
    const scope: RecalcScope = { pixelId, orderIds };
    const accountId = await this.service.accountOf(pixelId);
    if (!accountId) return;
    const found = await this.service.count(scope, "UTC");
    // SyncService announces before its warehouse write: orders not readable yet come again later.
    if (found < orderIds.length && m.deliveries < MAX_EARLY_DELIVERIES) {
      throw new Error(`orders.changed ${m.key}: ${orderIds.length - found} orders not in the warehouse yet`);
    }
    await this.service.recalc(scope, { checkpointKey: `recalc:${m.key}`, onProgress: this.progress(m.key) });
  }

  private async costsChanged(m: BusMessage): Promise<void> {
    const payload = m.payload as CostsChanged;
    for (const scope of await scopesOfCostsChanged(this.service, payload)) {
      const key = `recalc:${m.key}:${scope.pixelId}`;
      await this.service.recalc(scope, { checkpointKey: key, onProgress: this.progress(m.key) });
    }
  }
}
