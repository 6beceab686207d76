import { createReadStream } from 'node:fs';
import { type Parsed, ingest } from '../ingest/detect.ts';
import { aggregateSamples, encodeProfile } from '../model/profile-codec.ts';
import { profileModelBytes, storableSampleTypes } from './profile-bytes.ts';
import { ServiceError } from './errors.ts';
import { artifactSummary } from './analysis.ts';
import type { ModelCache } from './models.ts';

/** One file to detect and parse, spooled on local disk (never read from the database). */
export interface IngestFile {
  /** The spooled upload. */
  path: string;
  filename: string;
  /** sha256 of the bytes at `path`: the parsed model is kept warm under it. */
  sha256: string;
  maxInputBytes: number;
  maxDecompressedBytes: number;
}

/** What an upload stores about a parsed file. */
export interface IngestResult {
  kind: Parsed['kind'];
  format: string;
  summary: unknown;
  /** Bytes the parsed model occupies in memory (profiles; 0 otherwise). */
  modelBytes: number;
  /** A profile's compact derived form (profile-codec), for the store's cache once the blob is stored. */
  derived: Uint8Array | null;
  /** Runs the file holds: several for a load-test file of several runs of one tool, else 1. */
  runs: number;
}

/**
 * How many copies of a profile's model an analysis holds at its peak: a diff keeps both sides' models
 * and their merged, filtered and tree forms. A profile whose model times this exceeds a worker's heap
 * cannot be analysed under the configured limit, and the upload says so instead of a later view.
 */
export const ANALYSIS_MODEL_FACTOR = 3;

/**
 * Parses one spooled upload (detection by content) and summarises it; a profile too big to analyse
 * within `maxHeapBytes` is refused here, at upload, naming the number and the setting.
 */
export async function ingestFile(
  job: IngestFile,
  opts: { models: ModelCache; maxHeapBytes: number },
): Promise<IngestResult> {
  const raw = await ingest(
    { name: job.filename, open: () => createReadStream(job.path) },
    { maxInputBytes: job.maxInputBytes, maxDecompressedBytes: job.maxDecompressedBytes },
  );
  const parsed: Parsed =
    raw.kind === 'profile' ? { ...raw, profile: aggregateSamples(storableSampleTypes(raw.profile)) } : raw;
  const modelBytes = parsed.kind === 'profile' ? profileModelBytes(parsed.profile) : 0;
  const needed = modelBytes * ANALYSIS_MODEL_FACTOR;
  if (needed > opts.maxHeapBytes) {
    const mib = (b: number) => Math.ceil(b / 1024 / 1024);
    throw new ServiceError(
      'too-large-to-analyse',
      `its ${parsed.kind === 'profile' ? parsed.profile.stats.numSamples : 0} samples need about ${mib(needed)} MiB to analyse, more than the ${mib(opts.maxHeapBytes)} MiB an analysis worker may use: raise ANALYSIS_MAX_HEAP_MB to at least ${mib(needed) + 64}`,
    );
  }
  opts.models.prime(job.sha256, parsed);
  return {
    kind: parsed.kind,
    format: parsed.format,
    summary: artifactSummary(parsed),
    modelBytes,
    derived: parsed.kind === 'profile' ? encodeProfile(parsed.profile) : null,
    runs: parsed.kind === 'loadtest' ? parsed.runs.length : 1,
  };
}
