import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { DEFAULT_ORDER_SETTINGS, orderSettingsSchema } from "../accounts/schemas.js";
import { type CohortTarget, cohortLateCustomersSql } from "../derived/cohort-cells.js";
import { countedKinds, MAX_FRESH_CUSTOMERS } from "../derived/customer-hours.js";
import type { CohortBuild, Fresh } from "../derived/fresh-ids.js";
import type { Logger } from "../log.js";
import { queryStatements } from "../metrics.js";
import type { DataVersions } from "../shared/data-version.js";
import type { KvStore } from "../stores/kv/port.js";
import type { SqlExecutor } from "../stores/sql/port.js";
import {
  type Params,
  WarehouseLimitError,
  type WarehouseStore,
  WarehouseUnavailableError,
} from "../stores/warehouse/port.js";
import { readCostInputs } from "./cost-inputs.js";
import { planCreditedOrders, shapeCreditedOrders } from "./credited-orders.js";
import { type StatementRows, shapeResults } from "./evaluate.js";
import { withEveryRate } from "./every-rate.js";
import {
  type CohortPlan,
  cohortStatement,
  type FreshKind,
  planAttribution,
  planChannelMeasures,
  planCohorts,
  planEntityPage,
  planGeneral,
  type QueryPlan,
  type Statement,
} from "./plan.js";
import type { StatementReaders } from "./readers.js";
import {
  type QueryEnvironment,
  resolveAttribution,
  resolveChannel,
  resolveCohorts,
  resolveCreditedOrders,
  resolveGeneral,
} from "./resolve.js";
import type {
  AttributionQuery,
  ChannelQuery,
  CohortQuery,
  CreditedOrdersQuery,
  GeneralQuery,
} from "./schemas.js";
import { shapeChannelPage } from "./shape-channel.js";
import { shapeCohorts } from "./shape-cohorts.js";
import { COHORT_CUSTOMERS, COHORT_ORDERS, COHORT_ORDERS_FROM, COHORT_SLOT } from "./sources/cohorts.js";

