-- Derived tables (docs/derived-tables.md). Every row that changes an attribution answer carries the
-- time it reached the warehouse (`ingested_at`): a derived table is current up to its watermark, and
-- a query answers the identities with rows past it from raw data.
--
-- Existing rows get the epoch (they are older than any watermark); new rows the time of their insert.
-- A column added with `DEFAULT now64(3)` alone would be computed at read time for the parts written
-- before it, so the epoch is written into them first. Each step is guarded by the state it expects
-- (on a cluster, where these names are Distributed tables already altered by the cluster twin, every
-- step but the CREATEs is skipped, and those find the tables).

ALTER TABLE touchpoints ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'touchpoints' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE touchpoints MATERIALIZE COLUMN ingested_at SETTINGS mutations_sync = 2;

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'touchpoints' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE touchpoints MODIFY COLUMN ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

-- when: SELECT count() = 1 FROM system.tables WHERE database = currentDatabase() AND name = 'touchpoints' AND engine LIKE '%MergeTree'
ALTER TABLE touchpoints ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;

ALTER TABLE identity_links ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'identity_links' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE identity_links MATERIALIZE COLUMN ingested_at SETTINGS mutations_sync = 2;

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'identity_links' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE identity_links MODIFY COLUMN ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

-- when: SELECT count() = 1 FROM system.tables WHERE database = currentDatabase() AND name = 'identity_links' AND engine LIKE '%MergeTree'
ALTER TABLE identity_links ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;

ALTER TABLE orders ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'orders' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE orders MATERIALIZE COLUMN ingested_at SETTINGS mutations_sync = 2;

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'orders' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE orders MODIFY COLUMN ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

-- when: SELECT count() = 1 FROM system.tables WHERE database = currentDatabase() AND name = 'orders' AND engine LIKE '%MergeTree'
ALTER TABLE orders ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;

-- Each order's touches: every touch of its identity (merges resolved) at or before it, in time order,
-- with the fields attribution credits and filters on. One row per order and creation time; a rebuilt
-- row replaces the older one (built_version). Rows of an order whose creation time changed stay under
-- the old time and are never joined again (a query matches the order's current creation time).
CREATE TABLE IF NOT EXISTS conversion_touches (
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
ENGINE = ReplacingMergeTree(built_version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (pixel_id, created_at, order_id);

-- How far each derived table of each pixel is current: rows ingested at or before the watermark are
-- in it. Only ever moves forward (the highest wins).
CREATE TABLE IF NOT EXISTS derived_watermarks (
  pixel_id    LowCardinality(String),
  name        LowCardinality(String),
  watermark   DateTime64(3, 'UTC'),
  written_at  DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(watermark)
ORDER BY (pixel_id, name);
