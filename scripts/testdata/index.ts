/**
 * Generated test inputs, made on first use and cached under the repository's ignored
 * `.testdata-cache/` folder: the big or synthetic files the suites and benchmarks need, which the
 * repository does not carry (they are larger than a fixture should be, and a seeded generator
 * makes them the same every time). Writes go to a temporary name first, so parallel test workers
 * never read a half-written file.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipBombValidProto, gzipBombZeros } from './bombs.ts';
import { generateSyntheticProfile, SYNTHETIC_HUGE, type SyntheticOptions } from './synthetic-profile.ts';
import { generateSyntheticTrace, type SyntheticTraceOptions } from './synthetic-trace.ts';

export const cacheDir = fileURLToPath(new URL('../../.testdata-cache/', import.meta.url));

/** Bump when a generator's output changes, so stale cached files are made again. */
const GENERATOR_VERSION = 2;

function cached(name: string, make: () => Buffer): string {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `v${GENERATOR_VERSION}-${name}`);
  if (!existsSync(path)) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, make());
    renameSync(tmp, path);
  }
  return path;
}

/** The hostile inputs that are generated rather than committed, by their corpus file names. */
export const generatedHostile: Record<string, () => string> = {
  'gzip_bomb_10GB_zeros.pb.gz': () => cached('gzip_bomb_10GB_zeros.pb.gz', gzipBombZeros),
  'gzip_bomb_1GiB_valid_proto.pb.gz': () => cached('gzip_bomb_1GiB_valid_proto.pb.gz', gzipBombValidProto),
};

/** A synthetic CPU profile with the given shape (gzip), cached by its options. */
export function syntheticProfilePath(o: SyntheticOptions = SYNTHETIC_HUGE): string {
  const run = o.sampleSeed === undefined ? '' : `_run${o.sampleSeed}`;
  const name = `synthetic_${o.seed}_${o.samples}_${o.stacks}_${o.functions}_${o.locations}_${o.deepShare}${run}.pb.gz`;
  return cached(name, () => generateSyntheticProfile(o).gz);
}

/** A second run of the 1M-sample profile's program: the same stacks, samples drawn anew. */
export const SYNTHETIC_HUGE_RUN2: SyntheticOptions = { ...SYNTHETIC_HUGE, sampleSeed: 20260902 };

/** A synthetic Go execution trace (see synthetic-trace.ts), cached by its options. */
export function syntheticTracePath(o: SyntheticTraceOptions): string {
  const name = `synthetic_trace_${o.version ?? 26}_${o.seed}_${o.events}_${o.procs ?? 4}_${o.generationNanos ?? 1e9}${o.nameless ? '_nameless' : ''}.trace`;
  return cached(name, () => generateSyntheticTrace(o));
}

/** About 10 M events (some 50 MB), in the Go 1.26 format. */
export const SYNTHETIC_TRACE_10M: SyntheticTraceOptions = { seed: 10, events: 10_000_000 };
/** About 10 MB (2 M events), the size of the benchmark's trace. */
export const SYNTHETIC_TRACE_10MB: SyntheticTraceOptions = { seed: 3, events: 1_900_000 };

export {
  generateSyntheticProfile,
  generateSyntheticTrace,
  SYNTHETIC_HUGE,
  type SyntheticOptions,
  type SyntheticTraceOptions,
};
