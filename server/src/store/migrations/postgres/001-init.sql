-- stagediff store, PostgreSQL dialect, version 1. Times are milliseconds since the epoch (UTC).
-- schema_migrations is created by the runner before this file is applied, inside the same
-- transaction and under the same advisory lock.

CREATE TABLE comparisons (
  id              text PRIMARY KEY,
  title           text NOT NULL,
  description     text NOT NULL DEFAULT '',
  created_at      bigint NOT NULL,
  updated_at      bigint NOT NULL,
  edit_token_hash text,                        -- sha256 hex of the edit token; NULL when read-only
  read_only       boolean NOT NULL DEFAULT false,
  revision        bigint NOT NULL DEFAULT 1    -- bumped by every change to the comparison's content
);

CREATE TABLE stages (
  id            text PRIMARY KEY,
  comparison_id text NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
  position      integer NOT NULL,
  name          text NOT NULL,
  note          text NOT NULL DEFAULT '',
  created_at    bigint NOT NULL,
  UNIQUE (comparison_id, position)
);

-- One row per distinct content. The bytes are in blob_data under data_id, so that a blob written by
-- one replica is readable by every other one.
CREATE TABLE blobs (
  sha256     text PRIMARY KEY,
  size       bigint NOT NULL,
  data_id    text NOT NULL UNIQUE,
  created_at bigint NOT NULL
);

-- The bytes, in chunks of at most 1 MiB (one bytea value is limited to 1 GB and is sent in one
-- message; chunks keep memory bounded both ways). The foreign key is deferred because the chunks of
-- an upload are written before its sha256, and so its blob row, is known — all in one transaction.
CREATE TABLE blob_data (
  data_id text NOT NULL REFERENCES blobs(data_id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  seq     integer NOT NULL,
  data    bytea NOT NULL,
  PRIMARY KEY (data_id, seq)
);
-- Uploads are mostly gzipped profiles: store out of line without trying to compress them again.
ALTER TABLE blob_data ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE blob_pins (
  id         text PRIMARY KEY,
  sha256     text NOT NULL REFERENCES blobs(sha256) ON DELETE CASCADE,
  expires_at bigint NOT NULL
);
CREATE INDEX blob_pins_sha256 ON blob_pins(sha256);

CREATE TABLE artifacts (
  id         text PRIMARY KEY,
  seq        bigint GENERATED ALWAYS AS IDENTITY,      -- upload order
  stage_id   text NOT NULL REFERENCES stages(id) ON DELETE CASCADE,
  kind       text NOT NULL CHECK (kind IN ('profile', 'loadtest', 'benchmark', 'gctrace')),
  format     text NOT NULL,
  filename   text NOT NULL,
  size       bigint NOT NULL,
  sha256     text NOT NULL REFERENCES blobs(sha256),  -- no cascade: a referenced blob cannot vanish
  summary    jsonb NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX artifacts_stage ON artifacts(stage_id, seq);
CREATE INDEX artifacts_sha256 ON artifacts(sha256);

-- Derived data. scope is 'g', 'c:<comparison id>' or 'b:<sha256>'; the two nullable columns tie an
-- entry's lifetime to its comparison or blob.
CREATE TABLE cache (
  scope         text NOT NULL,
  key           text NOT NULL,
  model_version integer NOT NULL,
  comparison_id text REFERENCES comparisons(id) ON DELETE CASCADE,
  blob_sha256   text REFERENCES blobs(sha256) ON DELETE CASCADE,
  revision      bigint NOT NULL DEFAULT 0,
  value         bytea NOT NULL,
  created_at    bigint NOT NULL,
  PRIMARY KEY (scope, key, model_version)
);
CREATE INDEX cache_comparison ON cache(comparison_id);
CREATE INDEX cache_blob ON cache(blob_sha256);
