import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, storeConfig } from '../src/config.ts';

const base = { DATA_DIR: '/tmp/stagediff-config-test' };

describe('configuration of storage, timeouts and retention', () => {
  it('has bounded database waits, no bucket and no retention by default', () => {
    const c = loadConfig(base);
    expect([c.databaseConnectTimeoutMs, c.databaseStatementTimeoutMs, c.blobStoreTimeoutMs]).toEqual([
      5000, 30_000, 30_000,
    ]);
    expect(c.blobStore).toBeUndefined();
    expect(c.retentionDays).toBe(0);
  });

  it('reads BLOB_STORE with PostgreSQL and hands the store every storage setting', () => {
    const c = loadConfig({
      ...base,
      DATABASE_URL: 'postgres://u:p@db:5432/stagediff',
      BLOB_STORE: 's3://team-profiles/stagediff/prod/',
      BLOB_STORE_TIMEOUT_MS: '12000',
      DATABASE_CONNECT_TIMEOUT_MS: '2500',
      DATABASE_STATEMENT_TIMEOUT_MS: '15000',
      RETENTION_DAYS: '90',
      CACHE_MAX_BYTES: '1000000',
    });
    expect(c.retentionDays).toBe(90);
    expect(storeConfig(c)).toEqual({
      dataDir: '/tmp/stagediff-config-test',
      databaseUrl: 'postgres://u:p@db:5432/stagediff',
      blobStore: 's3://team-profiles/stagediff/prod/',
      blobStoreTimeoutMs: 12000,
      connectTimeoutMs: 2500,
      statementTimeoutMs: 15000,
      maxCacheBytes: 1000000,
    });
  });

  it('refuses a bad BLOB_STORE, or one without DATABASE_URL, naming the setting', () => {
    const pg = { ...base, DATABASE_URL: 'postgres://db/stagediff' };
    const cases: [Record<string, string>, RegExp][] = [
      [{ ...pg, BLOB_STORE: 'https://bucket.s3.amazonaws.com' }, /^BLOB_STORE must be s3:\/\/bucket/],
      [{ ...pg, BLOB_STORE: 's3://Upper_Case' }, /^BLOB_STORE "Upper_Case" is not a valid bucket name/],
      [{ ...pg, BLOB_STORE: 's3://ab' }, /not a valid bucket name/],
      [{ ...pg, BLOB_STORE: 's3://bucket/a//b' }, /^BLOB_STORE the prefix "a\/\/b" has an empty/],
      [{ ...pg, BLOB_STORE: 's3://bucket/../up' }, /"\.\." segment/],
      [{ ...pg, BLOB_STORE: 's3://bucket/a\tb' }, /control character/],
      [{ ...base, BLOB_STORE: 's3://bucket/p' }, /^BLOB_STORE needs DATABASE_URL/],
      [{ ...base, RETENTION_DAYS: '-1' }, /^RETENTION_DAYS must be an integer in \[0, 36500\]/],
      [{ ...base, RETENTION_DAYS: '7.5' }, /^RETENTION_DAYS must be an integer/],
      [{ ...base, DATABASE_CONNECT_TIMEOUT_MS: '0' }, /^DATABASE_CONNECT_TIMEOUT_MS must be an integer/],
      [{ ...base, DATABASE_STATEMENT_TIMEOUT_MS: 'soon' }, /^DATABASE_STATEMENT_TIMEOUT_MS must be an integer/],
      [{ ...base, BLOB_STORE_TIMEOUT_MS: '1e9' }, /^BLOB_STORE_TIMEOUT_MS must be an integer/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    }
  });

  it('keeps a bucket without a prefix, and takes an empty BLOB_STORE as none', () => {
    const pg = { ...base, DATABASE_URL: 'postgres://db/stagediff' };
    expect(loadConfig({ ...pg, BLOB_STORE: 's3://my.bucket-1' }).blobStore).toBe('s3://my.bucket-1');
    // docker-compose.yml passes unset settings as empty strings.
    expect(loadConfig({ ...pg, BLOB_STORE: '', RETENTION_DAYS: '' })).toMatchObject({
      blobStore: undefined,
      retentionDays: 0,
    });
  });
});
