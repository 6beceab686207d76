-- A stage's source files: one set per stage, its bytes bundled in one blob, its file list as JSON.
CREATE TABLE stage_sources (
  stage_id    TEXT PRIMARY KEY REFERENCES stages(id) ON DELETE CASCADE,
  module_path TEXT NOT NULL,
  revision    TEXT NOT NULL,
  dirty       INTEGER,
  origin      TEXT NOT NULL,
  files       INTEGER NOT NULL,
  bytes       INTEGER NOT NULL,
  entries     TEXT NOT NULL,
  sha256      TEXT NOT NULL REFERENCES blobs(sha256),
  size        INTEGER NOT NULL,
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX stage_sources_sha256 ON stage_sources(sha256);
