import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultWebDist } from './paths.ts';
import { TraceLimitError, type TraceLimits, traceLimitsFromEnv } from './ingest/trace/index.ts';
import { parseBlobStoreUrl } from './store/blob-store-url.ts';
import { MAX_CAPTURE_BYTES } from './store/common.ts';
import type { StoreConfig } from './store/index.ts';
import { LOG_FORMATS, type LogFormat } from './logging.ts';
import { GO_RELEASE } from './sources/module-path.ts';

/** The server's configuration, read once from the environment at start-up and validated. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL: longest wait for a connection (new, or free in the pool), ms. */
  databaseConnectTimeoutMs: number;
  /** PostgreSQL: longest a statement may run, and its answer take, ms. */
  databaseStatementTimeoutMs: number;
  /** `s3://bucket/prefix`: blob bytes in an S3 bucket (configured by AWS_*), the rest in PostgreSQL. */
  blobStore: string | undefined;
  /** Bound of one request to the blob store, ms. */
  blobStoreTimeoutMs: number;
  /** Comparisons neither changed nor viewed for this many days are removed (0: never). */
  retentionDays: number;
  /** Per uploaded file, bytes. */
  maxUploadBytes: number;
  /** Per profile once inflated, bytes. */
  maxDecompressedBytes: number;
  /**
   * Base of share links. Unset: the host a trusted proxy forwards (TRUST_PROXY), else links are
   * relative; never the Host header a client sent directly.
   */
  publicUrl: string | undefined;
  /** When set, creating a comparison needs `Authorization: Bearer <this>`. */
  writeToken: string | undefined;
  /** Seed the read-only demo comparison at /c/demo on first start. */
  seedDemo: boolean;
  /** Directory of the built web client (served at /). */
  webDist: string;
  logLevel: string;
  /** LOG_FORMAT: JSON lines, lines for a person, or `auto` (for a person on a terminal). */
  logFormat: LogFormat;
  /** Analysis worker processes (0 = compute on the main thread, unbounded: for tools and tests only). */
  analysisWorkers: number;
  /** Write requests (POST, PUT, PATCH, DELETE) one client may make per window; 0 = no limit. */
  rateLimitWrites: number;
  /** The rate limit's window, seconds. */
  rateLimitWindowSeconds: number;
  /**
   * Which X-Forwarded-* headers to believe (Fastify's `trustProxy`): true (any), false (none), a hop
   * count, or a comma-separated list of proxy addresses/CIDRs. It decides the client address rate
   * limits are counted by, and the origin of share links when PUBLIC_URL is unset. Default false: a
   * server reached directly must not let a client name its own address (and so its own rate-limit
   * budget) in a header; behind a reverse proxy, name the proxy.
   */
  trustProxy: boolean | number | string;
  /** Deadline of one analysis or parse job, ms. */
  analysisTimeoutMs: number;
  /** V8 heap limit of each analysis worker process, MiB (its resident memory may reach 2× this + 256 MiB). */
  analysisMaxHeapMb: number;
  /** Jobs that may wait per worker behind the running one. */
  analysisQueueMax: number;
  /** Nice steps the analysis workers run below the server (0: the same priority). */
  analysisNiceness: number;
  /** Bound of the shared derived-result cache in the store, bytes (least recently used go first). */
  cacheMaxBytes: number;
  /** Bound of this process's in-memory result memo, bytes of memory it holds (keys and overhead counted). */
  resultMemoMaxBytes: number;
  /** Time a client has to send a whole request (headers and body), ms. */
  requestTimeoutMs: number;
  /**
   * Bounds of reading one Go execution trace (TRACE_MAX_BYTES, TRACE_MAX_EVENTS,
   * TRACE_MAX_GENERATION_BYTES). Parsing reads them from the environment in every process (analysis
   * workers inherit it); they are validated here so a bad value stops the start.
   */
  traceLimits: TraceLimits;

  /*
   * Fair share and bounded requests: what one visitor may take of a shared server. Each is a setting
   * with a safe default; 0 turns a count limit off. Counted per replica.
   */
  /** Uncached analysis jobs and parses one client (address) may have queued or running at once. */
  analysisClientJobs: number;
  /** Cost of the uncached analysis jobs one client may start per minute (a JSON view costs 1, an image more). */
  analysisClientJobsPerMinute: number;
  /** Analysis jobs of one comparison (every client together) queued or running at once. */
  analysisComparisonJobs: number;
  /** MCP requests (POST /mcp) one client may have in flight at once; 0: the /mcp endpoint is off. */
  mcpClientCalls: number;
  /** Widest image (`width` of the .svg/.png views), pixels. */
  imageMaxWidth: number;
  /** Largest JSON request body, bytes. */
  maxJsonBytes: number;
  /** Deepest nesting of arrays and objects a JSON body may have (checked before it is parsed). */
  maxJsonDepth: number;
  /** Text fields (non-file parts) one multipart upload may carry. */
  maxFormFields: number;
  /** Largest text field of a multipart upload, bytes. */
  maxFormFieldBytes: number;
  /** Largest capture record, bytes of JSON (at most what the store takes, 256 KiB). */
  maxCaptureBytes: number;
  /** All capture records of one stage together, bytes of JSON. */
  maxStageCaptureBytes: number;
  /** Bytes of uploaded files the instance keeps (0: no limit but the disk). */
  maxStorageBytes: number;
  /** Bytes of uploaded files one comparison holds (0: no limit). */
  maxComparisonBytes: number;
  /** When set, /metrics needs `Authorization: Bearer <this>`; unset, it answers loopback clients only. */
  metricsToken: string | undefined;
  /** A stage's source set: bytes of all its files together (inflated), as kept. */
  maxSourceBytes: number;
  /** A stage's source set: bytes of one file (inflated). */
  maxSourceFileBytes: number;
  /** A stage's source set: number of files kept. */
  maxSourceFiles: number;
  /** A source archive: entries read (kept or not) before it is refused. */
  maxSourceArchiveEntries: number;
  /** The source view's bounds (rows, characters of a line, lines aligned): see SourceViewLimits. */
  sourceView: SourceViewLimits;

  /*
   * Dependency and standard-library sources from a Go module proxy (off unless SOURCE_GOPROXY is set):
   * the source view fetches `<proxy>/<module>/@v/<version>.zip` for a file the stage's own sources lack.
   */
  /** One module proxy: `https://…`, `http://…` or `file:///…` (no trailing slash); undefined: off. */
  sourceGoproxy: string | undefined;
  /** Deadline of one fetch from the proxy (the answer and its whole body), ms. */
  sourceGoproxyTimeoutMs: number;
  /** Largest module zip fetched, bytes. */
  sourceGoproxyMaxZipBytes: number;
  /** Source bytes kept of one module (inflated; tests and testdata are never kept). */
  sourceGoproxyMaxModuleBytes: number;
  /** Source files kept of one module (entries read: four times this). */
  sourceGoproxyMaxModuleFiles: number;
  /** Fetches from the proxy at once (per server process); more wait their turn. */
  sourceGoproxyConcurrency: number;
  /** How long a failed fetch is remembered (answered again without asking the proxy), seconds. */
  sourceGoproxyRetrySeconds: number;
  /**
   * How long a view waits for a module being fetched, ms (it holds an analysis worker meanwhile); the
   * fetch goes on under SOURCE_GOPROXY_TIMEOUT_MS and the view asked again reads it from the cache.
   */
  sourceGoproxyWaitMs: number;
  /** The Go version standard-library files are taken from when the stage's metrics do not say (`go1.26.8`). */
  sourceGoVersion: string | undefined;
  /** Which build of the toolchain module is fetched for the standard library (its sources are the same on every one). */
  sourceGoPlatform: string;
  /** Imports from continuous profilers (Parca, Pyroscope): which hosts, and each import's bounds. */
  profilers: ProfilerSettings;
}

