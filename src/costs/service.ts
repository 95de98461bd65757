import { ulid } from "ulid";
import { NotFoundError, ValidationError } from "../errors.js";
import { rangeOfChanges, writeCostsChanged } from "../events/costs-changed.js";
import { toFieldIssues } from "../shared/validate.js";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import type { AccountCostFacts, GlobalOverride } from "./resolve.js";
import {
  type ConfigType,
  type CostConfig,
  type CreateLineBody,
  LINE_COST_TYPES,
  LINE_SCHEMAS,
  type LineCostType,
  type OverrideInput,
  PER_ORDER_COST_TYPES,
  type StoredLine,
  type StoredOverride,
  type UpdateLineBody,
} from "./schemas.js";

export const COST_LINE_NOT_FOUND = "Cost line not found";

interface LineRow {
  id: string;
  cost_type: LineCostType;
  line: Record<string, unknown>;
  start: string | null;
  end: string | null;
}

/** jsonb keeps keys in its own order; answers list them in the order of the line shapes instead. */
const KEY_ORDER = [
  "id",
  "name",
  "type",
  "gateway",
  "countries",
  "amount",
  "percentRate",
  "fixedFee",
  "costPerOrder",
  "costPerItem",
  "frequency",
  "category",
  "channel",
  "currency",
  "effectiveStartDate",
  "effectiveEndDate",
];
const rank = (k: string) => {
  const i = KEY_ORDER.indexOf(k);
  return i < 0 ? KEY_ORDER.length : i;
};

function ordered(line: StoredLine): StoredLine {
  return Object.fromEntries(Object.entries(line).sort(([a], [b]) => rank(a) - rank(b))) as StoredLine;
}

const toStored = (r: LineRow): StoredLine =>
  ordered({
    id: r.id,
    ...(r.line as { name: string; currency: string }),
    effectiveStartDate: r.start,
    effectiveEndDate: r.end,
  });

/** The line fields kept in `cost_lines.line`; the dates live in their own columns. */
function splitDates(line: Record<string, unknown>) {
  const { effectiveStartDate, effectiveEndDate, ...body } = line;
  return {
    body,
    start: (effectiveStartDate as string | null | undefined) ?? null,
    end: (effectiveEndDate as string | null | undefined) ?? null,
  };
}

/** Key-order independent equality of two JSON values. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

/** A variable line changing type loses the rate field of its old type unless the update sets it. */
const VARIABLE_RATE_FIELD = { pct_ad_spend: "percentRate", pct_revenue: "percentRate", per_order: "amount" };

/**
 * The account's cost configuration: lines of five types and the global product override. Every write
 * that can change a per-order cost snapshot (order, gateway and shipping lines, the override) writes
 * its `costs.changed` outbox row in the same transaction; variable and fixed lines apply at report
 * time and write none.
 */
export class CostService {
  constructor(
    private readonly sql: SqlStore,
    /** Told after a committed change: report-time costs change every cached figure of the account. */
    private readonly onChanged: (accountId: string) => Promise<void> = async () => {},
  ) {}

  private async changed<T>(accountId: string, result: Promise<T>): Promise<T> {
    const value = await result;
    await this.onChanged(accountId);
    return value;
  }

  /** The whole bag, or only `type` (still keyed by it). */
  async config(accountId: string, type?: ConfigType): Promise<Partial<CostConfig>> {
    const all = await readConfig(this.sql, accountId);
    return type ? { [type]: all[type] } : all;
  }

  async addLine(accountId: string, body: CreateLineBody, actor: string): Promise<CostConfig> {
    const { body: line, start, end } = splitDates(body.line);
    return this.changed(
      accountId,
      this.sql.transaction(async (tx) => {
        const id = ulid();
        await tx.query(
          `INSERT INTO cost_lines (id, account_id, cost_type, line, effective_start, effective_end)
         VALUES ($1, $2, $3, $4, $5, $6)`,
          [id, accountId, body.costType, line, start, end],
        );
        const created = ordered({
          id,
          ...(line as { name: string; currency: string }),
          effectiveStartDate: start,
          effectiveEndDate: end,
        });
        await announce(tx, accountId, body.costType, "created", { old: null, new: created }, actor);
        return readConfig(tx, accountId);
      }),
    );
  }

