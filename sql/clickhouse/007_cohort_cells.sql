-- Cohort cells (docs/derived-tables.md, "cohort_cells"): per pixel, a snapshot of its orders as of a
-- build (cohort_orders) and, computed from it for each timezone, granularity and way of counting
-- pending and voided orders the build covers, every cohort's retained customers, orders and exact
-- revenue per period, currency and UTC day (cohort_cells). A cohort query reads the cells and corrects
-- them for the customers whose orders changed since the build (the snapshot says what the cells hold
-- for them), instead of walking every order of the pixel. Each build writes one of two slots, so a
-- query reading the current slot never meets a build in progress; cohort_builds records each build
-- when it is done (one row per pixel once merged: the latest).
--
-- cohort_orders is read by customer key for a few hundred customers at a time: small granules keep
-- such a read to their part of the table.
--
-- Nothing to clear: the derived-tables worker builds a pixel's first snapshot on its next round
-- (until then cohort queries answer from raw data: exact, slower).

CREATE TABLE IF NOT EXISTS cohort_orders (
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
ENGINE = ReplacingMergeTree(built_version)
ORDER BY (pixel_id, slot, customer_key, order_id, created_at)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS cohort_cells (
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
ENGINE = ReplacingMergeTree(built_version)
ORDER BY (pixel_id, slot, timezone, granularity, mask, cohort, period, currency, fx_day);

CREATE TABLE IF NOT EXISTS cohort_builds (
  pixel_id       LowCardinality(String),
  built_version  UInt64,
  slot           UInt8,
  cutoff         DateTime64(3, 'UTC'),
  fresh_after    DateTime64(3, 'UTC'),
  timezones      Array(String),
  masks          Array(UInt8),
  recorded_at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(built_version)
ORDER BY pixel_id;
