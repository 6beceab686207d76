import { describe, expect, it } from 'vitest';
import { flatCum, sortByFlat, total, type FunctionTotals } from '../../src/analysis/flat-cum.ts';
import { detect, parse } from '../../src/ingest/cpuprofile.ts';
import { detect as detectFolded } from '../../src/ingest/folded.ts';
import { detect as detectGc } from '../../src/ingest/gctrace.ts';
import { detect as detectBench } from '../../src/ingest/gobench.ts';
import { sampleTypeIndex, type Profile } from '../../src/model/profile.ts';
import { fixtureDir, gobenchSamples as samples, ingestError, read, readExpectedJson } from '../helpers/parser-tests.ts';

const ours = fixtureDir('cpuprofile');

interface ExpectedFunction {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
  selfSamples: number;
  selfTimeUs: number;
  totalTimeUs: number;
}

/** Our function name for a reference entry: the bare name, or qualified with (url:line) when ambiguous. */
function ourName(p: Profile, f: ExpectedFunction): string {
  const base = f.functionName || '(anonymous)';
  const line = f.lineNumber >= 0 ? f.lineNumber + 1 : 0;
  const candidates = new Set(
    p.frames
      .filter((fr) => fr.file === f.url && fr.line === line && (fr.name === base || fr.name.startsWith(`${base} (`)))
      .map((fr) => fr.name),
  );
  if (candidates.size !== 1)
    throw new Error(`no unique frame for ${base} ${f.url}:${line}: ${[...candidates].join(' | ')}`);
  return [...candidates][0]!;
}

const byName = (rows: FunctionTotals[]) => new Map(rows.map((r) => [r.name, r]));

describe.each([
  ['catalog-before.cpuprofile', 'catalog-before.cpuprofile.json'],
  ['catalog-after.cpuprofile', 'catalog-after.cpuprofile.json'],
])('.cpuprofile %s against expected/%s', (file, expectedFile) => {
  const bytes = read(samples, file);
  const expected = readExpectedJson(expectedFile);
  const profile = parse(bytes);
  const cpu = sampleTypeIndex(profile, 'cpu');
  const count = sampleTypeIndex(profile, 'samples');

  it('is detected from its content alone, and by no other importer', () => {
    const head = bytes.subarray(0, 4096);
    expect(detect(head)).toBeGreaterThanOrEqual(0.9);
    expect([detectBench(head), detectGc(head), detectFolded(head)]).toEqual([0, 0, 0]);
  });

  it('has sample types samples/count and cpu/microseconds (default) and the reference totals', () => {
    expect(profile.format).toBe('cpuprofile');
    expect(profile.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'microseconds' },
    ]);
    expect(profile.defaultSampleType).toBe('cpu');
    expect(total(profile, count)).toBe(expected.sampleCount);
    // Each tick weighs the next tick's delta: the total is last − first tick time.
    expect(total(profile, cpu)).toBe(expected.totalSampledTimeUs);
    expect(expected.totalSampledTimeUs).toBe(expected.lastSampleTimeUs - expected.firstSampleTimeUs);
    expect(profile.durationNanos).toBe(expected.durationUs * 1000);
    expect(profile.stats.numSamples).toBe(expected.sampleCount);
    expect(profile.stats.numLocations).toBe(expected.nodeCount);
  });

  it('has the reference top-10 functions by self time: self µs, self samples, total µs, in order', () => {
    const top = expected.top10BySelfTime as ExpectedFunction[];
    const cpuRows = byName(flatCum(profile, cpu));
    const countRows = byName(flatCum(profile, count));
    const got = top.map((f) => {
      const name = ourName(profile, f);
      return {
        name,
        selfTimeUs: cpuRows.get(name)?.flat,
        totalTimeUs: cpuRows.get(name)?.cum,
        selfSamples: countRows.get(name)?.flat,
      };
    });
    expect(got).toEqual(
      top.map((f) => ({
        name: ourName(profile, f),
        selfTimeUs: f.selfTimeUs,
        totalTimeUs: f.totalTimeUs,
        selfSamples: f.selfSamples,
      })),
    );
    // And our own ranking (pprof's -top order) puts the same ten first.
    expect(
      sortByFlat(flatCum(profile, cpu))
        .slice(0, 10)
        .map((r) => r.name),
    ).toEqual(got.map((g) => g.name));
  });

  it('has the reference top-10 by self samples', () => {
    const top = expected.top10BySelfSamples as ExpectedFunction[];
    const countRows = byName(flatCum(profile, count));
    expect(top.map((f) => countRows.get(ourName(profile, f))?.flat)).toEqual(top.map((f) => f.selfSamples));
  });

  it('keeps V8 pseudo frames and leaves (root) out of the stacks', () => {
    const names = new Set(profile.frames.map((f) => f.name));
    expect(names.has('(garbage collector)')).toBe(true);
    expect(names.has('(program)')).toBe(true);
    expect(names.has('(root)')).toBe(false);
  });
});

