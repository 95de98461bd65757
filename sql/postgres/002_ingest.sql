-- Ingestion state kept in the OLTP store.

-- Exact eventId dedup for the embedded mode (Redis holds it in server mode). A row with a lease is
-- a reservation in flight: the write has not been acknowledged yet; a lapsed lease may be retaken.
CREATE TABLE dedup_ids (
  pixel_id     text NOT NULL,
  event_id     text NOT NULL,
  first_seen   timestamptz NOT NULL DEFAULT now(),
  lease_until  timestamptz,
  lease_token  text,
  PRIMARY KEY (pixel_id, event_id)
);
CREATE INDEX dedup_ids_first_seen_idx ON dedup_ids (first_seen);
CREATE INDEX dedup_ids_lease_idx ON dedup_ids (lease_token) WHERE lease_token IS NOT NULL;

-- The identity graph's index: every alias (identity id, email hash, user id, store id) of a pixel
-- points at one canonical identity (a ULID: the smallest is the earliest seen). The warehouse keeps
-- the same links in identity_links for query-time resolution.
CREATE TABLE identity_aliases (
  pixel_id      text NOT NULL,
  alias_type    text NOT NULL,
  alias_value   text NOT NULL,
  canonical_id  text NOT NULL,
  first_seen    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pixel_id, alias_type, alias_value)
);
CREATE INDEX identity_aliases_canonical_idx ON identity_aliases (pixel_id, canonical_id);

-- Acknowledged reservation groups: committing a group is one row here instead of an UPDATE of every
-- id; a background pass folds them into dedup_ids (lease cleared) and deletes them.
CREATE TABLE dedup_commits (
  lease_token   text PRIMARY KEY,
  committed_at  timestamptz NOT NULL DEFAULT now()
);
