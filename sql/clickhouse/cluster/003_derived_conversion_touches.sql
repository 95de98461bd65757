-- Cluster twin of sql/clickhouse/003_derived_conversion_touches.sql, for a cluster created from an
-- earlier 001_init.sql (a new cluster gets all of this from 001_init.sql). Apply before deploying the
-- app version that carries the single-node file (docs/clickhouse-cluster.md). Idempotent.
--
-- Unlike the single-node migration, rows stored before this file are not stamped with the epoch (a
-- mutation on every replica, and not safe to re-run): until a merge rewrites their part they read as
-- ingested now, so queries answer their identities from raw data — exact, only slower — and the
-- derived tables cover them after the merge (`OPTIMIZE TABLE … FINAL` forces it).

ALTER TABLE touchpoints_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);
ALTER TABLE touchpoints_local ON CLUSTER '{cluster}' ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE touchpoints ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

ALTER TABLE identity_links_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);
ALTER TABLE identity_links_local ON CLUSTER '{cluster}' ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE identity_links ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

ALTER TABLE orders_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);
ALTER TABLE orders_local ON CLUSTER '{cluster}' ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE orders ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

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