describe('.cpuprofile from our own node --cpu-prof run (fixtures/cpuprofile/wordfreq.cpuprofile)', () => {
  const bytes = read(ours, 'wordfreq.cpuprofile');
  const raw = JSON.parse(bytes.toString('utf8')) as { samples: number[]; timeDeltas: number[]; startTime: number };
  const profile = parse(bytes);
  const cpu = sampleTypeIndex(profile, 'cpu');

  it('is detected without its name and keeps every tick', () => {
    expect(detect(bytes.subarray(0, 2048))).toBeGreaterThanOrEqual(0.9);
    expect(total(profile, sampleTypeIndex(profile, 'samples'))).toBe(raw.samples.length);
    const sampled = raw.timeDeltas.slice(1).reduce((a, b) => a + b, 0);
    expect(total(profile, cpu)).toBe(sampled);
  });

  it('names the two different `tally` functions apart by file and 1-based line', () => {
    const rows = byName(flatCum(profile, cpu));
    const tallies = [...rows.keys()].filter((n) => n.startsWith('tally')).sort();
    expect(tallies).toEqual([
      expect.stringMatching(/^tally \(file:\/\/\/.*\/fixtures\/cpuprofile\/src\/tally-object\.js:2\)$/),
      expect.stringMatching(/^tally \(file:\/\/\/.*\/fixtures\/cpuprofile\/src\/wordfreq\.js:18\)$/),
    ]);
    // Both did real work in the 1.2 s loop, under the module's top-level code.
    for (const t of tallies) expect(rows.get(t)!.cum).toBeGreaterThan(0);
    expect(rows.has('makeText')).toBe(true);
  });
});

describe('.cpuprofile errors', () => {
  const minimal = (over: Record<string, unknown> = {}) =>
    Buffer.from(
      JSON.stringify({
        nodes: [
          { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: [2] },
          { id: 2, callFrame: { functionName: '', url: 'file:///a.js', lineNumber: 0, columnNumber: 0 } },
        ],
        startTime: 0,
        endTime: 30,
        samples: [2, 2, 2],
        timeDeltas: [5, 10, 15],
        ...over,
      }),
    );

  it('parses a minimal profile: anonymous function, next-delta weights', () => {
    const p = parse(minimal());
    expect([...p.values[1]!]).toEqual([10, 15, 0]);
    expect(p.frames.map((f) => [f.name, f.file, f.line])).toEqual([['(anonymous)', 'file:///a.js', 1]]);
  });

  it('orders ticks by time when deltas are negative', () => {
    const p = parse(minimal({ samples: [2, 1, 2], timeDeltas: [10, 20, -5] }));
    // times 10, 30, 25 → order 0, 2, 1 → weights 15, 0 (last), 5.
    expect([...p.values[1]!]).toEqual([15, 5, 0]);
  });

  it('reports bad input as typed errors', () => {
    expect(ingestError(() => parse(Buffer.from(''))).code).toBe('empty');
    expect(ingestError(() => parse(Buffer.from('{\n "nodes": [\n  oops\n]}')))).toMatchObject({
      code: 'malformed',
      line: 3,
    });
    expect(ingestError(() => parse(Buffer.from('[{"name":"ProfileChunk"}]'))).code).toBe('unsupported');
    // the older layout is read (below), but not without its timestamps
    expect(ingestError(() => parse(Buffer.from('{"head":{"children":[]}}')))).toMatchObject({
      code: 'malformed',
      message: expect.stringMatching(/timestamps/),
    });
    expect(ingestError(() => parse(Buffer.from('{"a":1}'))).code).toBe('not-a-profile');
    expect(ingestError(() => parse(minimal({ samples: [2, 9, 2] }))).code).toBe('invalid-reference');
    expect(ingestError(() => parse(minimal({ timeDeltas: [1, 2] }))).code).toBe('value-count-mismatch');
  });
});

describe('the older head/timestamps layout (v8-profiler-next export, fixtures/cpuprofile/head-layout.cpuprofile)', () => {
  const bytes = read(ours, 'head-layout.cpuprofile');
  const doc = JSON.parse(bytes.toString());

  it('is detected from its content alone', () => {
    expect(detect(bytes)).toBeGreaterThan(0.5);
    expect(detectFolded(bytes)).toBe(0);
  });

  it('leaf samples per function position equal the file’s samples; time spans the ticks', () => {
    const p = parse(bytes);
    // (V8's hitCount misses the tick taken when profiling stops: the samples list is the record)
    const where = new Map<number, string>();
    const todo = [doc.head];
    while (todo.length > 0) {
      const n = todo.pop();
      where.set(n.id, `${n.url}:${n.lineNumber}`);
      todo.push(...n.children);
    }
    const want = new Map<string, number>();
    for (const id of doc.samples as number[]) want.set(where.get(id)!, (want.get(where.get(id)!) ?? 0) + 1);
    const got = new Map<string, number>();
    for (let s = 0; s < p.sampleStack.length; s++) {
      const leaf = p.frames[p.stackFrames[p.stackOffsets[p.sampleStack[s]!]!]!]!;
      const k = `${leaf.file}:${leaf.line}`;
      got.set(k, (got.get(k) ?? 0) + 1);
    }
    expect(got).toEqual(want);
    expect(p.stats.numSamples).toBe(doc.samples.length);
    const ts = doc.timestamps as number[];
    expect(total(p, sampleTypeIndex(p, 'cpu'))).toBe(ts[ts.length - 1]! - ts[0]!);
  });

  it('a timestamps array one longer than samples: the last timestamp closes the last sample, as DevTools reads it', () => {
    // the same file without its last sample: its timestamp now only ends the sample before it
    const closed = { ...doc, samples: (doc.samples as number[]).slice(0, -1) };
    const p = parse(Buffer.from(JSON.stringify(closed)));
    const ts = doc.timestamps as number[];
    expect(p.stats.numSamples).toBe(ts.length - 1);
    const cpu = sampleTypeIndex(p, 'cpu');
    expect(total(p, cpu)).toBe(ts[ts.length - 1]! - ts[0]!);
    // each sample lasts until the next timestamp, the last one included
    const n = p.values[cpu]!.length;
    expect(p.values[cpu]![n - 1]).toBe(ts[ts.length - 1]! - ts[ts.length - 2]!);
    // and a count that fits neither reading is still refused
    const bad = { ...doc, samples: (doc.samples as number[]).slice(0, -2) };
    expect(ingestError(() => parse(Buffer.from(JSON.stringify(bad)))).code).toBe('value-count-mismatch');
  });
});
