import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.ts';
import type { DiffMode } from '../analysis/diff.ts';
import { MODEL_VERSION } from '../services/models.ts';
import { type AnalysisOp, FILTER_NAMES, type FilterArgs, compileFilters } from '../services/analysis-ops.ts';
import { MAX_PATTERN_LENGTH } from '../analysis/go-regexp.ts';
import { loadTree } from './comparisons.ts';
import { ApiError } from './errors.ts';

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
} as const;
export const stageId = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;
// Go regular expressions; a parameter given several times means its values joined with "|", as in
// pprof's interactive `focus=` (so `focus=a&focus=b` is `focus=a|b`). Length and syntax are checked
// by compileFilters, whose 400 names the parameter and the problem.
const filterParam = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 16 }],
  description: `Go regular expression (RE2 syntax), at most ${MAX_PATTERN_LENGTH} characters`,
} as const;
export const filterProps = { focus: filterParam, ignore: filterParam, hide: filterParam, show: filterParam } as const;
export const sampleType = { type: 'string', minLength: 1, maxLength: 100 } as const;
export const minFraction = { type: 'number', minimum: 0, maximum: 1, default: 0 } as const;
/** The diff modes (analysis/diff.ts `DiffMode`), for the JSON view and its images alike. */
export const diffMode = {
  type: 'string',
  enum: ['absolute', 'share', 'normalize', 'per-request'],
  default: 'absolute',
} as const;

export type FilterQuery = { [K in keyof FilterArgs]?: string | string[] };

export function filters(q: FilterQuery): FilterArgs {
  const out: FilterArgs = {};
  for (const name of FILTER_NAMES) {
    const v = q[name];
    const src = Array.isArray(v) ? v.filter((x) => x !== '').join('|') : v;
    if (src) out[name] = src;
  }
  compileFilters(out); // refuse an invalid expression with a 400 before any work is queued
  return out;
}

/**
 * Serves a derived result from the shared cache when the comparison has not changed since it was
 * computed (the key holds the comparison's revision), else has the analysis pool compute it and
 * stores it. A hit reads one comparison row and one cache row, nothing else.
 */
export async function cached(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  id: string,
  op: AnalysisOp,
  contentType = 'application/json; charset=utf-8',
  /** How the operation's text result becomes the body: as UTF-8, or decoded from base64 (binary images). */
  encoding: 'utf8' | 'base64' = 'utf8',
) {
  const c = await ctx.store.getComparison(id);
  if (!c) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  const url = new URL(req.url, 'http://x');
  url.searchParams.sort();
  const key = {
    scope: { comparisonId: c.id, revision: c.revision },
    key: `${url.pathname}?${url.searchParams}`,
    modelVersion: MODEL_VERSION,
  };
  const memoKey = `${c.id}|${c.revision}|${MODEL_VERSION}|${key.key}`;
  reply.header('content-type', contentType);
  // Browsers revalidate every time and get a 304 while the comparison is unchanged. Weak: the
  // compressed and plain encodings are different bytes of the same result.
  reply.header('cache-control', 'no-cache');
  const tag = resultTag(c);
  if (req.headers['if-none-match'] === tag) return reply.header('etag', tag).status(304).send();
  const hit = ctx.memo.get(memoKey) ?? (await ctx.store.cacheGet(key));
  if (hit) {
    ctx.metrics.inc('stagediff_result_cache_hits_total');
    ctx.memo.set(memoKey, hit);
    return reply.header('etag', tag).send(hit);
  }
  ctx.metrics.inc('stagediff_result_cache_misses_total');
  const tree = await loadTree(ctx, id);
  key.scope.revision = tree.comparison.revision;
  const body = Buffer.from(await ctx.pool.run(tree, op), encoding);
  await ctx.store.cachePut(key, body);
  ctx.memo.set(`${c.id}|${tree.comparison.revision}|${MODEL_VERSION}|${key.key}`, body);
  return reply.header('etag', resultTag(tree.comparison)).send(body);
}

/**
 * The validator of every derived result of a comparison: its revision, the model version, and its
 * creation time (a comparison deleted and created again under the same id starts again at revision 1).
 */
function resultTag(c: { revision: number; createdAt: string }): string {
  return `W/"${c.revision}-${MODEL_VERSION}-${Date.parse(c.createdAt).toString(36)}"`;
}

type Q<T> = { Params: { id: string }; Querystring: T };

