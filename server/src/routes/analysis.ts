import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app.ts';
import { SCHEMAS } from '../api/endpoints.ts';
import { MODEL_VERSION } from '../services/models.ts';
import type { AnalysisOp } from '../services/analysis-ops.ts';
import { compileFilters, filterArgs } from '../services/view-queries.ts';
import { loadTree } from './comparisons.ts';
import { ApiError } from './errors.ts';
import { route } from './contract.ts';

/**
 * Serves a derived result from the shared cache when the comparison has not changed since it was
 * computed (the key holds the comparison's revision), else has the analysis pool compute it and
 * stores it. A hit reads one comparison row and one cache row, nothing else.
 */
export async function cached(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, id: string, op: AnalysisOp) {
  const produces = (SCHEMAS[op.op] as { produces?: string }).produces;
  const contentType = produces ?? 'application/json; charset=utf-8';
  /** How the operation's text result becomes the body: as UTF-8, or decoded from base64 (images, pprof files). */
  const encoding = contentType === 'image/png' || contentType === 'application/octet-stream' ? 'base64' : 'utf8';
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

/**
 * An SVG opened on its own is a document of this origin: whatever it held, it may run nothing and load
 * nothing (its text is escaped anyway; this is the second line of defence).
 */
const LOCKED_DOWN = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
};

export default async function analysisRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // Refuses an invalid expression with a 400 naming the parameter, before any work is queued.
  const checked = <Q extends Parameters<typeof compileFilters>[0]>(q: Q): Q => {
    compileFilters(q);
    return q;
  };

  route(app, 'checkFilters', async (req) => {
    compileFilters(req.query);
    return filterArgs(req.query);
  });
  route(app, 'stageTable', async (req, reply) => cached(ctx, req, reply, req.params.id, { op: 'stageTable' }));
  route(app, 'changes', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'changes', query: req.query }),
  );
  route(app, 'flamegraph', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'flamegraph', query: checked(req.query) }),
  );
  route(app, 'diff', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'diff', query: checked(req.query) }),
  );
  route(app, 'top', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'top', query: checked(req.query) }),
  );
  route(app, 'trajectory', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'trajectory', query: req.query }),
  );
  route(app, 'sandwich', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'sandwich', query: checked(req.query) }),
  );
  route(app, 'timeline', async (req, reply) => cached(ctx, req, reply, req.params.id, { op: 'timeline' }));
  route(app, 'folded', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'folded', query: checked(req.query) }),
  );
  route(app, 'benchmarks', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'benchmarks', query: req.query }),
  );
  route(app, 'gc', async (req, reply) => cached(ctx, req, reply, req.params.id, { op: 'gc' }));
  route(app, 'runtime', async (req, reply) =>
    cached(ctx, req, reply, req.params.id, { op: 'runtime', query: req.query }),
  );

  // The flamegraph and diff flamegraph as standalone images (for PR comments, job summaries, wikis):
  // the JSON views' query parameters plus `width` (px) and, for the diff, `noise` (the fraction of the
  // larger total under which a change stays grey, the web view's noise floor). Cached like the views.
  for (const op of ['flamegraphSvg', 'flamegraphPng'] as const)
    route(app, op, async (req, reply) => {
      reply.headers(LOCKED_DOWN);
      return cached(ctx, req, reply, req.params.id, { op, query: checked(req.query) });
    });
  for (const op of ['diffSvg', 'diffPng'] as const)
    route(app, op, async (req, reply) => {
      reply.headers(LOCKED_DOWN);
      return cached(ctx, req, reply, req.params.id, { op, query: checked(req.query) });
    });

  // A stage's merged profile, and the diff of two stages, as pprof files to open in go tool pprof.
  // Never re-encoded: @fastify/compress, seeing a gzip file, would pass it through labelled gzip.
  route(
    app,
    'stageProfile',
    async (req, reply) => {
      reply.header('content-disposition', `attachment; filename="${downloadName(req.params.stageId, req.query.kind)}"`);
      return cached(ctx, req, reply, req.params.id, {
        op: 'stageProfile',
        stageId: req.params.stageId,
        query: req.query,
      });
    },
    { compress: false },
  );
  route(
    app,
    'diffProfile',
    async (req, reply) => {
      reply.header(
        'content-disposition',
        `attachment; filename="${downloadName(`${req.query.base}-vs-${req.query.target}`, req.query.kind)}"`,
      );
      return cached(ctx, req, reply, req.params.id, { op: 'diffProfile', query: req.query });
    },
    { compress: false },
  );
}

/** A file name for a download: the stage ids (or names) and the kind, in safe characters only. */
function downloadName(stem: string, kind: string | undefined): string {
  return `${`${stem}${kind ? `.${kind}` : ''}`.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120)}.pb.gz`;
}
