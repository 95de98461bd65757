-- Hourly rollups of refunds (docs/derived-tables.md, "refund_facts_hourly"): per pixel, UTC hour of the
-- refund, UTC hour of its order, currency and the order's financial status, the refunds' count and
-- exact sum. The time series' refunds (net revenue) then read their range of narrow rows instead of
-- looking every refunded order up among all orders. Kept by the derived-tables worker under the same
-- watermark; a query reads the refund hours with a refund or order row past it from raw data. A rebuilt
-- hour replaces the older rows of its groups (built_version); a group that lost its last refund gets a
-- row with refunds = 0, which readers skip.
--
-- refund_hours records the hour each refund was counted in, since the engine merges a refund's older
-- version away (refunds have no partitions: a refund whose time changed leaves nothing behind).
--
-- Refunds join the change feed: they get `ingested_at`, stamped by the engine (existing rows get the
-- epoch, so the first round builds from them). Nothing is cleared: the worker's watermark is named
-- after the newest derived table, so its first round after the upgrade builds every derived table of
-- every pixel (until then queries answer from raw data: exact, slower).

ALTER TABLE refunds ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'refunds' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE refunds MATERIALIZE COLUMN ingested_at SETTINGS mutations_sync = 2;

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'refunds' AND name = 'ingested_at' AND default_expression NOT LIKE '%now64%'
ALTER TABLE refunds MODIFY COLUMN ingested_at DateTime64(3, 'UTC') DEFAULT now64(3);

-- The change feed reads rows past a watermark: granules older than it are skipped. (On a cluster
-- `refunds` is a Distributed table the cluster twin altered already: every step but the CREATEs is
-- skipped, and those find the tables.)
-- when: SELECT count() = 1 FROM system.tables WHERE database = currentDatabase() AND name = 'refunds' AND engine LIKE '%MergeTree'
ALTER TABLE refunds ADD INDEX IF NOT EXISTS ingested_minmax ingested_at TYPE minmax GRANULARITY 1;

CREATE TABLE IF NOT EXISTS refund_facts_hourly (
  pixel_id          LowCardinality(String),
  hour              DateTime64(3, 'UTC'),
  order_hour        DateTime64(3, 'UTC'),
  currency          LowCardinality(String),
  financial_status  LowCardinality(String),
  built_version     UInt64,
  refunds           UInt64,
  amount            Decimal(38, 4)
)
ENGINE = ReplacingMergeTree(built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, order_hour, currency, financial_status);

CREATE TABLE IF NOT EXISTS refund_hours (
  pixel_id       LowCardinality(String),
  refund_id      String,
  built_version  UInt64,
  hour           DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(built_version)
ORDER BY (pixel_id, refund_id, hour);
