-- pixelhouse warehouse schema, cluster form of sql/clickhouse/001_init.sql (see docs/clickhouse-cluster.md).
-- NOT applied by the app: an operator runs it once, before the first app start, on a node of the cluster:
--   clickhouse-client --database pixelhouse --multiquery < sql/clickhouse/cluster/001_init.sql
-- Needs the macros {cluster}, {shard} and {replica} on every server, ClickHouse Keeper, and
-- <internal_replication>true</internal_replication> on every shard of the cluster definition.
--
-- Shape: each table of the single-node file becomes
--   <table>_local  ReplicatedReplacingMergeTree, same columns, partitioning and sorting key, on every node;
--   <table>        Distributed over <table>_local, under the original name, so the app's SQL is unchanged.
-- Every fact table is sharded by cityHash64(pixel_id): all rows of a pixel live on one shard, so
-- ReplacingMergeTree collapsing (the eventId dedup backstop, versioned upserts read with FINAL/argMax)
-- sees every copy of a row, and joins between fact tables stay shard-local.
-- fx_rates is not sharded: it is one replication group spanning every node, read directly.
--
-- Same rules as the single-node file: every statement is idempotent (IF NOT EXISTS) because DDL is not
-- transactional, one statement per `;` at the end of a line, comments only on their own `--` lines.
-- Every later migration in sql/clickhouse/ needs a twin here (ON CLUSTER, on the _local and the Distributed table).

