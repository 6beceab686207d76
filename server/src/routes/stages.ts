import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.ts';
import { MAX_CAPTURE_BYTES } from '../store/common.ts';
import { requireEditToken } from './auth.ts';
import { route } from './contract.ts';

export default async function stageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  route(app, 'createStage', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    const st = await ctx.store.createStage(req.params.id, { name: req.body.name, note: req.body.note ?? '' });
    return reply.status(201).send(st);
  });

  route(app, 'patchStage', async (req) => {
    await requireEditToken(ctx.store, req, req.params.id);
    return ctx.store.updateStage(req.params.id, req.params.stageId, req.body);
  });

  route(
    app,
    'addCapture',
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      const st = await ctx.store.addStageCapture(req.params.id, req.params.stageId, req.body);
      return reply.status(201).send(st);
    },
    { bodyLimit: MAX_CAPTURE_BYTES },
  );

  route(app, 'deleteStage', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.deleteStage(req.params.id, req.params.stageId);
    return reply.status(204).send();
  });

  route(app, 'orderStages', async (req) => {
    await requireEditToken(ctx.store, req, req.params.id);
    return ctx.store.reorderStages(req.params.id, req.body.stageIds);
  });
}
