-- Retention (RETENTION_DAYS): a comparison neither changed (updated_at) nor viewed (viewed_at) for that
-- long is removed, unless it is read-only (the demo) or its owner chose to keep it.
ALTER TABLE comparisons ADD COLUMN viewed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE comparisons ADD COLUMN keep INTEGER NOT NULL DEFAULT 0;
CREATE INDEX comparisons_last_use ON comparisons (max(updated_at, viewed_at)) WHERE keep = 0 AND read_only = 0;
