import type { Binder } from "../binder.js";
import type { ChannelQuery } from "../schemas.js";

const SORT_COLUMN = {
  sourceUpdatedAt: "source_updated_at",
  sourceCreatedAt: "source_created_at",
  resourceName: "name",
};

/** The page of ad entities of one level: filtered by `where` (printed), sorted and paged. */
export function emitEntityPage(b: Binder, q: ChannelQuery, level: string, where: string): string {
  const dir = q.sortDirection === "asc" ? "ASC" : "DESC";
  return `SELECT c.entity_id AS id, c.name AS name, c.platform AS platform, toString(c.level) AS level, c.status AS status,
  if(c.level = 'account', c.entity_id, c.account_id) AS account_id, c.campaign_id AS campaign_id, c.adset_id AS adset_id,
  c.currency AS currency, toString(c.daily_budget) AS daily_budget, toString(c.budget_remaining) AS budget_remaining,
  toString(c.amount_spent) AS amount_spent, c.source_created_at AS source_created_at, c.source_updated_at AS source_updated_at,
  count() OVER () AS total
FROM (SELECT * FROM ad_entities FINAL WHERE pixel_id = ${b.bind(q.pixelId, "String")} AND level = ${b.bind(level, "String")}) AS c
WHERE ${where}
ORDER BY ${SORT_COLUMN[q.sortBy]} ${dir}, platform ASC, id ASC
LIMIT ${b.bind(q.limit, "Int64")} OFFSET ${b.bind(q.offset, "Int64")}`;
}