-- events: one row per accepted event.
CREATE TABLE IF NOT EXISTS events_local ON CLUSTER '{cluster}' (
  pixel_id            LowCardinality(String),
  event_id            String,
  client_event_id     Bool,
  name                LowCardinality(String),
  event_time          DateTime64(3, 'UTC'),
  received_at         DateTime64(3, 'UTC'),
  origin              Enum8('server' = 1, 'browser' = 2),
  request_id          String,
  identity_id         String,
  canonical_id        String,
  email_hashes        Array(String),
  user_ids            Array(String),
  store_ids           Array(String),
  ip                  String,
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
  click_ids           Map(LowCardinality(String), String),
  fbc                 String,
  fbp                 String,
  channel             LowCardinality(String),
  source              LowCardinality(String),
  campaign_id         String,
  adset_id            String,
  ad_id               String,
  is_touch            Bool,
  order_id            String,
  value               Nullable(Decimal(18, 4)),
  currency            LowCardinality(String),
  items               Array(Tuple(id String, name String, price Decimal(18, 4), quantity Int32)),
  viewport_width      Nullable(UInt32),
  viewport_height     Nullable(UInt32),
  page_height         Nullable(UInt32),
  device_pixel_ratio  Nullable(Float32),
  properties          String,
  -- Point lookups by event id (dedup confirmation, console) skip granules that cannot hold it.
  -- The Distributed table created AS events_local leaves the index out (only MergeTree tables take one).
  INDEX event_id_bloom event_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/events_local', '{replica}')
PARTITION BY toYYYYMM(event_time)
ORDER BY (pixel_id, toDate(event_time), name, event_id);

CREATE TABLE IF NOT EXISTS events ON CLUSTER '{cluster}' AS events_local
ENGINE = Distributed('{cluster}', currentDatabase(), events_local, cityHash64(pixel_id));

-- touchpoints: the marketing-touch subset of events, sorted for attribution.
CREATE TABLE IF NOT EXISTS touchpoints_local ON CLUSTER '{cluster}' (
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
  referrer_host LowCardinality(String),
  ingested_at   DateTime64(3, 'UTC') DEFAULT now64(3),   -- derived tables' change feed (docs/derived-tables.md)
  INDEX ingested_minmax ingested_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/touchpoints_local', '{replica}')
PARTITION BY toYYYYMM(touch_time)
ORDER BY (pixel_id, canonical_id, touch_time, event_id);

CREATE TABLE IF NOT EXISTS touchpoints ON CLUSTER '{cluster}' AS touchpoints_local
ENGINE = Distributed('{cluster}', currentDatabase(), touchpoints_local, cityHash64(pixel_id));

-- The view lives on every node and reads the local events table: an insert through `events` reaches
-- the shard that owns the pixel, and the view writes that block's touches into the same shard's
-- touchpoints_local (replication then copies them to the shard's other replicas).
CREATE MATERIALIZED VIEW IF NOT EXISTS touchpoints_mv ON CLUSTER '{cluster}' TO touchpoints_local AS
SELECT
  pixel_id, canonical_id, identity_id, event_id, event_time AS touch_time, channel, source,
  utm_medium AS medium, utm_campaign AS campaign, campaign_id, adset_id, ad_id,
  arrayElement(mapKeys(click_ids), 1) AS click_id_type, referrer_host
FROM events_local
WHERE is_touch;

-- identity_links: alias (type, value) -> canonical identity; the highest version wins.
CREATE TABLE IF NOT EXISTS identity_links_local ON CLUSTER '{cluster}' (
  pixel_id      LowCardinality(String),
  alias_type    LowCardinality(String),
  alias_value   String,
  canonical_id  String,
  first_seen    DateTime64(3, 'UTC'),
  version       UInt64,
  ingested_at   DateTime64(3, 'UTC') DEFAULT now64(3),
  INDEX ingested_minmax ingested_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/identity_links_local', '{replica}', version)
ORDER BY (pixel_id, alias_type, alias_value);

CREATE TABLE IF NOT EXISTS identity_links ON CLUSTER '{cluster}' AS identity_links_local
ENGINE = Distributed('{cluster}', currentDatabase(), identity_links_local, cityHash64(pixel_id));

-- orders: versioned upserts (version = source updatedAt in ms).
CREATE TABLE IF NOT EXISTS orders_local ON CLUSTER '{cluster}' (
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
  financial_status     LowCardinality(String),
  source_name          LowCardinality(String),
  gateway              LowCardinality(String),
  tags                 Array(String),
  discount_codes       Array(String),
  country              LowCardinality(String),
  customer_id          String,
  customer_email_hash  String,
  canonical_id         String,
  version              UInt64,
  updated_at           DateTime64(3, 'UTC'),
  is_deleted           UInt8 DEFAULT 0,
  ingested_at          DateTime64(3, 'UTC') DEFAULT now64(3),
  INDEX ingested_minmax ingested_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/orders_local', '{replica}', version, is_deleted)
PARTITION BY toYYYYMM(created_at)
ORDER BY (pixel_id, order_id);

CREATE TABLE IF NOT EXISTS orders ON CLUSTER '{cluster}' AS orders_local
ENGINE = Distributed('{cluster}', currentDatabase(), orders_local, cityHash64(pixel_id));

-- conversion_touches: each order's touches, kept by the derived-tables worker (docs/derived-tables.md).
CREATE TABLE IF NOT EXISTS conversion_touches_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  order_id       String,
  created_at     DateTime64(3, 'UTC'),
  built_version  UInt64,
  touches        Array(Tuple(
    touch_time     DateTime64(3, 'UTC'),
    event_id       String,
    channel        LowCardinality(String),
    source         LowCardinality(String),
    medium         String,
    campaign       String,
    campaign_id    String,
    adset_id       String,
    ad_id          String,
    click_id_type  LowCardinality(String),
    referrer_host  LowCardinality(String)))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/conversion_touches_local', '{replica}', built_version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (pixel_id, created_at, order_id);

CREATE TABLE IF NOT EXISTS conversion_touches ON CLUSTER '{cluster}' AS conversion_touches_local
ENGINE = Distributed('{cluster}', currentDatabase(), conversion_touches_local, cityHash64(pixel_id));

-- derived_watermarks: how far each pixel's derived tables are current.
CREATE TABLE IF NOT EXISTS derived_watermarks_local ON CLUSTER '{cluster}' (
  pixel_id    LowCardinality(String),
  name        LowCardinality(String),
  watermark   DateTime64(3, 'UTC'),
  written_at  DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/derived_watermarks_local', '{replica}', watermark)
ORDER BY (pixel_id, name);

CREATE TABLE IF NOT EXISTS derived_watermarks ON CLUSTER '{cluster}' AS derived_watermarks_local
ENGINE = Distributed('{cluster}', currentDatabase(), derived_watermarks_local, cityHash64(pixel_id));

-- order_facts_hourly: hourly rollups of order facts, kept by the derived-tables worker.
CREATE TABLE IF NOT EXISTS order_facts_hourly_local ON CLUSTER '{cluster}' (
  pixel_id          LowCardinality(String),
  hour              DateTime64(3, 'UTC'),
  currency          LowCardinality(String),
  financial_status  LowCardinality(String),
  built_version     UInt64,
  orders            UInt64,
  total_price       Decimal(38, 4),
  subtotal_price    Decimal(38, 4),
  total_shipping    Decimal(38, 4),
  total_tax         Decimal(38, 4),
  total_discounts   Decimal(38, 4),
  customers         AggregateFunction(uniqExact, String) -- no longer read or written
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/order_facts_hourly_local', '{replica}', built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, currency, financial_status);

CREATE TABLE IF NOT EXISTS order_facts_hourly ON CLUSTER '{cluster}' AS order_facts_hourly_local
ENGINE = Distributed('{cluster}', currentDatabase(), order_facts_hourly_local, cityHash64(pixel_id));

-- customer_hours: customers per hour with their previous counted hour, kept by the derived-tables worker.
CREATE TABLE IF NOT EXISTS customer_hours_local ON CLUSTER '{cluster}' (
  pixel_id           LowCardinality(String),
  hour               DateTime64(3, 'UTC'),
  customer_key       String,
  built_version      UInt64,
  kinds              UInt8,
  prev               DateTime64(3, 'UTC'),
  prev_with_pending  DateTime64(3, 'UTC'),
  prev_with_voided   DateTime64(3, 'UTC'),
  prev_with_both     DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/customer_hours_local', '{replica}', built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, customer_key);

CREATE TABLE IF NOT EXISTS customer_hours ON CLUSTER '{cluster}' AS customer_hours_local
ENGINE = Distributed('{cluster}', currentDatabase(), customer_hours_local, cityHash64(pixel_id));

-- order_hours: every hour and customer the derived tables counted an order under.
CREATE TABLE IF NOT EXISTS order_hours_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  order_id       String,
  built_version  UInt64,
  hour           DateTime64(3, 'UTC'),
  customer_key   String
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/order_hours_local', '{replica}', built_version)
ORDER BY (pixel_id, order_id, hour, customer_key);

CREATE TABLE IF NOT EXISTS order_hours ON CLUSTER '{cluster}' AS order_hours_local
ENGINE = Distributed('{cluster}', currentDatabase(), order_hours_local, cityHash64(pixel_id));

-- refund_facts_hourly: refunds per hour, kept by the derived-tables worker.
CREATE TABLE IF NOT EXISTS refund_facts_hourly_local ON CLUSTER '{cluster}' (
  pixel_id          LowCardinality(String),
  hour              DateTime64(3, 'UTC'),
  order_hour        DateTime64(3, 'UTC'),
  currency          LowCardinality(String),
  financial_status  LowCardinality(String),
  built_version     UInt64,
  refunds           UInt64,
  amount            Decimal(38, 4)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/refund_facts_hourly_local', '{replica}', built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, order_hour, currency, financial_status);

CREATE TABLE IF NOT EXISTS refund_facts_hourly ON CLUSTER '{cluster}' AS refund_facts_hourly_local
ENGINE = Distributed('{cluster}', currentDatabase(), refund_facts_hourly_local, cityHash64(pixel_id));

-- refund_hours: the hour each refund was counted in by the derived tables.
CREATE TABLE IF NOT EXISTS refund_hours_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  refund_id      String,
  built_version  UInt64,
  hour           DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/refund_hours_local', '{replica}', built_version)
ORDER BY (pixel_id, refund_id, hour);

CREATE TABLE IF NOT EXISTS refund_hours ON CLUSTER '{cluster}' AS refund_hours_local
ENGINE = Distributed('{cluster}', currentDatabase(), refund_hours_local, cityHash64(pixel_id));

-- order_lines: lines of an order version.
CREATE TABLE IF NOT EXISTS order_lines_local ON CLUSTER '{cluster}' (
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/order_lines_local', '{replica}', version)
ORDER BY (pixel_id, order_id, line_index);

CREATE TABLE IF NOT EXISTS order_lines ON CLUSTER '{cluster}' AS order_lines_local
ENGINE = Distributed('{cluster}', currentDatabase(), order_lines_local, cityHash64(pixel_id));

-- refunds
CREATE TABLE IF NOT EXISTS refunds_local ON CLUSTER '{cluster}' (
  pixel_id    LowCardinality(String),
  refund_id   String,
  order_id    String,
  created_at  DateTime64(3, 'UTC'),
  amount      Decimal(18, 4),
  currency    LowCardinality(String),
  lines       Array(Tuple(variant_id String, quantity Int32, amount Decimal(18, 4))),
  version     UInt64,
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3),   -- derived tables' change feed (docs/derived-tables.md)
  INDEX ingested_minmax ingested_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/refunds_local', '{replica}', version)
ORDER BY (pixel_id, refund_id);

CREATE TABLE IF NOT EXISTS refunds ON CLUSTER '{cluster}' AS refunds_local
ENGINE = Distributed('{cluster}', currentDatabase(), refunds_local, cityHash64(pixel_id));

-- order_costs: per-order cost snapshot; each recalculation writes a higher version.
CREATE TABLE IF NOT EXISTS order_costs_local ON CLUSTER '{cluster}' (
  pixel_id     LowCardinality(String),
  order_id     String,
  version      UInt64,
  computed_at  DateTime64(3, 'UTC'),
  currency     LowCardinality(String),
  cogs         Decimal(18, 4),
  handling     Decimal(18, 4),
  shipping     Decimal(18, 4),
  gateway      Decimal(18, 4),
  order_level  Decimal(18, 4),
  details      String
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/order_costs_local', '{replica}', version)
ORDER BY (pixel_id, order_id);

CREATE TABLE IF NOT EXISTS order_costs ON CLUSTER '{cluster}' AS order_costs_local
ENGINE = Distributed('{cluster}', currentDatabase(), order_costs_local, cityHash64(pixel_id));

-- ad_entities: account / campaign / ad set / ad; budgets stay in the platform's currency.
CREATE TABLE IF NOT EXISTS ad_entities_local ON CLUSTER '{cluster}' (
  pixel_id           LowCardinality(String),
  platform           LowCardinality(String),
  level              Enum8('account' = 1, 'campaign' = 2, 'adset' = 3, 'ad' = 4),
  entity_id          String,
  account_id         String,
  campaign_id        String,
  adset_id           String,
  name               String,
  status             LowCardinality(String),
  currency           LowCardinality(String),
  daily_budget       Nullable(Decimal(18, 4)),
  budget_remaining   Nullable(Decimal(18, 4)),
  amount_spent       Nullable(Decimal(18, 4)),
  source_created_at  DateTime64(3, 'UTC'),
  source_updated_at  DateTime64(3, 'UTC'),
  version            UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/ad_entities_local', '{replica}', version)
ORDER BY (pixel_id, platform, level, entity_id);

CREATE TABLE IF NOT EXISTS ad_entities ON CLUSTER '{cluster}' AS ad_entities_local
ENGINE = Distributed('{cluster}', currentDatabase(), ad_entities_local, cityHash64(pixel_id));

-- ad_metrics_daily: spend, impressions, clicks, platform conversions per entity and day.
CREATE TABLE IF NOT EXISTS ad_metrics_daily_local ON CLUSTER '{cluster}' (
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/ad_metrics_daily_local', '{replica}', version)
PARTITION BY toYYYYMM(date)
ORDER BY (pixel_id, platform, level, entity_id, date);

CREATE TABLE IF NOT EXISTS ad_metrics_daily ON CLUSTER '{cluster}' AS ad_metrics_daily_local
ENGINE = Distributed('{cluster}', currentDatabase(), ad_metrics_daily_local, cityHash64(pixel_id));

-- fx_rates: daily units of `currency` per 1 USD, global (not per pixel). Every shard converts amounts
-- in its own part of a query, so every node needs every rate: one replication group spans the whole
-- cluster (the Keeper path has no {shard}), an insert on any node reaches all of them, and queries read
-- `fx_rates` directly on each shard. Replica names are prefixed with the shard so they stay unique
-- within the group even where {replica} repeats across shards. No Distributed table: sharding rates
-- by rand() would leave each shard with a fraction of them.
CREATE TABLE IF NOT EXISTS fx_rates ON CLUSTER '{cluster}' (
  date      Date,
  currency  LowCardinality(String),
  usd_rate  Decimal(24, 10),
  version   UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/{database}/fx_rates', '{shard}-{replica}', version)
ORDER BY (currency, date);

-- cohort_orders, cohort_cells, cohort_builds: cohort snapshots and their cells, kept by the derived-tables worker.
CREATE TABLE IF NOT EXISTS cohort_orders_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  slot           UInt8,
  customer_key   String,
  order_id       String,
  created_at     DateTime64(3, 'UTC'),
  built_version  UInt64,
  kind           UInt8,
  currency       LowCardinality(String),
  total_price    Decimal(18, 4)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/cohort_orders_local', '{replica}', built_version)
ORDER BY (pixel_id, slot, customer_key, order_id, created_at)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS cohort_orders ON CLUSTER '{cluster}' AS cohort_orders_local
ENGINE = Distributed('{cluster}', currentDatabase(), cohort_orders_local, cityHash64(pixel_id));

CREATE TABLE IF NOT EXISTS cohort_cells_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  slot           UInt8,
  timezone       LowCardinality(String),
  granularity    LowCardinality(String),
  mask           UInt8,
  cohort         Date,
  period         Int64,
  currency       LowCardinality(String),
  fx_day         Date,
  built_version  UInt64,
  retained       Int64,
  orders         Int64,
  revenue        Decimal(38, 4)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/cohort_cells_local', '{replica}', built_version)
ORDER BY (pixel_id, slot, timezone, granularity, mask, cohort, period, currency, fx_day);

CREATE TABLE IF NOT EXISTS cohort_cells ON CLUSTER '{cluster}' AS cohort_cells_local
ENGINE = Distributed('{cluster}', currentDatabase(), cohort_cells_local, cityHash64(pixel_id));

CREATE TABLE IF NOT EXISTS cohort_builds_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  built_version  UInt64,
  slot           UInt8,
  cutoff         DateTime64(3, 'UTC'),
  fresh_after    DateTime64(3, 'UTC'),
  timezones      Array(String),
  masks          Array(UInt8),
  recorded_at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/cohort_builds_local', '{replica}', built_version)
ORDER BY pixel_id;

CREATE TABLE IF NOT EXISTS cohort_builds ON CLUSTER '{cluster}' AS cohort_builds_local
ENGINE = Distributed('{cluster}', currentDatabase(), cohort_builds_local, cityHash64(pixel_id));

-- credit_cells, credit_shapes, credit_refreshes: attribution credits per hour for the shapes queries ask, kept by the derived-tables worker.
CREATE TABLE IF NOT EXISTS credit_cells_local ON CLUSTER '{cluster}' (
  pixel_id          LowCardinality(String),
  shape             LowCardinality(String),
  hour              DateTime64(3, 'UTC'),
  financial_status  LowCardinality(String),
  value             String,
  touched           UInt8,
  currency          LowCardinality(String),
  fx_day            Date,
  refund            UInt8,
  built_version     UInt64,
  rows              UInt64,
  attributed        Float64,
  amount            Float64,
  conversions       UInt64
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/credit_cells_local', '{replica}', built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, shape, hour, financial_status, value, touched, currency, fx_day, refund);

CREATE TABLE IF NOT EXISTS credit_cells ON CLUSTER '{cluster}' AS credit_cells_local
ENGINE = Distributed('{cluster}', currentDatabase(), credit_cells_local, cityHash64(pixel_id));

CREATE TABLE IF NOT EXISTS credit_shapes_local ON CLUSTER '{cluster}' (
  pixel_id       LowCardinality(String),
  shape          String,
  built_version  UInt64,
  asked_at       DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/credit_shapes_local', '{replica}', built_version)
ORDER BY (pixel_id, shape);

CREATE TABLE IF NOT EXISTS credit_shapes ON CLUSTER '{cluster}' AS credit_shapes_local
ENGINE = Distributed('{cluster}', currentDatabase(), credit_shapes_local, cityHash64(pixel_id));

CREATE TABLE IF NOT EXISTS credit_refreshes_local ON CLUSTER '{cluster}' (
  pixel_id         LowCardinality(String),
  watermark        DateTime64(3, 'UTC'),
  touches_version  UInt64,
  written_at       DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/credit_refreshes_local', '{replica}', written_at)
ORDER BY pixel_id;

CREATE TABLE IF NOT EXISTS credit_refreshes ON CLUSTER '{cluster}' AS credit_refreshes_local
ENGINE = Distributed('{cluster}', currentDatabase(), credit_refreshes_local, cityHash64(pixel_id));
