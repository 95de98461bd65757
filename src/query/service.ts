import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { DEFAULT_ORDER_SETTINGS, orderSettingsSchema } from "../accounts/schemas.js";
import type { Logger } from "../log.js";
import type { DataVersions } from "../shared/data-version.js";
import type { KvStore } from "../stores/kv/port.js";
import type { SqlExecutor } from "../stores/sql/port.js";
import {
  WarehouseLimitError,
  type WarehouseStore,
  WarehouseUnavailableError,
} from "../stores/warehouse/port.js";
import { type ChannelQuery, entityStatement, planChannelMeasures, validateChannelQuery } from "./channel.js";
import { type CohortQuery, planCohorts, shapeCohorts } from "./cohorts.js";
import { type CostInputs, type StatementRows, shapeResults } from "./evaluate.js";
import { planAttributionQuery, planGeneralQuery, type QueryEnvironment, type QueryPlan } from "./plan.js";
import type { RateTable, ReportCostLine } from "./report-costs.js";
import type { AttributionQuery, GeneralQuery } from "./schemas.js";

export interface RunOptions {
  /** Answer the plan's SQL and parameters instead of running it. */
  explain: boolean;
  /** `Cache-Control: no-cache`: run even when a cached answer exists (and refresh it). */
  bypassCache: boolean;
}

interface AccountRow {
  timezone: string;
  order_settings: unknown;
}

export interface QueryAnswer {
  body: object;
  cache: "hit" | "miss" | "bypass" | "none";
}

const CACHE_TTL_MS = 24 * 3600 * 1000;

/**
 * Runs planned queries: reads what normalization needs (account timezone and order settings), plans
 * (pure), answers from the cache when the pixel's data version is unchanged, else runs the
 * statements and shapes the rows. A warehouse that cannot answer gives `{}` (docs/query.md).
 */
export class QueryService {
  /** The account row a query is normalized with: the cached path's only store read, so kept briefly. */
  private readonly accounts: LRUCache<string, AccountRow> | null;

  constructor(
    private readonly deps: {
      sql: SqlExecutor;
      warehouse: WarehouseStore;
      kv: KvStore;
      versions: DataVersions;
      log: Logger;
      now?: () => Date;
      /** How long an account's timezone and order settings are reused in process (0: read each time). */
      accountCacheMs?: number;
    },
  ) {
    const ttl = deps.accountCacheMs ?? 0;
    this.accounts = ttl > 0 ? new LRUCache({ max: 10_000, ttl }) : null;
  }

  async general(accountId: string, q: GeneralQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    return this.answer(accountId, q.pixelId, planGeneralQuery(q, env), opts);
  }

  async attribution(accountId: string, q: AttributionQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    return this.answer(accountId, q.pixelId, planAttributionQuery(q, env), opts);
  }

  /** Timezone and stored order settings: one read, reused for `accountCacheMs`. */
  private async environment(accountId: string): Promise<QueryEnvironment> {
    let row = this.accounts?.get(accountId);
    if (!row) {
      const { rows } = await this.deps.sql.query<AccountRow>(
        "SELECT timezone, order_settings FROM accounts WHERE id = $1",
        [accountId],
      );
      row = rows[0] ?? { timezone: "UTC", order_settings: null };
      this.accounts?.set(accountId, row);
    }
    // Only known, well-typed stored keys override a default (as GET …/settings/order shows them).
    const stored = orderSettingsSchema.partial().safeParse(row.order_settings ?? {});
    const defined = Object.fromEntries(
      Object.entries(stored.success ? stored.data : {}).filter(([, v]) => v !== undefined),
    );
    return {
      accountTimezone: row.timezone ?? "UTC",
      storedOrderSettings: { ...DEFAULT_ORDER_SETTINGS, ...defined },
      now: this.deps.now?.() ?? new Date(),
    };
  }

  private async answer(
    accountId: string,
    pixelId: string,
    plan: QueryPlan,
    opts: RunOptions,
  ): Promise<QueryAnswer> {
    if (opts.explain) return explained(plan.statements);
    // The plan is the normalized query (relative dates resolved, settings merged): its hash is the key.
    return this.cached(accountId, pixelId, plan, opts, async () => {
      const costs = plan.reportCosts ? await this.costInputs(accountId, plan) : null;
      return shapeResults(plan, await this.run(plan), costs);
    });
  }

  /** Channel details (docs/query.md): a page of ad entities, with measures over the range when asked. */
  async channelDetails(accountId: string, q: ChannelQuery, opts: RunOptions): Promise<QueryAnswer> {
    validateChannelQuery(q);
    const env = await this.environment(accountId);
    const timezone = q.timezone ?? env.accountTimezone;
    const entities = entityStatement(q, timezone);
    if (opts.explain) {
      const measures = q.measures ? planChannelMeasures(q, env, []).statements : [];
      return explained([{ source: "ad_entities", period: "primary", ...entities }, ...measures]);
    }
    const normalized = {
      channel: q,
      timezone,
      settings: env.storedOrderSettings,
      day: env.now.toISOString().slice(0, 10),
    };
    return this.cached(accountId, q.pixelId, normalized, opts, async () => {
      const rows = await this.deps.warehouse.query<Record<string, unknown>>(
        entities.sql,
        entities.params as never,
      );
      const total = Number(rows[0]?.total ?? 0);
      const byId = new Map<string, { data: unknown; measureDetails: unknown }>();
      if (q.measures && rows.length) {
        const plan = planChannelMeasures(
          q,
          env,
          rows.map((r) => String(r.id)),
        );
        for (const r of shapeResults(plan, await this.run(plan), null).results) {
          byId.set(String(r.dimensionValue), { data: r.data, measureDetails: r.measureDetails });
        }
        const empty = shapeResults({ ...plan, dimensions: [], statements: [] }, [], null).results[0]!;
        for (const r of rows) {
          if (!byId.has(String(r.id)))
            byId.set(String(r.id), { data: empty.data, measureDetails: empty.measureDetails });
        }
      }
      return {
        results: rows.map((r) => ({
          basicDetails: basicDetails(r),
          ...(q.measures ? byId.get(String(r.id)) : { data: { primary: [], compare: [] } }),
        })),
        pagination: { limit: q.limit, offset: q.offset, total, hasMore: q.offset + rows.length < total },
      };
    });
  }

