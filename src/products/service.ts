import { ulid } from "ulid";
import { type CogLine, resolveVariantCost } from "../costs/resolve.js";
import { readAccountFacts } from "../costs/service.js";
import { NotFoundError, ValidationError } from "../errors.js";
import { rangeOfChanges, writeCostsChanged } from "../events/costs-changed.js";
import { dayIn } from "../shared/days.js";
import { fromNumeric, toNumericText } from "../shared/money.js";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import { chronological, planNewLine, sameStartOpenEnded } from "./cog-rules.js";
import { COG_LINE_COLUMNS, type CogLineRow, histories, loadVariantCostFacts, toCogLine } from "./facts.js";
import type { CogInput, CogUpdate, ProductVariant, VariantSummary } from "./schemas.js";
import { searchProducts } from "./search.js";

export const VARIANT_NOT_FOUND = "Variant not found";
export const COG_LINE_NOT_FOUND = "COG line not found";

/** A variant as a request names it: the key's account and pixel, the path's product and variant. */
export interface VariantRef {
  accountId: string;
  pixelId: string;
  productId: string;
  variantId: string;
}

const sameLine = (a: CogLine, b: CogLine) =>
  a.cost === b.cost &&
  a.effectiveStartDate === b.effectiveStartDate &&
  a.effectiveEndDate === b.effectiveEndDate &&
  a.description === b.description;

/**
 * The synced catalog seen from the cost side: search, the variant record, its resolved cost, and the
 * manual COG lines and handling fee a merchant edits. Every edit writes its `costs.changed` outbox row
 * in the same transaction (src/costs/CONTEXT.md). Variants are the key's pixel's: another pixel's
 * variant is looked up like a missing one and answers the same 404.
 */
export class ProductService {
  constructor(private readonly sql: SqlStore) {}

  search(pixelId: string, input: { q: string; limit?: number | undefined; cursor?: string | undefined }) {
    return searchProducts(this.sql, pixelId, input);
  }

  /** Form A: the stored record, or null when the pixel has no such variant. */
  async variantRecord(ref: Omit<VariantRef, "accountId">): Promise<ProductVariant | null> {
    const { rows } = await this.sql.query<{
      product_title: string;
      handle: string;
      vendor: string;
      product_type: string;
      status: string;
      tags: string[];
      image_urls: string[];
      sku: string;
      title: string;
      currency: string;
      current_price: string;
      handling_fee: string;
      inventory: number | null;
      raw: Record<string, unknown>;
      created_at: Date;
      updated_at: Date;
    }>(
      `SELECT p.title AS product_title, p.handle, p.vendor, p.product_type, p.status, p.tags, p.image_urls,
         v.sku, v.title, v.currency, v.current_price::text AS current_price, v.handling_fee::text AS handling_fee,
         v.inventory, v.raw, v.created_at, v.updated_at
       FROM variants v JOIN products p ON p.pixel_id = v.pixel_id AND p.product_id = v.product_id
       WHERE v.pixel_id = $1 AND v.product_id = $2 AND v.variant_id = $3`,
      [ref.pixelId, ref.productId, ref.variantId],
    );
    const v = rows[0];
    if (!v) return null;
    const { manual, store } = histories(await costLines(this.sql, ref, null));
    return {
      productId: ref.productId,
      variantId: ref.variantId,
      sku: v.sku,
      variantTitle: v.title,
      productTitle: v.product_title,
      handle: v.handle,
      vendor: v.vendor,
      productType: v.product_type,
      status: v.status,
      tags: v.tags,
      imageUrls: v.image_urls,
      currency: v.currency,
      currentPrice: fromNumeric(v.current_price),
      handlingFee: fromNumeric(v.handling_fee),
      storeCostHistory: store,
      manualCostHistory: manual,
      variant: { ...v.raw, inventoryQuantity: v.inventory },
      pixelId: ref.pixelId,
      createdAt: v.created_at.toISOString(),
      updatedAt: v.updated_at.toISOString(),
    };
  }

