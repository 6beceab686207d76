-- Three more artifact kinds: Go execution traces, GODEBUG=schedtrace logs and runtime-metric series.
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with its rows (and their
-- rowids, the upload order) and indexes. No table references artifacts, so nothing else changes.
CREATE TABLE artifacts_new (
  id         TEXT PRIMARY KEY,
  stage_id   TEXT NOT NULL REFERENCES stages(id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('profile', 'loadtest', 'benchmark', 'gctrace', 'trace', 'schedtrace', 'metrics')),
  format     TEXT NOT NULL,
  filename   TEXT NOT NULL,
  size       INTEGER NOT NULL,
  sha256     TEXT NOT NULL REFERENCES blobs(sha256),
  summary    TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
INSERT INTO artifacts_new (rowid, id, stage_id, kind, format, filename, size, sha256, summary, created_at)
  SELECT rowid, id, stage_id, kind, format, filename, size, sha256, summary, created_at FROM artifacts;
DROP TABLE artifacts;
ALTER TABLE artifacts_new RENAME TO artifacts;
CREATE INDEX artifacts_stage ON artifacts(stage_id);
CREATE INDEX artifacts_sha256 ON artifacts(sha256);
