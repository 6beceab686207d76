import { PostgresStore } from './postgres-store.ts';
import { parseBlobStoreUrl } from './blob-store-url.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { CacheKey, Store } from './types.ts';

export * from './types.ts';
export {
  BlobStoreUnavailableError,
  StageCapturesTooLargeError,
  StoreError,
  TooLargeError,
  isStoreError,
  storageFailure,
  type StoreErrorCode,
} from './errors.ts';
export { parseBlobStoreUrl } from './blob-store-url.ts';

export interface StoreConfig {
  /** Where SQLite keeps `stagediff.db` and `blobs/` (ignored with PostgreSQL). */
  dataDir: string;
  /** When set, PostgreSQL is used instead of SQLite. */
  databaseUrl?: string;
  /** Run `sweep()` once after opening (default true): clears what a crashed process left behind. */
  sweepOnOpen?: boolean;
  /** PostgreSQL pool size (default 20). */
  maxConnections?: number;
  /** Bound of the derived-result cache, bytes (default 256 MiB). */
  maxCacheBytes?: number;
  /**
   * `s3://bucket/prefix`: blob bytes go to this S3 bucket (configured by the AWS_* environment),
   * the rest stays in PostgreSQL. Needs `databaseUrl`.
   */
  blobStore?: string;
  /** Bound of one request to the blob store, ms (default 30000). */
  blobStoreTimeoutMs?: number;
  /** PostgreSQL: longest wait for a connection, ms (default 5000). */
  connectTimeoutMs?: number;
  /** PostgreSQL: longest a statement may run and its answer may take, ms (default 30000). */
  statementTimeoutMs?: number;
  /** The clock of every time the store records and compares (default Date.now; tests pass a fake one). */
  clock?: () => number;
}

/** Default bound of the derived-result cache. */
export const DEFAULT_MAX_CACHE_BYTES = 256 * 1024 * 1024;

/** Opens (and migrates) the configured store: PostgreSQL when `databaseUrl` is set, else SQLite. */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.blobStore && !config.databaseUrl)
    throw new Error('BLOB_STORE needs DATABASE_URL: blobs go to the bucket, their records to PostgreSQL');
  // Loaded only when configured: the S3 client is a large module graph.
  const objects = config.blobStore
    ? new (await import('./s3-blobs.ts')).S3Blobs(parseBlobStoreUrl(config.blobStore), {
        ...(config.blobStoreTimeoutMs !== undefined ? { timeoutMs: config.blobStoreTimeoutMs } : {}),
      })
    : undefined;
  const store: Store = config.databaseUrl
    ? await PostgresStore.open({
        databaseUrl: config.databaseUrl,
        ...(config.maxConnections !== undefined ? { maxConnections: config.maxConnections } : {}),
        maxCacheBytes: config.maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES,
        ...(objects ? { objects } : {}),
        ...(config.connectTimeoutMs !== undefined ? { connectTimeoutMs: config.connectTimeoutMs } : {}),
        ...(config.statementTimeoutMs !== undefined ? { statementTimeoutMs: config.statementTimeoutMs } : {}),
        ...(config.clock ? { clock: config.clock } : {}),
      })
    : new SqliteStore(config.dataDir, {
        maxCacheBytes: config.maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES,
        ...(config.clock ? { clock: config.clock } : {}),
      });
  if (config.sweepOnOpen !== false) {
    try {
      await store.sweep();
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  return store;
}

/** Cached JSON value, or null on a miss. */
export async function cacheGetJson<T>(store: Store, key: CacheKey): Promise<T | null> {
  const bytes = await store.cacheGet(key);
  return bytes === null ? null : (JSON.parse(bytes.toString('utf8')) as T);
}

export async function cachePutJson(store: Store, key: CacheKey, value: unknown): Promise<void> {
  await store.cachePut(key, JSON.stringify(value));
}
