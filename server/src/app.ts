import { installJsonParser } from './routes/json-body.ts';
import { existsSync, readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import compress from '@fastify/compress';
import etag from '@fastify/etag';
import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import type { Config } from './config.ts';
import type { Store } from './store/index.ts';
import { buildContext } from './compose.ts';
import { ApiError, installErrorHandler } from './routes/errors.ts';
import comparisonRoutes from './routes/comparisons.ts';
import stageRoutes from './routes/stages.ts';
import artifactRoutes, { MAX_FILES_PER_REQUEST } from './routes/artifacts.ts';
import profilerImportRoutes from './routes/profiler-import.ts';
import sourceRoutes from './routes/sources.ts';
import analysisRoutes from './routes/analysis.ts';
import operationsRoutes from './routes/operations.ts';
import mcpRoutes from './routes/mcp.ts';
import { contentSecurityPolicy, missingWebClientPage, pageFor } from './routes/web-client.ts';
import { OneLinePerRequest, logStream } from './logging.ts';
import type { AppContext } from './context.ts';

export type { AppContext } from './context.ts';

export interface BuildOptions {
  /** An already opened store (tests share one between two apps to act as two replicas). */
  store?: Store;
  logger?: boolean;
  /** Where the log goes instead of stdout (tests read it). */
  logStream?: { write: (line: string) => unknown };
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * What every response of a public instance needs, from the Fastify ecosystem's plugins: security
 * headers with a strict Content-Security-Policy, ETag and 304 for responses without their own
 * validator, br/gzip compression, and one rate limit shared by every write of a client.
 */
async function registerHttpPolicies(app: FastifyInstance, config: Config): Promise<void> {
  const https = config.publicUrl?.startsWith('https://') ?? false;
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy },
    // Share links are the secrets of this app: never send them to another site in a Referer.
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS only where the operator said the public URL is https (it binds the whole host).
    strictTransportSecurity: https ? { maxAge: 180 * 24 * 3600, includeSubDomains: false } : false,
  });
  // Registered before compression, so the ETag is a hash of the uncompressed body (weak: the
  // encodings are different bytes of the same representation). Routes that know their revision
  // set their own ETag and the plugin only answers 304.
  await app.register(etag, { weak: true });
  // JSON, text and scripts. Uploaded files opt out on their route: they go back as they came.
  await app.register(compress, { encodings: ['br', 'gzip'], threshold: 1024 });
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_req, c) =>
      new ApiError(c.statusCode, 'rate-limited', `too many writes from this address: retry in ${c.after}`),
  });
  if (config.rateLimitWrites > 0) {
    const limitWrites = app.rateLimit({
      max: config.rateLimitWrites,
      timeWindow: config.rateLimitWindowSeconds * 1000,
    });
    app.addHook('onRequest', async (req, reply) => {
      if (WRITE_METHODS.has(req.method)) await limitWrites.call(app, req, reply);
    });
  }
}

/**
 * Builds the Fastify app over the services `buildContext` wires (compose.ts): routes, schemas, error
 * handling, HTTP policies, the web client. Listening is the caller's business (server.ts), so tests
 * drive it with `app.inject`.
 */