  /** Cohort analysis (docs/query.md, "Cohorts"). */
  async cohorts(accountId: string, q: CohortQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    const plan = planCohorts(q, env);
    if (opts.explain) {
      return explained([{ source: "orders", period: "primary", sql: plan.sql, params: plan.params }]);
    }
    const { now: _now, ...stable } = plan;
    // Which periods a cohort has reached depends on today: the key carries the date.
    return this.cached(
      accountId,
      q.pixelId,
      { cohorts: stable, day: plan.now.slice(0, 10) },
      opts,
      async () => shapeCohorts(plan, await this.deps.warehouse.query(plan.sql, plan.params as never)),
    );
  }

  private async run(plan: QueryPlan): Promise<StatementRows[]> {
    return Promise.all(
      plan.statements.map(async (statement) => ({
        statement,
        rows: await this.deps.warehouse.query<Record<string, unknown>>(
          statement.sql,
          statement.params as never,
        ),
      })),
    );
  }

  /** The cache around a computation: key = pixel + data version + hash of the normalized query. */
  private async cached(
    accountId: string,
    pixelId: string,
    normalized: unknown,
    opts: RunOptions,
    compute: () => Promise<object>,
  ): Promise<QueryAnswer> {
    const version = await this.deps.versions.current(pixelId, accountId);
    const digest = createHash("sha256").update(JSON.stringify(normalized)).digest("base64url");
    const key = `q:${pixelId}:${version}:${digest}`;
    if (!opts.bypassCache) {
      const hit = await this.deps.kv.get(key).catch(() => null);
      if (hit) return { body: JSON.parse(hit) as object, cache: "hit" };
    }
    let body: object;
    try {
      body = await compute();
    } catch (err) {
      if (err instanceof WarehouseUnavailableError || err instanceof WarehouseLimitError) {
        this.deps.log.error({ err, pixelId }, "query could not be run");
        return { body: {}, cache: "none" };
      }
      throw err;
    }
    await this.deps.kv.set(key, JSON.stringify(body), CACHE_TTL_MS).catch((err: unknown) => {
      this.deps.log.warn({ err }, "query result not cached");
    });
    return { body, cache: opts.bypassCache ? "bypass" : "miss" };
  }

  private async costInputs(accountId: string, plan: QueryPlan): Promise<CostInputs> {
    const { rows } = await this.deps.sql.query<{
      cost_type: "variable" | "fixed";
      line: ReportCostLine["line"];
      effective_start: string | null;
      effective_end: string | null;
    }>(
      `SELECT cost_type, line, to_char(effective_start, 'YYYY-MM-DD') AS effective_start,
              to_char(effective_end, 'YYYY-MM-DD') AS effective_end
       FROM cost_lines WHERE account_id = $1 AND cost_type IN ('variable', 'fixed') ORDER BY id`,
      [accountId],
    );
    const lines: ReportCostLine[] = rows.map((r) => ({
      costType: r.cost_type,
      line: r.line,
      effectiveStart: r.effective_start,
      effectiveEnd: r.effective_end,
    }));
    const currencies = [
      ...new Set([plan.currency, ...lines.map((l) => (l.line.currency ?? "USD").toUpperCase())]),
    ];
    const last =
      plan.compare && plan.compare.range.endDate > plan.primary.range.endDate
        ? plan.compare.range.endDate
        : plan.primary.range.endDate;
    const fx = await this.deps.warehouse.query<{ currency: string; day: string; rate: number }>(
      `SELECT currency, toString(date) AS day, toFloat64(argMax(usd_rate, version)) AS rate FROM fx_rates
       WHERE currency IN {c:Array(String)} AND date <= {d:Date} GROUP BY currency, date ORDER BY currency, date`,
      { c: currencies, d: last },
    );
    const rates: RateTable = new Map();
    for (const r of fx) {
      if (!rates.has(r.currency)) rates.set(r.currency, []);
      rates.get(r.currency)!.push([r.day, Number(r.rate)]);
    }
    return { lines, rates };
  }
}

function basicDetails(r: Record<string, unknown>) {
  const num = (v: unknown) => (v === null || v === undefined || v === "" || v === "\\N" ? null : Number(v));
  const iso = (v: unknown) => (typeof v === "string" ? `${v.replace(" ", "T")}Z` : null);
  return {
    id: String(r.id),
    resourceName: String(r.name),
    resourceSource: String(r.platform),
    level: String(r.level),
    status: String(r.status),
    accountId: String(r.account_id),
    campaignId: String(r.campaign_id),
    adsetId: String(r.adset_id),
    currency: String(r.currency),
    dailyBudget: num(r.daily_budget),
    budgetRemaining: num(r.budget_remaining),
    amountSpent: num(r.amount_spent),
    sourceCreatedAt: iso(r.source_created_at),
    sourceUpdatedAt: iso(r.source_updated_at),
  };
}

/** `?explain=true`: the statements as they would run, never cached. */
function explained(
  statements: readonly { source: string; period: string; sql: string; params: object }[],
): QueryAnswer {
  return { body: { explain: { statements } }, cache: "none" };
}
