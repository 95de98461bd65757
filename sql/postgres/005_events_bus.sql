-- Events out (docs/events.md): the outbox relay's claims and the embedded event bus.

-- A relay claims unpublished rows for a while (a lease), so several processes can relay at once and
-- a crashed relay's rows are taken again once its lease ends.
ALTER TABLE outbox ADD COLUMN claimed_until timestamptz;

-- The event bus when no Redis is configured: streams, consumer groups and pending entries with the
-- semantics of Redis Streams. Ids are per stream, handed out by bus_streams.last_id.
CREATE TABLE bus_streams (
  stream   text PRIMARY KEY,
  last_id  bigint NOT NULL DEFAULT 0
);

CREATE TABLE bus_messages (
  stream      text NOT NULL,
  id          bigint NOT NULL,
  key         text NOT NULL,                       -- producer idempotency key (outbox row id)
  payload     text NOT NULL,                       -- JSON text as published (jsonb would reorder keys)
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream, id)
);
CREATE INDEX bus_messages_created_idx ON bus_messages (stream, created_at);

CREATE TABLE bus_groups (
  stream      text NOT NULL,
  group_name  text NOT NULL,
  last_id     bigint NOT NULL DEFAULT 0,           -- last id handed to a consumer of the group
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream, group_name)
);

-- Delivered and not acknowledged yet: taken over by another consumer once idle long enough.
CREATE TABLE bus_pending (
  stream        text NOT NULL,
  group_name    text NOT NULL,
  id            bigint NOT NULL,
  consumer      text NOT NULL,
  delivered_at  timestamptz NOT NULL,
  deliveries    integer NOT NULL,
  PRIMARY KEY (stream, group_name, id),
  FOREIGN KEY (stream, group_name) REFERENCES bus_groups (stream, group_name) ON DELETE CASCADE
);
CREATE INDEX bus_pending_stream_idx ON bus_pending (stream, id);
