-- Customers per hour (docs/derived-tables.md, "customer_hours"): per pixel, UTC hour and customer with
-- an order created in that hour, the kinds of order it was (bit 1 counted under every setting, 2
-- pending, 4 voided) and, for each way of counting pending and voided orders, the customer's previous
-- hour with a counted order (1900-01-01: none). Distinct customers of a span are then a count of the
-- rows whose previous counted hour lies before it. Kept by the derived-tables worker under the same
-- watermark as the other derived tables; a rebuilt customer replaces their older rows
-- (built_version), and a customer-hour that lost its last order gets a row with kinds = 0.
--
-- order_hours records, per order, the hour and customer the derived tables last counted it under, so
-- a refresh (and a query reading what is past the watermark) knows the hour and customer an order
-- left even after the engine merged its older version away.
--
-- The hourly rollup's own distinct-customer states (order_facts_hourly.customers) are no longer read
-- or written, and are dropped.
--
-- The watermarks are cleared when the table is created, so the worker's next round builds every
-- derived table of every pixel from scratch (until then queries answer from raw data: exact, slower).

-- when: SELECT count() = 0 FROM system.tables WHERE database = currentDatabase() AND name = 'customer_hours'
TRUNCATE TABLE IF EXISTS derived_watermarks;

CREATE TABLE IF NOT EXISTS customer_hours (
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
ENGINE = ReplacingMergeTree(built_version)
PARTITION BY toYYYYMM(hour)
ORDER BY (pixel_id, hour, customer_key);

CREATE TABLE IF NOT EXISTS order_hours (
  pixel_id       LowCardinality(String),
  order_id       String,
  built_version  UInt64,
  hour           DateTime64(3, 'UTC'),
  customer_key   String
)
ENGINE = ReplacingMergeTree(built_version)
ORDER BY (pixel_id, order_id);

ALTER TABLE order_facts_hourly DROP COLUMN IF EXISTS customers;
