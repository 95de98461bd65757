-- Cluster twin of sql/clickhouse/007_cohort_cells.sql, for a cluster created from an earlier
-- 001_init.sql (a new cluster gets the tables from 001_init.sql). Apply before deploying the app
-- version that carries the single-node file (docs/clickhouse-cluster.md); it clears nothing, and
-- re-running it does nothing.

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
