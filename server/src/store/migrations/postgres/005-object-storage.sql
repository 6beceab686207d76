-- Blob bytes may live in an S3 bucket (BLOB_STORE) instead of blob_data: object_key names the object;
-- NULL means the bytes are chunks in blob_data (blobs stored before BLOB_STORE was set stay readable).
ALTER TABLE blobs ADD COLUMN object_key text;

-- Objects in the bucket that no blob row references: an upload in progress (lock_key: its writer holds
-- the session advisory lock (namespace, lock_key) while it lives, and records the key before the first
-- byte goes out) or an object to delete (lock_key NULL). A sweep deletes the object of every row whose
-- writer is gone (its lock is free), aborting a multipart upload left open, then the row.
CREATE TABLE pending_objects (
  key        text PRIMARY KEY,
  lock_key   integer,
  created_at bigint NOT NULL
);
