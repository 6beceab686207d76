import { describe, expect, it } from 'vitest';
import type { DiffResponse, DiffRow, StageRow } from './api-types.ts';
import { biggestShareChanges, gcChange, whatChanged } from './what-changed.ts';

function row(name: string, b: [number, number], t: [number, number], status: DiffRow['status'] = 'changed'): DiffRow {
  return {
    name,
    base: { flat: b[0], cum: b[1] },
    target: { flat: t[0], cum: t[1] },
    deltaFlat: t[0] - b[0],
    deltaCum: t[1] - b[1],
    status,
  };
}

const diff: DiffResponse = {
  mode: 'absolute',
  unit: 'nanoseconds',
  sampleType: 'cpu',
  baseTotal: 100,
  targetTotal: 50,
  scale: { base: 1, target: 1 },
  warnings: [],
  perRequest: null,
  tree: { name: 'root', value: 150, delta: -50, base: 100, target: 50, children: [] },
  top: [
    row('main.main', [0, 100], [0, 50]),
    row('main.handler', [0, 70], [0, 3]),
    row('encoding/json.Marshal', [10, 68], [1, 2]),
    row('runtime.memmove', [5, 5], [6, 6]),
    row('main.fastEncode', [0, 0], [10, 10], 'new'),
  ],
};

const stage: StageRow = {
  stageId: 'b',
  name: 'fast-json',
  note: '',
  rps: 90000,
  requests: 1,
  errors: 0,
  latencyMs: { p50: 1, p95: 2, p99: 3 },
  vsPrevious: { rps: 10.5, p50: 0.5, p95: 0.22, p99: 0.3 },
  vsBaseline: { rps: 10.5, p50: 0.5, p95: 0.22, p99: 0.3 },
  loadTests: 1,
  aggregated: false,
  summary: 'single-run',
  runs: [],
  estimates: null,
  significance: { vsPrevious: null, vsBaseline: null },
  source: { format: 'wrk', artifactIds: ['w'], otherRuns: 0, headline: true },
};

/** A verdict of 5 runs against 5 (as the server reports fixtures/repeated-runs). */
const v = (ratio: number, p: number, status: 'significant' | 'no-change' | 'need-more-runs' = 'significant') => ({
  status,
  significant: status === 'significant',
  ratio,
  p,
  nBase: status === 'need-more-runs' ? 3 : 5,
  nTarget: status === 'need-more-runs' ? 3 : 5,
  alpha: 0.05,
  runsNeeded: 4,
});

describe('what changed', () => {
  it('picks the biggest share change, skipping roots and the same call chain (ties go to the larger flat change)', () => {
    const picks = biggestShareChanges(diff);
    expect(picks.map((p) => p.name)).toEqual(['encoding/json.Marshal', 'main.fastEncode']);
  });
  it('writes the sentence', () => {
    expect(whatChanged(stage, diff)).toBe(
      'encoding/json.Marshal: 68 % → 4 % of CPU; main.fastEncode: new, 20 % of CPU; QPS ×10.5 (1 run: no noise estimate); P95 −78 % (1 run: no noise estimate)',
    );
  });
  it('with repeated runs, words only significant changes as changes', () => {
    const s: StageRow = {
      ...stage,
      summary: 'median',
      loadTests: 5,
      vsPrevious: { rps: 2.38, p50: 0.4, p95: null, p99: 0.58 },
      significance: {
        vsPrevious: {
          rps: v(2.38, 0.0079),
          p50: v(0.4, 0.0079),
          p95: { ...v(1, 1), status: 'missing', ratio: null, p: null, significant: false },
          p99: v(0.58, 0.0556, 'no-change'),
        },
        vsBaseline: null,
      },
    };
    expect(whatChanged(s, null)).toBe('QPS ×2.38 (p=0.008); P99 ~ within the noise (p=0.056, n=5+5)');
    const rerun = { ...s, vsPrevious: { rps: 0.92, p50: null, p95: null, p99: null } };
    rerun.significance = {
      vsPrevious: { ...s.significance.vsPrevious!, rps: v(0.92, 0.151, 'no-change') },
      vsBaseline: null,
    };
    expect(whatChanged(rerun, null)).toBe('QPS ~ within the noise (p=0.151, n=5+5)');
    const few = { ...rerun };
    few.significance = {
      vsPrevious: { ...s.significance.vsPrevious!, rps: v(3, 0.1, 'need-more-runs') },
      vsBaseline: null,
    };
    expect(whatChanged(few, null)).toBe('QPS ~ within the noise (p=0.100, n=3+3; need ≥ 4 runs)');
  });
  it('skips profile changes inside the noise', () => {
    const noisy: DiffResponse = {
      ...diff,
      top: diff.top.map((r) =>
        r.name === 'encoding/json.Marshal'
          ? { ...r, noise: { flat: v(1, 0.3, 'no-change'), cum: v(1, 0.3, 'no-change') } }
          : { ...r, noise: { flat: v(1, 0.008), cum: v(1, 0.008) } },
      ),
    };
    // Marshal's fall is noise here; main.handler (same chain, until now skipped as its duplicate) takes its place.
    expect(biggestShareChanges(noisy).map((p) => p.name)).toEqual(['main.handler', 'main.fastEncode']);
  });
  it('falls back to P99 and describes the first stage', () => {
    const s = { ...stage, vsPrevious: { rps: 2, p50: null, p95: null, p99: 0.5 } };
    expect(whatChanged(s, null)).toBe('QPS ×2 (1 run: no noise estimate); P99 −50 % (1 run: no noise estimate)');
    const first = { ...stage, vsPrevious: null, latencyMs: { p50: 3, p95: null, p99: 34.32 }, rps: 8589.5, errors: 3 };
    expect(whatChanged(first, null)).toBe('QPS 8,590 req/s; P99 34.3 ms; 3 errors');
  });
  it('adds the GC pause change', () => {
    const g = (p99: number) => ({
      stageId: 'x',
      name: 'x',
      traces: 1,
      cycles: 4,
      forcedCycles: 1,
      stwPauseMs: { total: 3, p50: 0.5, p99, max: p99 },
      cpuPercent: 1,
      maxHeapMb: 30,
      maxGoalMb: 57,
    });
    expect(gcChange(g(8.62), g(1.53))).toEqual(['GC STW p99 8.62 ms → 1.53 ms']);
    expect(gcChange(undefined, g(8.62))).toEqual(['GC STW p99 8.62 ms']);
    expect(gcChange(g(1), undefined)).toEqual([]);
    const noLoad = { ...stage, rps: null, vsPrevious: { rps: null, p50: null, p95: null, p99: null }, errors: 0 };
    expect(whatChanged(noLoad, null, gcChange(g(8.62), g(1.53)))).toBe('GC STW p99 8.62 ms → 1.53 ms');
  });
});
