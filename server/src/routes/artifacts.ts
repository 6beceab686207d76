import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import type { FileResult } from '../api/resources.ts';
import type { Store } from '../store/index.ts';
import { StoreError, TooLargeError } from '../store/index.ts';
import { IngestError } from '../ingest/errors.ts';
import { addFile } from '../services/add-file.ts';
import { ServiceError } from '../services/errors.ts';
import { clientKey } from '../services/fair-share.ts';
import { apiArtifactSummary } from '../services/stage-profiles.ts';
import { summaryRuns } from '../model/loadtest.ts';
import { type KindedSummary, kinded } from '../model/artifact-summary.ts';
import type { Spooled } from '../services/spool.ts';
import type { Reservation } from '../services/quota.ts';
import { formatBytes } from '../api/format.ts';
import { FieldTooLarge, FieldWatch, multipartBoundary } from './field-watch.ts';
import { ApiError, fromServiceError, infrastructureError } from './errors.ts';
import { requireEditToken } from './auth.ts';
import { route } from './contract.ts';

/** Files taken from one multipart request; the rest are refused (reported, never silently dropped). */
export const MAX_FILES_PER_REQUEST = 100;

/**
 * A file name from a client: its last path component, printable, bounded; `fallback` when nothing is
 * left of it.
 */
export function cleanName(name: string | undefined, fallback = 'upload'): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const s = [...base]
    .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '\x7f')
    .join('')
    .slice(0, 255)
    .trim();
  return s === '' ? fallback : s;
}

type FileError = Extract<FileResult, { ok: false }>;