/**
 * What the server may fetch from continuous profilers for "Add from a profiler" (`stagediff import`):
 * PROFILER_HOSTS (comma-separated host, host:port or IP; default none: every import is refused naming
 * the setting), PROFILER_FETCH_TIMEOUT_MS (one fetch), PROFILER_MAX_RESPONSE_BYTES (one answer),
 * PROFILER_MAX_FETCHES (fetches of one import), PROFILER_MAX_RUNS (runs of one import),
 * PROFILER_IMPORT_TIMEOUT_MS (one whole import).
 */
export interface ProfilerSettings {
  hosts: string[];
  timeoutMs: number;
  importTimeoutMs: number;
  maxResponseBytes: number;
  maxFetches: number;
  maxRuns: number;
}

export class ConfigError extends Error {}

function goproxy(raw: string | undefined): string | undefined {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'off') return undefined;
  if (/[,|]/.test(v) || v === 'direct')
    throw new ConfigError(
      `SOURCE_GOPROXY takes one proxy URL (https://, http:// or file:///), not a list or "direct", got "${raw}"`,
    );
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(`SOURCE_GOPROXY must be a URL (https://, http:// or file:///), got "${raw}"`);
  }
  if (!['https:', 'http:', 'file:'].includes(url.protocol))
    throw new ConfigError(`SOURCE_GOPROXY must start with https://, http:// or file:///, got "${raw}"`);
  if (url.search || url.hash) throw new ConfigError(`SOURCE_GOPROXY must have no query or fragment, got "${raw}"`);
  if (url.protocol === 'file:' && url.host !== '')
    throw new ConfigError(`SOURCE_GOPROXY: a file:// proxy names a local directory (file:///dir), got "${raw}"`);
  return url.href.replace(/\/+$/, '');
}

