/**
 * A profile's own drop_frames/keep_frames: Go regular expressions, run on the linear-time engine
 * with pprof's rule (profile.Prune: the outermost matching line, its simplified name, ^(…)$), checked
 * against go tool pprof on files we encode from the format's schema.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flatCum, total } from '../../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import { simplifyFunctionName } from '../../../src/ingest/pprof/decode.ts';
import { type ProfileSpec, encodePprof } from '../../helpers/pprof-encode.ts';
import { findGo, repoRoot } from '../../helpers/paths.ts';
import { parseTopAll } from '../../helpers/pprof-text.ts';

const go = findGo();
const haveGo = go !== null;
if (!haveGo) console.warn('\n*** go is not installed: the drop_frames comparison with go tool pprof is SKIPPED ***\n');
const dir = mkdtempSync(join(tmpdir(), 'stagediff-drop-'));

const a40 = 'a'.repeat(40);
/** 129 bytes: a backtracking engine needs 2^40 steps to reject a40 for ^((a+)+b)$. */
const redos: ProfileSpec = {
  sampleTypes: [['samples', 'count']],
  locations: [{ lines: [{ fn: a40 }] }, { lines: [{ fn: 'main' }] }],
  samples: [{ stack: [0, 1], values: [1] }],
  dropFrames: '(a+)+b',
};

function pprofTop(file: string): Map<string, [number, number]> {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', file],
    {
      encoding: 'utf8',
      env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' },
    },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return parseTopAll(r.stdout);
}

describe('drop_frames and keep_frames', () => {
  it('a 129-byte profile with drop_frames="(a+)+b" and a function named 40×"a" parses at once', () => {
    const bytes = encodePprof(redos);
    expect(bytes.length).toBeLessThan(160);
    const t0 = performance.now();
    const p = parsePprof(bytes);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(flatCum(p, 0).map((r) => r.name)).toEqual([a40, 'main'].sort());
  });

  it('stagediff inspect reads it too (a child process with a deadline, so a hang fails the test)', () => {
    const file = join(dir, 'redos.pb');
    writeFileSync(file, encodePprof(redos));
    const r = spawnSync(process.execPath, [`${repoRoot}server/bin/stagediff.mjs`, 'inspect', file, '--json'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).totals.samples).toBe(1);
  });

  it('matches the simplified name as pprof does: argument lists and Go receivers are cut at the first "("', () => {
    expect(simplifyFunctionName('std::vector<int>::push_back(int const&)')).toBe('std::vector<int>::push_back');
    expect(simplifyFunctionName('(anonymous namespace)::f(int)')).toBe('(anonymous namespace)::f');
    expect(simplifyFunctionName('Foo::operator()(int)')).toBe('Foo::operator()');
    expect(simplifyFunctionName('.ppc.entry')).toBe('ppc.entry');
    expect(simplifyFunctionName('main.(*Server).Serve')).toBe('main.');
  });

  const cases: [string, ProfileSpec][] = [
    [
      'drops from the outermost matching frame, keeps a keep_frames match, inlined lines included',
      {
        sampleTypes: [['cpu', 'nanoseconds']],
        locations: [
          { lines: [{ fn: 'runtime.memmove' }], mapping: '/bin/app' },
          { lines: [{ fn: 'alloc.inner' }, { fn: 'alloc.Outer' }], mapping: '/bin/app' },
          { lines: [{ fn: 'main.(*S).handle' }], mapping: '/bin/app' },
          { lines: [{ fn: 'main.main' }], mapping: '/bin/app' },
          { lines: [{ fn: 'alloc.Keep' }], mapping: '/bin/app' },
        ],
        samples: [
          { stack: [0, 1, 2, 3], values: [10] },
          { stack: [0, 2, 3], values: [20] },
          { stack: [0, 4, 3], values: [40] },
          { stack: [1, 3], values: [80] },
        ],
        dropFrames: String.raw`alloc\..*|main\.`,
        keepFrames: 'alloc.Keep',
      },
    ],
    [
      'an expression Go cannot compile leaves the profile unpruned, as go tool pprof does',
      {
        sampleTypes: [['samples', 'count']],
        locations: [{ lines: [{ fn: 'leaf' }] }, { lines: [{ fn: 'root' }] }],
        samples: [{ stack: [0, 1], values: [3] }],
        dropFrames: '(?=leaf)',
      },
    ],
    ['the pathological expression, in full', redos],
  ];
  for (const [what, spec] of cases) {
    it.skipIf(!haveGo)(`${what}: equals go tool pprof`, () => {
      const file = join(dir, `${what.length}.pb`);
      writeFileSync(file, encodePprof(spec));
      const p = parsePprof(encodePprof(spec));
      const ref = pprofTop(file);
      const ours = new Map(flatCum(p, 0).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));
      expect(new Map([...ours].sort())).toEqual(new Map([...ref].sort()));
      expect(total(p, 0)).toBe(spec.samples.reduce((a, s) => a + s.values[0]!, 0));
    });
  }
});
