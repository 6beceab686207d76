import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeArtifact } from './artifact-summary.ts';
import { type Artifact, apiUrl } from './api.ts';
import { matchRoute } from './navigation.ts';
import { forget, getRecent, getToken, saveToken } from './tokens.ts';

describe('describeArtifact', () => {
  it('summarises a profile and a load test in one line', () => {
    expect(
      describeArtifact({
        kind: 'profile',
        format: 'pprof',
        summary: {
          sampleTypes: [
            { type: 'samples', unit: 'count' },
            { type: 'cpu', unit: 'nanoseconds' },
          ],
          defaultSampleType: 'cpu',
          kind: 'cpu',
          durationNanos: 5_001_107_977,
          timeNanos: 0,
          numSamples: 465,
          totals: { samples: 701, cpu: 7_010_000_000 },
        },
      }),
    ).toBe('CPU profile · 5 s · cpu 7.01 s');
    expect(
      describeArtifact({
        kind: 'loadtest',
        format: 'wrk',
        summary: {
          requests: 43389,
          durationSeconds: 5.05,
          rps: 8589.52,
          errors: 2,
          latencyMs: { p50: 3.19, p95: null, p99: 34.32 },
          // The fields the line reads; the rest of a load-test summary is not shown in it.
        } as unknown as Artifact['summary'],
      }),
    ).toBe('8,590 req/s · 43,389 requests · P50 3.19 ms · P99 34.3 ms · 2 errors');
    // The summaries the server stores for a GC trace (GcTraceSummary) and a go test -bench output.
    const gc = {
      cycles: 73,
      forcedCycles: 1,
      stwPauseMs: { total: 48.77, p50: 0.567, p99: 8.62, max: 8.62 },
      lastCpuPercent: 2,
      maxHeapMb: 60,
      maxGoalMb: 70,
    };
    expect(describeArtifact({ kind: 'gctrace', format: 'gctrace', summary: gc })).toBe(
      'gctrace · 73 GC cycles · 1 forced · STW p99 8.62 ms',
    );
    const bench = {
      config: { goos: 'linux', goarch: 'amd64', pkg: 'benchcorpus/jsonenc', cpu: 'AMD EPYC' },
      benchmarks: 12,
      names: ['Encode/small-2', 'Encode/medium-2', 'Encode/large-2'],
    };
    expect(describeArtifact({ kind: 'benchmark', format: 'go-bench', summary: bench })).toBe(
      'go test -bench · 3 benchmarks · 12 series · benchcorpus/jsonenc',
    );
  });
});

describe('routes and URLs', () => {
  it('matches the two pages', () => {
    expect(matchRoute('/')).toEqual({ name: 'home' });
    expect(matchRoute('/c/abc-_1')).toEqual({ name: 'comparison', id: 'abc-_1' });
    expect(matchRoute('/c/a%2Fb')).toEqual({ name: 'comparison', id: 'a/b' });
    expect(matchRoute('/c/%E0%A4%A')).toEqual({ name: 'not-found' });
    expect(matchRoute('/elsewhere')).toEqual({ name: 'not-found' });
  });
  it('builds API URLs from the contract, leaving empty parameters out', () => {
    expect(
      apiUrl('diff', {
        params: { id: 'a/b' },
        query: {
          base: 'fast json',
          target: 'pooled',
          kind: 'allocs',
          sampleType: '',
          minFraction: 0,
          focus: undefined,
        },
      }),
    ).toBe('/api/comparisons/a%2Fb/diff?base=fast+json&target=pooled&kind=allocs&minFraction=0');
    expect(apiUrl('getComparison', { params: { id: 'demo' } })).toBe('/api/comparisons/demo');
    expect(apiUrl('checkFilters', { params: {}, query: { focus: ['a', 'b'] } })).toBe(
      '/api/filters/check?focus=a&focus=b',
    );
  });
});

describe('edit tokens in localStorage', () => {
  const store = new Map<string, string>();
  beforeEach(() => {
    store.clear();
    (globalThis as { localStorage?: unknown }).localStorage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    };
  });
  afterEach(() => {
    delete (globalThis as { localStorage?: unknown }).localStorage;
  });
  it('keeps tokens under stagediff.tokens and lists recent comparisons', () => {
    saveToken('c1', 't1', 'First');
    saveToken('c2', 't2', 'Second');
    expect(JSON.parse(store.get('stagediff.tokens') ?? '{}')).toEqual({ c1: 't1', c2: 't2' });
    expect(getToken('c1')).toBe('t1');
    expect(getRecent().map((r) => r.title)).toEqual(['Second', 'First']);
    forget('c1');
    expect(getToken('c1')).toBeNull();
    expect(getRecent().map((r) => r.id)).toEqual(['c2']);
  });
  it('survives corrupt storage', () => {
    store.set('stagediff.tokens', '{not json');
    expect(getToken('x')).toBeNull();
    expect(getRecent()).toEqual([]);
  });
});