function goRelease(raw: string | undefined): string | undefined {
  const v = (raw ?? '').trim();
  if (v === '') return undefined;
  if (!GO_RELEASE.test(v))
    throw new ConfigError(`SOURCE_GO_VERSION must name a Go release like go1.26.8, got "${raw}"`);
  return v;
}

function goPlatform(raw: string | undefined): string {
  const v = (raw ?? '').trim() || 'linux-amd64';
  if (!/^[a-z0-9]{1,20}-[a-z0-9]{1,20}$/.test(v))
    throw new ConfigError(`SOURCE_GO_PLATFORM must be GOOS-GOARCH like linux-amd64, got "${raw}"`);
  return v;
}

/** Default bounds of a stage's source set (the CLI's `capture --source` uses them too). */
export const SOURCE_LIMITS = {
  maxSourceBytes: 32 * 1024 * 1024,
  maxSourceFileBytes: 2 * 1024 * 1024,
  maxSourceFiles: 5000,
  maxSourceArchiveEntries: 20_000,
} as const;

/**
 * The source view's bounds, like `go tool pprof -list`'s: a few lines of context around the sampled
 * ones, the rest left out as counted gaps; and, so one file cannot make a large answer, these.
 */
export interface SourceViewLimits {
  /** Rows of one answer (SOURCE_VIEW_MAX_ROWS): past it, context lines go first, then the last rows. */
  maxRows: number;
  /** Characters of one line's text in an answer (SOURCE_VIEW_MAX_LINE_CHARS); a longer line is cut. */
  maxLineChars: number;
  /** Characters of a line the page highlights (SOURCE_VIEW_HIGHLIGHT_CHARS); the rest is plain text. */
  highlightChars: number;
  /** Lines of both versions aligned at most (SOURCE_VIEW_MAX_ALIGN_LINES); past it, only the shown ones. */
  maxAlignLines: number;
}

export const SOURCE_VIEW_LIMITS: SourceViewLimits = {
  maxRows: 2000,
  maxLineChars: 400,
  highlightChars: 400,
  maxAlignLines: 20_000,
};

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  return n;
}

