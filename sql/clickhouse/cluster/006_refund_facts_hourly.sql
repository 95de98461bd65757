-- Cluster twin of sql/clickhouse/006_refund_facts_hourly.sql, for a cluster created from an earlier
-- 001_init.sql (a new cluster gets the tables from 001_init.sql). Apply before deploying the app
-- version that carries the single-node file (docs/clickhouse-cluster.md); it clears nothing, and
-- re-running it does nothing.
--
-- As in 003, refunds stored before this file are not stamped with the epoch: until a merge rewrites
-- their part they read as ingested now, so queries answer their hours from raw data (exact, only
-- slower) and the rollup covers them after the merge (`OPTIMIZE TABLE refunds_local FINAL` forces it).

ALTER TABLE refunds_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);
ALTER TABLE refunds_local ON CLUSTER '{cluster}' ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE refunds ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

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
