-- channel-accounts: ad accounts, default sort, no measures
-- POST /db-mgmt/api/query-channel-details {"pixelId":"px_golden"}
-- environment: now 2026-03-15T12:00:00.000Z, account timezone UTC, default stored order settings, page entity ids ["e1","e2"]

-- statement 1 of 1: ad_entities, primary
SELECT c.entity_id AS id, c.name AS name, c.platform AS platform, toString(c.level) AS level, c.status AS status,
  if(c.level = 'account', c.entity_id, c.account_id) AS account_id, c.campaign_id AS campaign_id, c.adset_id AS adset_id,
  c.currency AS currency, toString(c.daily_budget) AS daily_budget, toString(c.budget_remaining) AS budget_remaining,
  toString(c.amount_spent) AS amount_spent, c.source_created_at AS source_created_at, c.source_updated_at AS source_updated_at,
  count() OVER () AS total
FROM (SELECT * FROM ad_entities FINAL WHERE pixel_id = {p0:String} AND level = {p1:String}) AS c
WHERE 1
ORDER BY source_updated_at DESC, platform ASC, id ASC
LIMIT {p2:Int64} OFFSET {p3:Int64}

-- parameters:
--   p0   String                "px_golden"
--   p1   String                "account"
--   p2   Int64                 50
--   p3   Int64                 0
