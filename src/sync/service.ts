import type { IdentityFeed } from "../identity/feed.js";
import type { Alias } from "../identity/union.js";
import { ulidFactory } from "../shared/random.js";
import { findUnstorableText } from "../shared/text.js";
import { isMissing } from "../shared/validate.js";
import type { Bus } from "../stores/bus/port.js";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import type { WarehouseStore } from "../stores/warehouse/port.js";
import { liveVersions, type StoredOrderMonth, tombstonesFor } from "./order-months.js";
import {
  type AdEntityRecord,
  type AdMetricsRecord,
  type FxRateRecord,
  type OrderRecord,
  type ProductRecord,
  RECORD_SCHEMAS,
  type RecordKind,
  type RefundRecord,
  type SyncResult,
} from "./schemas.js";
import { monotonicMs } from "./versions.js";
import {
  adEntityRow,
  adMetricsRow,
  fxRow,
  orderLineRows,
  orderRow,
  refundRow,
  versionOf,
} from "./warehouse-rows.js";

type Counts = Omit<SyncResult, "rejected">;

/**
 * Waits for every promise, then fails with the first failure: the batch's lock is not released
 * while a write it started is still under way.
 */
async function allDone(work: readonly (Promise<unknown> | null)[]): Promise<void> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/** The bus stream that tells the cost recalculation which orders were written. */
export const ORDERS_CHANGED_STREAM = "orders.changed";
const none = (): Counts => ({ accepted: 0, updated: 0, unchanged: 0 });

/**
 * Idempotent upserts by natural id and version: a record newer than what is stored replaces it, the
 * same or an older version changes nothing, and each record is judged on its own — a bad record is
 * rejected with its index and errors while the rest of the batch is stored. One code path for the
 * HTTP sync endpoints and `pixelhouse import`.
 */
export class SyncService {
  /** Keys of the orders.changed messages (what a consumer dedupes and checkpoints on). */
  private readonly noticeKey = ulidFactory();

  constructor(
    private readonly sql: SqlStore,
    private readonly warehouse: WarehouseStore,
    private readonly identity: IdentityFeed,
    private readonly bus: Bus,
    /** Told when stored data changed (query caches key on a per-pixel data version); null = FX rates. */
    private readonly onChanged: (pixelId: string | null) => Promise<void> = async () => {},
  ) {}

  async upsert(kind: RecordKind, pixelId: string | null, records: readonly unknown[]): Promise<SyncResult> {
    const schema = RECORD_SCHEMAS[kind];
    const rejected: SyncResult["rejected"] = [];
    const valid: unknown[] = [];
    records.forEach((record, index) => {
      const r = schema.safeParse(record);
      // Postgres refuses NUL in text and jsonb: such a record is rejected here, not failed in the store.
      const badText = r.success ? findUnstorableText(record) : null;
      if (badText) {
        rejected.push({ index, errors: [{ field: badText.path.join("."), message: badText.message }] });
      } else if (r.success) valid.push(r.data);
      else {
        rejected.push({
          index,
          errors: r.error.issues.flatMap((i) => {
            const field = i.path.map(String).join(".");
            if (i.code === "unrecognized_keys") {
              return i.keys.map((k) => ({
                field: field ? `${field}.${k}` : k,
                message: "is not a field of this format",
              }));
            }
            return [{ field, message: isMissing(i) ? "is required" : i.message }];
          }),
        });
      }
    });
    let counts = none();
    if (valid.length) {
      if (kind === "fx-rates") counts = await this.fxRates(valid as FxRateRecord[]);
      else {
        if (!pixelId) throw new Error(`${kind} belong to a pixel`);
        if (kind === "products") counts = await this.products(pixelId, valid as ProductRecord[]);
        else if (kind === "orders") counts = await this.orders(pixelId, valid as OrderRecord[]);
        else if (kind === "refunds") counts = await this.refunds(pixelId, valid as RefundRecord[]);
        else if (kind === "ad-entities") counts = await this.adEntities(pixelId, valid as AdEntityRecord[]);
        else counts = await this.adMetrics(pixelId, valid as AdMetricsRecord[]);
      }
    }
    if (counts.accepted + counts.updated > 0) await this.onChanged(kind === "fx-rates" ? null : pixelId);
    return { ...counts, rejected };
  }

