import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SCHEMAS } from '../api/endpoints.ts';
import type { Comparison } from '../api/resources.ts';
import type { ComparisonTree } from '../store/index.ts';
import type { AppContext } from '../context.ts';
import { apiArtifactSummary } from '../services/stage-profiles.ts';
import { comparisonBytes } from '../services/quota.ts';
import { apiSourcesInfo } from '../services/sources.ts';
import { acceptedEncodings, compress } from '../services/view-cache.ts';
import { publicOrigin } from '../services/origin.ts';
import { ApiError } from './errors.ts';
import { bearer, requireEditToken } from './auth.ts';
import { route } from './contract.ts';

/**
 * A comparison's share link: absolute on PUBLIC_URL or a trusted proxy's forwarded host, else relative
 * (`/c/ID`, which the web client and the CLI resolve against the origin they reached).
 */
export function shareUrl(ctx: AppContext, req: FastifyRequest, id: string): string {
  return `${publicOrigin(ctx.config, req) ?? ''}/c/${encodeURIComponent(id)}`;
}

/** A stored comparison as the API shows it: its share link, stages and files (profiles with their kind). */
export function comparisonView(ctx: AppContext, req: FastifyRequest, tree: ComparisonTree): Comparison {
  return {
    ...tree.comparison,
    url: shareUrl(ctx, req, tree.comparison.id),
    stages: tree.stages.map((s) => ({
      id: s.id,
      name: s.name,
      note: s.note,
      position: s.position,
      captures: s.captures as Comparison['stages'][number]['captures'],
      artifacts: s.artifacts.map(({ comparisonId: _c, stageId: _s, ...a }) => ({
        ...a,
        summary: apiArtifactSummary(a) as Comparison['stages'][number]['artifacts'][number]['summary'],
      })),
      ...(s.sources ? { sources: apiSourcesInfo(s.sources) } : {}),
    })),
    usage: { bytes: comparisonBytes(tree), maxBytes: ctx.config.maxComparisonBytes || null },
  };
}

const serialiseComparison = fastJsonStringify(SCHEMAS.getComparison.response as object) as (v: Comparison) => string;

/**
 * GET of a comparison, kept serialised and compressed per revision in this process: a comparison with
 * many files and capture records is megabytes of JSON, and serialising and compressing it again for
 * every visitor would hold the event loop.
 */
async function sendComparison(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, id: string) {
  const c = await ctx.store.getComparison(id);
  if (!c) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  const tag = `W/"c${c.revision}-${Date.parse(c.createdAt).toString(36)}"`;
  reply.header('cache-control', 'no-cache').header('vary', 'accept-encoding').header('etag', tag);
  reply.header('content-type', 'application/json; charset=utf-8');
  if (req.headers['if-none-match'] === tag) {
    ctx.viewRecorder.seen(c.id);
    return reply.status(304).send();
  }
  const key = `comparison|${c.id}|${c.revision}|${tag}|${shareUrl(ctx, req, c.id)}`;
  const accepted = acceptedEncodings(req.headers['accept-encoding']);
  for (const e of accepted) {
    const kept = e === 'identity' ? undefined : ctx.memo.get(`${key}#${e}`);
    if (kept) {
      // Served from memory without the tree: the read is recorded here (retention).
      ctx.viewRecorder.seen(c.id);
      return reply.header('content-encoding', e).send(kept);
    }
  }
  const tree = await loadTree(ctx, id);
  const body = Buffer.from(serialiseComparison(comparisonView(ctx, req, tree)));
  if (tree.comparison.revision !== c.revision) return reply.removeHeader('etag').send(body);
  const stored = await compress(body);
  for (const e of ['br', 'gzip'] as const) ctx.memo.set(`${key}#${e}`, stored[e]!);
  const e = accepted.find((x) => x !== 'identity');
  return e ? reply.header('content-encoding', e).send(stored[e]) : reply.send(body);
}

export async function loadTree(ctx: AppContext, id: string): Promise<ComparisonTree> {
  const tree = await ctx.store.getComparisonTree(id);
  if (!tree) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  return tree;
}

export default async function comparisonRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  route(app, 'createComparison', async (req, reply) => {
    if (ctx.config.writeToken) {
      const t = bearer(req);
      if (!t)
        throw new ApiError(
          401,
          'unauthorized',
          'creating comparisons on this instance needs the write token (Authorization: Bearer TOKEN)',
        );
      if (t !== ctx.config.writeToken) throw new ApiError(403, 'forbidden', 'the write token is wrong');
    }
    const { comparison, editToken } = await ctx.store.createComparison({
      title: req.body.title,
      description: req.body.description ?? '',
    });
    return reply.status(201).send({ id: comparison.id, editToken, url: shareUrl(ctx, req, comparison.id) });
  });

  route(app, 'getComparison', async (req, reply) => sendComparison(ctx, req, reply, req.params.id), {
    compress: false,
  });

  route(app, 'patchComparison', async (req) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.updateComparison(req.params.id, req.body);
    return comparisonView(ctx, req, await loadTree(ctx, req.params.id));
  });

  route(app, 'checkEditToken', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    return reply.status(204).send();
  });

  route(app, 'deleteComparison', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.deleteComparison(req.params.id);
    return reply.status(204).send();
  });
}
