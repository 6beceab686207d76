import type { FastifyError, FastifyInstance } from 'fastify';
import { IngestError } from '../ingest/errors.ts';
import { StoreError } from '../store/index.ts';

/** An error meant for the client: an HTTP status, a stable code and a message naming the problem. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
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
      return reply.status(err.status).send({ error: { code: err.code, message: err.message } });
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

/** Compiles a user-supplied filter regular expression, refusing invalid or overlong ones. */
export function userRegExp(name: string, src: string | undefined): RegExp | undefined {
  if (src === undefined || src === '') return undefined;
  if (src.length > 512) throw new ApiError(400, 'invalid-request', `${name} is longer than 512 characters`);
  try {
    return new RegExp(src);
  } catch (e) {
    throw new ApiError(400, 'invalid-request', `${name} is not a valid regular expression: ${(e as Error).message}`);
  }
}
