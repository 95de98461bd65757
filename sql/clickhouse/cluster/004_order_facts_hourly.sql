-- Cluster twin of sql/clickhouse/004_order_facts_hourly.sql, for a cluster created from an earlier
-- 001_init.sql (a new cluster gets the table from 001_init.sql). Apply before deploying the app
-- version that carries the single-node file (docs/clickhouse-cluster.md). Re-running it only clears
-- the watermarks again: the worker then rebuilds the derived tables once more.

TRUNCATE TABLE IF EXISTS derived_watermarks_local ON CLUSTER '{cluster}';

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
  customers         AggregateFunction(uniqExact, String)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/order_facts_hourly_local', '{replica}', built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, currency, financial_status);

CREATE TABLE IF NOT EXISTS order_facts_hourly ON CLUSTER '{cluster}' AS order_facts_hourly_local
ENGINE = Distributed('{cluster}', currentDatabase(), order_facts_hourly_local, cityHash64(pixel_id));
