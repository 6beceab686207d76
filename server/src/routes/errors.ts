import type { FastifyError, FastifyInstance } from 'fastify';
import { IngestError } from '../ingest/errors.ts';
import { StoreError } from '../store/index.ts';
import { GoRegexpError, type GoRegexp, MAX_PATTERN_LENGTH, compileGoRegexp } from '../analysis/go-regexp.ts';

/** An error meant for the client: an HTTP status, a stable code and a message naming the problem. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request parameter at fault, when one is. */
    readonly param?: string,
    /** Extra response headers, e.g. Retry-After on a 503. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const storeStatus: Record<string, number> = {
  'not-found': 404,
  conflict: 409,
  invalid: 400,
  'too-large': 413,
  'blob-missing': 409,
};

/**
 * Maps every error to JSON `{error: {code, message}}`: typed ingest and store errors to 4xx,
 * validation errors to 400, and anything unexpected to a 500 that hides its internals.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | Error, req, reply) => {
    if (err instanceof ApiError)
      return reply
        .status(err.status)
        .headers(err.headers)
        .send({ error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}) } });
    if (err instanceof IngestError) return reply.status(422).send({ error: { code: err.code, message: err.message } });
    if (err instanceof StoreError)
      return reply.status(storeStatus[err.code] ?? 400).send({ error: { code: err.code, message: err.message } });
    const infra = infrastructureError(err);
    if (infra) {
      req.log.error({ err }, 'storage failure');
      return reply
        .status(infra.status)
        .headers(infra.status === 503 ? { 'retry-after': '30' } : {})
        .send({ error: { code: infra.code, message: infra.message } });
    }
    const fe = err as FastifyError;
    if (fe.validation) return reply.status(400).send({ error: { code: 'invalid-request', message: fe.message } });
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply
        .status(fe.statusCode)
        .send({ error: { code: fe.code?.toLowerCase().replace(/^fst_/, '') ?? 'bad-request', message: fe.message } });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'internal', message: 'internal server error' } });
  });
}

/**
 * Compiles a client's filter expression (Go syntax, as `go tool pprof` takes it), refusing with a 400
 * that names the parameter and the problem: syntax Go rejects (backreferences, lookaround, possessive
 * quantifiers…), a pattern over MAX_PATTERN_LENGTH, or one that compiles too large.
 */
export function filterRegexp(name: string, src: string | undefined): GoRegexp | undefined {
  if (src === undefined || src === '') return undefined;
  try {
    return compileGoRegexp(src, { maxLength: MAX_PATTERN_LENGTH });
  } catch (e) {
    if (!(e instanceof GoRegexpError)) throw e;
    const message = e.tooComplex
      ? `${name} ${e.message}`
      : `${name} is not a valid Go regular expression: ${e.message}`;
    throw new ApiError(400, 'invalid-filter', message, name);
  }
}

/**
 * A failure of the disk, the database or the blob store rather than of the request: a full disk is
 * 507; a database that cannot be reached (refused, unknown host name, timed out, shutting down, busy)
 * or a blob store that cannot be used is 503. Null for anything else.
 */
export function infrastructureError(e: unknown): { status: number; code: string; message: string } | null {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  const msg = String((e as { message?: unknown } | null)?.message ?? '');
  if (code === 'BLOB_STORE_UNAVAILABLE')
    return {
      status: 503,
      code: 'storage-unavailable',
      message: 'the blob store (object storage) is unavailable; try again shortly',
    };
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === '53100')
    return {
      status: 507,
      code: 'storage-full',
      message: 'the server has no space left to store this; try again later',
    };
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
    return { status: 503, code: 'storage-unavailable', message: 'the database is unavailable; try again shortly' };
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO' || code === 'EROFS' || code === 'SQLITE_READONLY')
    return {
      status: 503,
      code: 'storage-unavailable',
      message: 'the server cannot write its storage; try again later',
    };
  return null;
}
