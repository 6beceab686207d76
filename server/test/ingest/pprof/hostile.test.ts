/**
 * Hostile inputs (../shared/samples/pprof/hostile): each gives a typed error or the correct result,
 * within 5 s, with bounded memory, and never crashes the process.
 */
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { flatCum, sortByCum, sortByFlat, total } from '../../../src/analysis/flat-cum.ts';
import { callTree } from '../../../src/analysis/call-tree.ts';
import { repoRoot, samplePath } from '../../helpers/paths.ts';

interface Entry {
  file: string;
  category: string;
  valid_profile_proto: boolean;
  expected_behavior: string;
  reference_result: { accepted: boolean; message?: string };
}
const manifest = JSON.parse(readFileSync(samplePath('pprof/hostile/manifest.json'), 'utf8')) as Entry[];

/** Files the reference accepts but we refuse on purpose, with the reason. */
const refusedOnPurpose: Record<string, string> = {
  // Values beyond 2^53 cannot be shown exactly as JSON numbers; the manifest allows saying so.
  'int64_extreme_values.pb.gz': 'value-out-of-range',
};

describe('hostile pprof inputs', () => {
  it('the manifest covers the folder', () => expect(manifest.length).toBeGreaterThanOrEqual(35));
  for (const e of manifest) {
    it(`${e.file}: ${e.expected_behavior.slice(0, 60)}`, () => {
      const bytes = readFileSync(samplePath(`pprof/hostile/${e.file}`));
      const t0 = performance.now();
      let result: ReturnType<typeof parsePprof> | IngestError;
      try {
        result = parsePprof(bytes);
      } catch (err) {
        // Anything but a typed ingest error is a crash.
        expect(err).toBeInstanceOf(IngestError);
        result = err as IngestError;
      }
      expect(performance.now() - t0).toBeLessThan(5000);
      const base = e.file.replace(/\.pb(\.gz)?$/, '');
      const expectedPath = samplePath(`pprof/hostile/expected/${base}.json`);
      if (refusedOnPurpose[e.file]) {
        expect(result).toBeInstanceOf(IngestError);
        expect((result as IngestError).code).toBe(refusedOnPurpose[e.file]);
        return;
      }
      if (!e.reference_result.accepted) {
        expect(result, `${e.file} must be refused`).toBeInstanceOf(IngestError);
        expect((result as IngestError).message.length).toBeGreaterThan(5);
        return;
      }
      expect(result, `${e.file} must be accepted`).not.toBeInstanceOf(IngestError);
      const p = result as ReturnType<typeof parsePprof>;
      const ref = JSON.parse(readFileSync(expectedPath, 'utf8')) as {
        totals: { type: string; total: number }[];
        default_sample_index: number;
        num_samples: number;
        top10_by_flat: { name: string; flat: number; cum: number }[];
        top10_by_cum: { name: string; flat: number; cum: number }[];
      };
      expect(p.stats.numSamples).toBe(ref.num_samples);
      ref.totals.forEach((t, i) => expect(total(p, i)).toBe(t.total));
      const rows = flatCum(p, ref.default_sample_index);
      // Names are compared after the same lenient UTF-8 decoding Go's JSON encoder applies.
      expect(sortByFlat([...rows]).slice(0, 10)).toEqual(ref.top10_by_flat);
      expect(sortByCum([...rows]).slice(0, 10)).toEqual(ref.top10_by_cum);
      // Building the tree of a 10,000-deep recursion must not overflow the stack.
      const { tree } = callTree(p, ref.default_sample_index);
      expect(tree.value).toBe(ref.totals[ref.default_sample_index]!.total);
      expect(JSON.parse(JSON.stringify(tree)).name).toBe('root');
    }, 20_000);
  }
});

describe('decompression bombs stay within bounded memory', () => {
  const runner = `
    const { readFileSync } = await import('node:fs');
    const { parsePprof } = await import('./server/src/ingest/pprof/index.ts');
    const t0 = Date.now();
    let outcome;
    try { parsePprof(readFileSync(process.argv[1]), { maxDecompressedBytes: Number(process.argv[2]) }); outcome = 'accepted'; }
    catch (e) { outcome = e.code ?? 'crash:' + e.message; }
    // Peak RSS of this process alone: ru_maxrss is inherited from the parent across fork/exec on
    // Linux, VmHWM is not.
    const hwm = /VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    console.log(JSON.stringify({ outcome, ms: Date.now() - t0, maxRssKb: hwm ? Number(hwm[1]) : process.resourceUsage().maxRSS }));
  `;
  for (const [file, cap] of [
    ['gzip_bomb_10GB_zeros.pb.gz', 512 * 1024 * 1024],
    ['gzip_bomb_1GiB_valid_proto.pb.gz', 512 * 1024 * 1024],
    ['gzip_bomb_1GiB_valid_proto.pb.gz', 64 * 1024 * 1024],
  ] as const) {
    it(`${file} with a ${cap / 2 ** 20} MiB cap: refused as too large, fast, well under 1 GB`, () => {
      const path = samplePath(`pprof/hostile/${file}`);
      expect(existsSync(path)).toBe(true);
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', runner, path, String(cap)],
        { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { outcome: string; ms: number; maxRssKb: number };
      expect(out.outcome).toBe('too-large');
      expect(out.ms).toBeLessThan(5000);
      expect(out.maxRssKb * 1024).toBeLessThan(cap + 300 * 1024 * 1024);
    }, 40_000);
  }
});