function logFormat(raw: string | undefined): LogFormat {
  const v = (raw ?? '').trim().toLowerCase() || 'auto';
  if ((LOG_FORMATS as readonly string[]).includes(v)) return v as LogFormat;
  throw new ConfigError(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, got "${raw}"`);
}

function bool(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || /^(false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d{1,3}$/.test(raw)) return Number(raw);
  if (/^[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*$/.test(raw)) return raw;
  throw new ConfigError(
    `TRUST_PROXY must be true, false, a hop count or a comma-separated list of addresses, got "${raw}"`,
  );
}

function traceLimits(env: NodeJS.ProcessEnv): TraceLimits {
  try {
    return traceLimitsFromEnv(env);
  } catch (e) {
    if (e instanceof TraceLimitError) throw new ConfigError(e.message);
    throw e;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, '') || undefined;
  if (publicUrl && !/^https?:\/\//.test(publicUrl))
    throw new ConfigError(`PUBLIC_URL must start with http:// or https://, got "${publicUrl}"`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  const blobStore = env.BLOB_STORE || undefined;
  if (blobStore) {
    try {
      parseBlobStoreUrl(blobStore);
    } catch (e) {
      throw new ConfigError(`BLOB_STORE ${(e as Error).message}`);
    }
    if (!databaseUrl)
      throw new ConfigError(
        'BLOB_STORE needs DATABASE_URL: the bucket holds the files, PostgreSQL their records (with SQLite, files stay in DATA_DIR)',
      );
  }
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.DATA_DIR || './data'),
    databaseUrl,
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    blobStore,
    blobStoreTimeoutMs: int(env, 'BLOB_STORE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    retentionDays: int(env, 'RETENTION_DAYS', 0, 0, 36_500),
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 64 * 1024 * 1024, 1, 2 ** 40),
    maxDecompressedBytes: int(env, 'MAX_DECOMPRESSED_BYTES', 512 * 1024 * 1024, 1, 2 ** 40),
    publicUrl,
    writeToken: env.STAGEDIFF_WRITE_TOKEN || undefined,
    seedDemo: bool(env, 'STAGEDIFF_SEED_DEMO', true),
    webDist: resolve(env.WEB_DIST || defaultWebDist),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormat(env.LOG_FORMAT),
    analysisWorkers: int(env, 'ANALYSIS_WORKERS', Math.min(2, availableParallelism()), 0, 64),
    rateLimitWrites: int(env, 'RATE_LIMIT_WRITES', 120, 0, 1_000_000),
    rateLimitWindowSeconds: int(env, 'RATE_LIMIT_WINDOW', 60, 1, 86_400),
    trustProxy: trustProxy(env.TRUST_PROXY),
    analysisTimeoutMs: int(env, 'ANALYSIS_TIMEOUT_MS', 60_000, 100, 3_600_000),
    analysisMaxHeapMb: int(env, 'ANALYSIS_MAX_HEAP_MB', 1024, 16, 65_536),
    analysisQueueMax: int(env, 'ANALYSIS_QUEUE_MAX', 32, 0, 10_000),
    analysisNiceness: int(env, 'ANALYSIS_NICENESS', 0, 0, 19),
    cacheMaxBytes: int(env, 'CACHE_MAX_BYTES', 256 * 1024 * 1024, 0, 2 ** 40),
    resultMemoMaxBytes: int(env, 'RESULT_MEMO_MAX_BYTES', 64 * 1024 * 1024, 0, 2 ** 36),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 300_000, 1000, 3_600_000),
    traceLimits: traceLimits(env),
    // Fair share and bounded requests (README, configuration).
    analysisClientJobs: int(env, 'ANALYSIS_CLIENT_JOBS', 8, 0, 10_000),
    analysisClientJobsPerMinute: int(env, 'ANALYSIS_CLIENT_JOBS_PER_MINUTE', 120, 0, 1_000_000),
    analysisComparisonJobs: int(env, 'ANALYSIS_COMPARISON_JOBS', 8, 0, 10_000),
    mcpClientCalls: int(env, 'MCP_CLIENT_CALLS', 4, 0, 1000),
    imageMaxWidth: int(env, 'IMAGE_MAX_WIDTH', 2400, 300, 4000),
    maxJsonBytes: int(env, 'MAX_JSON_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    maxJsonDepth: int(env, 'MAX_JSON_DEPTH', 400, 8, 10_000),
    maxFormFields: int(env, 'MAX_FORM_FIELDS', 16, 0, 10_000),
    maxFormFieldBytes: int(env, 'MAX_FORM_FIELD_BYTES', 64 * 1024, 1, 16 * 1024 * 1024),
    maxCaptureBytes: int(env, 'MAX_CAPTURE_BYTES', 256 * 1024, 1024, MAX_CAPTURE_BYTES),
    maxStageCaptureBytes: int(env, 'MAX_STAGE_CAPTURE_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
    maxStorageBytes: int(env, 'MAX_STORAGE_BYTES', 20 * 1024 ** 3, 0, 2 ** 50),
    maxComparisonBytes: int(env, 'MAX_COMPARISON_BYTES', 1024 ** 3, 0, 2 ** 50),
    metricsToken: env.METRICS_TOKEN || undefined,
    maxSourceBytes: int(env, 'MAX_SOURCE_BYTES', SOURCE_LIMITS.maxSourceBytes, 1024, 1024 ** 3),
    maxSourceFileBytes: int(env, 'MAX_SOURCE_FILE_BYTES', SOURCE_LIMITS.maxSourceFileBytes, 1024, 256 * 1024 ** 2),
    maxSourceFiles: int(env, 'MAX_SOURCE_FILES', SOURCE_LIMITS.maxSourceFiles, 1, 1_000_000),
    maxSourceArchiveEntries: int(
      env,
      'MAX_SOURCE_ARCHIVE_ENTRIES',
      SOURCE_LIMITS.maxSourceArchiveEntries,
      1,
      10_000_000,
    ),
    sourceView: {
      maxRows: int(env, 'SOURCE_VIEW_MAX_ROWS', SOURCE_VIEW_LIMITS.maxRows, 10, 100_000),
      maxLineChars: int(env, 'SOURCE_VIEW_MAX_LINE_CHARS', SOURCE_VIEW_LIMITS.maxLineChars, 40, 100_000),
      highlightChars: int(env, 'SOURCE_VIEW_HIGHLIGHT_CHARS', SOURCE_VIEW_LIMITS.highlightChars, 0, 100_000),
      maxAlignLines: int(env, 'SOURCE_VIEW_MAX_ALIGN_LINES', SOURCE_VIEW_LIMITS.maxAlignLines, 100, 1_000_000),
    },
    sourceGoproxy: goproxy(env.SOURCE_GOPROXY),
    sourceGoproxyTimeoutMs: int(env, 'SOURCE_GOPROXY_TIMEOUT_MS', 20_000, 100, 600_000),
    sourceGoproxyMaxZipBytes: int(env, 'SOURCE_GOPROXY_MAX_ZIP_BYTES', 256 * 1024 ** 2, 1024, 4 * 1024 ** 3),
    sourceGoproxyMaxModuleBytes: int(env, 'SOURCE_GOPROXY_MAX_MODULE_BYTES', 128 * 1024 ** 2, 1024, 4 * 1024 ** 3),
    sourceGoproxyMaxModuleFiles: int(env, 'SOURCE_GOPROXY_MAX_MODULE_FILES', 20_000, 1, 1_000_000),
    sourceGoproxyConcurrency: int(env, 'SOURCE_GOPROXY_CONCURRENCY', 2, 1, 64),
    sourceGoproxyRetrySeconds: int(env, 'SOURCE_GOPROXY_RETRY_SECONDS', 600, 0, 7 * 86_400),
    sourceGoproxyWaitMs: int(env, 'SOURCE_GOPROXY_WAIT_MS', 3000, 0, 600_000),
    sourceGoVersion: goRelease(env.SOURCE_GO_VERSION),
    sourceGoPlatform: goPlatform(env.SOURCE_GO_PLATFORM),
    profilers: {
      hosts: (env.PROFILER_HOSTS ?? '')
        .split(',')
        .map((h) => h.trim())
        .filter((h) => h !== ''),
      timeoutMs: int(env, 'PROFILER_FETCH_TIMEOUT_MS', 20_000, 100, 600_000),
      importTimeoutMs: int(env, 'PROFILER_IMPORT_TIMEOUT_MS', 120_000, 1000, 3_600_000),
      maxResponseBytes: int(env, 'PROFILER_MAX_RESPONSE_BYTES', 32 * 1024 * 1024, 1024, 1024 ** 3),
      maxFetches: int(env, 'PROFILER_MAX_FETCHES', 400, 1, 100_000),
      maxRuns: int(env, 'PROFILER_MAX_RUNS', 30, 1, 100),
    },
  };
}

/** What the store needs of the configuration (the server and each analysis worker open one). */
export function storeConfig(config: Config): StoreConfig {
  return {
    dataDir: config.dataDir,
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    ...(config.blobStore ? { blobStore: config.blobStore } : {}),
    blobStoreTimeoutMs: config.blobStoreTimeoutMs,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    maxCacheBytes: config.cacheMaxBytes,
  };
}
