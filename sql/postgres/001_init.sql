-- pixelhouse OLTP schema (DESIGN §5). Forward-only: never edit this file once applied; add 002_….

CREATE TABLE accounts (
  id              text PRIMARY KEY,                 -- ULID
  name            text NOT NULL,
  timezone        text NOT NULL DEFAULT 'UTC',      -- IANA; default query timezone
  currency        text NOT NULL DEFAULT 'USD',      -- reporting currency (ISO 4217)
  order_settings  jsonb,                            -- null = defaults of interface §2.9
  subscription    jsonb,                            -- public subscription object, projected as is
  -- internal fields: never projected by the API
  company_name    text,
  primary_email   text,
  internal        jsonb NOT NULL DEFAULT '{}'::jsonb, -- payment-provider ids, usage, billing records
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id          text PRIMARY KEY,
  email       text NOT NULL UNIQUE,
  first_name  text NOT NULL DEFAULT '',
  last_name   text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_members (
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, user_id)
);

CREATE TABLE pixels (
  id               text PRIMARY KEY,                -- client-visible pixel id
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name             text NOT NULL,
  status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  allowed_origins  text[] NOT NULL DEFAULT '{}',    -- browser collector CORS allowlist
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pixels_account_idx ON pixels (account_id);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,                   -- ULID; the apiKeyPk of event actors
  pixel_id      text NOT NULL REFERENCES pixels(id) ON DELETE CASCADE,
  name          text NOT NULL DEFAULT '',
  public_id     text NOT NULL UNIQUE,               -- lookup part of the raw key
  key_hash      bytea NOT NULL,                     -- HMAC-SHA-256(KEY_SECRET, raw key)
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX api_keys_pixel_idx ON api_keys (pixel_id);

-- Account-level cost lines of five types; the line body is validated by the API's zod shapes.
CREATE TABLE cost_lines (
  id               text PRIMARY KEY,                -- ULID
  account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  cost_type        text NOT NULL CHECK (cost_type IN ('order', 'gateway', 'shipping', 'variable', 'fixed')),
  line             jsonb NOT NULL,
  effective_start  date,
  effective_end    date,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cost_lines_account_idx ON cost_lines (account_id, cost_type);

CREATE TABLE cost_overrides (
  account_id  text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  override    jsonb NOT NULL,                       -- {type: percent_of_price|fixed, value}
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE products (
  pixel_id      text NOT NULL REFERENCES pixels(id) ON DELETE CASCADE,
  product_id    text NOT NULL,
  title         text NOT NULL DEFAULT '',
  handle        text NOT NULL DEFAULT '',
  vendor        text NOT NULL DEFAULT '',
  product_type  text NOT NULL DEFAULT '',
  status        text NOT NULL DEFAULT 'ACTIVE',
  tags          text[] NOT NULL DEFAULT '{}',
  image_urls    text[] NOT NULL DEFAULT '{}',
  raw           jsonb NOT NULL DEFAULT '{}'::jsonb,
  version       timestamptz NOT NULL DEFAULT now(),  -- source updatedAt: older never overwrites newer
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pixel_id, product_id)
);

CREATE TABLE variants (
  pixel_id       text NOT NULL,
  product_id     text NOT NULL,
  variant_id     text NOT NULL,
  sku            text NOT NULL DEFAULT '',
  title          text NOT NULL DEFAULT '',
  currency       text NOT NULL DEFAULT 'USD',
  current_price  numeric(18, 4) NOT NULL DEFAULT 0,
  inventory      integer,
  handling_fee   numeric(18, 4) NOT NULL DEFAULT 0 CHECK (handling_fee >= 0),
  raw            jsonb NOT NULL DEFAULT '{}'::jsonb,  -- raw store-platform variant payload
  version        timestamptz NOT NULL DEFAULT now(),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pixel_id, product_id, variant_id),
  FOREIGN KEY (pixel_id, product_id) REFERENCES products (pixel_id, product_id) ON DELETE CASCADE
);
CREATE INDEX variants_pixel_variant_idx ON variants (pixel_id, variant_id);

-- COG lines: 'manual' (COG endpoints, take precedence) and 'store' (synced, read-only).
CREATE TABLE variant_cost_lines (
  id               text PRIMARY KEY,                -- ULID
  pixel_id         text NOT NULL,
  product_id       text NOT NULL,
  variant_id       text NOT NULL,
  source           text NOT NULL CHECK (source IN ('manual', 'store')),
  cost             numeric(18, 4) NOT NULL CHECK (cost >= 0),
  effective_start  date NOT NULL,
  effective_end    date,                            -- null = open-ended
  description      text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (pixel_id, product_id, variant_id) REFERENCES variants (pixel_id, product_id, variant_id) ON DELETE CASCADE
);
CREATE INDEX variant_cost_lines_variant_idx ON variant_cost_lines (pixel_id, product_id, variant_id, source, effective_start);

CREATE TABLE dashboard_views (
  id             text PRIMARY KEY,
  pixel_id       text NOT NULL REFERENCES pixels(id) ON DELETE CASCADE,
  name           text NOT NULL,
  configuration  jsonb NOT NULL,
  "order"        integer NOT NULL DEFAULT 0,
  created_by     text NOT NULL DEFAULT '',
  updated_by     text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_views_pixel_idx ON dashboard_views (pixel_id, "order");

-- Forwarding targets (signed webhooks, Meta Conversions API) per pixel.
CREATE TABLE destinations (
  id           text PRIMARY KEY,                    -- ULID
  pixel_id     text NOT NULL REFERENCES pixels(id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('webhook', 'meta_capi')),
  name         text NOT NULL DEFAULT '',
  config       jsonb NOT NULL,                      -- url, secret / access token, base URL…
  event_names  text[],                              -- null = every event
  enabled      boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX destinations_pixel_idx ON destinations (pixel_id);

-- Transactional outbox: written in the same transaction as the change it announces.
CREATE TABLE outbox (
  id            bigserial PRIMARY KEY,
  topic         text NOT NULL,
  payload       jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  published_at  timestamptz
);
CREATE INDEX outbox_unpublished_idx ON outbox (topic, id) WHERE published_at IS NULL;
