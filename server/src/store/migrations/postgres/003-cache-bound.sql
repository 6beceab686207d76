-- The derived-result cache is bounded in bytes: each entry knows its size and when it was last
-- served, and the least recently used go first when the bound is passed.
ALTER TABLE cache ADD COLUMN size bigint NOT NULL DEFAULT 0;
ALTER TABLE cache ADD COLUMN used_at bigint NOT NULL DEFAULT 0;
UPDATE cache SET size = octet_length(value), used_at = created_at;
CREATE INDEX cache_used_at ON cache(used_at);
