-- Cluster twin of sql/clickhouse/008_credit_cells.sql, for a cluster created from an earlier
-- 001_init.sql (a new cluster gets the tables from 001_init.sql). Apply before deploying the app
-- version that carries the single-node file (docs/clickhouse-cluster.md); it clears nothing, and
-- re-running it does nothing.

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