export default async function analysisRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get<{ Querystring: FilterQuery }>(
    '/api/filters/check',
    {
      schema: {
        summary:
          'Checks focus/ignore/hide/show as the analysis routes would (Go syntax, limits) without any analysis: ' +
          'the expressions as they will apply, or the same 400 {error: {code, param, message}}',
        querystring: { type: 'object', additionalProperties: false, properties: filterProps },
      },
    },
    async (req) => filters(req.query),
  );

  app.get<Q<{ stage: string; sampleType?: string; minFraction: number } & FilterQuery>>(
    '/api/comparisons/:id/flamegraph',
    {
      schema: {
        summary:
          'Call tree of one stage for d3-flame-graph ({name, value, children}), trimmed at minFraction of the total',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['stage'],
          additionalProperties: false,
          properties: { stage: stageId, sampleType, minFraction, ...filterProps },
        },
      },
    },
    async (req, reply) => {
      const q = req.query;
      return cached(ctx, req, reply, req.params.id, {
        op: 'flamegraph',
        stage: q.stage,
        ...(q.sampleType ? { sampleType: q.sampleType } : {}),
        minFraction: q.minFraction,
        filters: filters(q),
      });
    },
  );

  app.get<
    Q<
      {
        base: string;
        target: string;
        sampleType?: string;
        mode: DiffMode;
        minFraction: number;
        limit: number;
        sort: 'flat' | 'cum';
      } & FilterQuery
    >
  >(
    '/api/comparisons/:id/diff',
    {
      schema: {
        summary:
          "Diff of two stages: a tree with delta per node and functions ranked by change (absolute equals go tool pprof -diff_base); `top` holds the first `limit` of `rowsTotal` rows. When a stage holds several profiles of the type (repeated runs), `noise` says how they were normalised (per-request, per-second or raw) and each row and tree node carries `noise`: the benchstat verdict (Mann–Whitney U p-value, significant at p ≤ 0.05, need-more-runs, single-run) of the function's flat and cum across the profiles; nodes carry their function's cum verdict",
        params: idParams,
        querystring: {
          type: 'object',
          required: ['base', 'target'],
          additionalProperties: false,
          properties: {
            base: stageId,
            target: stageId,
            sampleType,
            mode: diffMode,
            minFraction,
            limit: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 2000 },
            sort: { type: 'string', enum: ['flat', 'cum'], default: 'flat' },
            ...filterProps,
          },
        },
      },
    },
    async (req, reply) => {
      const q = req.query;
      return cached(ctx, req, reply, req.params.id, {
        op: 'diff',
        base: q.base,
        target: q.target,
        ...(q.sampleType ? { sampleType: q.sampleType } : {}),
        mode: q.mode,
        minFraction: q.minFraction,
        limit: q.limit,
        sort: q.sort,
        filters: filters(q),
      });
    },
  );

  app.get<Q<{ stage: string; sampleType?: string } & FilterQuery>>(
    '/api/comparisons/:id/top',
    {
      schema: {
        summary: 'Flat and cum of every function of one stage (pprof -top)',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['stage'],
          additionalProperties: false,
          properties: { stage: stageId, sampleType, ...filterProps },
        },
      },
    },
    async (req, reply) =>
      cached(ctx, req, reply, req.params.id, {
        op: 'top',
        stage: req.query.stage,
        ...(req.query.sampleType ? { sampleType: req.query.sampleType } : {}),
        filters: filters(req.query),
      }),
  );

  app.get<Q<{ sampleType?: string; n: number }>>(
    '/api/comparisons/:id/trajectory',
    {
      schema: {
        summary:
          "The top functions' flat/cum at every stage; with several profiles in a stage, `spread` gives the function's cum share of each profile: n, min, max, median and benchstat's 95 % interval",
        params: idParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { sampleType, n: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
        },
      },
    },
    async (req, reply) =>
      cached(ctx, req, reply, req.params.id, {
        op: 'trajectory',
        ...(req.query.sampleType ? { sampleType: req.query.sampleType } : {}),
        n: req.query.n,
      }),
  );

  app.get<Q<{ stage: string; sampleType?: string; fn: string } & FilterQuery>>(
    '/api/comparisons/:id/sandwich',
    {
      schema: {
        summary: 'Callers and callees of one function',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['stage', 'fn'],
          additionalProperties: false,
          properties: {
            stage: stageId,
            sampleType,
            fn: { type: 'string', minLength: 1, maxLength: 100000 },
            ...filterProps,
          },
        },
      },
    },
    async (req, reply) =>
      cached(ctx, req, reply, req.params.id, {
        op: 'sandwich',
        stage: req.query.stage,
        ...(req.query.sampleType ? { sampleType: req.query.sampleType } : {}),
        fn: req.query.fn,
        filters: filters(req.query),
      }),
  );

  app.get<Q<Record<string, never>>>(
    '/api/comparisons/:id/timeline',
    {
      schema: {
        summary: 'Per-second timelines and latency distributions of every load test, per stage',
        params: idParams,
      },
    },
    async (req, reply) => cached(ctx, req, reply, req.params.id, { op: 'timeline' }),
  );

  app.get<Q<{ stage: string; sampleType?: string } & FilterQuery>>(
    '/api/comparisons/:id/folded',
    {
      schema: {
        summary: 'Folded stacks (Brendan Gregg format) of one stage',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['stage'],
          additionalProperties: false,
          properties: { stage: stageId, sampleType, ...filterProps },
        },
      },
    },
    async (req, reply) =>
      cached(
        ctx,
        req,
        reply,
        req.params.id,
        {
          op: 'folded',
          stage: req.query.stage,
          ...(req.query.sampleType ? { sampleType: req.query.sampleType } : {}),
          filters: filters(req.query),
        },
        'text/plain; charset=utf-8',
      ),
  );

  app.get<Q<{ base: string; target: string }>>(
    '/api/comparisons/:id/benchmarks',
    {
      schema: {
        summary: 'benchstat-style comparison of the go test -bench outputs of two stages',
        params: idParams,
        querystring: {
          type: 'object',
          required: ['base', 'target'],
          additionalProperties: false,
          properties: { base: stageId, target: stageId },
        },
      },
    },
    async (req, reply) =>
      cached(ctx, req, reply, req.params.id, { op: 'benchmarks', base: req.query.base, target: req.query.target }),
  );

  app.get<Q<Record<string, never>>>(
    '/api/comparisons/:id/gc',
    { schema: { summary: 'GC traces per stage: cycles and pause summaries', params: idParams } },
    async (req, reply) => cached(ctx, req, reply, req.params.id, { op: 'gc' }),
  );
}
