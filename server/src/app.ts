import { existsSync, readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import type { Config } from './config.ts';
import { type Store, openStore } from './store/index.ts';
import { Metrics } from './services/metrics.ts';
import { ModelCache } from './services/models.ts';
import { AnalysisService } from './services/analysis.ts';
import { AnalysisPool } from './services/analysis-pool.ts';
import { ResultMemo } from './services/result-memo.ts';
import { installErrorHandler } from './routes/errors.ts';
import comparisonRoutes from './routes/comparisons.ts';
import stageRoutes from './routes/stages.ts';
import artifactRoutes from './routes/artifacts.ts';
import analysisRoutes from './routes/analysis.ts';

/** What route plugins share: configuration, the store, the analysis layer and metrics. */
export interface AppContext {
  config: Config;
  store: Store;
  metrics: Metrics;
  analysis: AnalysisService;
  /** Where analysis runs: worker threads, so a large profile never stalls the event loop. */
  pool: AnalysisPool;
  /** Recently served results by exact (revision-holding) key. */
  memo: ResultMemo;
}

export interface BuildOptions {
  /** An already opened store (tests share one between two apps to act as two replicas). */
  store?: Store;
  logger?: boolean;
}

/**
 * Builds the Fastify app: routes, schemas, error handling, the web client. Listening is the
 * caller's business (server.ts), so tests drive it with `app.inject`.
 */
export type StagediffApp = FastifyInstance & { ctx: AppContext };

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<StagediffApp> {
  const store =
    opts.store ??
    (await openStore({ dataDir: config.dataDir, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}) }));
  const metrics = new Metrics();
  const models = new ModelCache(store, metrics, config.maxDecompressedBytes);
  const analysis = new AnalysisService(store, models);
  const pool = new AnalysisPool(
    {
      dataDir: config.dataDir,
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
      maxDecompressedBytes: config.maxDecompressedBytes,
    },
    // A store handed in by a caller (tests acting as replicas) may not be reachable from a worker's own connection.
    opts.store && !config.databaseUrl && store.dialect === 'postgres' ? 0 : config.analysisWorkers,
    analysis,
  );
  const ctx: AppContext = { config, store, metrics, analysis, pool, memo: new ResultMemo() };

  const app = Fastify({
    logger: opts.logger === false ? false : { level: config.logLevel },
    bodyLimit: 1024 * 1024,
    trustProxy: true,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, useDefaults: true } },
  });
  installErrorHandler(app);
  app.addHook('onResponse', async (req, reply) => {
    metrics.inc('stagediff_http_requests_total', {
      method: req.method,
      route: req.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
    });
  });
  app.addHook('onClose', async () => pool.close());
  if (!opts.store) app.addHook('onClose', async () => store.close());

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
  await app.register(multipart);

  await app.register(comparisonRoutes, { ctx });
  await app.register(stageRoutes, { ctx });
  await app.register(artifactRoutes, { ctx });
  await app.register(analysisRoutes, { ctx });

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await store.stats();
      return { status: 'ok', store: store.dialect };
    } catch (e) {
      return reply.status(503).send({ status: 'unavailable', error: (e as Error).message });
    }
  });
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const s = await store.stats().catch(() => null);
    let text = metrics.render();
    if (s) {
      text += `# TYPE stagediff_store_objects gauge\n${Object.entries(s)
        .filter(([, v]) => typeof v === 'number')
        .map(([k, v]) => `stagediff_store_objects{kind="${k}"} ${v}`)
        .join('\n')}\n`;
    }
    return reply.type('text/plain; version=0.0.4').send(text);
  });

  // The web client: built files, and index.html for every client-side route.
  const index = `${config.webDist}/index.html`;
  if (existsSync(index)) {
    await app.register(fastifyStatic, { root: config.webDist, wildcard: false, index: false });
    const html = readFileSync(index);
    app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(html));
    app.setNotFoundHandler(async (req, reply) => {
      if (req.method === 'GET' && !req.url.startsWith('/api/') && !/\.[a-z0-9]+$/i.test(req.url.split('?')[0]!)) {
        return reply.type('text/html; charset=utf-8').send(html);
      }
      return reply
        .status(404)
        .send({ error: { code: 'not-found', message: `no route ${req.method} ${req.url.split('?')[0]}` } });
    });
  } else {
    app.get('/', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .send(
          '<!doctype html><title>stagediff</title><p>The web client is not built. Run <code>npm start</code> (it builds it) or <code>npm run build --workspace web</code>.</p>',
        ),
    );
    app.setNotFoundHandler(async (req, reply) =>
      reply
        .status(404)
        .send({ error: { code: 'not-found', message: `no route ${req.method} ${req.url.split('?')[0]}` } }),
    );
  }

  return Object.assign(app, { ctx }) as unknown as StagediffApp;
}
