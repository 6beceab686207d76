import { describe, expect, it } from 'vitest';
import { detect, parse, tidy } from '../../src/ingest/gobench.ts';
import { detect as detectGc } from '../../src/ingest/gctrace.ts';
import { fixtureDir, gobenchSamples as samples, ingestError, read } from '../helpers/parser-tests.ts';

const ours = fixtureDir('gobench');

const BENCH_FILES: [URL, string][] = [
  ...[
    'json-encode-before.txt',
    'json-encode-after.txt',
    'string-concat-before.txt',
    'string-concat-after.txt',
    'unchanged-before.txt',
    'unchanged-after.txt',
    'unchanged-noisy-before.txt',
    'unchanged-noisy-after.txt',
    'multi-pkg-metric-before.txt',
    'multi-pkg-metric-after.txt',
    'slice-prealloc-regression-before.txt',
    'slice-prealloc-regression-after.txt',
  ].map((f) => [samples, f] as [URL, string]),
  [ours, 'kvjoin-before.txt'],
  [ours, 'kvjoin-after.txt'],
  [ours, 'kvjoin-rerun.txt'],
];

describe('go test -bench importer', () => {
  it.each(BENCH_FILES)('detects %s / %s from its content alone, and no other importer claims it', (dir, f) => {
    const head = read(dir, f).subarray(0, 4096);
    expect(detect(head)).toBeGreaterThanOrEqual(0.9);
    expect(detectGc(head)).toBe(0);
  });

  it('does not claim GC traces, folded stacks or .cpuprofile files', () => {
    for (const f of ['render-before-gctrace.txt', 'go_httpserver_before_cpu.folded', 'catalog-before.cpuprofile']) {
      expect(detect(read(samples, f).subarray(0, 4096))).toBe(0);
    }
  });

  it('reads json-encode: config, names as benchstat prints them, tidied units and values', () => {
    const run = parse(read(samples, 'json-encode-before.txt'));
    expect(run).toMatchObject({
      kind: 'benchmark',
      format: 'go-bench',
      config: { goos: 'linux', goarch: 'amd64', pkg: 'benchcorpus/jsonenc', cpu: 'AMD EPYC' },
    });
    expect(run.benchmarks.map((b) => `${b.unit} ${b.name} ${b.values.length}`)).toEqual([
      'sec/op Encode/small-2 10',
      'B/s Encode/small-2 10',
      'B/op Encode/small-2 10',
      'allocs/op Encode/small-2 10',
      'sec/op Encode/medium-2 10',
      'B/s Encode/medium-2 10',
      'B/op Encode/medium-2 10',
      'allocs/op Encode/medium-2 10',
      'sec/op Encode/large-2 10',
      'B/s Encode/large-2 10',
      'B/op Encode/large-2 10',
      'allocs/op Encode/large-2 10',
    ]);
    const small = run.benchmarks.filter((b) => b.name === 'Encode/small-2');
    // First line: 713.6 ns/op  316.70 MB/s  240 B/op  1 allocs/op.
    expect(small.map((b) => b.values[0])).toEqual([713.6 * 1e-9, 316.7 * 1e6, 240, 1]);
    // benchstat -format csv printed these medians.
    expect(small[0]!.median).toBe(6.805000000000001e-7);
    expect(small[1]!.median).toBe(3.3211e8);
  });

  it('keeps each package apart in a multi-package run, with a custom b.ReportMetric unit', () => {
    const run = parse(read(samples, 'multi-pkg-metric-before.txt'));
    expect(run.config).toEqual({ goos: 'linux', goarch: 'amd64', pkg: null, cpu: 'AMD EPYC' });
    const keys = run.benchmarks.map((b) => `${b.pkg} ${b.name} ${b.unit}`);
    expect(keys).toContain('benchcorpus/cache Get/zipf-2 misses/op');
    expect(keys).toContain('benchcorpus/tokenize Count-2 allocs/op');
    expect(run.benchmarks.find((b) => b.unit === 'misses/op' && b.name === 'Get/zipf-2')!.median).toBe(0.2843);
    expect(run.benchmarks.filter((b) => b.pkg === 'benchcorpus/cache')).toHaveLength(8);
    expect(run.benchmarks.filter((b) => b.pkg === 'benchcorpus/tokenize')).toHaveLength(6);
  });

  it('is JSON-serialisable in the design shape', () => {
    const run = parse(read(ours, 'kvjoin-after.txt'));
    const back = JSON.parse(JSON.stringify(run));
    expect(back).toEqual(run);
    expect(Object.keys(back.benchmarks[0]).sort()).toEqual(['config', 'median', 'name', 'pkg', 'unit', 'values']);
    expect(run.benchmarks.map((b) => b.unit)).toEqual(
      expect.arrayContaining(['sec/op', 'B/s', 'pairs/op', 'B/op', 'allocs/op']),
    );
  });

  it('skips the bare name lines `go test -v` prints before a benchmark log, and other output', () => {
    const text = [
      'goos: linux',
      'pkg: example.com/x',
      'BenchmarkFoo',
      '    foo_test.go:12: warming up',
      'BenchmarkFoo-8   \t 1000\t  1500 ns/op',
      'BenchmarkFoo-8   \t 1000\t  1700 ns/op',
      'PASS',
      'ok  \texample.com/x\t1.2s',
    ].join('\n');
    const run = parse(Buffer.from(text));
    expect(run.benchmarks).toEqual([
      {
        pkg: 'example.com/x',
        name: 'Foo-8',
        unit: 'sec/op',
        config: { goos: 'linux', pkg: 'example.com/x' },
        values: [1500e-9, 1700e-9],
        median: 1600e-9,
      },
    ]);
    expect(run.config).toEqual({ goos: 'linux', goarch: null, pkg: 'example.com/x', cpu: null });
  });

  it('tidies units like benchstat', () => {
    expect(tidy(2, 'ns/op')).toEqual({ value: 2e-9, unit: 'sec/op' });
    expect(tidy(3, 'MB/s')).toEqual({ value: 3e6, unit: 'B/s' });
    expect(tidy(5, 'ns/elem')).toEqual({ value: 5 / 1e9, unit: 'sec/elem' });
    expect(tidy(5, 'ops/ns')).toEqual({ value: 5, unit: 'ops/ns' }); // denominators are left alone
    expect(tidy(7, 'misses/op')).toEqual({ value: 7, unit: 'misses/op' });
  });

  it('reports bad input as typed errors with the line number', () => {
    expect(ingestError(() => parse(Buffer.from(''))).code).toBe('empty');
    expect(ingestError(() => parse(Buffer.from('PASS\nok  \texample.com/x\t0.01s\n'))).code).toBe('no-run');
    const bad = (line: string) => ingestError(() => parse(Buffer.from(`goos: linux\n${line}\n`)));
    expect(bad('BenchmarkA-2 100 12x ns/op')).toMatchObject({ code: 'malformed', line: 2 });
    expect(bad('BenchmarkA-2 100 12x ns/op').message).toContain('"12x" is not a number');
    expect(bad('BenchmarkA-2 lots 12 ns/op')).toMatchObject({ code: 'malformed', line: 2 });
    expect(bad('BenchmarkA-2 100 12 ns/op 5')).toMatchObject({ code: 'malformed', line: 2 });
    expect(bad('BenchmarkA-2 100')).toMatchObject({ code: 'malformed', line: 2 });
    expect(ingestError(() => parse(Buffer.from([0x1f, 0x8b, 0, 0]))).code).toBe('malformed');
  });
});