  /** Products and variants live in Postgres, where the cost endpoints edit them. */
  private async products(pixelId: string, records: ProductRecord[]): Promise<Counts> {
    const counts = none();
    await this.sql.transaction(async (tx) => {
      for (const p of newestPerKey(
        records,
        (r) => r.id,
        (r) => versionOf(r.updatedAt),
        counts,
      )) {
        const { rows } = await tx.query<{ inserted: boolean }>(
          `INSERT INTO products (pixel_id, product_id, title, handle, vendor, product_type, status, tags, image_urls, raw, version)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (pixel_id, product_id) DO UPDATE SET title = excluded.title, handle = excluded.handle,
             vendor = excluded.vendor, product_type = excluded.product_type, status = excluded.status,
             tags = excluded.tags, image_urls = excluded.image_urls, raw = excluded.raw, version = excluded.version,
             updated_at = now()
           WHERE products.version < excluded.version
           RETURNING (xmax = 0) AS inserted`,
          [
            pixelId,
            p.id,
            p.title,
            p.handle,
            p.vendor,
            p.productType,
            p.status,
            p.tags,
            p.imageUrls,
            p.raw,
            new Date(p.updatedAt),
          ],
        );
        const row = rows[0];
        if (!row) {
          counts.unchanged++;
          continue;
        }
        if (row.inserted) counts.accepted++;
        else counts.updated++;
        for (const v of p.variants) await upsertVariant(tx, pixelId, p, v);
      }
    });
    return counts;
  }

  /**
   * Orders of one pixel are written one batch at a time, across every process sharing the stores: a
   * move to another creation month reads the live rows and writes a tombstone, and two interleaved
   * moves of one order could each leave a live row behind.
   */
  private async orders(pixelId: string, records: OrderRecord[]): Promise<Counts> {
    return this.sql.exclusive(`orders:${pixelId}`, () => this.ordersLocked(pixelId, records));
  }

  private async ordersLocked(pixelId: string, records: OrderRecord[]): Promise<Counts> {
    const counts = none();
    const newest = newestPerKey(
      records,
      (o) => o.id,
      (o) => versionOf(o.updatedAt),
      counts,
    );
    const stored = await this.storedOrderMonths(
      pixelId,
      newest.map((o) => o.id),
    );
    const write = classify(
      newest,
      (o) => o.id,
      (o) => versionOf(o.updatedAt),
      liveVersions(stored),
      counts,
    );
    const rows = write.map((o) => orderRow(pixelId, o, ""));
    const written = new Map(rows.map((r) => [r.order_id, r]));
    const tombstones = newest.flatMap((o) => {
      const row = written.get(o.id);
      return tombstonesFor(o.id, stored, row ? { createdAt: row.created_at, version: row.version } : null);
    });
    if (write.length > 0) {
      // Orders join the identity graph by customer email hash, customer id and order id (purchase
      // events carrying eventProperties.orderId meet them there).
      const groups: Alias[][] = write.map((o, i) => {
        const aliases: Alias[] = [{ type: "order", value: o.id }];
        // The row's hash: SHA-256 once per order, not once per use.
        const email = rows[i]!.customer_email_hash;
        if (email) aliases.push({ type: "email", value: email });
        // The store's customer id is what events carry as userProperties.storeYIds.
        if (o.customer.id) aliases.push({ type: "store", value: o.customer.id });
        return aliases;
      });
      const { ids: canonical, payload } = this.identity.assign(pixelId, groups);
      rows.forEach((r, i) => {
        r.canonical_id = canonical[i] ?? "";
      });
      // Announced before the write, straight on the bus as ingest does (the rows go to the warehouse,
      // not to SQL, so an outbox row in Postgres would share no transaction with them and only copy
      // the payload twice more): the per-order cost snapshot (if the write fails the idempotent
      // worker finds nothing to do, whereas a notice lost after the write would never come back — a
      // retry sees the orders as unchanged) and the orders' sightings for the identity worker.
      await allDone([
        this.bus.publish(ORDERS_CHANGED_STREAM, [
          { key: this.noticeKey(), payload: { pixelId, orderIds: write.map((o) => o.id) } },
        ]),
        payload ? this.identity.publish([payload]) : null,
      ]);
      await allDone([
        this.warehouse.insert("orders", rows),
        this.warehouse.insert(
          "order_lines",
          write.flatMap((o) => orderLineRows(pixelId, o)),
        ),
      ]);
    }
    // After the rows: a tombstone lost here is written by the next sync of the order (it finds two
    // live months), whereas a tombstone without its row would hide the order.
    if (tombstones.length > 0) {
      await this.warehouse.insert(
        "orders",
        tombstones.map((t) => ({
          pixel_id: pixelId,
          order_id: t.orderId,
          created_at: t.createdAt,
          version: t.version,
          is_deleted: 1,
        })),
      );
    }
    return counts;
  }

