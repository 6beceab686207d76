import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.ts';
import type { ComparisonTree } from '../store/index.ts';
import type { DiffMode } from '../analysis/diff.ts';
import type { FrameFilters } from '../analysis/filter.ts';
import { MODEL_VERSION } from '../services/models.ts';
import { loadTree } from './comparisons.ts';
import { ApiError, userRegExp } from './errors.ts';

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } } } as const;
const stageId = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
const filterProps = { focus: { type: 'string', maxLength: 512 }, ignore: { type: 'string', maxLength: 512 }, hide: { type: 'string', maxLength: 512 } } as const;
const sampleType = { type: 'string', minLength: 1, maxLength: 100 } as const;
const minFraction = { type: 'number', minimum: 0, maximum: 1, default: 0 } as const;

type Filters = { focus?: string; ignore?: string; hide?: string };

function filters(q: Filters): FrameFilters {
  const f: FrameFilters = {};
  const focus = userRegExp('focus', q.focus);
  const ignore = userRegExp('ignore', q.ignore);
  const hide = userRegExp('hide', q.hide);
  if (focus) f.focus = focus;
  if (ignore) f.ignore = ignore;
  if (hide) f.hide = hide;
  return f;
}

/**
 * Serves a derived result from the shared cache when the comparison has not changed since it was
 * computed (the key includes the comparison's revision), else computes and stores it.
 */
async function cached(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, id: string, compute: (tree: ComparisonTree) => Promise<unknown>, contentType = 'application/json; charset=utf-8') {
  // A hit needs only the comparison's current revision (one row), not its whole tree.
  const c = await ctx.store.getComparison(id);
  if (!c) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  const url = new URL(req.url, 'http://x');
  url.searchParams.sort();
  const key = { scope: { comparisonId: c.id, revision: c.revision }, key: `${url.pathname}?${url.searchParams}`, modelVersion: MODEL_VERSION };
  const hit = await ctx.store.cacheGet(key);
  reply.header('content-type', contentType);
  reply.header('cache-control', 'no-cache');
  reply.header('etag', `"${c.revision}-${MODEL_VERSION}"`);
  if (hit) {
    ctx.metrics.inc('stagediff_result_cache_hits_total');
    return reply.send(hit);
  }
  ctx.metrics.inc('stagediff_result_cache_misses_total');
  const tree = await loadTree(ctx, id);
  if (tree.comparison.revision !== c.revision) key.scope.revision = tree.comparison.revision;
  const value = await compute(tree);
  const body = typeof value === 'string' ? value : JSON.stringify(value);
  await ctx.store.cachePut(key, body);
  return reply.send(body);
}

export default async function analysisRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const svc = ctx.analysis;

  app.get<{ Params: { id: string }; Querystring: { stage: string; sampleType?: string; minFraction: number } & Filters }>(
    '/api/comparisons/:id/flamegraph',
    {
      schema: {
        summary: 'Call tree of one stage for d3-flame-graph ({name, value, children}), trimmed at minFraction of the total',
        params: idParams,
        querystring: { type: 'object', required: ['stage'], additionalProperties: false, properties: { stage: stageId, sampleType, minFraction, ...filterProps } },
      },
    },
    async (req, reply) => {
      const q = req.query;
      return cached(ctx, req, reply, req.params.id, (tree) => svc.flamegraph(tree, q.stage, q.sampleType, q.minFraction, filters(q)));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { base: string; target: string; sampleType?: string; mode: DiffMode; minFraction: number } & Filters }>(
    '/api/comparisons/:id/diff',
    {
      schema: {
        summary: 'Diff of two stages: a tree with delta per node and functions ranked by change (absolute equals go tool pprof -diff_base)',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['base', 'target'],
          additionalProperties: false,
          properties: { base: stageId, target: stageId, sampleType, mode: { type: 'string', enum: ['absolute', 'share', 'normalize', 'per-request'], default: 'absolute' }, minFraction, ...filterProps },
        },
      },
    },
    async (req, reply) => {
      const q = req.query;
      return cached(ctx, req, reply, req.params.id, (tree) => svc.diff(tree, q.base, q.target, q.sampleType, q.mode, q.minFraction, filters(q)));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { stage: string; sampleType?: string } & Filters }>(
    '/api/comparisons/:id/top',
    { schema: { summary: 'Flat and cum of every function of one stage (pprof -top)', params: idParams, querystring: { type: 'object', required: ['stage'], additionalProperties: false, properties: { stage: stageId, sampleType, ...filterProps } } } },
    async (req, reply) => {
      return cached(ctx, req, reply, req.params.id, (tree) => svc.top(tree, req.query.stage, req.query.sampleType, filters(req.query)));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { sampleType?: string; n: number } }>(
    '/api/comparisons/:id/trajectory',
    { schema: { summary: "The top functions' flat/cum at every stage", params: idParams, querystring: { type: 'object', additionalProperties: false, properties: { sampleType, n: { type: 'integer', minimum: 1, maximum: 100, default: 10 } } } } },
    async (req, reply) => {
      return cached(ctx, req, reply, req.params.id, (tree) => svc.trajectory(tree, req.query.sampleType, req.query.n));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { stage: string; sampleType?: string; fn: string } & Filters }>(
    '/api/comparisons/:id/sandwich',
    { schema: { summary: 'Callers and callees of one function', params: idParams, querystring: { type: 'object', required: ['stage', 'fn'], additionalProperties: false, properties: { stage: stageId, sampleType, fn: { type: 'string', minLength: 1, maxLength: 100000 }, ...filterProps } } } },
    async (req, reply) => {
      return cached(ctx, req, reply, req.params.id, (tree) => svc.sandwich(tree, req.query.stage, req.query.sampleType, req.query.fn, filters(req.query)));
    },
  );

  app.get<{ Params: { id: string } }>('/api/comparisons/:id/timeline', { schema: { summary: 'Per-second timelines and latency distributions of every load test, per stage', params: idParams } }, async (req, reply) => {
    return cached(ctx, req, reply, req.params.id, (tree) => svc.timeline(tree));
  });

  app.get<{ Params: { id: string }; Querystring: { stage: string; sampleType?: string } & Filters }>(
    '/api/comparisons/:id/folded',
    { schema: { summary: 'Folded stacks (Brendan Gregg format) of one stage', params: idParams, querystring: { type: 'object', required: ['stage'], additionalProperties: false, properties: { stage: stageId, sampleType, ...filterProps } } } },
    async (req, reply) => {
      return cached(ctx, req, reply, req.params.id, (tree) => svc.folded(tree, req.query.stage, req.query.sampleType, filters(req.query)), 'text/plain; charset=utf-8');
    },
  );

  app.get<{ Params: { id: string }; Querystring: { base: string; target: string } }>(
    '/api/comparisons/:id/benchmarks',
    { schema: { summary: 'benchstat-style comparison of the go test -bench outputs of two stages', params: idParams, querystring: { type: 'object', required: ['base', 'target'], additionalProperties: false, properties: { base: stageId, target: stageId } } } },
    async (req, reply) => {
      return cached(ctx, req, reply, req.params.id, (tree) => svc.benchmarks(tree, req.query.base, req.query.target));
    },
  );

  app.get<{ Params: { id: string } }>('/api/comparisons/:id/gc', { schema: { summary: 'GC traces per stage: cycles and pause summaries', params: idParams } }, async (req, reply) => {
    return cached(ctx, req, reply, req.params.id, (tree) => svc.gc(tree));
  });

}
