import { type Artifact, type CacheKey, type Store, StoreError } from '../store/index.ts';
import { aggregateSamples, decodeProfile, encodeProfile } from '../model/profile-codec.ts';
import { type Parsed, ingest } from '../ingest/detect.ts';
import { CODE_VERSION } from './code-version.ts';
import { profileModelBytes, storableSampleTypes } from './profile-bytes.ts';
import type { Metrics } from './metrics.ts';

/** A stored blob as a byte stream (opened when first read). */
export async function* blobSource(store: Store, sha256: string, filename: string): AsyncGenerator<Buffer> {
  const stream = await store.openBlobStream(sha256);
  // Deleted since the request read the comparison (a delete racing a view): a conflict, not a crash.
  if (!stream)
    throw new StoreError('blob-missing', `${filename} was removed while it was being analysed; reload the comparison`);
  yield* stream as AsyncIterable<Buffer>;
}

/**
 * The version cached derived results carry: a hash of the parsers, model and analysis code (see
 * code-version.ts), so a fix re-derives from the stored originals instead of serving old numbers.
 */
export const MODEL_VERSION = CODE_VERSION;

/** Where a profile's compact derived form (profile-codec) is cached, by the blob it was parsed from. */
export function derivedProfileKey(sha256: string): CacheKey {
  return { scope: { sha256 }, key: 'profile-model', modelVersion: MODEL_VERSION };
}

/** Bytes a parsed model holds in memory, roughly (profiles exactly for their arrays). */
function parsedBytes(p: Parsed): number {
  switch (p.kind) {
    case 'profile':
      return profileModelBytes(p.profile);
    case 'loadtest':
      return p.runs.reduce(
        (n, r) => n + 4096 + (r.timeline?.length ?? 0) * 256 + (r.latencyDistribution?.length ?? 0) * 64,
        0,
      );
    case 'benchmark':
      return 4096 + p.benchmark.benchmarks.reduce((n, b) => n + 256 + b.values.length * 8, 0);
    case 'gctrace':
      return 4096 + p.gctrace.cycles.length * 512;
    case 'metrics':
      return 4096 + p.metrics.series.length * (256 + p.metrics.times.length * 24);
    case 'schedtrace':
      return 4096 + p.schedtrace.samples.length * 512 + (p.schedtrace.gc?.cycles.length ?? 0) * 512;
    case 'trace': {
      const t = p.trace;
      return (
        65536 +
        t.summary.timeline.buckets.length * 96 +
        Object.values(t.profiles).reduce((n, prof) => n + profileModelBytes(prof), 0)
      );
    }
  }
}

/**
 * Parsed models of stored blobs. Parsing is a pure function of the bytes, so an entry keyed by
 * sha256 can never be stale; a small in-process LRU, bounded by count and by bytes, avoids
 * re-parsing on every view. Each replica keeps its own; nothing here is shared state.
 */
export class ModelCache {
  private readonly entries = new Map<string, { parsed: Promise<Parsed>; bytes: number }>();
  private bytes = 0;
  private readonly capacity: number;
  private readonly maxBytes: number;

  constructor(
    private readonly store: Store,
    private readonly metrics: Metrics,
    private readonly maxDecompressedBytes: number,
    bounds: { capacity?: number; maxBytes?: number } = {},
  ) {
    this.capacity = bounds.capacity ?? 64;
    this.maxBytes = bounds.maxBytes ?? Number.MAX_SAFE_INTEGER;
  }

  /** Keeps an already parsed model (an upload parsed here) so the first view needs no parse. */
  prime(sha256: string, parsed: Parsed): void {
    this.drop(sha256);
    this.add(sha256, Promise.resolve(parsed), parsedBytes(parsed));
  }

  get(a: Pick<Artifact, 'sha256' | 'filename'>): Promise<Parsed> {
    const hit = this.entries.get(a.sha256);
    if (hit) {
      this.entries.delete(a.sha256);
      this.entries.set(a.sha256, hit);
      this.metrics.inc('stagediff_model_cache_hits_total');
      return hit.parsed;
    }
    this.metrics.inc('stagediff_model_cache_misses_total');
    const p = this.load(a);
    this.add(a.sha256, p, 0);
    p.then(
      (parsed) => {
        const e = this.entries.get(a.sha256);
        if (e?.parsed !== p) return;
        e.bytes = parsedBytes(parsed);
        this.bytes += e.bytes;
        this.evict(a.sha256);
      },
      () => {
        if (this.entries.get(a.sha256)?.parsed === p) this.drop(a.sha256);
      },
    );
    return p;
  }

  private add(sha256: string, parsed: Promise<Parsed>, bytes: number): void {
    this.entries.set(sha256, { parsed, bytes });
    this.bytes += bytes;
    this.evict(sha256);
  }

  private drop(sha256: string): void {
    const e = this.entries.get(sha256);
    if (!e) return;
    this.bytes -= e.bytes;
    this.entries.delete(sha256);
  }

  /** Least recently used first, never the entry just added (a view needs it even when it is big). */
  private evict(keep: string): void {
    for (const k of [...this.entries.keys()]) {
      if (this.entries.size <= this.capacity && this.bytes <= this.maxBytes) break;
      if (k !== keep) this.drop(k);
    }
  }

  private async load(a: Pick<Artifact, 'sha256' | 'filename'>): Promise<Parsed> {
    // A profile parsed before (at upload, or by any replica) is read back in its compact form.
    const stored = await this.store.cacheGet(derivedProfileKey(a.sha256));
    const profile = stored ? decodeProfile(stored) : null;
    if (profile) {
      this.metrics.inc('stagediff_derived_model_hits_total');
      return { kind: 'profile', format: profile.format, profile };
    }
    const t0 = performance.now();
    const parsed = await ingest(
      { name: a.filename, open: () => blobSource(this.store, a.sha256, a.filename) },
      { maxDecompressedBytes: this.maxDecompressedBytes, maxInputBytes: Number.MAX_SAFE_INTEGER },
    );
    this.metrics.observe('stagediff_parse_seconds', (performance.now() - t0) / 1000);
    if (parsed.kind !== 'profile') return parsed;
    const compact = aggregateSamples(storableSampleTypes(parsed.profile));
    // Best effort: a store that cannot keep it now only means a later parse.
    await this.store.cachePut(derivedProfileKey(a.sha256), encodeProfile(compact)).catch(() => undefined);
    return { ...parsed, profile: compact };
  }
}