  async updateLine(
    accountId: string,
    lineId: string,
    body: UpdateLineBody,
    actor: string,
  ): Promise<CostConfig> {
    return this.changed(
      accountId,
      this.sql.transaction(async (tx) => {
        const before = await lockLine(tx, accountId, lineId, body.costType);
        const updates: Record<string, unknown> = { ...body.updates };
        const merged: Record<string, unknown> = { ...before };
        delete merged.id;
        if (
          body.costType === "variable" &&
          typeof updates.type === "string" &&
          updates.type !== before.type
        ) {
          const stale = VARIABLE_RATE_FIELD[before.type as keyof typeof VARIABLE_RATE_FIELD];
          if (stale && !(stale in updates)) delete merged[stale];
        }
        for (const [k, v] of Object.entries(updates)) {
          // null removes an optional list (countries); dates keep null, meaning unbounded.
          if (v === null && k === "countries") delete merged[k];
          else merged[k] = v;
        }
        const parsed = LINE_SCHEMAS[body.costType].safeParse(merged);
        if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error, ["updates"]));
        const { body: line, start, end } = splitDates(parsed.data as Record<string, unknown>);
        const after = ordered({
          id: lineId,
          ...(line as { name: string; currency: string }),
          effectiveStartDate: start,
          effectiveEndDate: end,
        });
        if (canonical(after) !== canonical(before)) {
          await tx.query(
            `UPDATE cost_lines SET line = $3, effective_start = $4, effective_end = $5, updated_at = now()
           WHERE id = $1 AND account_id = $2`,
            [lineId, accountId, line, start, end],
          );
          await announce(tx, accountId, body.costType, "updated", { old: before, new: after }, actor);
        }
        return readConfig(tx, accountId);
      }),
    );
  }

  async deleteLine(
    accountId: string,
    lineId: string,
    costType: LineCostType,
    actor: string,
  ): Promise<CostConfig> {
    return this.changed(
      accountId,
      this.sql.transaction(async (tx) => {
        const before = await lockLine(tx, accountId, lineId, costType);
        await tx.query("DELETE FROM cost_lines WHERE id = $1 AND account_id = $2", [lineId, accountId]);
        await announce(tx, accountId, costType, "deleted", { old: before, new: null }, actor);
        return readConfig(tx, accountId);
      }),
    );
  }

  /** Sets the account's global product override (tier 3 of COGS resolution). */
  async setOverride(accountId: string, input: OverrideInput, actor: string): Promise<CostConfig> {
    return this.changed(
      accountId,
      this.sql.transaction(async (tx) => {
        const before = await readOverride(tx, accountId, true);
        const unchanged = before && before.type === input.type && before.value === input.value;
        if (!unchanged) {
          await tx.query(
            `INSERT INTO cost_overrides (account_id, override, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (account_id) DO UPDATE SET override = excluded.override, updated_at = now()`,
            [accountId, { type: input.type, value: input.value }],
          );
          await announceOverride(tx, accountId, before ? "updated" : "created", before, input, actor);
        }
        return readConfig(tx, accountId);
      }),
    );
  }

  /** Removes the override; without one this changes nothing and still answers the configuration. */
  async clearOverride(accountId: string, actor: string): Promise<CostConfig> {
    return this.changed(
      accountId,
      this.sql.transaction(async (tx) => {
        const before = await readOverride(tx, accountId, true);
        if (before) {
          await tx.query("DELETE FROM cost_overrides WHERE account_id = $1", [accountId]);
          await announceOverride(tx, accountId, "deleted", before, null, actor);
        }
        return readConfig(tx, accountId);
      }),
    );
  }

  /** Currency, timezone and override: the account's part of COGS resolution. */
  async accountFacts(accountId: string): Promise<AccountCostFacts> {
    return readAccountFacts(this.sql, accountId);
  }
}

