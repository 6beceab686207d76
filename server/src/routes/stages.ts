import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.ts';
import { MAX_CAPTURE_BYTES } from '../store/common.ts';
import { requireEditToken } from './auth.ts';

const params = {
  type: 'object',
  required: ['id', 'stageId'],
  properties: {
    id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    stageId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
  },
} as const;
const idOnly = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
} as const;
const stageBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 120 }, note: { type: 'string', maxLength: 2000 } },
} as const;
const stageOut = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    note: { type: 'string' },
    position: { type: 'integer' },
  },
} as const;

export default async function stageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.post<{ Params: { id: string }; Body: { name: string; note?: string } }>(
    '/api/comparisons/:id/stages',
    {
      schema: {
        summary: 'Append a stage (edit token)',
        params: idOnly,
        body: { ...stageBody, required: ['name'] },
        response: { 201: stageOut },
      },
    },
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      const st = await ctx.store.createStage(req.params.id, { name: req.body.name, note: req.body.note ?? '' });
      return reply.status(201).send(st);
    },
  );

  app.patch<{ Params: { id: string; stageId: string }; Body: { name?: string; note?: string } }>(
    '/api/comparisons/:id/stages/:stageId',
    {
      schema: {
        summary: 'Rename or annotate a stage (edit token)',
        params,
        body: stageBody,
        response: { 200: stageOut },
      },
    },
    async (req) => {
      await requireEditToken(ctx.store, req, req.params.id);
      return ctx.store.updateStage(req.params.id, req.params.stageId, req.body);
    },
  );

  app.post<{ Params: { id: string; stageId: string }; Body: Record<string, unknown> }>(
    '/api/comparisons/:id/stages/:stageId/captures',
    {
      bodyLimit: MAX_CAPTURE_BYTES,
      schema: {
        summary: 'Record how a stage was captured (edit token): a `stagediff capture` record, appended to the stage',
        params,
        body: {
          type: 'object',
          required: ['schema', 'runs'],
          properties: {
            schema: { type: 'string', const: 'stagediff-capture/1' },
            runs: { type: 'array', maxItems: 100, items: { type: 'object' } },
          },
        },
        response: {
          201: { ...stageOut, properties: { ...stageOut.properties, captures: { type: 'array', items: {} } } },
        },
      },
    },
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      const st = await ctx.store.addStageCapture(req.params.id, req.params.stageId, req.body);
      return reply.status(201).send(st);
    },
  );

  app.delete<{ Params: { id: string; stageId: string } }>(
    '/api/comparisons/:id/stages/:stageId',
    { schema: { summary: 'Delete a stage and its files (edit token)', params } },
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      await ctx.store.deleteStage(req.params.id, req.params.stageId);
      return reply.status(204).send();
    },
  );

  app.put<{ Params: { id: string }; Body: { stageIds: string[] } }>(
    '/api/comparisons/:id/stages/order',
    {
      schema: {
        summary: 'Reorder stages (edit token): list every stage id once, in the new order',
        params: idOnly,
        body: {
          type: 'object',
          required: ['stageIds'],
          additionalProperties: false,
          properties: { stageIds: { type: 'array', maxItems: 200, items: { type: 'string' } } },
        },
        response: { 200: { type: 'array', items: stageOut } },
      },
    },
    async (req) => {
      await requireEditToken(ctx.store, req, req.params.id);
      return ctx.store.reorderStages(req.params.id, req.body.stageIds);
    },
  );
}