  /** Form B: the cost in force on `day` (default: today in the account timezone); null when unknown. */
  async resolvedCost(ref: VariantRef, day?: string) {
    const facts = (await loadVariantCostFacts(this.sql, ref.pixelId, [ref])).values().next().value;
    if (!facts) return null;
    const account = await readAccountFacts(this.sql, ref.accountId);
    const date = day ?? dayIn(account.timezone, Date.now());
    return { ...resolveVariantCost(facts, account, date), date };
  }

  /** Appends a manual COG line; a new open-ended line closes the open-ended line before it (cog-rules.ts). */
  async addCog(ref: VariantRef, input: CogInput, actor: string): Promise<VariantSummary> {
    return this.sql.transaction(async (tx) => {
      await lockVariant(tx, ref);
      const history = histories(await costLines(tx, ref, "manual")).manual;
      const line: CogLine = {
        id: ulid(),
        cost: input.cost,
        effectiveStartDate: input.effectiveStartDate,
        effectiveEndDate: input.effectiveEndDate ?? null,
        ...(input.description !== undefined ? { description: input.description } : {}),
      };
      const plan = planNewLine(history, line);
      if (!plan.ok) throw openEndedConflict(plan.conflict);
      for (const c of plan.closures) {
        await tx.query("UPDATE variant_cost_lines SET effective_end = $2, updated_at = now() WHERE id = $1", [
          c.after.id,
          c.after.effectiveEndDate,
        ]);
      }
      await tx.query(
        `INSERT INTO variant_cost_lines (id, pixel_id, product_id, variant_id, source, cost, effective_start, effective_end, description)
         VALUES ($1, $2, $3, $4, 'manual', $5, $6, $7, $8)`,
        [
          line.id,
          ref.pixelId,
          ref.productId,
          ref.variantId,
          toNumericText(line.cost),
          line.effectiveStartDate,
          line.effectiveEndDate,
          line.description ?? null,
        ],
      );
      const changes = [
        ...plan.closures.map((c) => ({ old: c.before, new: c.after })),
        { old: null, new: line },
      ];
      await announce(tx, ref, "variant_cog", "created", changes, actor);
      return summary(tx, ref);
    });
  }

  /** Changes the supplied fields of a manual COG line; the result must not end before it starts. */
  async updateCog(
    ref: VariantRef,
    cogId: string,
    updates: CogUpdate,
    actor: string,
  ): Promise<VariantSummary> {
    return this.sql.transaction(async (tx) => {
      await lockVariant(tx, ref);
      const history = histories(await costLines(tx, ref, "manual")).manual;
      const before = history.find((l) => l.id === cogId);
      // Store-synced lines are read-only: their ids are not COG lines of this endpoint.
      if (!before) throw new NotFoundError(COG_LINE_NOT_FOUND);
      const { description, ...rest } = updates;
      const after: CogLine = { ...before, ...rest };
      if (description === null) delete after.description;
      else if (description !== undefined) after.description = description;
      if (after.effectiveEndDate !== null && after.effectiveEndDate < after.effectiveStartDate) {
        const field = updates.effectiveEndDate !== undefined ? "effectiveEndDate" : "effectiveStartDate";
        throw new ValidationError([
          {
            message: `${field}: the line would end (${after.effectiveEndDate}) before it starts (${after.effectiveStartDate})`,
            key: field,
            path: [field],
          },
        ]);
      }
      const conflict =
        after.effectiveEndDate === null
          ? sameStartOpenEnded(history, after.effectiveStartDate, cogId)
          : undefined;
      if (conflict) throw openEndedConflict(conflict);
      if (!sameLine(before, after)) {
        await tx.query(
          `UPDATE variant_cost_lines SET cost = $2, effective_start = $3, effective_end = $4, description = $5,
             updated_at = now() WHERE id = $1`,
          [
            cogId,
            toNumericText(after.cost),
            after.effectiveStartDate,
            after.effectiveEndDate,
            after.description ?? null,
          ],
        );
        await announce(tx, ref, "variant_cog", "updated", [{ old: before, new: after }], actor);
      }
      return summary(tx, ref);
    });
  }

