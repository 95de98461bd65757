-- Costs and products (issue 6; docs/costs.md, docs/products.md). Forward-only.

-- Catalog search matches a substring of product title, variant title or SKU, case-insensitively
-- (ILIKE '%q%'). A btree cannot serve an infix pattern; trigram GIN indexes can, in PostgreSQL
-- (pg_trgm is a trusted extension since 13: the database owner may create it) and in PGlite (which
-- loads the pg_trgm contrib module when it opens, src/stores/sql/pglite-worker.mjs).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX products_title_trgm_idx ON products USING gin (title gin_trgm_ops);
CREATE INDEX variants_title_trgm_idx ON variants USING gin (title gin_trgm_ops);
CREATE INDEX variants_sku_trgm_idx ON variants USING gin (sku gin_trgm_ops);

-- The API refuses a cost line that ends before it starts; the table refuses it too.
ALTER TABLE cost_lines ADD CONSTRAINT cost_lines_dates_check
  CHECK (effective_start IS NULL OR effective_end IS NULL OR effective_end >= effective_start);

