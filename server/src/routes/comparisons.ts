import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Comparison } from '../api/resources.ts';
import type { ComparisonTree } from '../store/index.ts';
import type { AppContext } from '../app.ts';
import { apiArtifactSummary } from '../services/stage-profiles.ts';
import { ApiError } from './errors.ts';
import { bearer, requireEditToken } from './auth.ts';
import { route } from './contract.ts';

export function shareUrl(ctx: AppContext, req: FastifyRequest, id: string): string {
  const origin = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
  return `${origin}/c/${encodeURIComponent(id)}`;
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
    })),
  };
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

  route(app, 'getComparison', async (req) => comparisonView(ctx, req, await loadTree(ctx, req.params.id)));

  route(app, 'patchComparison', async (req) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.updateComparison(req.params.id, req.body);
    return comparisonView(ctx, req, await loadTree(ctx, req.params.id));
  });

  route(app, 'deleteComparison', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.deleteComparison(req.params.id);
    return reply.status(204).send();
  });
}
