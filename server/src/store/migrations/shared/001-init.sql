-- stagediff store, version 1, for both dialects. Times are milliseconds since the epoch (UTC).
-- schema_migrations is created by the runner before this file is applied (PostgreSQL: inside the same
-- transaction and under the same advisory lock).
--
-- One source, rendered per dialect when the migrations are loaded (store/common.ts, renderMigration):
-- {{…}} names a column type or value of the dialect (SQLite's STRICT types, PostgreSQL's native ones),
-- and a line that starts with @sqlite or @postgres is kept for that dialect only.

CREATE TABLE comparisons (
  id              {{text}} PRIMARY KEY,
  title           {{text}} NOT NULL,
  description     {{text}} NOT NULL DEFAULT '',
  created_at      {{bigint}} NOT NULL,
  updated_at      {{bigint}} NOT NULL,
  edit_token_hash {{text}},                       -- sha256 hex of the edit token; NULL when read-only
  read_only       {{bool}} NOT NULL DEFAULT {{false}},
  revision        {{bigint}} NOT NULL DEFAULT 1   -- bumped by every change to the comparison's content
){{strict}};

CREATE TABLE stages (
  id            {{text}} PRIMARY KEY,
  comparison_id {{text}} NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
  position      {{int}} NOT NULL,
  name          {{text}} NOT NULL,
  note          {{text}} NOT NULL DEFAULT '',
  created_at    {{bigint}} NOT NULL,
  UNIQUE (comparison_id, position)
){{strict}};

-- One row per distinct content. SQLite: the bytes live in DATA_DIR/blobs/<first 2 hex>/<sha256>.
-- PostgreSQL: they are in blob_data under data_id, so that a blob written by one replica is readable
-- by every other one.
CREATE TABLE blobs (
  sha256     {{text}} PRIMARY KEY,
  size       {{bigint}} NOT NULL,
@postgres   data_id    text NOT NULL UNIQUE,
  created_at {{bigint}} NOT NULL
){{strict}};

-- PostgreSQL: the bytes, in chunks of at most 1 MiB (one bytea value is limited to 1 GB and is sent in
-- one message; chunks keep memory bounded both ways). The foreign key is deferred because the chunks
-- of an upload are written before its sha256, and so its blob row, is known — all in one transaction.
-- Uploads are mostly gzipped profiles: stored out of line without trying to compress them again.
@postgres CREATE TABLE blob_data (
@postgres   data_id text NOT NULL REFERENCES blobs(data_id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
@postgres   seq     integer NOT NULL,
@postgres   data    bytea NOT NULL,
@postgres   PRIMARY KEY (data_id, seq)
@postgres );
@postgres ALTER TABLE blob_data ALTER COLUMN data SET STORAGE EXTERNAL;

-- A blob written but not yet referenced by an artifact is protected by a pin until it expires.
CREATE TABLE blob_pins (
  id         {{text}} PRIMARY KEY,
  sha256     {{text}} NOT NULL REFERENCES blobs(sha256) ON DELETE CASCADE,
  expires_at {{bigint}} NOT NULL
){{strict}};
CREATE INDEX blob_pins_sha256 ON blob_pins(sha256);

-- Upload order: SQLite's rowid, PostgreSQL's seq.
CREATE TABLE artifacts (
  id         {{text}} PRIMARY KEY,
@postgres   seq        bigint GENERATED ALWAYS AS IDENTITY,
  stage_id   {{text}} NOT NULL REFERENCES stages(id) ON DELETE CASCADE,
  kind       {{text}} NOT NULL CHECK (kind IN ('profile', 'loadtest', 'benchmark', 'gctrace')),
  format     {{text}} NOT NULL,
  filename   {{text}} NOT NULL,
  size       {{bigint}} NOT NULL,
  sha256     {{text}} NOT NULL REFERENCES blobs(sha256),  -- no cascade: a referenced blob cannot vanish
  summary    {{json}} NOT NULL,
  created_at {{bigint}} NOT NULL
){{strict}};
@sqlite CREATE INDEX artifacts_stage ON artifacts(stage_id);
@postgres CREATE INDEX artifacts_stage ON artifacts(stage_id, seq);
CREATE INDEX artifacts_sha256 ON artifacts(sha256);

-- Derived data. scope is 'g', 'c:<comparison id>' or 'b:<sha256>'; the two nullable columns tie an
-- entry's lifetime to its comparison or blob.
CREATE TABLE cache (
  scope         {{text}} NOT NULL,
  key           {{text}} NOT NULL,
  model_version {{int}} NOT NULL,
  comparison_id {{text}} REFERENCES comparisons(id) ON DELETE CASCADE,
  blob_sha256   {{text}} REFERENCES blobs(sha256) ON DELETE CASCADE,
  revision      {{bigint}} NOT NULL DEFAULT 0,
  value         {{bytes}} NOT NULL,
  created_at    {{bigint}} NOT NULL,
  PRIMARY KEY (scope, key, model_version)
){{strict}};
CREATE INDEX cache_comparison ON cache(comparison_id);
CREATE INDEX cache_blob ON cache(blob_sha256);