/** A failed file's result, with the HTTP status it would have on its own. */
function fileError(
  ctx: AppContext,
  filename: string,
  e: unknown,
): { result: FileError; status: number; retryAfter?: number } {
  const fail = (status: number, code: string, message: string) => ({
    result: { filename, ok: false as const, error: { code, message: `${filename}: ${message}` } },
    status,
  });
  if (e instanceof IngestError)
    return fail(422, e.code, `${e.message}${e.line !== undefined ? ` (line ${e.line})` : ''}`);
  if (e instanceof TooLargeError || (e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
    return fail(
      413,
      'too-large',
      `larger than the ${ctx.config.maxUploadBytes}-byte limit per file (MAX_UPLOAD_BYTES)`,
    );
  if (e instanceof ServiceError) {
    const api = fromServiceError(e);
    const r = {
      ...fail(api.status, api.code, e.message),
      ...(e.detail.retryAfterSeconds !== undefined ? { retryAfter: e.detail.retryAfterSeconds } : {}),
    };
    return e.detail.existing
      ? { ...r, result: { ...r.result, error: { ...r.result.error, existing: e.detail.existing } } }
      : r;
  }
  if (e instanceof ApiError) return fail(e.status, e.code, e.message);
  if (e instanceof StoreError) return fail(e.code === 'not-found' ? 404 : 409, e.code, e.message);
  const infra = infrastructureError(e);
  if (infra) return fail(infra.status, infra.code, infra.message);
  throw e;
}

/**
 * Refuses bytes the stage already holds: a run uploaded twice is one run, not two (it would double the
 * noise test's n and could make a change look significant).
 */
async function refuseDuplicate(store: Store, comparisonId: string, stageId: string, sha256: string) {
  const same = (await store.listArtifacts(comparisonId, stageId)).find((a) => a.sha256 === sha256);
  if (same)
    throw new ServiceError(
      'duplicate',
      `the stage already holds these exact bytes as ${same.filename} (sha256 ${sha256.slice(0, 12)}…): a run uploaded twice is still one run; nothing was stored`,
      { existing: { artifactId: same.id, filename: same.filename } },
    );
}

/** A value as JSON with object keys sorted, so equal summaries give equal text whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * Refuses a load-test run whose parsed figures (requests, errors, rates, latencies, its settings and
 * start time) equal a run the stage already holds: the same output with a byte changed is the same
 * run, and counting it twice would shrink the noise as a copy does.
 */
async function refuseSameRun(store: Store, comparisonId: string, stageId: string, parsed: KindedSummary) {
  if (parsed.kind !== 'loadtest') return;
  const mine = new Set(summaryRuns(parsed.summary).map((r) => canonical(r.summary)));
  for (const a of await store.listArtifacts(comparisonId, stageId)) {
    const held = kinded(a);
    if (held.kind !== 'loadtest') continue;
    const hit = summaryRuns(held.summary).find((r) => mine.has(canonical(r.summary)));
    if (hit)
      throw new ServiceError(
        'duplicate',
        `the stage already holds this run as ${a.filename}${hit.runInFile !== null ? ` (run ${hit.runInFile})` : ''}: every figure it prints is the same, so it is the same run, not a new one; nothing was stored`,
        { existing: { artifactId: a.id, filename: a.filename } },
      );
  }
}

/**
 * Stores one file: its bytes are spooled to local disk (streamed, hashed, capped) before anything
 * else, so a slow client never holds a database connection; a worker parses the spooled file under
 * the analysis bounds; only a file that parses is copied into the store and becomes an artifact.
 * A file that fails leaves nothing behind and is reported by name with the reason.
 */
export async function storeOne(
  ctx: AppContext,
  /** The uploading client's address (as TRUST_PROXY says): its parses are counted against its share. */
  client: string,
  comparisonId: string,
  stageId: string,
  filename: string,
  src: AsyncIterable<Buffer>,
): Promise<{ result: FileResult; status: number; retryAfter?: number }> {
  let spooled: Spooled | null = null;
  let reservation: Reservation | null = null;
  try {
    spooled = await ctx.spool.write(src, ctx.config.maxUploadBytes);
    await refuseDuplicate(ctx.store, comparisonId, stageId, spooled.sha256);
    // Before any parsing: a file past the comparison's or the instance's bound costs nothing more.
    reservation = await ctx.quota.reserve(comparisonId, filename, spooled.size, spooled.sha256);
    const t0 = performance.now();
    const file = spooled;
    // A parse is work of the analysis workers like a view: admitted by the client's fair share.
    const parsed = await ctx.fairShare.parse(client, () =>
      ctx.pool.ingest(clientKey(client), {
        path: file.path,
        filename,
        sha256: file.sha256,
        maxInputBytes: ctx.config.maxUploadBytes,
        maxDecompressedBytes: ctx.config.maxDecompressedBytes,
      }),
    );
    ctx.metrics.observe('stagediff_parse_seconds', (performance.now() - t0) / 1000, { kind: parsed.kind });
    await refuseSameRun(ctx.store, comparisonId, stageId, kinded(parsed));
    const held = spooled;
    const a = await addFile(
      ctx,
      { comparisonId, stageId },
      { filename, bytes: () => ctx.spool.read(held), parse: parsed },
      // Again just before the row is written: another request may have stored the same bytes meanwhile.
      async () => {
        await refuseDuplicate(ctx.store, comparisonId, stageId, held.sha256);
        await refuseSameRun(ctx.store, comparisonId, stageId, kinded(parsed));
      },
    );
    ctx.metrics.inc('stagediff_uploads_total', { outcome: 'ok', kind: parsed.kind });
    ctx.metrics.inc('stagediff_upload_bytes_total', {}, a.size);
    const { comparisonId: _c, stageId: _s, ...stored } = a;
    const artifact = {
      ...stored,
      summary: apiArtifactSummary(a) as never,
    };
    const note = parsed.runs > 1 ? { note: `${parsed.runs} runs read from one file` } : {};
    return { result: { filename, ok: true, artifact, runs: parsed.runs, ...note }, status: 200 };
  } catch (e) {
    ctx.metrics.inc('stagediff_uploads_total', { outcome: 'error' });
    return fileError(ctx, filename, e);
  } finally {
    reservation?.release();
    if (spooled) await ctx.spool.discard(spooled);
  }
}

/** A text field of a multipart upload over MAX_FORM_FIELD_BYTES: 413 naming it. */
function fieldTooLarge(ctx: AppContext, field: string): ApiError {
  const name = [...field]
    .filter((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '\x7f')
    .join('')
    .slice(0, 100);
  return new ApiError(
    413,
    'field-too-large',
    `the form field "${name}" is larger than the ${formatBytes(ctx.config.maxFormFieldBytes)} a text field may hold (MAX_FORM_FIELD_BYTES); send files as file parts (field "file")`,
    name,
  );
}

/** The multipart parser's limits as answers naming the setting; null for anything else. */
function multipartRefusal(ctx: AppContext, e: unknown): ApiError | null {
  if (e instanceof ApiError) return e;
  switch ((e as { code?: string }).code) {
    case 'FST_FILES_LIMIT':
      return new ApiError(
        413,
        'too-many-files',
        `only ${MAX_FILES_PER_REQUEST} files are taken per request; send the rest in another request`,
      );
    case 'FST_FIELDS_LIMIT':
      return new ApiError(
        413,
        'too-many-fields',
        `a multipart upload may carry at most ${ctx.config.maxFormFields} text fields (MAX_FORM_FIELDS); send files as file parts (field "file")`,
      );
    case 'FST_PARTS_LIMIT':
      return new ApiError(
        413,
        'too-many-parts',
        `a multipart upload may carry at most ${MAX_FILES_PER_REQUEST} files and ${ctx.config.maxFormFields} text fields (MAX_FORM_FIELDS)`,
      );
    default:
      return null;
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

/**
 * 200 when any file landed (each result says how its file fared); when none did, the first failure's
 * status (4xx naming the file, or 503/507 when the server could not take it now).
 */
function replyFor(outcomes: { result: FileResult; status: number; retryAfter?: number }[]): {
  status: number;
  body: object;
  headers: Record<string, string>;
} {
  const results = outcomes.map((o) => o.result);
  if (results.some((r) => r.ok)) return { status: 200, body: { results }, headers: {} };
  const first = outcomes.find((o) => !o.result.ok)!;
  return {
    status: first.status,
    body: { error: (first.result as FileError).error, results },
    // Past the client's share (429) or the server's capacity (503): when to try again.
    headers: first.status === 503 || first.status === 429 ? { 'retry-after': String(first.retryAfter ?? 5) } : {},
  };
}

export default async function artifactRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  // Raw single-file uploads (curl --data-binary) arrive as a stream, never buffered whole.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));

  route(
    app,
    'uploadArtifacts',
    async (req, reply) => {
      const { id, stageId } = req.params;
      await requireEditToken(ctx.store, req, id);
      if (!(await ctx.store.getStage(id, stageId)))
        throw new ApiError(404, 'not-found', `comparison ${id} has no stage ${stageId}`);
      const results: { result: FileResult; status: number; retryAfter?: number }[] = [];
      if (req.isMultipart()) {
        // The spool enforces the size limit (and names the file); multipart only truncates one byte past it.
        const partOptions = {
          limits: { fileSize: ctx.config.maxUploadBytes + 1, files: MAX_FILES_PER_REQUEST },
          throwFileSizeLimit: false,
        } as Parameters<typeof req.parts>[0];
        // Text fields are not used. The parser holds none beyond MAX_FORM_FIELD_BYTES, and the watch
        // stops the request at the byte that crosses it (the parser would read the field to its end).
        const boundary = multipartBoundary(req.headers['content-type']);
        const watch = boundary ? new FieldWatch(boundary, ctx.config.maxFormFieldBytes) : null;
        if (watch) req.raw.on('data', watch.observe);
        try {
          const parts = req.parts(partOptions)[Symbol.asyncIterator]();
          for (;;) {
            const next = parts.next();
            // A part still pending when the watch ends the request settles later, unheard.
            next.catch(() => undefined);
            const n = await (watch ? Promise.race([next, watch.tripped]) : next);
            if (n.done) break;
            const part = n.value;
            if (part.type !== 'file') {
              if (part.valueTruncated) throw fieldTooLarge(ctx, part.fieldname);
              continue;
            }
            const name = cleanName(part.filename);
            const r = await storeOne(ctx, req.ip, id, stageId, name, part.file);
            if (!r.result.ok) await drain(part.file);
            results.push(r);
          }
        } catch (caught) {
          const e = caught instanceof FieldTooLarge ? fieldTooLarge(ctx, caught.field) : caught;
          const refused = multipartRefusal(ctx, e);
          // A body refused before its end: answer now and close the connection rather than read the rest.
          if (refused) reply.header('connection', 'close');
          // The body broke off or went past a limit after some files were stored: report those too.
          if (results.length === 0) throw refused ?? e;
          results.push({
            result: {
              filename: `(file ${results.length + 1} and later)`,
              ok: false,
              error: refused
                ? { code: refused.code, message: refused.message }
                : { code: 'upload-interrupted', message: `the upload stopped: ${(e as Error).message}` },
            },
            status: refused?.status ?? 400,
          });
        }
        if (results.length === 0)
          throw new ApiError(400, 'no-file', 'the multipart body has no file part (field "file")');
      } else if ((req.headers['content-type'] ?? '').startsWith('application/octet-stream')) {
        const name = cleanName(req.query.filename ?? (req.headers['x-filename'] as string | undefined));
        const body = req.body as Readable;
        const r = await storeOne(ctx, req.ip, id, stageId, name, body);
        if (!r.result.ok) await drain(body);
        results.push(r);
      } else {
        throw new ApiError(
          415,
          'unsupported-media-type',
          'upload files as multipart/form-data (field "file") or as a raw application/octet-stream body with ?filename=',
        );
      }
      const out = replyFor(results);
      return reply.status(out.status).headers(out.headers).send(out.body);
    },
    // Files arrive as streams (multipart, octet-stream) and are bounded by MAX_UPLOAD_BYTES as they
    // are spooled; any body Fastify would parse whole (JSON, text) keeps the server's bound.
  );

  route(
    app,
    'rawArtifact',
    async (req, reply) => {
      const a = await ctx.store.getArtifact(req.params.artifactId);
      if (!a) throw new ApiError(404, 'not-found', `no artifact ${req.params.artifactId}`);
      ctx.viewRecorder.seen(a.comparisonId);
      const stream = await ctx.store.openBlobStream(a.sha256);
      if (!stream) throw new ApiError(404, 'not-found', `the bytes of ${a.filename} are gone`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', a.size)
        .header('content-disposition', `attachment; filename="${a.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
        .header('x-content-sha256', a.sha256)
        .send(stream);
    },
    // The original bytes, never re-encoded: @fastify/compress takes application/octet-stream as
    // compressible and, seeing a gzip file, passes it through unchanged yet labelled br or gzip.
    { compress: false },
  );

  route(app, 'deleteArtifact', async (req, reply) => {
    await requireEditToken(ctx.store, req, req.params.id);
    await ctx.store.deleteArtifact(req.params.id, req.params.artifactId);
    return reply.status(204).send();
  });
}
