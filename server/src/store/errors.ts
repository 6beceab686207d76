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
