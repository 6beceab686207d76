import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ComparisonTree } from '../store/index.ts';
import type { AppContext } from '../app.ts';
import { stageTable } from '../services/analysis.ts';
import { ApiError } from './errors.ts';
import { bearer, requireEditToken } from './auth.ts';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' } },
} as const;
export { idParams };

const artifactSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string' },
    format: { type: 'string' },
    filename: { type: 'string' },
    size: { type: 'number' },
    sha256: { type: 'string' },
    createdAt: { type: 'string' },
    summary: {},
  },
} as const;

const ratios = {
  type: ['object', 'null'],
  properties: {
    rps: { type: ['number', 'null'] },
    p50: { type: ['number', 'null'] },
    p95: { type: ['number', 'null'] },
    p99: { type: ['number', 'null'] },
  },
} as const;

const nullableNumber = { type: ['number', 'null'] } as const;

const estimateSchema = {
  type: ['object', 'null'],
  description:
    "Median across the stage's runs with benchstat's distribution-free 95 % confidence interval for the median (null bounds: too few runs for a 95 % interval, benchstat's ± ∞).",
  properties: {
    n: { type: 'integer', description: 'runs with this figure' },
    values: { type: 'array', items: { type: 'number' }, description: 'one value per run, in run order' },
    median: { type: 'number' },
    lo: nullableNumber,
    hi: nullableNumber,
    ci: { ...nullableNumber, description: "benchstat's ± as a fraction of the median (0.05 = ± 5 %)" },
  },
} as const;

const verdictSchema = {
  type: 'object',
  description:
    'benchstat-style verdict of a change: two-sided Mann–Whitney U test of the per-run values, significant when p ≤ alpha.',
  properties: {
    status: {
      type: 'string',
      enum: ['significant', 'no-change', 'need-more-runs', 'single-run', 'missing'],
      description:
        'no-change and need-more-runs are both "~"; need-more-runs: both sides have fewer than runsNeeded runs, so no change could reach significance; single-run: a side has one run (no noise estimate)',
    },
    significant: { type: 'boolean' },
    ratio: { ...nullableNumber, description: 'target median / base median' },
    p: { ...nullableNumber, description: 'Mann–Whitney U p-value (null without runs to test)' },
    nBase: { type: 'integer' },
    nTarget: { type: 'integer' },
    alpha: { type: 'number' },
    runsNeeded: { type: 'integer' },
  },
} as const;

const verdictSet = {
  type: ['object', 'null'],
  properties: { rps: verdictSchema, p50: verdictSchema, p95: verdictSchema, p99: verdictSchema },
} as const;

export const comparisonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    readOnly: { type: 'boolean' },
    revision: { type: 'integer' },
    keep: {
      type: 'boolean',
      description: 'kept by its edit-token holder: retention (RETENTION_DAYS) never removes it',
    },
    url: { type: 'string' },
    stages: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          note: { type: 'string' },
          position: { type: 'integer' },
          captures: { type: 'array', items: {} },
          artifacts: { type: 'array', items: artifactSchema },
        },
      },
    },
    stageTable: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          stageId: { type: 'string' },
          name: { type: 'string' },
          note: { type: 'string' },
          rps: { type: ['number', 'null'] },
          requests: { type: ['number', 'null'] },
          errors: { type: ['number', 'null'] },
          latencyMs: {
            type: 'object',
            properties: {
              p50: { type: ['number', 'null'] },
              p95: { type: ['number', 'null'] },
              p99: { type: ['number', 'null'] },
            },
          },
          vsPrevious: ratios,
          vsBaseline: ratios,
          loadTests: { type: 'integer' },
          aggregated: { type: 'boolean' },
          summary: {
            type: 'string',
            enum: ['single-run', 'median', 'aggregate', 'none'],
            description:
              'median: repeated runs of one tool and settings, figures are medians across runs; aggregate: runs with different settings, request-weighted; single-run: as the tool printed it',
          },
          runs: {
            type: 'array',
            description: 'the load-test runs behind the row, each with its own figures (req/s, ms)',
            items: {
              type: 'object',
              properties: {
                artifactId: { type: 'string' },
                filename: { type: 'string' },
                rps: nullableNumber,
                requests: nullableNumber,
                errors: nullableNumber,
                latencyMs: {
                  type: 'object',
                  properties: { p50: nullableNumber, p95: nullableNumber, p99: nullableNumber },
                },
              },
            },
          },
          estimates: {
            type: ['object', 'null'],
            description: 'per figure across the runs (median rows only)',
            properties: { rps: estimateSchema, p50: estimateSchema, p95: estimateSchema, p99: estimateSchema },
          },
          significance: {
            type: 'object',
            description: 'verdicts against the previous stage and the baseline (null for the first stage)',
            properties: { vsPrevious: verdictSet, vsBaseline: verdictSet },
          },
          source: {
            type: 'object',
            properties: {
              format: { type: ['string', 'null'] },
              artifactIds: { type: 'array', items: { type: 'string' } },
              otherRuns: { type: 'integer' },
              headline: { type: 'boolean' },
            },
          },
        },
      },
    },
  },
} as const;

