import { NAME_PATTERN, NOTE_PATTERN, UNSAFE_TEXT_MESSAGE } from '../api/untrusted-text.ts';
import type { FastifyError, FastifyInstance } from 'fastify';
import { IngestError } from '../ingest/errors.ts';
import { StoreError, storageFailure } from '../store/index.ts';
import { ServiceError, type ServiceErrorCode } from '../services/errors.ts';

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
    /** Extra fields of the error object, e.g. `existing` for a duplicate upload. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The status of each service error (services/errors.ts): only this layer speaks HTTP. */
const serviceStatus: Record<ServiceErrorCode, number> = {
  'not-found': 404,
  'ambiguous-stage': 400,
  'no-profile': 404,
  'no-benchmark': 404,
  'no-requests': 400,
  'invalid-filter': 400,
  'invalid-request': 400,
  duplicate: 409,
  busy: 503,
  'shutting-down': 503,
  'analysis-timeout': 503,
  'analysis-failed': 503,
  'too-large-to-analyse': 422,
  'rate-limited': 429,
  'comparison-quota': 413,
  'storage-quota': 507,
  'too-large': 413,
  'storage-unavailable': 503,
  'storage-full': 507,
};

/** An error of the services layer as an HTTP answer: its status, Retry-After, and `{error: {code, message, param?}}`. */
export function serviceErrorReply(e: ServiceError): {
  status: number;
  headers: Record<string, string>;
  body: { error: Record<string, unknown> };
} {
  const status = serviceStatus[e.code] ?? 400;
  const retry = e.detail.retryAfterSeconds ?? (status === 503 ? 10 : undefined);
  return {
    status,
    headers: retry !== undefined ? { 'retry-after': String(retry) } : {},
    body: {
      error: {
        code: e.code,
        message: e.message,
        ...(e.detail.param ? { param: e.detail.param } : {}),
        ...(e.detail.existing ? { existing: e.detail.existing } : {}),
      },
    },
  };
}

/** An error of the services layer as an HTTP error: its status, code, message, parameter and Retry-After. */
export function fromServiceError(e: ServiceError): ApiError {
  const r = serviceErrorReply(e);
  return new ApiError(
    r.status,
    e.code,
    e.message,
    e.detail.param,
    r.headers,
    e.detail.existing ? { existing: e.detail.existing } : {},
  );
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
  app.setErrorHandler((e: FastifyError | Error, req, reply) => {
    if (e instanceof ServiceError) {
      const { status, headers, body } = serviceErrorReply(e);
      return reply.status(status).headers(headers).send(body);
    }
    const err = e;
    if (err instanceof ApiError)
      return reply
        .status(err.status)
        .headers(err.headers)
        .send({
          error: { code: err.code, message: err.message, ...(err.param ? { param: err.param } : {}), ...err.extra },
        });
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
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply.status(413).send({
        error: {
          code: 'too-large',
          message: `the request body is over the ${req.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit} bytes this endpoint takes (MAX_JSON_BYTES; capture records: 2 × MAX_CAPTURE_BYTES)`,
        },
      });
    if (fe.validation) {
      // A name or note with a control character or a bidi override: say so, naming the field, rather
      // than echo the pattern.
      const unsafe = fe.validation.find(
        (v) => v.keyword === 'pattern' && (v.params?.pattern === NAME_PATTERN || v.params?.pattern === NOTE_PATTERN),
      );
      if (unsafe) {
        const field = unsafe.instancePath.replace(/^\//, '').replaceAll('/', '.');
        return reply.status(400).send({
          error: {
            code: 'invalid-request',
            message: `${fe.validationContext ?? 'body'}/${field} ${UNSAFE_TEXT_MESSAGE}`,
            param: field,
          },
        });
      }
      return reply.status(400).send({ error: { code: 'invalid-request', message: fe.message } });
    }
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
 * A failure of the disk or the database rather than of the request: a full disk is 507, a database
 * that cannot be reached (or is shutting down, or busy) is 503. Null for anything else.
 */
export function infrastructureError(e: unknown): { status: number; code: string; message: string } | null {
  const f = storageFailure(e);
  return f ? { status: f.code === 'storage-full' ? 507 : 503, ...f } : null;
}
