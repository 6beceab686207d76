/**
 * Differential tests against the reference answers of `go tool pprof` and Go's profile package
 * (../shared/samples/pprof/expected): for every profile and every sample type, the totals and the
 * exact flat/cum of every function.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import { flatCum, sortByCum, sortByFlat, total } from '../../../src/analysis/flat-cum.ts';
import { diffProfiles } from '../../../src/analysis/diff.ts';
import { samplePath } from '../../helpers/paths.ts';
import { parseTopAll } from '../../helpers/pprof-text.ts';

interface AllTypes {
  file: string;
  defaultSampleType: string;
  numSamples: number;
  numLocations: number;
  numFunctions: number;
  numMappings: number;
  types: { type: string; unit: string; total: number; functions: Record<string, [number, number]> }[];
}

const json = <T>(rel: string): T => JSON.parse(readFileSync(samplePath(rel), 'utf8')) as T;

const sets: [string, AllTypes[]][] = [
  ['pprof/', json<AllTypes[]>('pprof/expected/alltypes.json')],
  ['pprof/large/', json<AllTypes[]>('pprof/large/expected/alltypes.json')],
];

describe('every profile, every sample type, every function equals the reference', () => {
  for (const [dir, entries] of sets) {
    for (const e of entries) {
      it(`${dir}${e.file}`, () => {
        const p = parsePprof(readFileSync(samplePath(dir + e.file)));
        expect(p.defaultSampleType).toBe(e.defaultSampleType);
        expect(p.stats).toEqual({
          numSamples: e.numSamples,
          numLocations: e.numLocations,
          numFunctions: e.numFunctions,
          numMappings: e.numMappings,
        });
        expect(p.sampleTypes).toEqual(e.types.map((t) => ({ type: t.type, unit: t.unit })));
        e.types.forEach((t, i) => {
          expect(total(p, i)).toBe(t.total);
          const ours: Record<string, [number, number]> = {};
          for (const r of flatCum(p, i)) ours[r.name] = [r.flat, r.cum];
          // Compare as sorted entries so a failure shows which function differs.
          const sorted = (o: Record<string, [number, number]>) =>
            Object.entries(o).sort((a, b) => (a[0] < b[0] ? -1 : 1));
          expect(sorted(ours)).toEqual(sorted(t.functions));
        });
      }, 60_000);
    }
  }
});

interface Summary {
  file: string;
  sample_types: { type: string; unit: string }[];
  default_sample_index: number;
  period_type: { type: string; unit: string } | null;
  period: number;
  duration_nanos: number;
  comments: string[];
  num_samples: number;
  num_empty_stack_samples: number;
  max_stack_depth_frames: number;
  num_samples_with_labels: number;
  label_keys: string[];
  numlabel_keys: string[];
  num_function_nodes: number;
  top10_by_flat: { name: string; flat: number; cum: number }[];
  top10_by_cum: { name: string; flat: number; cum: number }[];
}

describe('summaries, orderings and metadata equal the reference', () => {
  const index = json<{ profiles?: { file: string }[] } | { file: string }[]>('pprof/index.json');
  const files = (Array.isArray(index) ? index : (index.profiles ?? []))
    .map((x) => x.file)
    .filter((f) => !f.startsWith('hostile/'));
  it('index lists the profiles', () => expect(files.length).toBeGreaterThan(30));
  for (const file of files) {
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '';
    const base = file.slice(dir.length).replace(/\.pb(\.gz)?$/, '');
    it(file, () => {
      const ref = json<Summary>(`pprof/${dir}expected/${base}.json`);
      const p = parsePprof(readFileSync(samplePath(`pprof/${file}`)));
      const i = ref.default_sample_index;
      expect(p.sampleTypes[i]!.type).toBe(p.defaultSampleType);
      expect(p.periodType).toEqual(ref.period_type);
      expect(p.period).toBe(ref.period);
      expect(p.durationNanos).toBe(ref.duration_nanos);
      expect(p.comments).toEqual(ref.comments);
      let empty = 0;
      let maxDepth = 0;
      let withLabels = 0;
      const keys = new Set<string>();
      const numKeys = new Set<string>();
      for (let s = 0; s < p.sampleStack.length; s++) {
        const st = p.sampleStack[s]!;
        const depth = p.stackOffsets[st + 1]! - p.stackOffsets[st]!;
        if (depth === 0) empty++;
        maxDepth = Math.max(maxDepth, depth);
        const ls = p.labelSets[p.sampleLabelSet[s]!]!;
        if (ls.length > 0) withLabels++;
        for (const l of ls) (l.num !== undefined ? numKeys : keys).add(l.key);
      }
      expect(empty).toBe(ref.num_empty_stack_samples);
      expect(maxDepth).toBe(ref.max_stack_depth_frames);
      expect(withLabels).toBe(ref.num_samples_with_labels);
      expect([...keys].sort()).toEqual(ref.label_keys);
      expect([...numKeys].sort()).toEqual(ref.numlabel_keys);
      const rows = flatCum(p, i);
      expect(rows.length).toBe(ref.num_function_nodes);
      expect(sortByFlat([...rows]).slice(0, 10)).toEqual(ref.top10_by_flat);
      expect(sortByCum([...rows]).slice(0, 10)).toEqual(ref.top10_by_cum);
    }, 60_000);
  }
});

describe('before/after diffs equal go tool pprof -diff_base', () => {
  for (const kind of ['cpu', 'heap', 'allocs', 'goroutine', 'mutex', 'block']) {
    it(kind, () => {
      const ref = json<{
        sample_types: { type: string }[];
        sample_index: number;
        base_total: number;
        after_total: number;
        num_function_nodes: number;
        top10_by_flat: { name: string; flat: number; cum: number }[];
        top10_by_cum: { name: string; flat: number; cum: number }[];
      }>(`pprof/expected/diff/go_httpserver_${kind}.diff.json`);
      const base = parsePprof(readFileSync(samplePath(`pprof/go_httpserver_before_${kind}.pb.gz`)));
      const after = parsePprof(readFileSync(samplePath(`pprof/go_httpserver_after_${kind}.pb.gz`)));
      const d = diffProfiles(base, after, { sampleType: ref.sample_types[ref.sample_index]!.type, mode: 'absolute' });
      expect(d.baseTotal).toBe(ref.base_total);
      expect(d.targetTotal).toBe(ref.after_total);
      const nonZero = d.rows.filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0);
      expect(nonZero.length).toBe(ref.num_function_nodes);
      const asRef = (r: (typeof d.rows)[number]) => ({ name: r.name, flat: r.deltaFlat, cum: r.deltaCum });
      expect(nonZero.slice(0, 10).map(asRef)).toEqual(ref.top10_by_flat);
      const byCum = sortByCum(nonZero.map(asRef));
      expect(byCum.slice(0, 10)).toEqual(ref.top10_by_cum);
      // Every function of the exact text report (-nodecount=0), value for value.
      const text = readFileSync(samplePath(`pprof/expected/diff/go_httpserver_${kind}.diff_base.top_all.txt`), 'utf8');
      const refRows = parseTopAll(text);
      expect(refRows.size).toBeGreaterThan(0);
      const ours = new Map(nonZero.map((r) => [r.name, [r.deltaFlat, r.deltaCum]]));
      for (const [name, v] of refRows) expect([name, ours.get(name)]).toEqual([name, v]);
    });
  }
});
