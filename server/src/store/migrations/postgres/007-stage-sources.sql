-- A stage's source files: one set per stage, its bytes bundled in one blob, its file list as JSON.
CREATE TABLE stage_sources (
  stage_id    text PRIMARY KEY REFERENCES stages(id) ON DELETE CASCADE,
  module_path text NOT NULL,
  revision    text NOT NULL,
  dirty       boolean,
  origin      text NOT NULL,
  files       integer NOT NULL,
  bytes       bigint NOT NULL,
  entries     jsonb NOT NULL,
  sha256      text NOT NULL REFERENCES blobs(sha256),  -- no cascade: a referenced blob cannot vanish
  size        bigint NOT NULL,
  created_at  bigint NOT NULL
);
CREATE INDEX stage_sources_sha256 ON stage_sources(sha256);
