/**
 * Typed store errors. Routes map `code` to an HTTP status (not-found → 404, conflict → 409,
 * invalid → 400, too-large → 413); anything else that escapes the store is a 5xx.
 */
export type StoreErrorCode = 'not-found' | 'conflict' | 'invalid' | 'too-large' | 'blob-missing';

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
  }
}

/** A blob write refused because the source went beyond `limit` bytes. Nothing was kept. */
export class TooLargeError extends StoreError {
  readonly limit: number;
  constructor(limit: number) {
    super('too-large', `file is larger than ${limit} bytes`);
    this.name = 'TooLargeError';
    this.limit = limit;
  }
}

/** A capture record refused because the stage's records together would pass their bound. Nothing was kept. */
export class StageCapturesTooLargeError extends StoreError {
  /** Bytes the stage's records would take with the refused one (compact JSON). */
  readonly total: number;
  readonly limit: number;
  constructor(total: number, limit: number) {
    super('too-large', `the stage's capture records would take ${total} bytes, over the ${limit} one stage may hold`);
    this.name = 'StageCapturesTooLargeError';
    this.total = total;
    this.limit = limit;
  }
}

export function isStoreError(e: unknown): e is StoreError {
  return e instanceof StoreError;
}

/**
 * The blob store (an S3 bucket) cannot be used now: unreachable, refusing the credentials, or
 * missing its bucket. Clients get 503 (try again later); the message, for operators, names the
 * store and the reason and never a credential.
 */
export class BlobStoreUnavailableError extends Error {
  readonly code = 'BLOB_STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BlobStoreUnavailableError';
  }
}

/**
 * A failure of the disk, the database or the blob store rather than of the request, in words:
 * `storage-full` (no space left: the disk, a PostgreSQL disk, a SQLite file) or `storage-unavailable`
 * (the database cannot be reached — refused, unknown host name, timed out, shutting down, busy — or the
 * blob store cannot be used, or the disk cannot be written). Null for anything else.
 */
export function storageFailure(e: unknown): { code: 'storage-full' | 'storage-unavailable'; message: string } | null {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  const msg = String((e as { message?: unknown } | null)?.message ?? '');
  if (code === 'BLOB_STORE_UNAVAILABLE')
    return {
      code: 'storage-unavailable',
      message: 'the blob store (object storage) is unavailable; try again shortly',
    };
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === '53100')
    return { code: 'storage-full', message: 'the server has no space left to store this; try again later' };
  if (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'EPIPE' ||
    // The database's host name does not resolve (yet): a container being replaced or restarted.
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '53300' ||
    // statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS)
    code === '57014' ||
    /Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|not currently accepting connections|terminating connection due to administrator command/i.test(
      msg,
    )
  )
    return { code: 'storage-unavailable', message: 'the database is unavailable; try again shortly' };
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO' || code === 'EROFS' || code === 'SQLITE_READONLY')
    return { code: 'storage-unavailable', message: 'the server cannot write its storage; try again later' };
  return null;
}