export async function readAccountFacts(sql: SqlExecutor, accountId: string): Promise<AccountCostFacts> {
  const { rows } = await sql.query<{ currency: string; timezone: string; override: GlobalOverride | null }>(
    `SELECT a.currency, a.timezone, o.override FROM accounts a
     LEFT JOIN cost_overrides o ON o.account_id = a.id WHERE a.id = $1`,
    [accountId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError("Account not found");
  return { currency: row.currency, timezone: row.timezone, override: row.override };
}

async function readConfig(sql: SqlExecutor, accountId: string): Promise<CostConfig> {
  const { rows } = await sql.query<LineRow>(
    `SELECT id, cost_type, line, effective_start::text AS start, effective_end::text AS "end"
     FROM cost_lines WHERE account_id = $1 ORDER BY id`,
    [accountId],
  );
  const config: CostConfig = {
    order: [],
    gateway: [],
    shipping: [],
    variable: [],
    fixed: [],
    global_product_override: await readOverride(sql, accountId, false),
  };
  for (const r of rows) if (LINE_COST_TYPES.includes(r.cost_type)) config[r.cost_type].push(toStored(r));
  return config;
}

async function readOverride(
  sql: SqlExecutor,
  accountId: string,
  lock: boolean,
): Promise<StoredOverride | null> {
  const { rows } = await sql.query<{ override: GlobalOverride; updated_at: Date }>(
    `SELECT override, updated_at FROM cost_overrides WHERE account_id = $1${lock ? " FOR UPDATE" : ""}`,
    [accountId],
  );
  const row = rows[0];
  return row ? { ...row.override, updatedAt: row.updated_at.toISOString() } : null;
}

/** The line of this account and type, locked for the rest of the transaction; 404 otherwise. */
async function lockLine(
  tx: SqlExecutor,
  accountId: string,
  lineId: string,
  costType: LineCostType,
): Promise<StoredLine> {
  const { rows } = await tx.query<LineRow>(
    `SELECT id, cost_type, line, effective_start::text AS start, effective_end::text AS "end"
     FROM cost_lines WHERE id = $1 AND account_id = $2 AND cost_type = $3 FOR UPDATE`,
    [lineId, accountId, costType],
  );
  const row = rows[0];
  // Another account's line, a line of another type and no line at all answer alike.
  if (!row) throw new NotFoundError(COST_LINE_NOT_FOUND);
  return toStored(row);
}

async function announce(
  tx: SqlExecutor,
  accountId: string,
  costType: LineCostType,
  action: "created" | "updated" | "deleted",
  change: { old: StoredLine | null; new: StoredLine | null },
  actor: string,
): Promise<void> {
  if (!PER_ORDER_COST_TYPES.includes(costType)) return;
  const timezone = (await readAccountFacts(tx, accountId)).timezone;
  await writeCostsChanged(tx, {
    kind: "cost_line",
    action,
    accountId,
    pixelId: null,
    costType,
    variants: null,
    dateRange: rangeOfChanges([change]),
    timezone,
    changes: [change],
    actor,
  });
}

async function announceOverride(
  tx: SqlExecutor,
  accountId: string,
  action: "created" | "updated" | "deleted",
  before: StoredOverride | null,
  after: OverrideInput | null,
  actor: string,
): Promise<void> {
  const timezone = (await readAccountFacts(tx, accountId)).timezone;
  await writeCostsChanged(tx, {
    kind: "global_product_override",
    action,
    accountId,
    pixelId: null,
    costType: null,
    variants: null,
    dateRange: { from: null, to: null },
    timezone,
    changes: [{ old: before ? { type: before.type, value: before.value } : null, new: after }],
    actor,
  });
}