  /** Per order and creation month, its latest stored row (a tombstone or a live row). */
  private async storedOrderMonths(pixelId: string, ids: string[]): Promise<StoredOrderMonth[]> {
    if (ids.length === 0) return [];
    const rows = await this.warehouse.query<{ k: string; c: string; v: number | string; d: number }>(
      // On a version tie inside a month the tombstone wins, as the engine lets the later insert win.
      `SELECT order_id AS k, toString(argMax(created_at, version)) AS c, max(version) AS v,
         argMax(is_deleted, (version, is_deleted)) AS d
       FROM orders WHERE pixel_id = {pixel:String} AND order_id IN {keys:Array(String)}
       GROUP BY order_id, toYYYYMM(created_at)`,
      { pixel: pixelId, keys: ids },
    );
    return rows.map((r) => ({
      orderId: r.k,
      createdAt: r.c,
      version: Number(r.v),
      deleted: Number(r.d) === 1,
    }));
  }

  private async refunds(pixelId: string, records: RefundRecord[]): Promise<Counts> {
    const counts = none();
    const write = await this.newerThanStored(pixelId, records, counts, {
      table: "refunds",
      keyExpr: "refund_id",
      key: (r) => r.id,
      version: (r) => versionOf(r.updatedAt ?? r.createdAt),
    });
    await this.warehouse.insert(
      "refunds",
      write.map((r) => refundRow(pixelId, r)),
    );
    return counts;
  }

  private async adEntities(pixelId: string, records: AdEntityRecord[]): Promise<Counts> {
    const counts = none();
    const write = await this.newerThanStored(pixelId, records, counts, {
      table: "ad_entities",
      keyExpr: "concat(platform, '|', toString(level), '|', entity_id)",
      key: (e) => `${e.platform}|${e.level}|${e.id}`,
      version: (e) => versionOf(e.sourceUpdatedAt),
    });
    await this.warehouse.insert(
      "ad_entities",
      write.map((e) => adEntityRow(pixelId, e)),
    );
    return counts;
  }

  private async adMetrics(pixelId: string, records: AdMetricsRecord[]): Promise<Counts> {
    const counts = none();
    const now = monotonicMs();
    const v = (m: AdMetricsRecord) => (m.updatedAt ? versionOf(m.updatedAt) : now);
    const write = await this.newerThanStored(pixelId, records, counts, {
      table: "ad_metrics_daily",
      keyExpr: "concat(platform, '|', toString(level), '|', entity_id, '|', toString(date))",
      key: (m) => `${m.platform}|${m.level}|${m.entityId}|${m.date}`,
      version: v,
    });
    await this.warehouse.insert(
      "ad_metrics_daily",
      write.map((m) => adMetricsRow(pixelId, m, v(m))),
    );
    return counts;
  }

  /** FX rates are global: a re-import with the same rate changes nothing, a different rate wins. */
  private async fxRates(records: FxRateRecord[]): Promise<Counts> {
    const counts = none();
    const key = (r: FxRateRecord) => `${r.currency}|${r.date}`;
    // A later line of the same currency and day wins (files are read in order).
    const position = new Map(records.map((r, i) => [r, i]));
    const newest = newestPerKey(records, key, (r) => position.get(r) ?? 0, counts);
    const existing = await this.warehouse.query<{ k: string; rate: string }>(
      `SELECT concat(currency, '|', toString(date)) AS k, toString(argMax(usd_rate, version)) AS rate FROM fx_rates
       WHERE concat(currency, '|', toString(date)) IN {keys:Array(String)} GROUP BY k`,
      { keys: newest.map(key) },
    );
    const stored = new Map(existing.map((r) => [r.k, Number(r.rate)]));
    const version = monotonicMs();
    const write: FxRateRecord[] = [];
    for (const r of newest) {
      const old = stored.get(key(r));
      if (old === undefined) counts.accepted++;
      else if (Math.abs(old - Number(r.unitsPerUsd.toFixed(10))) > 1e-12) counts.updated++;
      else {
        counts.unchanged++;
        continue;
      }
      write.push(r);
    }
    await this.warehouse.insert(
      "fx_rates",
      write.map((r) => fxRow(r, version)),
    );
    return counts;
  }