export interface RunOptions {
  /** Answer the plan's SQL and parameters instead of running it. */
  explain: boolean;
  /** `Cache-Control: no-cache`: run even when a cached answer exists (and refresh it). */
  bypassCache: boolean;
  /** false: run every statement over raw data (`?derived=false`); the derived form is the default. */
  derived?: boolean;
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
 * Runs the query pipeline for the query endpoints: reads what resolution needs (account timezone and
 * order settings), resolves and plans (pure, `resolve.ts` → `plan.ts`), answers from the cache when
 * the pixel's data version is unchanged, else runs the statements and shapes the rows (`evaluate.ts`,
 * `shape-*.ts`). It writes no SQL itself. A warehouse that cannot answer gives `{}` (docs/query.md).
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
      /**
       * Statements with a derived form run it (docs/derived-tables.md), given what to read raw for a
       * pixel at a data version (a null set: that kind is read raw). Absent: raw data only.
       */
      fresh?: (
        pixelId: string,
        version: string,
        options?: { customers?: boolean; creditHours?: boolean },
      ) => Promise<Fresh>;
      /**
       * The credit-cell shapes built for a pixel, and the asking for one (docs/derived-tables.md,
       * "credit_cells"); absent: attribution credits every conversion.
       */
      credits?: {
        of: (pixelId: string, shapes: readonly string[]) => Promise<Set<string>>;
        ask: (pixelId: string, shape: string) => Promise<void>;
      };
      /** A pixel's cohort build at a data version (docs/derived-tables.md); absent: cohorts read raw. */
      cohortBuild?: (
        pixelId: string,
        version: string,
        wanted: { timezone: string; mask: number },
      ) => Promise<CohortBuild | null>;
      /** Where statements run (side by side); absent: on the warehouse itself. */
      readers?: StatementReaders;
    },
  ) {
    const ttl = deps.accountCacheMs ?? 0;
    this.accounts = ttl > 0 ? new LRUCache({ max: 10_000, ttl }) : null;
  }

  /** Where statements run: the readers when there are, else the warehouse itself. */
  private get reader(): Pick<WarehouseStore, "query"> {
    return this.deps.readers ?? this.deps.warehouse;
  }

  async general(accountId: string, q: GeneralQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    return this.answer(accountId, q.pixelId, planGeneral(resolveGeneral(q, env)), opts);
  }

  async attribution(accountId: string, q: AttributionQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    return this.answer(accountId, q.pixelId, planAttribution(resolveAttribution(q, env)), opts);
  }

  /** The orders credited to one value of an attribution answer (docs/query.md, "Credited orders"). */
  async creditedOrders(accountId: string, q: CreditedOrdersQuery, opts: RunOptions): Promise<QueryAnswer> {
    const resolved = resolveCreditedOrders(q, await this.environment(accountId));
    const plan = planCreditedOrders(resolved);
    if (opts.explain) return explained([plan.statement]);
    return this.cached(accountId, q.pixelId, plan, opts, async (version) => {
      const fresh = await this.freshRows([plan.statement], opts, q.pixelId, version);
      const rowsOf = (s: Statement) => this.runStatement(s, fresh);
      return shapeCreditedOrders(plan, await rowsOf(plan.statement), async () => {
        const first = await rowsOf(planCreditedOrders(resolved, { limit: 1, offset: 0 }).statement);
        return Number(first[0]?.total ?? 0);
      });
    });
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
    return this.cached(accountId, pixelId, plan, opts, async (version) => {
      const costs = plan.reportCosts ? await readCostInputs(this.deps, accountId, plan) : null;
      return shapeResults(plan, await this.run(plan, opts, pixelId, version), costs);
    });
  }

  /** Channel details (docs/query.md): a page of ad entities, with measures over the range when asked. */
  async channelDetails(accountId: string, q: ChannelQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    const resolved = resolveChannel(q, env);
    const page = planEntityPage(resolved);
    if (opts.explain) {
      // The measures' statements run with the page's entity ids, which only running the page tells.
      const measures = q.measures ? planChannelMeasures(resolved, []).statements : [];
      return explained([{ source: "ad_entities", period: "primary", ...page }, ...measures]);
    }
    const normalized = {
      channel: q,
      timezone: resolved.timezone,
      settings: env.storedOrderSettings,
      day: env.now.toISOString().slice(0, 10),
    };
    return this.cached(accountId, q.pixelId, normalized, opts, async (version) => {
      const entities = await this.reader.query<Record<string, unknown>>(page.sql, page.params);
      if (!q.measures || entities.length === 0) return shapeChannelPage(q, entities, null);
      const plan = planChannelMeasures(
        resolved,
        entities.map((r) => String(r.id)),
      );
      return shapeChannelPage(q, entities, { plan, rows: await this.run(plan, opts, q.pixelId, version) });
    });
  }

  /** Cohort analysis (docs/query.md, "Cohorts"). */
  async cohorts(accountId: string, q: CohortQuery, opts: RunOptions): Promise<QueryAnswer> {
    const env = await this.environment(accountId);
    const plan = planCohorts(resolveCohorts(q, env));
    if (opts.explain) {
      return explained([cohortStatement(plan)]);
    }
    const { now: _now, ...stable } = plan;
    // Which periods a cohort has reached depends on today: the key carries the date.
    return this.cached(
      accountId,
      q.pixelId,
      { cohorts: stable, day: plan.now.slice(0, 10) },
      opts,
      async (version) => {
        const run = await this.cohortForm(plan, opts, q.pixelId, version);
        const rows = await withEveryRate(run.params, (params) => this.reader.query(run.sql, params)).catch(
          (err: unknown) => {
            // The cells' form failing for its own reasons is not the answer's failure: raw data answers.
            if (
              run.sql === plan.sql ||
              err instanceof WarehouseUnavailableError ||
              err instanceof WarehouseLimitError
            )
              throw err;
            this.deps.log.warn(
              { err, pixelId: q.pixelId },
              "cohort cells' statement failed; answering from raw data",
            );
            return withEveryRate(plan.params, (params) => this.reader.query(plan.sql, params));
          },
        );
        return shapeCohorts(plan, rows);
      },
    );
  }

  /** What the cohort cells of a pixel should cover: UTC and its account's timezone, its stored counting. */
  async cohortTarget(pixelId: string): Promise<CohortTarget> {
    const { rows } = await this.deps.sql.query<{ account_id: string }>(
      "SELECT account_id FROM pixels WHERE id = $1",
      [pixelId],
    );
    const env = await this.environment(rows[0]?.account_id ?? "");
    const settings = env.storedOrderSettings;
    return {
      timezones: [...new Set(["UTC", env.accountTimezone])],
      // Cells know orders by kind only: under an enabled exclusion filter no query of the stored
      // settings can use them, so none are built.
      masks: settings.exclusionFilters.some((f) => f.enabled) ? [] : [countedKinds(settings)],
    };
  }

  /**
   * The cohort statement to run: the cells' form when the pixel's build covers the query's timezone
   * and counting and the customers to correct are known and few, else the raw statement. A failure
   * to tell costs speed, not the answer.
   */
  private async cohortForm(
    plan: CohortPlan,
    opts: RunOptions,
    pixelId: string,
    version: string,
  ): Promise<{ sql: string; params: Params }> {
    const raw = { sql: plan.sql, params: plan.params };
    const d = plan.derived;
    if (!d || !this.deps.cohortBuild || opts.derived === false) return raw;
    try {
      const build = await this.deps.cohortBuild(pixelId, version, { timezone: d.timezone, mask: d.mask });
      if (!build?.customers) return raw;
      const [late] = await this.reader.query<{ customers: string[] }>(cohortLateCustomersSql(), {
        pixel: pixelId,
        slot: build.slot,
        end: d.end,
      });
      const customers = [...new Set([...build.customers, ...(late?.customers ?? [])])].sort();
      if (customers.length > MAX_FRESH_CUSTOMERS) return raw;
      const bound = { ...d.params, [COHORT_SLOT]: build.slot };
      return customers.length === 0
        ? { sql: d.current, params: bound }
        : {
            sql: d.sql,
            params: {
              ...bound,
              [COHORT_CUSTOMERS]: customers,
              [COHORT_ORDERS]: build.orders,
              [COHORT_ORDERS_FROM]: build.ordersFrom,
            },
          };
    } catch (err) {
      this.deps.log.warn({ err, pixelId }, "cohort build not read; answering from raw data");
      return raw;
    }
  }

  private async run(
    plan: QueryPlan,
    opts: RunOptions,
    pixelId: string,
    version: string,
  ): Promise<StatementRows[]> {
    const { forms, asking } = await this.cellForms(plan.statements, opts, pixelId);
    const fresh = await this.freshRows(forms, opts, pixelId, version);
    // Cells whose fresh hours are unknown (none recorded current, or too many): the derived form.
    const unknown = fresh?.creditHours === null || fresh?.ids === null;
    const [answered] = await Promise.all([
      Promise.all(
        plan.statements.map(async (statement, i) => ({
          statement,
          rows: await this.runStatement(unknown ? statement : forms[i]!, fresh),
        })),
      ),
      asking,
    ]);
    return answered;
  }

  /**
   * Each statement as it runs: one whose credit-cell shape is built runs its cells' forms as its
   * derived ones; for a shape not built yet the asking is recorded (`asking`, beside the statements:
   * once answered, the worker's next round builds it) and the statement runs as planned. Neither step
   * can fail the query: the shapes not read, none is built; the asking failed, the next query asks.
   */
  private async cellForms(
    statements: readonly Statement[],
    opts: RunOptions,
    pixelId: string,
  ): Promise<{ forms: readonly Statement[]; asking: Promise<unknown> }> {
    const credits = this.deps.credits;
    const none = { forms: statements, asking: Promise.resolve() };
    if (!credits || opts.derived === false || !statements.some((s) => s.cells)) return none;
    const shapes = statements.flatMap((s) => (s.cells ? [s.cells.shape] : []));
    const built = await credits.of(pixelId, shapes).catch((err: unknown) => {
      this.deps.log.warn({ err, pixelId }, "credit shapes not read; crediting every conversion");
      return null;
    });
    if (built === null) return none;
    const asks = [...new Set(shapes.filter((shape) => !built.has(shape)))].map((shape) =>
      credits.ask(pixelId, shape).catch((err: unknown) => {
        this.deps.log.warn({ err, pixelId }, "credit shape not asked for; next query asks again");
      }),
    );
    return {
      forms: statements.map((s) =>
        s.cells && built.has(s.cells.shape) ? { ...s, derived: s.cells.derived } : s,
      ),
      asking: Promise.all(asks),
    };
  }

  /**
   * What to read raw when statements run their derived form; null: run them raw. A failure to tell
   * what is fresh costs speed, not the answer: everything is read raw.
   */
  private async freshRows(
    statements: readonly Statement[],
    opts: RunOptions,
    pixelId: string,
    version: string,
  ): Promise<Fresh | null> {
    if (!this.deps.fresh || opts.derived === false || !statements.some((s) => s.derived)) return null;
    const reads = (kind: FreshKind) =>
      statements.some(
        (s) => s.derived?.fresh === kind || s.derived?.moreFresh?.some((m) => m.fresh === kind),
      );
    const wanted = { customers: reads("customers"), creditHours: reads("creditHours") };
    return this.deps.fresh(pixelId, version, wanted).catch((err: unknown) => {
      this.deps.log.warn({ err, pixelId }, "fresh rows not read; answering from raw data");
      return null;
    });
  }

  /** A statement's derived form when its fresh sets are known, else the statement as planned. */
  private runStatement(statement: Statement, fresh: Fresh | null): Promise<Record<string, unknown>[]> {
    const d = statement.derived;
    // Every set the form reads must be known (a null set: that kind is read raw, so the statement is).
    const sets =
      d && fresh
        ? [{ fresh: d.fresh, param: d.freshParam }, ...(d.moreFresh ?? [])].map((w) => ({
            param: w.param,
            set: fresh[w.fresh] ?? null,
          }))
        : [];
    const known = d !== undefined && sets.length > 0 && sets.every((x) => x.set !== null);
    if (!known && statement.split) {
      const parts = statement.split;
      return Promise.all(parts.map((s) => this.runStatement(s, fresh))).then((rows) => rows.flat());
    }
    const current =
      d !== undefined && known && sets.every((x) => x.set!.length === 0) && d.current !== undefined;
    const run =
      d && known
        ? current
          ? d.current!
          : { sql: d.sql, params: { ...d.params, ...Object.fromEntries(sets.map((x) => [x.param, x.set!])) } }
        : statement;
    const cells = d !== undefined && d === statement.cells?.derived;
    const form = !(d && known) ? "raw" : `${cells ? "cells" : "derived"}${current ? "_current" : ""}`;
    queryStatements.inc({ source: statement.source, form });
    return withEveryRate(run.params, (params) => this.reader.query<Record<string, unknown>>(run.sql, params));
  }

  /** The cache around a computation: key = pixel + data version + hash of the normalized query. */
  private async cached(
    accountId: string,
    pixelId: string,
    normalized: unknown,
    opts: RunOptions,
    compute: (version: string) => Promise<object>,
  ): Promise<QueryAnswer> {
    const version = await this.deps.versions.current(pixelId, accountId);
    // ?derived=false answers alike, but is asked to check that: it never shares the derived answer's entry.
    const digest = createHash("sha256")
      .update(JSON.stringify(opts.derived === false ? { raw: normalized } : normalized))
      .digest("base64url");
    const key = `q:${pixelId}:${version}:${digest}`;
    if (!opts.bypassCache) {
      const hit = await this.deps.kv.get(key).catch(() => null);
      if (hit) return { body: JSON.parse(hit) as object, cache: "hit" };
    }
    let body: object;
    try {
      body = await compute(String(version));
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
}

/** `?explain=true`: the statements as they would run, never cached. */
function explained(
  statements: readonly { source: string; period: string; sql: string; params: object; split?: unknown }[],
): QueryAnswer {
  // A shared statement's `split` repeats the statements it replaced: not what runs, so not listed.
  const listed = statements.map(({ split: _split, ...s }) => s);
  return { body: { explain: { statements: listed } }, cache: "none" };
}
