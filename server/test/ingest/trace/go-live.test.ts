/**
 * Differential test against the installed `go tool trace` itself, on generated traces (seeded, Go 1.26
 * and Go 1.22 formats, several generations, GC cycles with stop-the-world pauses and assists):
 * every derived profile equals `go tool trace -pprof=KIND` read by `go tool pprof -top`. Skipped, loudly,
 * only when no Go 1.26 or later is installed (an older `go tool trace` cannot read the 1.26 format).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syntheticTracePath } from '../../../../scripts/testdata/index.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import { DERIVED_KINDS } from '../../../src/ingest/trace/index.ts';
import { findGo } from '../../helpers/paths.ts';
import { compareWithTop } from '../../helpers/trace-compare.ts';

const go = findGo();
const minor = go ? Number(/go1\.(\d+)/.exec(spawnSync(go, ['version'], { encoding: 'utf8' }).stdout)?.[1] ?? 0) : 0;
const haveGo = minor >= 26;
if (!haveGo) console.warn('\n*** Go 1.26+ is not installed: the live go tool trace comparison is SKIPPED ***\n');

const work = mkdtempSync(join(tmpdir(), 'stagediff-trace-live-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(args: string[], out?: string): string {
  const r = spawnSync(go!, args, { encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, TZ: 'UTC' } });
  if (r.status !== 0) throw new Error(`go ${args.join(' ')}: ${r.stderr}`);
  return out ?? r.stdout;
}

describe.skipIf(!haveGo)('derived profiles agree with go tool trace, live', () => {
  it.each([
    { seed: 5, events: 600_000, version: 26 as const, generationNanos: 2e8 },
    { seed: 6, events: 400_000, version: 22 as const, generationNanos: 2e8, procs: 3 },
    // one function's frames written without a name: pprof's row is `<unknown>`
    { seed: 7, events: 100_000, version: 26 as const, generationNanos: 2e8, nameless: true },
  ])(
    'synthetic trace %o',
    async (o) => {
      const path = syntheticTracePath(o);
      const p = await ingest({ name: 't', path });
      if (p.kind !== 'trace') throw new Error(p.kind);
      expect(p.trace.summary.generations).toBeGreaterThan(1);
      expect(p.trace.summary.gc.cycles).toBeGreaterThan(0);
      for (const kind of DERIVED_KINDS) {
        const pb = join(work, `${o.seed}-${kind}.pb`);
        const r = spawnSync('sh', ['-c', `"$0" tool trace -pprof=${kind} "$1" > "$2"`, go!, path, pb]);
        if (r.status !== 0) throw new Error(`go tool trace -pprof=${kind}: ${r.stderr}`);
        const top = (index: string, unit: string[]) =>
          run([
            'tool',
            'pprof',
            '-symbolize=none',
            '-top',
            '-nodecount=0',
            '-nodefraction=0',
            '-edgefraction=0',
            `-sample_index=${index}`,
            ...unit,
            pb,
          ]);
        const { diffs, figures } = compareWithTop(p.trace.profiles[kind], {
          contentions: top('contentions', []),
          delay: top('delay', ['-unit=ns']),
        });
        expect([kind, diffs]).toEqual([kind, []]);
        expect(figures).toBeGreaterThan(2);
        if (o.nameless && kind === 'net') {
          const names = new Set(p.trace.profiles[kind].frames.map((f) => f.name));
          expect(names).toContain('<unknown>');
          expect(names).not.toContain('');
        }
      }
    },
    300_000,
  );
});
