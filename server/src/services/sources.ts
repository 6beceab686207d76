/**
 * A stage's sources: a source archive (.tar.gz or .zip) read under the MAX_SOURCE_* bounds, kept as
 * one bundle blob with its module path, commit and dirty flag; read back for the line view.
 */
import { createHash } from 'node:crypto';
import type { StageSourcesInfo } from '../api/resources.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { SourceArchiveError, readSourceArchive } from '../sources/archive.ts';
import { decodeBundle, encodeBundle } from '../sources/bundle.ts';
import type { SourceLimits } from '../sources/source-set.ts';
import type { StageSources, Store } from '../store/index.ts';
import type { SourceFileEntry } from '../store/types.ts';
import { ServiceError } from './errors.ts';
import { clientKey } from './fair-share.ts';
import type { Reservation } from './quota.ts';
import type { Spooled } from './spool.ts';

export function sourceLimits(config: Config): SourceLimits {
  return {
    maxSourceBytes: config.maxSourceBytes,
    maxSourceFileBytes: config.maxSourceFileBytes,
    maxSourceFiles: config.maxSourceFiles,
    maxSourceArchiveEntries: config.maxSourceArchiveEntries,
  };
}

/** A refused archive in the service's terms: 413 for a bound, 400 for an unsafe or damaged archive. */
function refused(e: SourceArchiveError): ServiceError {
  return new ServiceError(e.tooLarge ? 'too-large' : 'invalid-request', `${e.message}; nothing was stored`, {
    param: 'source',
  });
}

/** A source archive read, checked and packed as a bundle: what a stage's sources store. */
export interface ArchiveBundle {
  modulePath: string;
  revision: string;
  dirty: boolean | null;
  /** The bundle's bytes (bundle.ts). */
  bytes: Uint8Array;
  entries: SourceFileEntry[];
}

/**
 * Reads the archive spooled at `path` under `limits` and packs its source files as a bundle; a refused
 * archive throws a ServiceError naming the entry and the bound. Runs in an analysis worker (see
 * AnalysisPool.readArchive): reading a hostile archive costs CPU, held to the job deadline there.
 */
export async function readArchiveBundle(filename: string, path: string, limits: SourceLimits): Promise<ArchiveBundle> {
  let read: Awaited<ReturnType<typeof readSourceArchive>>;
  try {
    read = await readSourceArchive(filename, path, limits);
  } catch (e) {
    if (e instanceof SourceArchiveError) throw refused(e);
    throw e;
  }
  if (read.files.size === 0)
    throw new ServiceError(
      'invalid-request',
      `source archive ${filename}: holds no Go source file (.go, .s, .c, .h, go.mod); nothing was stored`,
      { param: 'source' },
    );
  const bundle = await encodeBundle(read.files);
  return {
    modulePath: read.modulePath,
    revision: read.revision,
    dirty: read.dirty,
    bytes: bundle.bytes,
    entries: bundle.entries,
  };
}

/**
 * Stores a source archive as the stage's sources, replacing any it had (atomically). The archive is
 * spooled to disk (MAX_UPLOAD_BYTES), then read and checked whole in an analysis worker, as a parse of
 * `client` (admitted by the fair share: see FairShare), and only then stored: a refused archive keeps
 * nothing.
 */
export async function storeSourceArchive(
  ctx: Pick<AppContext, 'store' | 'spool' | 'quota' | 'config' | 'pool' | 'fairShare'>,
  client: string,
  comparisonId: string,
  stageId: string,
  filename: string,
  src: AsyncIterable<Buffer>,
): Promise<StageSources> {
  let spooled: Spooled | null = null;
  let reservation: Reservation | null = null;
  try {
    if (!(await ctx.store.getStage(comparisonId, stageId)))
      throw new ServiceError('not-found', `comparison ${comparisonId} has no stage ${stageId}`);
    spooled = await ctx.spool.write(src, ctx.config.maxUploadBytes);
    const path = spooled.path;
    const read = await ctx.fairShare.parse(client, () =>
      ctx.pool.readArchive(clientKey(client), { filename, path, limits: sourceLimits(ctx.config) }),
    );
    const bytes = Buffer.isBuffer(read.bytes)
      ? read.bytes
      : Buffer.from(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    reservation = await ctx.quota.reserve(comparisonId, filename, bytes.length, sha256);
    const ref = await ctx.store.putBlob(
      (async function* () {
        yield bytes;
      })(),
      bytes.length,
    );
    try {
      return await ctx.store.putStageSources({
        comparisonId,
        stageId,
        modulePath: read.modulePath,
        revision: read.revision,
        dirty: read.dirty,
        origin: filename,
        entries: read.entries,
        blob: ref,
      });
    } catch (e) {
      await ctx.store.releaseBlob(ref).catch(() => undefined);
      throw e;
    }
  } finally {
    reservation?.release();
    if (spooled) await ctx.spool.discard(spooled);
  }
}

/** A stored source set as the API shows it. */
export function apiSourcesInfo(s: StageSources): StageSourcesInfo {
  return {
    modulePath: s.modulePath,
    revision: s.revision,
    dirty: s.dirty,
    origin: s.origin,
    files: s.files,
    bytes: s.bytes,
    size: s.size,
    createdAt: s.createdAt,
  };
}

/** A stage's source files (path → bytes), or null when it has none. */
export async function loadStageSources(
  store: Store,
  comparisonId: string,
  stageId: string,
): Promise<{ sources: StageSources; files: Map<string, Buffer> } | null> {
  const sources = await store.getStageSources(comparisonId, stageId);
  if (!sources) return null;
  const blob = await store.readBlob(sources.sha256);
  if (!blob) return null;
  // The bundle's header lists every file: bounded by its count, beside the bytes it holds.
  const files = await decodeBundle(blob, sources.bytes + 1024 + sources.files * 4200);
  const { entries: _e, ...meta } = sources;
  return { sources: meta, files };
}
