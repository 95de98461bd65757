-- Customers per hour (docs/derived-tables.md, "customer_hours"): per pixel, UTC hour and customer with
-- an order created in that hour, the kinds of order it was (bit 1 counted under every setting, 2
-- pending, 4 voided) and, for each way of counting pending and voided orders, the customer's previous
-- hour with a counted order (1900-01-01: none). Distinct customers of a span are then a count of the
-- rows whose previous counted hour lies before it. A rebuilt customer replaces their older rows
-- (built_version), and a customer-hour that lost its last order gets a row with kinds = 0.
--
-- order_hours records every hour and customer the derived tables counted an order under, so a
-- refresh (and a query reading what is past the watermark) knows the hour and customer an order left
-- even after the engine merged its older version away.
--
-- Nothing is cleared: the worker's watermark is named after the newest derived table, so its first
-- round after the upgrade builds every derived table of every pixel (until then queries answer from
-- raw data: exact, slower). The rollup's former distinct-customer states
-- (order_facts_hourly.customers) are no longer read or written; the column stays unused. Stop the
-- previous version's processes before starting this one (docs/derived-tables.md, "Upgrading").

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
ORDER BY (pixel_id, order_id, hour, customer_key);
