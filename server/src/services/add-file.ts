import { createReadStream } from 'node:fs';
import type { AppContext } from '../context.ts';
import { type IngestLimits, ingest } from '../ingest/detect.ts';
import type { Artifact, ArtifactKind, ByteSource } from '../store/index.ts';
import { artifactSummary } from './analysis.ts';
import { derivedProfileKey } from './models.ts';

/**
 * The one way a file becomes an artifact of a stage: upload (parsed by a worker, after its checks),
 * the demo seed and `report --out` (parsed here, from a file on disk) all end in `addFile`.
 */

/** What the store keeps of a parsed file besides its bytes. */
export interface FileParse {
  kind: ArtifactKind;
  format: string;
  /** The stored summary (`artifactSummary`). */
  summary: unknown;
  /** A profile's compact derived form (profile-codec), cached beside the blob so no view parses it again. */
  derived: Uint8Array | null;
}

/** Where a file goes. */
export interface FilePlace {
  comparisonId: string;
  stageId: string;
}

/**
 * Stores a parsed file: its bytes as a blob, then its artifact row (after `beforeRow`, the last
 * checks a caller makes once the bytes are durable), then a profile's derived form (best effort: it
 * can be derived again). A failure leaves nothing behind: the blob is released and the error thrown.
 */
export async function addFile(
  ctx: Pick<AppContext, 'store' | 'config'>,
  at: FilePlace,
  file: { filename: string; bytes: () => ByteSource; parse: FileParse },
  beforeRow?: () => Promise<void>,
): Promise<Artifact> {
  const blob = await ctx.store.putBlob(file.bytes(), ctx.config.maxUploadBytes);
  let a: Artifact;
  try {
    await beforeRow?.();
    a = await ctx.store.addArtifact({
      ...at,
      kind: file.parse.kind,
      format: file.parse.format,
      filename: file.filename,
      summary: file.parse.summary,
      blob,
    });
  } catch (e) {
    await ctx.store.releaseBlob(blob).catch(() => undefined);
    throw e;
  }
  if (file.parse.derived)
    await ctx.store.cachePut(derivedProfileKey(a.sha256), Buffer.from(file.parse.derived)).catch(() => undefined);
  return a;
}

/**
 * Parses a file on this machine (detection by content; an IngestError for anything it cannot read) and
 * stores it as `name`: the demo seed's and `report --out`'s files.
 */
export async function addLocalFile(
  ctx: Pick<AppContext, 'store' | 'config'>,
  at: FilePlace,
  file: { path: string; name: string },
  limits: Partial<IngestLimits> = {},
): Promise<Artifact> {
  const parsed = await ingest({ name: file.name, path: file.path }, limits);
  const parse: FileParse = {
    kind: parsed.kind,
    format: parsed.format,
    summary: artifactSummary(parsed),
    derived: null,
  };
  return addFile(ctx, at, { filename: file.name, bytes: () => createReadStream(file.path), parse });
}
