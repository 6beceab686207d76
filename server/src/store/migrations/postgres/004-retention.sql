-- Retention (RETENTION_DAYS): a comparison neither changed (updated_at) nor viewed (viewed_at) for that
-- long is removed, unless it is read-only (the demo) or its owner chose to keep it.
ALTER TABLE comparisons ADD COLUMN viewed_at bigint NOT NULL DEFAULT 0;
ALTER TABLE comparisons ADD COLUMN keep boolean NOT NULL DEFAULT false;
CREATE INDEX comparisons_last_use ON comparisons (GREATEST(updated_at, viewed_at)) WHERE NOT keep AND NOT read_only;
