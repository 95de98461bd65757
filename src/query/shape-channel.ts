import type { StatementRows } from "./evaluate.js";
import { shapeResults } from "./evaluate.js";
import type { QueryPlan } from "./plan.js";
import type { ChannelAnswerBody, QueryResult } from "./responses.js";
import type { ChannelQuery } from "./schemas.js";

/** An entity row of the page as the response's `basicDetails` (budgets in the platform's currency). */
export function basicDetails(r: Record<string, unknown>) {
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

/**
 * The channel-details answer: each entity of the page with its measures (zeros when the range holds
 * none of its rows) when measures were asked, and the page's position in the whole list.
 */
export function shapeChannelPage(
  q: ChannelQuery,
  entities: Record<string, unknown>[],
  measured: { plan: QueryPlan; rows: StatementRows[] } | null,
): ChannelAnswerBody {
  const total = Number(entities[0]?.total ?? 0);
  const byId = new Map<string, Pick<QueryResult, "data" | "measureDetails">>();
  if (measured) {
    for (const r of shapeResults(measured.plan, measured.rows, null).results) {
      byId.set(String(r.dimensionValue), { data: r.data, measureDetails: r.measureDetails });
    }
    const empty = shapeResults({ ...measured.plan, dimensions: [], statements: [] }, [], null).results[0]!;
    for (const r of entities) {
      if (!byId.has(String(r.id)))
        byId.set(String(r.id), { data: empty.data, measureDetails: empty.measureDetails });
    }
  }
  return {
    results: entities.map((r) => ({
      basicDetails: basicDetails(r),
      ...(measured ? byId.get(String(r.id))! : { data: { primary: [], compare: [] } }),
    })),
    pagination: { limit: q.limit, offset: q.offset, total, hasMore: q.offset + entities.length < total },
  };
}
