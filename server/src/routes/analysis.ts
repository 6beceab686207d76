import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, ComputedView } from '../context.ts';
import { type Params, type Query, SCHEMAS } from '../api/endpoints.ts';
import { MODEL_VERSION } from '../services/models.ts';
import { type AnalysisOp, type AnalysisOpName, type OpOf, VIEW_NAMES } from '../services/analysis-ops.ts';
import type { FilterChecker } from '../services/filter-check.ts';
import { acceptedEncodings, type Encoding, type KeptView, type StoredView } from '../services/view-cache.ts';
import { type CanonicalView, canonicalView } from '../services/view-keys.ts';
import { pauseBeforeRefusal } from '../services/fair-share.ts';
import type { CacheKey } from '../store/index.ts';
import { loadTree } from './comparisons.ts';
import { ApiError } from './errors.ts';
import { route } from './contract.ts';

/**
 * Serves a view from the shared cache when the comparison has not changed since it was computed (the
 * key holds the comparison's revision), compressed as it was stored; else has the analysis pool
 * compute it. A hit reads one comparison row and one cache entry and is never refused. A miss:
 *
 * - the parameters are normalised first (view-keys.ts), so near-identical URLs are one answer;
 * - a failure that would repeat is remembered, and answered again at once until the comparison changes;
 * - requests for an answer already being computed wait for it rather than compute it again;
 * - new work is admitted per client (by address, as TRUST_PROXY says) and per comparison
 *   (fair-share.ts): past a bound, 429 with Retry-After.
 */
export async function cached(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  id: string,
  requested: AnalysisOp,
) {
  const produces = (SCHEMAS[requested.op] as { produces?: string }).produces;
  const contentType = produces ?? 'application/json; charset=utf-8';
  /** PNG and pprof files are compressed already: they are kept and sent as they are. */
  const compressible = contentType !== 'image/png' && contentType !== 'application/octet-stream';
  const c = await ctx.store.getComparison(id);
  if (!c) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  const view = canonicalView(requested, ctx.config.imageMaxWidth);
  const key: CacheKey = {
    scope: { comparisonId: c.id, revision: c.revision },
    key: view.key + proxyPart(ctx, requested),
    modelVersion: MODEL_VERSION,
  };
  reply.header('content-type', contentType);
  // Browsers revalidate every time and get a 304 while the comparison is unchanged. Weak: the
  // compressed and plain encodings are different bytes of the same result.
  reply.header('cache-control', 'no-cache');
  if (compressible) reply.header('vary', 'accept-encoding');
  const tag = resultTag(c);
  if (req.headers['if-none-match'] === tag) {
    ctx.viewRecorder.seen(c.id);
    return reply.header('etag', tag).status(304).send();
  }
  const accepted = acceptedEncodings(req.headers['accept-encoding']);
  const hit = await ctx.views.get(key, accepted, compressible);
  if (hit) {
    // Read from the cache: the tree is not loaded, so the view is recorded here (retention).
    ctx.viewRecorder.seen(c.id);
    ctx.metrics.inc('stagediff_result_cache_hits_total');
    return send(reply, hit.body, hit.encoding, tag);
  }
  const failed = await ctx.views.failure(key);
  if (failed) throw failed;
  ctx.metrics.inc('stagediff_result_cache_misses_total');
  const flightKey = `${c.id}|${c.revision}|${view.key}`;
  let flight = ctx.flights.get(flightKey);
  try {
    if (!flight && 'query' in view.op) {
      // A client past its share is refused before its filters cost anything; then they are checked.
      ctx.fairShare.check(req.ip, c.id, view.cost);
      await ctx.filters.check(view.op.query as Parameters<FilterChecker['check']>[0]);
      flight = ctx.flights.get(flightKey);
    }
    if (!flight) {
      // Admission is decided before the job exists, so a refusal is this client's alone.
      const admitted = ctx.fairShare.admit(req.ip, c.id, view.cost);
      flight = compute(ctx, key, view, compressible)
        .then((done) => {
          // Work known only once done (the source view's, by its files' size) is charged to this client after.
          admitted.charge(done.extraCost);
          return done;
        })
        .finally(() => {
          admitted.release();
          ctx.flights.delete(flightKey);
        });
      ctx.flights.set(flightKey, flight);
    }
  } catch (e) {
    await pauseBeforeRefusal(e);
    throw e;
  }
  const done = await flight;
  const encoding = accepted.find((e) => done.stored[e]) ?? 'identity';
  return send(reply, done.stored[encoding] ?? done.body, encoding, done.tag);
}

/**
 * The source view's answer depends on the module proxy settings too (text from the proxy, the Go release
 * of the standard library): answers kept under other settings are not served. Empty for other views.
 */
function proxyPart(ctx: AppContext, op: AnalysisOp): string {
  const c = ctx.config;
  if (op.op !== 'source' || !c.sourceGoproxy) return '';
  // (A hash: the URL may hold a user name and password, which have no place in a cache key.)
  const proxy = createHash('sha256').update(c.sourceGoproxy).digest('hex').slice(0, 16);
  return `&~goproxy=${proxy}&~go=${c.sourceGoVersion ?? ''}&~platform=${c.sourceGoPlatform}`;
}

