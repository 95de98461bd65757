-- Dedup leases name the process that holds them, so a lease of a process that died is reclaimed (and
-- confirmed against the warehouse) at once instead of answering "duplicate" until it lapses.
-- `reclaimed` tells the reserving call that the row was an unacknowledged lease, so an earlier copy
-- may already be stored.
ALTER TABLE dedup_ids ADD COLUMN lease_owner text;
ALTER TABLE dedup_ids ADD COLUMN reclaimed boolean NOT NULL DEFAULT false;

-- Heartbeats of the processes sharing a Postgres server (an embedded store has one process only).
CREATE TABLE dedup_owners (
  owner        text PRIMARY KEY,
  alive_until  timestamptz NOT NULL
);