export type StagediffApp = FastifyInstance & { ctx: AppContext };

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<StagediffApp> {
  const ctx = await buildContext(config, opts.store);
  const { store, metrics, pool, maintenance, goproxy } = ctx;

  const app = Fastify({
    logger:
      opts.logger === false ? false : { level: config.logLevel, stream: opts.logStream ?? logStream(config.logFormat) },
    logController: new OneLinePerRequest(),
    // Every body Fastify parses (JSON above all); routes that stream a body set their own bound.
    bodyLimit: config.maxJsonBytes,
    // A hop count trusts that many proxies nearest to the server (as proxy-addr counts them).
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (
            (hops: number) => (_addr: string, i: number) =>
              i < hops
          )(config.trustProxy)
        : config.trustProxy,
    // A client must send its whole request (an upload's body included) within this time.
    requestTimeout: config.requestTimeoutMs,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, useDefaults: true } },
  });
  // A module proxy failure's full text (the proxy's address, its answer) is for the operator's log only.
  if (goproxy) goproxy.onProblem = (id, problem) => app.log.warn({ module: id }, `module proxy: ${problem}`);
  installErrorHandler(app);
  installJsonParser(app, config.maxJsonDepth);
  // Schema coercion turns "Infinity" and "1e999" into numbers that pass minimum/maximum: refuse them.
  app.addHook('preHandler', async (req) => {
    const q = req.query as Record<string, unknown> | undefined;
    if (!q || typeof q !== 'object') return;
    for (const [k, v] of Object.entries(q))
      if (typeof v === 'number' && !Number.isFinite(v))
        throw new ApiError(400, 'invalid-request', `querystring/${k} must be a finite number`);
  });
  app.addHook('onResponse', async (req, reply) => {
    metrics.inc('stagediff_http_requests_total', {
      method: req.method,
      route: req.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
    });
  });
  app.addHook('onClose', async () => pool.close());
  app.addHook('onClose', async () => ctx.filters.close());
  app.addHook('onClose', async () => maintenance.stop());
  app.addHook('onReady', async () => maintenance.start());
  if (!opts.store) app.addHook('onClose', async () => store.close());

  await registerHttpPolicies(app, config);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'stagediff API',
        version: '1',
        description: 'Comparisons of performance-optimization stages: profiles, load tests, diffs.',
      },
      components: { securitySchemes: { editToken: { type: 'http', scheme: 'bearer' } } },
    },
  });
  await app.register(multipart, {
    // The bounds of every multipart body (the upload route adds its own count of files).
    limits: {
      fields: config.maxFormFields,
      fieldSize: config.maxFormFieldBytes,
      parts: config.maxFormFields + MAX_FILES_PER_REQUEST + 1,
      fieldNameSize: 200,
      headerPairs: 100,
    },
  });

  await app.register(comparisonRoutes, { ctx });
  await app.register(stageRoutes, { ctx });
  await app.register(artifactRoutes, { ctx });
  await app.register(profilerImportRoutes, { ctx });
  await app.register(sourceRoutes, { ctx });
  await app.register(analysisRoutes, { ctx });

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(operationsRoutes, { ctx });
  await app.register(mcpRoutes, { ctx });

  // The web client: built files, and index.html for every client-side route (GET and HEAD alike).
  const index = `${config.webDist}/index.html`;
  const notFound = (method: string, url: string) => ({
    error: { code: 'not-found', message: `no route ${method} ${url.split('?')[0]}` },
  });
  const isPageRequest = (method: string, url: string) =>
    (method === 'GET' || method === 'HEAD') && !url.startsWith('/api/') && !/\.[a-z0-9]+$/i.test(url.split('?')[0]!);
  if (existsSync(index)) {
    await app.register(fastifyStatic, {
      root: config.webDist,
      wildcard: false,
      index: false,
      // web/dist carries .br and .gz of every asset, compressed once at build time at the best ratio.
      preCompressed: true,
      setHeaders(reply, path) {
        // Vite names every asset after a hash of its content: a changed file is a new URL.
        // (`path` is the file sent: the .br or .gz one when precompressed.)
        if (/[\\/]assets[\\/][^\\/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+(\.br|\.gz)?$/.test(path))
          reply.header('cache-control', 'public, max-age=31536000, immutable');
        else reply.header('cache-control', 'no-cache');
      },
    });
    const html = readFileSync(index, 'utf8');
    const sendIndex = (reply: FastifyReply, url: string) =>
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(pageFor(html, url));
    app.get('/', { schema: { hide: true } }, async (req, reply) => sendIndex(reply, req.url));
    app.setNotFoundHandler(async (req, reply) => {
      if (isPageRequest(req.method, req.url)) return sendIndex(reply, req.url);
      return reply.status(404).send(notFound(req.method, req.url));
    });
  } else {
    // An API-only server still answers, but a person opening a page learns what is missing.
    const page = missingWebClientPage;
    app.log.warn(
      { webDist: config.webDist },
      'no web client (index.html) in WEB_DIST: pages answer 503 until it is built',
    );
    app.get('/', { schema: { hide: true } }, async (_req, reply) =>
      reply.status(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page),
    );
    app.setNotFoundHandler(async (req, reply) => {
      if (isPageRequest(req.method, req.url))
        return reply.status(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
      return reply.status(404).send(notFound(req.method, req.url));
    });
  }

  return Object.assign(app, { ctx }) as unknown as StagediffApp;
}
