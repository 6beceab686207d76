import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { AppContext } from '../app.ts';
import type { Artifact, BlobRef } from '../store/index.ts';
import { TooLargeError } from '../store/index.ts';
import { ingest } from '../ingest/detect.ts';
import { IngestError } from '../ingest/errors.ts';
import { artifactSummary } from '../services/analysis.ts';
import { blobSource } from '../services/models.ts';
import { ApiError } from './errors.ts';
import { requireEditToken } from './auth.ts';

type FileResult =
  | { filename: string; ok: true; artifact: Omit<Artifact, 'comparisonId' | 'stageId'> }
  | { filename: string; ok: false; error: { code: string; message: string } };

const params = {
  type: 'object',
  required: ['id', 'stageId'],
  properties: {
    id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    stageId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
  },
} as const;

/** A file name from a client: its last path component, printable, bounded. */
function cleanName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const s = [...base]
    .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '\x7f')
    .join('')
    .slice(0, 255)
    .trim();
  return s === '' ? 'upload' : s;
}

/**
 * Stores one file then parses it: the bytes become a durable blob first (streamed, hashed, capped),
 * the parser reads them back, and only a file that parses becomes an artifact. A file that fails
 * leaves nothing behind (its blob is released) and is reported by name with the reason.
 */
async function storeOne(
  ctx: AppContext,
  comparisonId: string,
  stageId: string,
  filename: string,
  src: AsyncIterable<Buffer>,
): Promise<FileResult> {
  let ref: BlobRef | null = null;
  try {
    ref = await ctx.store.putBlob(src, ctx.config.maxUploadBytes);
    const sha = ref.sha256;
    const t0 = performance.now();
    // Parsed from the stored bytes, streamed: detection reads the head, per-request logs stream.
    const parsed = await ingest(
      { name: filename, open: () => blobSource(ctx.store, sha, filename) },
      { maxInputBytes: ctx.config.maxUploadBytes, maxDecompressedBytes: ctx.config.maxDecompressedBytes },
    );
    ctx.metrics.observe('stagediff_parse_seconds', (performance.now() - t0) / 1000, { kind: parsed.kind });
    const a = await ctx.store.addArtifact({
      comparisonId,
      stageId,
      kind: parsed.kind,
      format: parsed.format,
      filename,
      summary: artifactSummary(parsed),
      blob: ref,
    });
    ref = null;
    ctx.metrics.inc('stagediff_uploads_total', { outcome: 'ok', kind: parsed.kind });
    ctx.metrics.inc('stagediff_upload_bytes_total', {}, a.size);
    const { comparisonId: _c, stageId: _s, ...artifact } = a;
    return { filename, ok: true, artifact };
  } catch (e) {
    if (ref) await ctx.store.releaseBlob(ref).catch(() => undefined);
    ctx.metrics.inc('stagediff_uploads_total', { outcome: 'error' });
    if (e instanceof IngestError)
      return {
        filename,
        ok: false,
        error: { code: e.code, message: `${filename}: ${e.message}${e.line !== undefined ? ` (line ${e.line})` : ''}` },
      };
    if (e instanceof TooLargeError || (e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
      return {
        filename,
        ok: false,
        error: {
          code: 'too-large',
          message: `${filename}: larger than the ${ctx.config.maxUploadBytes}-byte limit per file`,
        },
      };
    if (e instanceof ApiError && e.status < 500)
      return { filename, ok: false, error: { code: e.code, message: `${filename}: ${e.message}` } };
    throw e;
  }
}

/** Discards the rest of a refused file so the next part can be read (the store may have destroyed it). */
async function drain(s: Readable): Promise<void> {
  if (s.destroyed) return;
  try {
    for await (const _ of s) {
      // discard
    }
  } catch {
    // already aborted: nothing left to read
  }
}

/** 200 when any file landed (each result says how its file fared); a 4xx naming the file when none did. */
function reply4xx(results: FileResult[]): { status: number; body: object } {
  if (results.some((r) => r.ok)) return { status: 200, body: { results } };
  const first = results.find((r): r is Extract<FileResult, { ok: false }> => !r.ok)!;
  return { status: first.error.code === 'too-large' ? 413 : 422, body: { error: first.error, results } };
}

export default async function artifactRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // Raw single-file uploads (curl --data-binary) arrive as a stream, never buffered whole.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));

  app.post<{ Params: { id: string; stageId: string }; Querystring: { filename?: string } }>(
    '/api/comparisons/:id/stages/:stageId/artifacts',
    {
      bodyLimit: Number.MAX_SAFE_INTEGER,
      schema: {
        summary:
          'Upload files into a stage (multipart field "file", several at once; or one raw application/octet-stream body with ?filename=)',
        params,
        querystring: { type: 'object', properties: { filename: { type: 'string', maxLength: 255 } } },
      },
    },
    async (
      req: FastifyRequest<{ Params: { id: string; stageId: string }; Querystring: { filename?: string } }>,
      reply,
    ) => {
      const { id, stageId } = req.params;
      await requireEditToken(ctx.store, req, id);
      if (!(await ctx.store.getStage(id, stageId)))
        throw new ApiError(404, 'not-found', `comparison ${id} has no stage ${stageId}`);
      const results: FileResult[] = [];
      if (req.isMultipart()) {
        // The store enforces the size limit (and names the file); multipart only truncates one byte past it.
        const partOptions = {
          limits: { fileSize: ctx.config.maxUploadBytes + 1, files: 100 },
          throwFileSizeLimit: false,
        } as Parameters<typeof req.parts>[0];
        for await (const part of req.parts(partOptions)) {
          if (part.type !== 'file') continue;
          const name = cleanName(part.filename);
          const r = await storeOne(ctx, id, stageId, name, part.file);
          if (!r.ok) await drain(part.file);
          results.push(r);
        }
        if (results.length === 0)
          throw new ApiError(400, 'no-file', 'the multipart body has no file part (field "file")');
      } else if ((req.headers['content-type'] ?? '').startsWith('application/octet-stream')) {
        const name = cleanName(req.query.filename ?? (req.headers['x-filename'] as string | undefined));
        const body = req.body as Readable;
        const r = await storeOne(ctx, id, stageId, name, body);
        if (!r.ok) await drain(body);
        results.push(r);
      } else {
        throw new ApiError(
          415,
          'unsupported-media-type',
          'upload files as multipart/form-data (field "file") or as a raw application/octet-stream body with ?filename=',
        );
      }
      const out = reply4xx(results);
      return reply.status(out.status).send(out.body);
    },
  );

  app.get<{ Params: { artifactId: string } }>(
    '/api/artifacts/:artifactId/raw',
    {
      // The original bytes, never re-encoded: @fastify/compress takes application/octet-stream as
      // compressible and, seeing a gzip file, passes it through unchanged yet labelled br or gzip.
      compress: false,
      schema: {
        summary: 'The original bytes of an uploaded file',
        params: {
          type: 'object',
          required: ['artifactId'],
          properties: { artifactId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
        },
      },
    },
    async (req, reply) => {
      const a = await ctx.store.getArtifact(req.params.artifactId);
      if (!a) throw new ApiError(404, 'not-found', `no artifact ${req.params.artifactId}`);
      const stream = await ctx.store.openBlobStream(a.sha256);
      if (!stream) throw new ApiError(404, 'not-found', `the bytes of ${a.filename} are gone`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', a.size)
        .header('content-disposition', `attachment; filename="${a.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
        .header('x-content-sha256', a.sha256)
        .send(stream);
    },
  );

  app.delete<{ Params: { id: string; artifactId: string } }>(
    '/api/comparisons/:id/artifacts/:artifactId',
    {
      schema: {
        summary: 'Remove one file from a comparison (edit token)',
        params: {
          type: 'object',
          required: ['id', 'artifactId'],
          properties: { id: { type: 'string' }, artifactId: { type: 'string' } },
        },
      },
    },
    async (req, reply) => {
      await requireEditToken(ctx.store, req, req.params.id);
      await ctx.store.deleteArtifact(req.params.id, req.params.artifactId);
      return reply.status(204).send();
    },
  );
}