  /**
   * The records to write: per natural key the newest of the batch, kept only when newer than the
   * stored version. Counts accepted / updated / unchanged on the way.
   */
  private async newerThanStored<R>(
    pixelId: string,
    records: R[],
    counts: Counts,
    spec: { table: string; keyExpr: string; key: (r: R) => string; version: (r: R) => number },
  ): Promise<R[]> {
    const newest = newestPerKey(records, spec.key, spec.version, counts);
    const stored = await this.storedVersions(spec.table, spec.keyExpr, pixelId, newest.map(spec.key));
    return classify(newest, spec.key, spec.version, stored, counts);
  }

  private async storedVersions(table: string, keyExpr: string, pixelId: string, keys: string[]) {
    if (keys.length === 0) return new Map<string, number>();
    const rows = await this.warehouse.query<{ k: string; v: number }>(
      `SELECT ${keyExpr} AS k, max(version) AS v FROM ${table}
       WHERE pixel_id = {pixel:String} AND ${keyExpr} IN {keys:Array(String)} GROUP BY k`,
      { pixel: pixelId, keys },
    );
    return new Map(rows.map((r) => [r.k, Number(r.v)]));
  }
}

/** Within one batch the newest copy of a key stands for it; the other copies count as unchanged. */
function newestPerKey<R>(
  records: R[],
  key: (r: R) => string,
  version: (r: R) => number,
  counts: Counts,
): R[] {
  const best = new Map<string, R>();
  for (const r of records) {
    const k = key(r);
    const prev = best.get(k);
    if (prev === undefined) best.set(k, r);
    else {
      counts.unchanged++;
      if (version(r) > version(prev)) best.set(k, r);
    }
  }
  return [...best.values()];
}

function classify<R>(
  records: R[],
  key: (r: R) => string,
  version: (r: R) => number,
  stored: Map<string, number>,
  counts: Counts,
): R[] {
  const write: R[] = [];
  for (const r of records) {
    const old = stored.get(key(r));
    if (old === undefined) counts.accepted++;
    else if (version(r) > old) counts.updated++;
    else {
      counts.unchanged++;
      continue;
    }
    write.push(r);
  }
  return write;
}

/** Ids of synced cost lines (a catalog import writes one per variant and cost period). */
const costLineId = ulidFactory();

async function upsertVariant(
  tx: SqlExecutor,
  pixelId: string,
  p: ProductRecord,
  v: ProductRecord["variants"][number],
): Promise<void> {
  await tx.query(
    `INSERT INTO variants (pixel_id, product_id, variant_id, sku, title, currency, current_price, inventory, raw, version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (pixel_id, product_id, variant_id) DO UPDATE SET sku = excluded.sku, title = excluded.title,
       currency = excluded.currency, current_price = excluded.current_price, inventory = excluded.inventory,
       raw = excluded.raw, version = excluded.version, updated_at = now()
     WHERE variants.version <= excluded.version`,
    [
      pixelId,
      p.id,
      v.id,
      v.sku,
      v.title,
      v.currency,
      v.currentPrice,
      v.inventory ?? null,
      v.raw,
      new Date(p.updatedAt),
    ],
  );
  // The synced store cost history is replaced whole; manual COG lines are never touched here.
  await tx.query(
    "DELETE FROM variant_cost_lines WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3 AND source = 'store'",
    [pixelId, p.id, v.id],
  );
  for (const line of v.storeCostHistory) {
    await tx.query(
      `INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start, effective_end)
       VALUES ($1, $2, $3, $4, 'store', $5, $6, $7)`,
      [costLineId(), pixelId, p.id, v.id, line.cost, line.effectiveStartDate, line.effectiveEndDate ?? null],
    );
  }
}