export function shareUrl(ctx: AppContext, req: FastifyRequest, id: string): string {
  const origin = ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
  return `${origin}/c/${encodeURIComponent(id)}`;
}

export function comparisonView(ctx: AppContext, req: FastifyRequest, tree: ComparisonTree) {
  return {
    ...tree.comparison,
    url: shareUrl(ctx, req, tree.comparison.id),
    stages: tree.stages.map((s) => ({
      id: s.id,
      name: s.name,
      note: s.note,
      position: s.position,
      captures: s.captures,
      artifacts: s.artifacts.map(({ comparisonId: _c, stageId: _s, ...a }) => a),
    })),
    stageTable: stageTable(tree),
  };
}

export async function loadTree(ctx: AppContext, id: string): Promise<ComparisonTree> {
  const tree = await ctx.store.getComparisonTree(id);
  if (!tree) throw new ApiError(404, 'not-found', `no comparison ${id}`);
  return tree;
}

export default async function comparisonRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.post<{ Body: { title: string; description?: string } }>(
    '/api/comparisons',
    {
      schema: {
        summary: 'Create a comparison (an optimization story)',
        body: {
          type: 'object',
          required: ['title'],
          additionalProperties: false,
          properties: {
            title: { type: 'string', minLength: 1, maxLength: 200 },
            description: { type: 'string', maxLength: 10000 },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: { id: { type: 'string' }, editToken: { type: 'string' }, url: { type: 'string' } },
          },
        },
      },
    },
    async (req, reply) => {
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
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/comparisons/:id',
    {
      schema: {
        summary: 'A comparison with its stages, artifacts and stage table',
        params: idParams,
        response: { 200: comparisonSchema },
      },
    },
    async (req) => {
      return comparisonView(ctx, req, await loadTree(ctx, req.params.id));
    },
  );

  app.patch<{ Params: { id: string }; Body: { title?: string; description?: string; keep?: boolean } }>(
    '/api/comparisons/:id',
    {
      schema: {
        summary: 'Edit title or description, or keep it from retention (edit token)',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            title: { type: 'string', minLength: 1, maxLength: 200 },
            description: { type: 'string', maxLength: 10000 },
            keep: { type: 'boolean' },
          },
        },
      },
    },
    async (req) => {
      await requireEditToken(ctx.store, req, req.params.id);
      await ctx.store.updateComparison(req.params.id, req.body);
      return comparisonView(ctx, req, await loadTree(ctx, req.params.id));
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/comparisons/:id',
    { schema: { summary: 'Delete a comparison and its files (edit token)', params: idParams } },
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      await ctx.store.deleteComparison(req.params.id);
      return reply.status(204).send();
    },
  );
}