async function compute(
  ctx: AppContext,
  key: CacheKey,
  view: CanonicalView,
  compressible: boolean,
): Promise<ComputedView> {
  const tree = await loadTree(ctx, (key.scope as { comparisonId: string }).comparisonId);
  const at: CacheKey = { ...key, scope: { comparisonId: tree.comparison.id, revision: tree.comparison.revision } };
  let kept: KeptView;
  ctx.metrics.inc('stagediff_analysis_jobs_total', { op: view.op.op });
  try {
    kept = await ctx.pool.run(tree, view.op, { key: at, compressible, text: compressible ? 'utf8' : 'base64' });
  } catch (e) {
    await ctx.views.rememberFailure(at, e);
    throw e;
  }
  // (Bytes from a worker process arrive as plain Uint8Arrays.)
  const stored: StoredView = {};
  for (const [e, bytes] of Object.entries(kept.stored) as [Encoding, Uint8Array][]) stored[e] = asBuffer(bytes);
  const done = { stored, body: asBuffer(kept.body), writeFailures: kept.writeFailures, kept: kept.kept !== false };
  ctx.views.kept(at, done);
  return { stored, body: done.body, tag: resultTag(tree.comparison), extraCost: kept.extraCost ?? 0 };
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function send(reply: FastifyReply, body: Buffer, encoding: Encoding, tag: string) {
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.header('etag', tag).send(body);
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

/**
 * What a view's request adds besides its query: headers, and the operation when it is not simply the
 * endpoint's name and query (a stage's download names its stage). Views absent here are just that.
 */
type ViewRequest<N extends AnalysisOpName> = (
  req: FastifyRequest<{ Params: Params<N>; Querystring: Query<N> }>,
  reply: FastifyReply,
) => OpOf<N>;
const VIEW_REQUESTS: { [N in AnalysisOpName]?: ViewRequest<N> } = {
  // The flamegraph and diff flamegraph as standalone images (for PR comments, job summaries, wikis):
  // the JSON views' query parameters plus `width` (px) and, for the diff, `noise` (the fraction of the
  // larger total under which a change stays grey, the web view's noise floor). Cached like the views.
  flamegraphSvg: lockedDown('flamegraphSvg'),
  flamegraphPng: lockedDown('flamegraphPng'),
  diffSvg: lockedDown('diffSvg'),
  diffPng: lockedDown('diffPng'),
  // A stage's merged profile, and the diff of two stages, as pprof files to open in go tool pprof.
  // Never re-encoded: @fastify/compress, seeing a gzip file, would pass it through labelled gzip.
  stageProfile: (req, reply) => {
    reply.header('content-disposition', `attachment; filename="${downloadName(req.params.stageId, req.query.kind)}"`);
    return { op: 'stageProfile', stageId: req.params.stageId, query: req.query };
  },
  diffProfile: (req, reply) => {
    reply.header(
      'content-disposition',
      `attachment; filename="${downloadName(`${req.query.base}-vs-${req.query.target}`, req.query.kind)}"`,
    );
    return { op: 'diffProfile', query: req.query };
  },
};

function lockedDown<N extends 'flamegraphSvg' | 'flamegraphPng' | 'diffSvg' | 'diffPng'>(op: N): ViewRequest<N> {
  return (req, reply) => {
    reply.headers(LOCKED_DOWN);
    return { op, query: req.query } as unknown as OpOf<N>;
  };
}

export default async function analysisRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // Filters are checked off the event loop (and remembered); a bad one is a 400 naming its parameter.
  route(app, 'checkFilters', async (req) => ctx.filters.check(req.query));
  // Answers go out as the view cache keeps them (already compressed): no compression per request.
  const stored = { compress: false } as const;
  // The views (services/analysis-ops.ts VIEWS): each computed by the analysis operation of its name,
  // cached as described above.
  for (const op of VIEW_NAMES) {
    const request = VIEW_REQUESTS[op] as ViewRequest<AnalysisOpName> | undefined;
    const plain = 'querystring' in SCHEMAS[op];
    route(
      app,
      op,
      async (req, reply) => {
        const requested = request
          ? request(req as never, reply)
          : ((plain ? { op, query: req.query } : { op }) as AnalysisOp);
        return cached(ctx, req, reply, req.params.id, requested as AnalysisOp);
      },
      stored,
    );
  }
  // The same merged CPU profile under the name go build reads by itself (default.pgo): a stage's
  // measured load as the input of the next build's profile-guided optimisation.
  route(
    app,
    'stagePgo',
    async (req, reply) => {
      reply.header('content-disposition', 'attachment; filename="default.pgo"');
      return cached(ctx, req, reply, req.params.id, {
        op: 'stageProfile',
        stageId: req.params.stageId,
        query: { kind: 'cpu' },
      });
    },
    stored,
  );
}

/** A file name for a download: the stage ids (or names) and the kind, in safe characters only. */
function downloadName(stem: string, kind: string | undefined): string {
  return `${`${stem}${kind ? `.${kind}` : ''}`.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120)}.pb.gz`;
}
