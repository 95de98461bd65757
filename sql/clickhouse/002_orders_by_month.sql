-- Orders partitioned by the month they were created, so a date range reads only its months
-- (docs/performance.md, "Physical design"). The sort key stays (pixel_id, order_id): versions of an
-- order meet in one partition, and FINAL runs per partition (do_not_merge_across_partitions_select_final,
-- set by both warehouse adapters). An order whose creation month changes leaves a tombstone
-- (is_deleted = 1, one version below the new row) in its old month, written by the sync
-- (docs/data-formats.md), so a FINAL that merges across months is exact too.
--
-- Online: the table is rebuilt beside the old one, swapped in with EXCHANGE TABLES, and rows written
-- to the old table during the copy are carried over before it is dropped. Each step is guarded by
-- the state it expects, so a run interrupted anywhere is finished by the next one.

-- when: SELECT count() = 0 FROM system.columns WHERE database = currentDatabase() AND table = 'orders' AND name = 'is_deleted'
CREATE TABLE IF NOT EXISTS orders_by_month (
  pixel_id             LowCardinality(String),
  order_id             String,
  created_at           DateTime64(3, 'UTC'),
  processed_at         Nullable(DateTime64(3, 'UTC')),
  cancelled_at         Nullable(DateTime64(3, 'UTC')),
  currency             LowCardinality(String),
  total_price          Decimal(18, 4),
  subtotal_price       Decimal(18, 4),
  total_shipping       Decimal(18, 4),
  total_tax            Decimal(18, 4),
  total_discounts      Decimal(18, 4),
  financial_status     LowCardinality(String),
  source_name          LowCardinality(String),
  gateway              LowCardinality(String),
  tags                 Array(String),
  discount_codes       Array(String),
  country              LowCardinality(String),
  customer_id          String,
  customer_email_hash  String,
  canonical_id         String,
  version              UInt64,
  updated_at           DateTime64(3, 'UTC'),
  is_deleted           UInt8 DEFAULT 0                -- 1: a tombstone hiding this order's rows in this month
)
ENGINE = ReplacingMergeTree(version, is_deleted)
PARTITION BY toYYYYMM(created_at)
ORDER BY (pixel_id, order_id);

-- Only the latest version of each order is copied: an older version in another month would stay
-- visible there, since FINAL no longer meets across months.
-- when: SELECT count() = 0 FROM system.columns WHERE database = currentDatabase() AND table = 'orders' AND name = 'is_deleted'
INSERT INTO orders_by_month
SELECT pixel_id, order_id, created_at, processed_at, cancelled_at, currency, total_price, subtotal_price,
  total_shipping, total_tax, total_discounts, financial_status, source_name, gateway, tags, discount_codes,
  country, customer_id, customer_email_hash, canonical_id, version, updated_at, 0
FROM orders FINAL;

-- when: SELECT count() = 0 FROM system.columns WHERE database = currentDatabase() AND table = 'orders' AND name = 'is_deleted'
EXCHANGE TABLES orders AND orders_by_month;

-- Writes that reached the old table between the copy and the swap: first a tombstone wherever such
-- a write moved an order to another month, then the rows themselves.
-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'version' AND (SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'is_deleted') = 0
INSERT INTO orders (pixel_id, order_id, created_at, version, updated_at, is_deleted)
SELECT n.pixel_id, n.order_id, n.created_at, s.version - 1, s.updated_at, 1
FROM (SELECT * FROM orders FINAL) AS n
INNER JOIN (SELECT * FROM orders_by_month FINAL) AS s
  ON s.pixel_id = n.pixel_id AND s.order_id = n.order_id
WHERE s.version > n.version AND toYYYYMM(s.created_at) != toYYYYMM(n.created_at);

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'version' AND (SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'is_deleted') = 0
INSERT INTO orders
SELECT s.pixel_id, s.order_id, s.created_at, s.processed_at, s.cancelled_at, s.currency, s.total_price,
  s.subtotal_price, s.total_shipping, s.total_tax, s.total_discounts, s.financial_status, s.source_name,
  s.gateway, s.tags, s.discount_codes, s.country, s.customer_id, s.customer_email_hash, s.canonical_id,
  s.version, s.updated_at, 0
FROM (SELECT * FROM orders_by_month FINAL) AS s
LEFT JOIN (SELECT pixel_id, order_id, version FROM orders FINAL) AS n
  ON s.pixel_id = n.pixel_id AND s.order_id = n.order_id
WHERE n.order_id = '' OR s.version > n.version;

-- when: SELECT count() = 1 FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'version' AND (SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = 'orders_by_month' AND name = 'is_deleted') = 0
DROP TABLE orders_by_month;
