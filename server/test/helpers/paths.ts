import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { generatedHostile } from '../../../scripts/testdata/index.ts';

/** Absolute path of the repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The reference corpus the repository carries: real files with answers from the tools themselves. */
export const samplesDir = fileURLToPath(new URL('../../../fixtures/reference/', import.meta.url));
export const fixturesDir = fileURLToPath(new URL('../../../fixtures/', import.meta.url));

/**
 * A file of the reference corpus by its path inside it (`pprof/…`, `loadtests/…`, `gobench/…`).
 * The corpus' decompression bombs are generated on first use rather than carried.
 */
export function samplePath(rel: string): string {
  const bomb = rel.startsWith('pprof/hostile/') ? generatedHostile[rel.slice('pprof/hostile/'.length)] : undefined;
  return bomb ? bomb() : samplesDir + rel;
}

/**
 * The Go toolchain for the live `go tool pprof` comparisons: $GO, else `go` on the PATH, else the
 * usual install places (.ci/run installs one under ~/.cache/stagediff/go when none is there).
 */
export function findGo(): string | null {
  const candidates = [
    process.env.GO,
    'go',
    '/usr/local/go/bin/go',
    `${homedir()}/.cache/stagediff/go/bin/go`,
    `${homedir()}/go/bin/go`,
  ].filter((c): c is string => !!c);
  for (const c of candidates) {
    if (c !== 'go' && !existsSync(c)) continue;
    if (spawnSync(c, ['version'], { encoding: 'utf8' }).status === 0) return c;
  }
  return null;
}

/** True in CI: suites that could skip on a developer machine (no Go, no PostgreSQL) must run there. */
export const inCi = process.env.CI === 'true' || process.env.CI === '1';
