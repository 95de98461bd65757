-- Bus payloads are stored without compression (out of line when large). An import publishes one
-- sightings message of ~740 KB per 5,000 orders, and pglz compressing it cost ~40 ms on embedded
-- Postgres's single thread (~15 ms stored as is; reading it back ~5 against ~2 ms), in front of every
-- batch's warehouse write and of every ingestion request queued behind it. Messages are kept only for
-- the bus's retention, so the ~1.5× disk they take is the cheaper side. Rows written before keep their
-- compression; both read alike.
ALTER TABLE bus_messages ALTER COLUMN payload SET STORAGE EXTERNAL;
