-- Deliveries queued by an ingestion group before its warehouse write are held (next_attempt_at in
-- the future, hold_token set) until the write succeeds: released at once then, deleted if it failed,
-- and sent after the hold if the process died in between — at least once, never lost.
ALTER TABLE deliveries ADD COLUMN hold_token text;
CREATE INDEX deliveries_hold_idx ON deliveries (hold_token) WHERE hold_token IS NOT NULL;
