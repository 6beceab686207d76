import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { StoreStats } from '../store/index.ts';
import { bearer } from './auth.ts';
import { ApiError } from './errors.ts';

/** How long /metrics reuses the store's counts (they scan tables and, on SQLite, the blob directories). */
const STORE_STATS_TTL_MS = 10_000;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * Whether a request may read /metrics: with METRICS_TOKEN set, only with that bearer token; without,
 * only from this machine — the socket's peer on loopback and no forwarding header (a reverse proxy
 * on the same host would otherwise make every visitor look local).
 */
function mayReadMetrics(ctx: AppContext, req: FastifyRequest): void {
  const token = ctx.config.metricsToken;
  if (token) {
    const given = Buffer.from(bearer(req) ?? '');
    const want = Buffer.from(token);
    if (given.length !== want.length || !timingSafeEqual(given, want))
      throw new ApiError(401, 'unauthorized', '/metrics needs the metrics token (Authorization: Bearer METRICS_TOKEN)');
    return;
  }
  const local =
    LOOPBACK.test(req.socket.remoteAddress ?? '') &&
    LOOPBACK.test(req.ip) &&
    req.headers['x-forwarded-for'] === undefined &&
    req.headers.forwarded === undefined;
  if (!local)
    throw new ApiError(
      403,
      'forbidden',
      '/metrics answers this machine only; set METRICS_TOKEN to read it from elsewhere (Authorization: Bearer …)',
    );
}

/**
 * Operations: `/healthz` for load balancers and orchestrators (constant time: one trivial statement
 * proves the database answers; the counters are the process's own) and `/metrics` for Prometheus
 * (everything, the store's table counts included).
 */
export default async function operationsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const started = Date.now();
  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) => {
    const where = { store: ctx.store.dialect, blobs: ctx.store.blobLocation };
    try {
      // One trivial statement and a look at the blob store: reachable, nothing counted.
      await ctx.store.ping();
    } catch (e) {
      return reply.status(503).send({ status: 'unavailable', ...where, error: (e as Error).message });
    }
    return {
      status: 'ok',
      ...where,
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
      analysis: { workers: ctx.pool.size, running: ctx.pool.running, queued: ctx.pool.queued },
      uploadsInProgress: ctx.quota.inProgress,
      resultMemo: { bytes: ctx.memo.bytes, maxBytes: ctx.memo.maxBytes, entries: ctx.memo.size },
    };
  });

  let stats: { at: number; value: Promise<StoreStats | null> } | null = null;
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    mayReadMetrics(ctx, req);
    if (!stats || Date.now() - stats.at > STORE_STATS_TTL_MS)
      stats = { at: Date.now(), value: ctx.store.stats({ countObjects: false }).catch(() => null) };
    const s = await stats.value;
    let text = ctx.metrics.render();
    if (s) {
      text += `# TYPE stagediff_store_objects gauge\n${Object.entries(s)
        .filter(([, v]) => typeof v === 'number')
        .map(([k, v]) => `stagediff_store_objects{kind="${k}"} ${v}`)
        .join('\n')}\n`;
      text += `# HELP stagediff_result_cache_bytes Bytes held by the shared derived-result cache (bound: CACHE_MAX_BYTES).\n# TYPE stagediff_result_cache_bytes gauge\nstagediff_result_cache_bytes ${s.cacheBytes}\n`;
      text += `# HELP stagediff_storage_bytes Bytes of uploaded files the instance keeps (bound: MAX_STORAGE_BYTES).\n# TYPE stagediff_storage_bytes gauge\nstagediff_storage_bytes ${s.blobBytes}\n`;
    }
    text += `# HELP stagediff_result_cache_max_bytes The bound of the shared derived-result cache (CACHE_MAX_BYTES).\n# TYPE stagediff_result_cache_max_bytes gauge\nstagediff_result_cache_max_bytes ${ctx.config.cacheMaxBytes}\n`;
    text += `# HELP stagediff_result_memo_bytes Memory held by this process's result memo: values, keys and per-entry overhead (bound: RESULT_MEMO_MAX_BYTES).\n# TYPE stagediff_result_memo_bytes gauge\nstagediff_result_memo_bytes ${ctx.memo.bytes}\n`;
    text += `# HELP stagediff_result_memo_max_bytes The bound of the result memo (RESULT_MEMO_MAX_BYTES).\n# TYPE stagediff_result_memo_max_bytes gauge\nstagediff_result_memo_max_bytes ${ctx.memo.maxBytes}\n`;
    text += `# HELP stagediff_storage_max_bytes The bound of uploaded files' bytes (MAX_STORAGE_BYTES; 0: none).\n# TYPE stagediff_storage_max_bytes gauge\nstagediff_storage_max_bytes ${ctx.config.maxStorageBytes}\n`;
    return reply.type('text/plain; version=0.0.4').send(text);
  });
}
