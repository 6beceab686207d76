import type { Store, Artifact } from '../store/index.ts';
import { type Parsed, ingest } from '../ingest/detect.ts';
import '../ingest/registry.ts';
import { CODE_VERSION } from './code-version.ts';
import type { Metrics } from './metrics.ts';

/** A stored blob as a byte stream (opened when first read). */
export async function* blobSource(store: Store, sha256: string, filename: string): AsyncGenerator<Buffer> {
  const stream = await store.openBlobStream(sha256);
  if (!stream) throw new Error(`the stored bytes of ${filename} (${sha256}) are missing`);
  yield* stream as AsyncIterable<Buffer>;
}

/**
 * The version cached derived results carry: a hash of the parsers, model and analysis code (see
 * code-version.ts), so a fix re-derives from the stored originals instead of serving old numbers.
 */
export const MODEL_VERSION = CODE_VERSION;

/**
 * Parsed models of stored blobs. Parsing is a pure function of the bytes, so an entry keyed by
 * sha256 can never be stale; a small in-process LRU avoids re-parsing on every view. Each replica
 * keeps its own; nothing here is shared state.
 */
export class ModelCache {
  private readonly entries = new Map<string, Promise<Parsed>>();

  constructor(
    private readonly store: Store,
    private readonly metrics: Metrics,
    private readonly maxDecompressedBytes: number,
    private readonly capacity = 64,
  ) {}

  get(a: Pick<Artifact, 'sha256' | 'filename'>): Promise<Parsed> {
    const hit = this.entries.get(a.sha256);
    if (hit) {
      this.entries.delete(a.sha256);
      this.entries.set(a.sha256, hit);
      this.metrics.inc('stagediff_model_cache_hits_total');
      return hit;
    }
    this.metrics.inc('stagediff_model_cache_misses_total');
    const p = this.load(a);
    this.entries.set(a.sha256, p);
    p.catch(() => this.entries.delete(a.sha256));
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return p;
  }

  private async load(a: Pick<Artifact, 'sha256' | 'filename'>): Promise<Parsed> {
    const t0 = performance.now();
    const parsed = await ingest(
      { name: a.filename, open: () => blobSource(this.store, a.sha256, a.filename) },
      { maxDecompressedBytes: this.maxDecompressedBytes, maxInputBytes: Number.MAX_SAFE_INTEGER },
    );
    this.metrics.observe('stagediff_parse_seconds', (performance.now() - t0) / 1000);
    return parsed;
  }
}
