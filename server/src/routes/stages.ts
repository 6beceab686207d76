import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { formatBytes } from '../api/format.ts';
import { jsonText } from '../store/common.ts';
import { StageCapturesTooLargeError } from '../store/errors.ts';
import { ApiError } from './errors.ts';
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
      const size = Buffer.byteLength(jsonText(req.body));
      if (size > ctx.config.maxCaptureBytes)
        throw new ApiError(
          413,
          'too-large',
          `the capture record is ${formatBytes(size)} of JSON, over the ${formatBytes(ctx.config.maxCaptureBytes)} one record may hold (MAX_CAPTURE_BYTES)`,
        );
      const stage = await ctx.store.getStage(req.params.id, req.params.stageId);
      if (!stage)
        throw new ApiError(404, 'not-found', `comparison ${req.params.id} has no stage ${req.params.stageId}`);
      // The stage's bound is checked by the store, in the transaction that appends (concurrent records
      // cannot pass it together).
      const st = await ctx.store
        .addStageCapture(req.params.id, req.params.stageId, req.body, {
          maxStageBytes: ctx.config.maxStageCaptureBytes,
        })
        .catch((e: unknown) => {
          if (!(e instanceof StageCapturesTooLargeError)) throw e;
          throw new ApiError(
            413,
            'too-large',
            `the stage's capture records would take ${formatBytes(e.total)}, over the ${formatBytes(e.limit)} one stage may hold (MAX_STAGE_CAPTURE_BYTES)`,
          );
        });
      return reply.status(201).send(st);
    },
    // Room for indentation; the record itself is measured as compact JSON above.
    { bodyLimit: 2 * ctx.config.maxCaptureBytes },
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
