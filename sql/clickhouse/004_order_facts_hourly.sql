-- Hourly rollups of order facts (docs/derived-tables.md, "order_facts_hourly"): per pixel, UTC hour,
-- currency and financial status, the counted-order sums the time series and dashboards read, and the
-- hour's distinct customers as a mergeable state. Kept by the derived-tables worker under the same
-- watermark as conversion_touches; a query reads the hours with order rows past it from raw orders.
-- A rebuilt hour replaces the older rows of its groups (built_version); a group that lost its last
-- order gets a row with orders = 0, which readers skip.
--
-- The watermarks are cleared when the table is created, so the worker's next round builds both
-- derived tables of every pixel from scratch (until then queries answer from raw data: exact, slower).

-- when: SELECT count() = 0 FROM system.tables WHERE database = currentDatabase() AND name = 'order_facts_hourly'
TRUNCATE TABLE IF EXISTS derived_watermarks;

CREATE TABLE IF NOT EXISTS order_facts_hourly (
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
ENGINE = ReplacingMergeTree(built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, currency, financial_status);