  /** Sets the per-unit handling fee (account currency). It is undated: it applies to every order. */
  async setHandlingFee(ref: VariantRef, handlingFee: number, actor: string): Promise<VariantSummary> {
    return this.sql.transaction(async (tx) => {
      const before = await lockVariant(tx, ref);
      if (before.handlingFee !== handlingFee) {
        await tx.query(
          `UPDATE variants SET handling_fee = $4, updated_at = now()
           WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3`,
          [ref.pixelId, ref.productId, ref.variantId, toNumericText(handlingFee)],
        );
        await announce(
          tx,
          ref,
          "handling_fee",
          "updated",
          [{ old: { handlingFee: before.handlingFee }, new: { handlingFee } }],
          actor,
        );
      }
      return summary(tx, ref);
    });
  }
}

/** Locks the variant row for the transaction, so COG writes of one variant never interleave; 404 if absent. */
async function lockVariant(tx: SqlExecutor, ref: VariantRef): Promise<{ handlingFee: number }> {
  const { rows } = await tx.query<{ handling_fee: string }>(
    `SELECT handling_fee::text AS handling_fee FROM variants
     WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3 FOR UPDATE`,
    [ref.pixelId, ref.productId, ref.variantId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError(VARIANT_NOT_FOUND);
  return { handlingFee: fromNumeric(row.handling_fee) };
}

async function costLines(
  sql: SqlExecutor,
  ref: Omit<VariantRef, "accountId">,
  source: "manual" | "store" | null,
): Promise<CogLineRow[]> {
  const { rows } = await sql.query<CogLineRow>(
    `SELECT ${COG_LINE_COLUMNS} FROM variant_cost_lines
     WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3 AND ($4::text IS NULL OR source = $4)`,
    [ref.pixelId, ref.productId, ref.variantId, source],
  );
  return rows;
}

async function summary(sql: SqlExecutor, ref: VariantRef): Promise<VariantSummary> {
  const { rows } = await sql.query<{ sku: string; title: string; handling_fee: string }>(
    `SELECT sku, title, handling_fee::text AS handling_fee FROM variants
     WHERE pixel_id = $1 AND product_id = $2 AND variant_id = $3`,
    [ref.pixelId, ref.productId, ref.variantId],
  );
  const v = rows[0];
  if (!v) throw new NotFoundError(VARIANT_NOT_FOUND);
  const lines = await costLines(sql, ref, "manual");
  return {
    id: ref.variantId,
    productId: ref.productId,
    sku: v.sku,
    title: v.title,
    handlingFee: fromNumeric(v.handling_fee),
    manualCostHistory: lines.map(toCogLine).sort(chronological),
  };
}

function openEndedConflict(existing: CogLine): ValidationError {
  return new ValidationError([
    {
      message:
        `effectiveStartDate: the open-ended COG line ${existing.id} already starts on ${existing.effectiveStartDate}; ` +
        "change that line (PUT) or give this one an effectiveEndDate",
      key: "effectiveStartDate",
      path: ["effectiveStartDate"],
    },
  ]);
}

async function announce(
  tx: SqlExecutor,
  ref: VariantRef,
  kind: "variant_cog" | "handling_fee",
  action: "created" | "updated",
  changes: { old: object | null; new: object | null }[],
  actor: string,
): Promise<void> {
  const { timezone } = await readAccountFacts(tx, ref.accountId);
  await writeCostsChanged(tx, {
    kind,
    action,
    accountId: ref.accountId,
    pixelId: ref.pixelId,
    costType: null,
    variants: [{ productId: ref.productId, variantId: ref.variantId }],
    dateRange: rangeOfChanges(changes),
    timezone,
    changes,
    actor,
  });
}
