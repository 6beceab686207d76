import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { apiSourcesInfo, storeSourceArchive } from '../services/sources.ts';
import { cleanName } from './artifacts.ts';
import { requireEditToken } from './auth.ts';
import { ApiError } from './errors.ts';
import { route } from './contract.ts';

export default async function sourceRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // The archive arrives as a stream, spooled to disk under MAX_UPLOAD_BYTES, never buffered whole.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));
  route(app, 'putStageSources', async (req, reply) => {
    const { id, stageId } = req.params;
    await requireEditToken(ctx.store, req, id);
    if (!(req.headers['content-type'] ?? '').startsWith('application/octet-stream'))
      throw new ApiError(
        415,
        'unsupported-media-type',
        'send the source archive (.tar.gz or .zip) as a raw application/octet-stream body with ?filename=',
      );
    const body = req.body as Readable;
    try {
      const stored = await storeSourceArchive(
        ctx,
        req.ip,
        id,
        stageId,
        cleanName(req.query.filename, 'source archive'),
        body,
      );
      return reply.status(200).send(apiSourcesInfo(stored));
    } catch (e) {
      // A refused archive is answered before its end: close rather than read the rest.
      if (!body.readableEnded) reply.header('connection', 'close');
      throw e;
    }
  });

  route(app, 'getStageSources', async (req, reply) => {
    const s = await ctx.store.getStageSources(req.params.id, req.params.stageId);
    if (!s) throw new ApiError(404, 'not-found', `stage ${req.params.stageId} has no source files`);
    return reply.send({ ...apiSourcesInfo(s), entries: s.entries });
  });

  route(app, 'deleteStageSources', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    if (!(await ctx.store.deleteStageSources(req.params.id, req.params.stageId)))
      throw new ApiError(404, 'not-found', `stage ${req.params.stageId} has no source files`);
    return reply.status(204).send();
  });
}
