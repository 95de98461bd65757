-- pixelhouse warehouse schema, single node (DESIGN §5). Forward-only. Every statement is idempotent
-- (IF NOT EXISTS) because ClickHouse DDL is not transactional: a half-applied file is re-run whole.
-- Every fact table leads its sorting key with pixel_id; versioned tables are read with FINAL/argMax.
-- Money is Decimal(18, 4) in the amount's own currency; conversion happens at query time.

CREATE TABLE IF NOT EXISTS events (
  pixel_id            LowCardinality(String),
  event_id            String,                         -- client eventId, or a server ULID
  client_event_id     Bool,                           -- false when the server generated event_id
  name                LowCardinality(String),
  event_time          DateTime64(3, 'UTC'),           -- when it happened (body timestamp or receipt)
  received_at         DateTime64(3, 'UTC'),
  origin              Enum8('server' = 1, 'browser' = 2),
  request_id          String,
  identity_id         String,                         -- as sent
  canonical_id        String,                         -- identity graph root at ingest
  email_hashes        Array(String),                  -- sha256(lower(trim(email))); raw emails never stored
  user_ids            Array(String),
  store_ids           Array(String),
  ip                  String,                         -- truncated (IPv4 /24, IPv6 /48 by default)
  user_agent          String,
  ua_browser          LowCardinality(String),
  ua_browser_version  String,
  ua_os               LowCardinality(String),
  ua_device           LowCardinality(String),
  locale              LowCardinality(String),
  page_url            String,
  page_host           LowCardinality(String),
  page_path           String,
  referrer            String,
  referrer_host       LowCardinality(String),
  utm_source          String,
  utm_medium          String,
  utm_campaign        String,
  utm_term            String,
  utm_content         String,
  utm_id              String,
  click_ids           Map(LowCardinality(String), String), -- gclid, fbclid, ttclid, msclkid, …
  fbc                 String,
  fbp                 String,
  channel             LowCardinality(String),         -- classified: paid_social, organic_search, …
  source              LowCardinality(String),         -- normalized: facebook, google, …
  campaign_id         String,
  adset_id            String,
  ad_id               String,
  is_touch            Bool,                           -- carries campaign signals (see touchpoints)
  order_id            String,
  value               Nullable(Decimal(18, 4)),
  currency            LowCardinality(String),
  items               Array(Tuple(id String, name String, price Decimal(18, 4), quantity Int32)),
  viewport_width      Nullable(UInt32),
  viewport_height     Nullable(UInt32),
  page_height         Nullable(UInt32),
  device_pixel_ratio  Nullable(Float32),
  properties          String,                         -- JSON text of every pass-through key
  -- Point lookups by event id (dedup confirmation, console) skip granules that cannot hold it.
  INDEX event_id_bloom event_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(event_time)
-- A second copy of (pixel, day, name, eventId) collapses on merge; measures also count distinct ids.
ORDER BY (pixel_id, toDate(event_time), name, event_id);

-- Marketing touches, sorted for attribution (pixel, identity, time).
CREATE TABLE IF NOT EXISTS touchpoints (
  pixel_id      LowCardinality(String),
  canonical_id  String,
  identity_id   String,
  event_id      String,
  touch_time    DateTime64(3, 'UTC'),
  channel       LowCardinality(String),
  source        LowCardinality(String),
  medium        String,
  campaign      String,
  campaign_id   String,
  adset_id      String,
  ad_id         String,
  click_id_type LowCardinality(String),
  referrer_host LowCardinality(String)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(touch_time)
ORDER BY (pixel_id, canonical_id, touch_time, event_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS touchpoints_mv TO touchpoints AS
SELECT
  pixel_id, canonical_id, identity_id, event_id, event_time AS touch_time, channel, source,
  utm_medium AS medium, utm_campaign AS campaign, campaign_id, adset_id, ad_id,
  arrayElement(mapKeys(click_ids), 1) AS click_id_type, referrer_host
FROM events
WHERE is_touch;

-- Identity graph: alias (type, value) -> canonical identity; the highest version wins.
CREATE TABLE IF NOT EXISTS identity_links (
  pixel_id      LowCardinality(String),
  alias_type    LowCardinality(String),               -- identity | email | user | store | customer | order
  alias_value   String,
  canonical_id  String,
  first_seen    DateTime64(3, 'UTC'),
  version       UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, alias_type, alias_value);

CREATE TABLE IF NOT EXISTS orders (
  pixel_id             LowCardinality(String),
  order_id             String,
  created_at           DateTime64(3, 'UTC'),
  processed_at         Nullable(DateTime64(3, 'UTC')),
  cancelled_at         Nullable(DateTime64(3, 'UTC')),
  currency             LowCardinality(String),
  total_price          Decimal(18, 4),
  subtotal_price       Decimal(18, 4),
  total_shipping       Decimal(18, 4),
  total_tax            Decimal(18, 4),
  total_discounts      Decimal(18, 4),
  financial_status     LowCardinality(String),        -- pending|authorized|paid|partially_paid|partially_refunded|refunded|voided
  source_name          LowCardinality(String),
  gateway              LowCardinality(String),
  tags                 Array(String),
  discount_codes       Array(String),
  country              LowCardinality(String),
  customer_id          String,
  customer_email_hash  String,
  canonical_id         String,                        -- identity at sync time; re-resolved at query time
  version              UInt64,                        -- source updatedAt in ms: older never wins
  updated_at           DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, order_id);

-- Lines of an order version; read only the lines whose version equals the order's current version.
CREATE TABLE IF NOT EXISTS order_lines (
  pixel_id     LowCardinality(String),
  order_id     String,
  line_index   UInt32,
  product_id   String,
  variant_id   String,
  sku          String,
  quantity     Int32,
  price        Decimal(18, 4),
  version      UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, order_id, line_index);

CREATE TABLE IF NOT EXISTS refunds (
  pixel_id    LowCardinality(String),
  refund_id   String,
  order_id    String,
  created_at  DateTime64(3, 'UTC'),
  amount      Decimal(18, 4),
  currency    LowCardinality(String),
  lines       Array(Tuple(variant_id String, quantity Int32, amount Decimal(18, 4))),
  version     UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, refund_id);

-- Per-order cost snapshot; each recalculation writes a higher version.
CREATE TABLE IF NOT EXISTS order_costs (
  pixel_id     LowCardinality(String),
  order_id     String,
  version      UInt64,
  computed_at  DateTime64(3, 'UTC'),
  currency     LowCardinality(String),                -- the order's currency
  cogs         Decimal(18, 4),
  handling     Decimal(18, 4),
  shipping     Decimal(18, 4),
  gateway      Decimal(18, 4),
  order_level  Decimal(18, 4),
  details      String                                 -- JSON: per-line sources and rules applied
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, order_id);

CREATE TABLE IF NOT EXISTS ad_entities (
  pixel_id           LowCardinality(String),
  platform           LowCardinality(String),          -- facebook | google | tiktok | …
  level              Enum8('account' = 1, 'campaign' = 2, 'adset' = 3, 'ad' = 4),
  entity_id          String,
  account_id         String,
  campaign_id        String,
  adset_id           String,
  name               String,
  status             LowCardinality(String),
  currency           LowCardinality(String),          -- budgets stay in this currency, never converted
  daily_budget       Nullable(Decimal(18, 4)),
  budget_remaining   Nullable(Decimal(18, 4)),
  amount_spent       Nullable(Decimal(18, 4)),
  source_created_at  DateTime64(3, 'UTC'),
  source_updated_at  DateTime64(3, 'UTC'),
  version            UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pixel_id, platform, level, entity_id);

CREATE TABLE IF NOT EXISTS ad_metrics_daily (
  pixel_id          LowCardinality(String),
  platform          LowCardinality(String),
  level             Enum8('account' = 1, 'campaign' = 2, 'adset' = 3, 'ad' = 4),
  entity_id         String,
  account_id        String,
  campaign_id       String,
  adset_id          String,
  date              Date,
  currency          LowCardinality(String),
  spend             Decimal(18, 4),
  impressions       UInt64,
  clicks            UInt64,
  conversions       Decimal(18, 4),
  conversion_value  Decimal(18, 4),
  version           UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(date)
ORDER BY (pixel_id, platform, level, entity_id, date);

-- Daily FX: units of `currency` per 1 USD. Global (not per pixel), so it is keyed by currency.
CREATE TABLE IF NOT EXISTS fx_rates (
  date      Date,
  currency  LowCardinality(String),
  usd_rate  Decimal(24, 10),
  version   UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (currency, date);
