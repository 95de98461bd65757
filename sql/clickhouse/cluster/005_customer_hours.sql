-- Cluster twin of sql/clickhouse/005_customer_hours.sql, for a cluster created from an earlier
-- 001_init.sql (a new cluster gets the tables from 001_init.sql). Apply before deploying the app
-- version that carries the single-node file (docs/clickhouse-cluster.md); it clears nothing, and
-- re-running it does nothing.

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
