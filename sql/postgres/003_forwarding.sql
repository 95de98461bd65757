-- Forwarding of accepted events to per-pixel destinations (docs/forwarding.md). Forward-only.

-- Durable at-least-once queue: one row per (destination × event). `payload` is the exact request
-- body for the destination (webhook bodies carry their own delivery id). A worker claims due rows by
-- moving `next_attempt_at` and `locked_until` to the end of a lease (FOR UPDATE SKIP LOCKED), so
-- several processes can run the worker; a crashed worker's rows become due again when the lease ends.
CREATE TABLE deliveries (
  id               bigserial PRIMARY KEY,
  destination_id   text NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  pixel_id         text NOT NULL,
  event_id         text NOT NULL,
  payload          jsonb NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,          -- attempts started (counted when claimed)
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),  -- due when <= now(); the lease end while claimed
  locked_until     timestamptz,                         -- lease of the claiming worker; null when idle
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at, id);
CREATE INDEX deliveries_destination_idx ON deliveries (destination_id);

-- Deliveries that failed `maxAttempts` times; replay moves a copy back into `deliveries`.
CREATE TABLE dead_letters (
  id              bigserial PRIMARY KEY,
  destination_id  text NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
  pixel_id        text NOT NULL,
  event_id        text NOT NULL,
  payload         jsonb NOT NULL,
  attempts        integer NOT NULL,
  last_error      text,
  failed_at       timestamptz NOT NULL DEFAULT now(),
  replayed_at     timestamptz
);
CREATE INDEX dead_letters_pixel_idx ON dead_letters (pixel_id, failed_at);
CREATE INDEX dead_letters_destination_idx ON dead_letters (destination_id);
