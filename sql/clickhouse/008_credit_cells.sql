-- Credit cells (docs/derived-tables.md, "credit_cells"): per pixel and attribution shape (model,
-- window and credited touch field, as queries ask for them), per UTC hour of the conversions, order
-- status, credited value, whether the conversion has a touch in the window, currency and UTC day, the
-- attributed conversions and amounts — the
-- conversions' own (refund = 0, on their day) and their refunds' (refund = 1, on each refund's day).
-- An attribution query without filters reads the range's cells instead of crediting every conversion,
-- and credits the conversions of the hours with rows past the watermark itself. Kept by the
-- derived-tables worker, per hour, behind the other derived tables (at most an interval behind, see
-- credit_refreshes); a rebuilt hour replaces its rows (built_version), and a row the hour no longer
-- has is written with rows = 0, which readers skip.
--
-- credit_shapes lists the shapes queries asked for (built_version 0) and those built (the version of
-- the build): the worker builds an asked shape on its next round, and keeps built ones current.
-- credit_refreshes says, per pixel, how far every built shape's cells are current: every row ingested
-- at or before `watermark` and every conversion_touches row built at or before `touches_version` is in
-- them (the latest row per pixel, by written_at). Queries credit the hours changed since one by one.
--
-- Nothing to clear: until a shape is built, its queries credit every conversion (exact, slower).

CREATE TABLE IF NOT EXISTS credit_cells (
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
ENGINE = ReplacingMergeTree(built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, shape, hour, financial_status, value, touched, currency, fx_day, refund);

CREATE TABLE IF NOT EXISTS credit_shapes (
  pixel_id       LowCardinality(String),
  shape          String,
  built_version  UInt64,
  asked_at       DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(built_version)
ORDER BY (pixel_id, shape);

CREATE TABLE IF NOT EXISTS credit_refreshes (
  pixel_id         LowCardinality(String),
  watermark        DateTime64(3, 'UTC'),
  touches_version  UInt64,
  written_at       DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(written_at)
ORDER BY pixel_id;
