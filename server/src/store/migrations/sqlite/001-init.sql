-- stagediff store, SQLite dialect, version 1. Times are milliseconds since the epoch (UTC).
-- schema_migrations is created by the runner before this file is applied.

CREATE TABLE comparisons (
  id              TEXT PRIMARY KEY,
  title           TEXT NOT NULL,
  description     TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  edit_token_hash TEXT,                       -- sha256 hex of the edit token; NULL when read-only
  read_only       INTEGER NOT NULL DEFAULT 0,
  revision        INTEGER NOT NULL DEFAULT 1  -- bumped by every change to the comparison's content
) STRICT;

CREATE TABLE stages (
  id            TEXT PRIMARY KEY,
  comparison_id TEXT NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  name          TEXT NOT NULL,
  note          TEXT NOT NULL DEFAULT '',
  created_at    INTEGER NOT NULL,
  UNIQUE (comparison_id, position)
) STRICT;

-- One row per distinct content; the bytes live in DATA_DIR/blobs/<first 2 hex>/<sha256>.
CREATE TABLE blobs (
  sha256     TEXT PRIMARY KEY,
  size       INTEGER NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

-- A blob written but not yet referenced by an artifact is protected by a pin until it expires.
CREATE TABLE blob_pins (
  id         TEXT PRIMARY KEY,
  sha256     TEXT NOT NULL REFERENCES blobs(sha256) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX blob_pins_sha256 ON blob_pins(sha256);

CREATE TABLE artifacts (
  id         TEXT PRIMARY KEY,
  stage_id   TEXT NOT NULL REFERENCES stages(id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('profile', 'loadtest', 'benchmark', 'gctrace')),
  format     TEXT NOT NULL,
  filename   TEXT NOT NULL,
  size       INTEGER NOT NULL,
  sha256     TEXT NOT NULL REFERENCES blobs(sha256),  -- no cascade: a referenced blob cannot vanish
  summary    TEXT NOT NULL,                            -- JSON
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX artifacts_stage ON artifacts(stage_id);
CREATE INDEX artifacts_sha256 ON artifacts(sha256);

-- Derived data. scope is 'g', 'c:<comparison id>' or 'b:<sha256>'; the two nullable columns tie an
-- entry's lifetime to its comparison or blob.
CREATE TABLE cache (
  scope         TEXT NOT NULL,
  key           TEXT NOT NULL,
  model_version INTEGER NOT NULL,
  comparison_id TEXT REFERENCES comparisons(id) ON DELETE CASCADE,
  blob_sha256   TEXT REFERENCES blobs(sha256) ON DELETE CASCADE,
  revision      INTEGER NOT NULL DEFAULT 0,
  value         BLOB NOT NULL,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (scope, key, model_version)
) STRICT;
CREATE INDEX cache_comparison ON cache(comparison_id);
CREATE INDEX cache_blob ON cache(blob_sha256);
