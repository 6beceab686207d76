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
        .send({ error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}) } });
    if (err instanceof IngestError) return reply.status(422).send({ error: { code: err.code, message: err.message } });
    if (err instanceof StoreError)
      return reply.status(storeStatus[err.code] ?? 400).send({ error: { code: err.code, message: err.message } });
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
