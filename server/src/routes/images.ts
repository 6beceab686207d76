import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.ts';
import type { DiffMode } from '../analysis/diff.ts';
import type { ImageFormat } from '../services/analysis-ops.ts';
import {
  type FilterQuery,
  cached,
  diffMode,
  filterProps,
  filters,
  idParams,
  minFraction,
  sampleType,
  stageId,
} from './analysis.ts';

const width = { type: 'integer', minimum: 300, maximum: 4000, default: 1200 } as const;
const CONTENT_TYPE: Record<ImageFormat, string> = { svg: 'image/svg+xml; charset=utf-8', png: 'image/png' };
/**
 * An SVG opened on its own is a document of this origin: whatever it held, it may run nothing and load
 * nothing (its text is escaped anyway; this is the second line of defence).
 */
const LOCKED_DOWN = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'x-content-type-options': 'nosniff',
};

type Q<T> = { Params: { id: string }; Querystring: T };
type FlameQuery = { stage: string; sampleType?: string; minFraction: number; width: number } & FilterQuery;
type DiffQuery = {
  base: string;
  target: string;
  sampleType?: string;
  mode: DiffMode;
  minFraction: number;
  width: number;
  noise: number;
} & FilterQuery;

/**
 * The flamegraph and diff flamegraph as standalone images (for PR comments, job summaries, wikis):
 * the JSON views' query parameters plus `width` (px) and, for the diff, `noise` (the fraction of the
 * larger total under which a change stays grey, the web view's noise floor). Cached like the views.
 */
export default async function imageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  for (const format of ['svg', 'png'] as const) {
    app.get<Q<FlameQuery>>(
      `/api/comparisons/:id/flamegraph.${format}`,
      {
        schema: {
          summary: `Flamegraph of one stage as ${format.toUpperCase()} (root on top; same parameters as /flamegraph)`,
          params: idParams,
          querystring: {
            type: 'object',
            required: ['stage'],
            additionalProperties: false,
            properties: { stage: stageId, sampleType, minFraction, width, ...filterProps },
          },
        },
      },
      async (req, reply) => {
        const q = req.query;
        reply.headers(LOCKED_DOWN);
        return cached(
          ctx,
          req,
          reply,
          req.params.id,
          {
            op: 'flamegraph-image',
            format,
            width: q.width,
            stage: q.stage,
            ...(q.sampleType ? { sampleType: q.sampleType } : {}),
            minFraction: q.minFraction,
            filters: filters(q),
          },
          CONTENT_TYPE[format],
          format === 'png' ? 'base64' : 'utf8',
        );
      },
    );

    app.get<Q<DiffQuery>>(
      `/api/comparisons/:id/diff.${format}`,
      {
        schema: {
          summary: `Diff flamegraph of two stages as ${format.toUpperCase()} (red: more in the target, blue: less; same parameters as /diff)`,
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
              width,
              noise: { type: 'number', minimum: 0, maximum: 1, default: 0.001 },
              // Accepted so a diff view's address works as is; an image has no table to sort or cut.
              limit: { type: 'integer', minimum: 1, maximum: 1_000_000 },
              sort: { type: 'string', enum: ['flat', 'cum'] },
              ...filterProps,
            },
          },
        },
      },
      async (req, reply) => {
        const q = req.query;
        reply.headers(LOCKED_DOWN);
        return cached(
          ctx,
          req,
          reply,
          req.params.id,
          {
            op: 'diff-image',
            format,
            width: q.width,
            noise: q.noise,
            base: q.base,
            target: q.target,
            ...(q.sampleType ? { sampleType: q.sampleType } : {}),
            mode: q.mode,
            minFraction: q.minFraction,
            filters: filters(q),
          },
          CONTENT_TYPE[format],
          format === 'png' ? 'base64' : 'utf8',
        );
      },
    );
  }
}
