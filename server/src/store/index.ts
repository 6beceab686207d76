import { PostgresStore } from './postgres-store.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { CacheKey, Store } from './types.ts';

export * from './types.ts';
export { StoreError, TooLargeError, isStoreError, type StoreErrorCode } from './errors.ts';

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
}

/** Default bound of the derived-result cache. */
export const DEFAULT_MAX_CACHE_BYTES = 256 * 1024 * 1024;

/** Opens (and migrates) the configured store: PostgreSQL when `databaseUrl` is set, else SQLite. */
export async function openStore(config: StoreConfig): Promise<Store> {
  const store: Store = config.databaseUrl
    ? await PostgresStore.open({
        databaseUrl: config.databaseUrl,
        ...(config.maxConnections !== undefined ? { maxConnections: config.maxConnections } : {}),
        maxCacheBytes: config.maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES,
      })
    : new SqliteStore(config.dataDir, { maxCacheBytes: config.maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES });
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
