import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, storeConfig } from '../src/config.ts';
import { builtinTraceLimits } from '../src/ingest/trace/index.ts';

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

describe('trace limits in the configuration', () => {
  it('default to the built-in bounds', () => {
    expect(loadConfig({}).traceLimits).toEqual(builtinTraceLimits);
  });

  it('take TRACE_MAX_BYTES, TRACE_MAX_EVENTS, TRACE_MAX_GENERATION_BYTES and TRACE_MAX_REQUEST_STATES', () => {
    const l = loadConfig({
      TRACE_MAX_BYTES: '1048576',
      TRACE_MAX_EVENTS: '5000',
      TRACE_MAX_GENERATION_BYTES: '70000',
      TRACE_MAX_REQUEST_STATES: '123456',
    }).traceLimits;
    expect([l.maxBytes, l.maxEvents, l.maxGenerationBytes, l.maxRequestStates]).toEqual([1048576, 5000, 70000, 123456]);
  });

  it.each([
    ['TRACE_MAX_EVENTS', 'many'],
    ['TRACE_MAX_BYTES', '-1'],
    ['TRACE_MAX_GENERATION_BYTES', '100'],
    ['TRACE_MAX_REQUEST_STATES', '-5'],
  ])('refuse %s=%s at start-up, naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be an integer`));
  });
});

describe('the module proxy of the source view', () => {
  it('is off by default, with bounded fetches and the linux-amd64 toolchain', () => {
    const c = loadConfig({});
    expect(c.sourceGoproxy).toBeUndefined();
    expect(c.sourceGoVersion).toBeUndefined();
    expect({
      timeout: c.sourceGoproxyTimeoutMs,
      zip: c.sourceGoproxyMaxZipBytes,
      bytes: c.sourceGoproxyMaxModuleBytes,
      files: c.sourceGoproxyMaxModuleFiles,
      concurrency: c.sourceGoproxyConcurrency,
      retry: c.sourceGoproxyRetrySeconds,
      platform: c.sourceGoPlatform,
    }).toEqual({
      timeout: 20_000,
      zip: 256 * 1024 ** 2,
      bytes: 128 * 1024 ** 2,
      files: 20_000,
      concurrency: 2,
      retry: 600,
      platform: 'linux-amd64',
    });
  });

  it('takes one https, http or file proxy URL and a Go release', () => {
    expect(loadConfig({ SOURCE_GOPROXY: 'https://proxy.golang.org/' }).sourceGoproxy).toBe('https://proxy.golang.org');
    expect(loadConfig({ SOURCE_GOPROXY: 'http://athens.internal:3000/base' }).sourceGoproxy).toBe(
      'http://athens.internal:3000/base',
    );
    expect(loadConfig({ SOURCE_GOPROXY: 'file:///srv/goproxy' }).sourceGoproxy).toBe('file:///srv/goproxy');
    expect(loadConfig({ SOURCE_GOPROXY: 'off' }).sourceGoproxy).toBeUndefined();
    expect(loadConfig({ SOURCE_GO_VERSION: 'go1.26.8' }).sourceGoVersion).toBe('go1.26.8');
    expect(loadConfig({ SOURCE_GO_PLATFORM: 'darwin-arm64' }).sourceGoPlatform).toBe('darwin-arm64');
  });

  it('refuses a list, "direct", other schemes, a file URL with a host and a bad release, naming the setting', () => {
    for (const [env, message] of [
      [{ SOURCE_GOPROXY: 'https://proxy.golang.org,direct' }, /^SOURCE_GOPROXY takes one proxy URL/],
      [{ SOURCE_GOPROXY: 'direct' }, /^SOURCE_GOPROXY takes one proxy URL/],
      [{ SOURCE_GOPROXY: 'ftp://x.example/' }, /^SOURCE_GOPROXY must start with https:\/\/, http:\/\/ or file:\/\/\//],
      [{ SOURCE_GOPROXY: 'proxy.golang.org' }, /^SOURCE_GOPROXY must be a URL/],
      [{ SOURCE_GOPROXY: 'file://server/share' }, /^SOURCE_GOPROXY: a file:\/\/ proxy names a local directory/],
      [{ SOURCE_GOPROXY: 'https://x.example/?a=1' }, /^SOURCE_GOPROXY must have no query/],
      [{ SOURCE_GO_VERSION: '1.26.8' }, /^SOURCE_GO_VERSION must name a Go release like go1\.26\.8/],
      [{ SOURCE_GO_PLATFORM: 'linux/amd64' }, /^SOURCE_GO_PLATFORM must be GOOS-GOARCH/],
      [{ SOURCE_GOPROXY_CONCURRENCY: '0' }, /^SOURCE_GOPROXY_CONCURRENCY must be an integer in \[1, 64\]/],
    ] as const)
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
  });
});
