import { describe, expect, it } from 'vitest';
import type { StageRow } from './api-types.ts';
import { presentLatencyColumns, stageTableCsv, stageTableMarkdown } from './stage-table-export.ts';

/** The bookkeeping fields of a stage whose figures come from one wrk run. */
const single = (id: string) => ({
  loadTests: 1,
  aggregated: false,
  summary: 'single-run' as const,
  runs: [],
  estimates: null,
  significance: { vsPrevious: null, vsBaseline: null },
  source: { format: 'wrk', artifactIds: [id], otherRuns: 0, headline: true },
});

const rows: StageRow[] = [
  {
    stageId: 'a',
    name: 'baseline',
    note: 'encoding/json | reflection',
    rps: 8589.52,
    requests: 43389,
    errors: 0,
    latencyMs: { p50: 3.19, p95: null, p99: 34.32 },
    vsPrevious: null,
    vsBaseline: null,
    ...single('a'),
  },
  {
    stageId: 'b',
    name: 'fast-json',
    note: '=cmd()',
    rps: 90190,
    requests: 455000,
    errors: 2,
    latencyMs: { p50: 0.3, p95: 0.9, p99: 2 },
    vsPrevious: { rps: 10.5, p50: 0.094, p95: null, p99: 0.058 },
    vsBaseline: { rps: 10.5, p50: 0.094, p95: null, p99: 0.058 },
    ...single('b'),
  },
];

describe('stage table export', () => {
  it('renders Markdown with escaped pipes and formatted units', () => {
    const md = stageTableMarkdown(rows);
    const lines = md.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(
      '| Stage | Key action | QPS | P50 | P95 | P99 | Errors | QPS vs prev | P95 vs prev | QPS vs baseline | P95 vs baseline |',
    );
    expect(lines[2]).toBe(
      '| baseline | encoding/json \\| reflection | 8,590 req/s | 3.19 ms | — | 34.3 ms | 0 | — | — | — | — |',
    );
    // One run per stage: the change is shown, not judged.
    expect(lines[3]).toContain('| ×10.5 · 1 run: no noise estimate |');
  });
  it('renders CSV with raw numbers and neutralised formulas', () => {
    const csv = stageTableCsv(rows).trim().split('\n');
    expect(csv[0]?.split(',')).toHaveLength(16 + 1 + 8 + 16);
    expect(csv[1]).toBe(`baseline,encoding/json | reflection,8589.52,43389,0,3.19,,34.32,,,,,,,,,1${','.repeat(24)}`);
    expect(csv[2]?.startsWith("fast-json,'=cmd(),90190,455000,2,0.3,0.9,2,10.5,0.094,,0.058")).toBe(true);
  });
});

/** Two stages of 5 runs each, as the server reports fixtures/repeated-runs (fast-json → pooled). */
const verdict = (ratio: number | null, p: number | null, status: 'significant' | 'no-change' | 'missing') => ({
  status,
  significant: status === 'significant',
  ratio,
  p,
  nBase: 5,
  nTarget: 5,
  alpha: 0.05,
  runsNeeded: 4,
});
const est = (values: number[], median: number) => ({
  n: values.length,
  values,
  median,
  lo: null,
  hi: Math.max(...values),
  ci: null,
});
const repeated: StageRow[] = [
  {
    ...rows[0]!,
    name: 'fast-json',
    note: '',
    rps: 4087.94,
    latencyMs: { p50: 6.43, p95: null, p99: 97.21 },
    loadTests: 5,
    summary: 'median',
    estimates: {
      rps: est([4108.04, 3846.39, 3192.78, 4519.54, 4087.94], 4087.94),
      p50: est([6.28, 6.59, 7.58, 5.95, 6.43], 6.43),
      p95: null,
      p99: est([240.58, 97.21, 103.31, 61.84, 72.1], 97.21),
    },
  },
  {
    ...rows[1]!,
    name: 'pooled',
    note: '',
    rps: 9742.1,
    latencyMs: { p50: 2.58, p95: null, p99: 56.32 },
    vsPrevious: { rps: 9742.1 / 4087.94, p50: 2.58 / 6.43, p95: null, p99: 56.32 / 97.21 },
    vsBaseline: { rps: 9742.1 / 4087.94, p50: 2.58 / 6.43, p95: null, p99: 56.32 / 97.21 },
    loadTests: 5,
    summary: 'median',
    estimates: null,
    significance: {
      vsPrevious: {
        rps: verdict(9742.1 / 4087.94, 0.007936507936507936, 'significant'),
        p50: verdict(2.58 / 6.43, 0.007936507936507936, 'significant'),
        p95: verdict(null, null, 'missing'),
        p99: verdict(56.32 / 97.21, 0.05555555555555555, 'no-change'),
      },
      vsBaseline: null,
    },
  },
];

describe('stage table export with repeated runs', () => {
  it('Markdown: medians with their ±, each change with p and n, ~ inside the noise, and a note', () => {
    const md = stageTableMarkdown(repeated).trim().split('\n');
    expect(md[0]).toContain('| QPS vs prev | P99 vs prev |');
    expect(md[2]).toBe(
      '| fast-json |  | 4,088 req/s ± ∞ (n=5) | 6.43 ms ± ∞ (n=5) | — | 97.2 ms ± ∞ (n=5) | 0 | — | — | — | — |',
    );
    expect(md[3]).toContain('| ×2.38 (p=0.008, n=5+5) | ~ (p=0.056, n=5+5) |');
    expect(md[5]).toMatch(/^Figures of stages with several runs are medians ± benchstat's 95 % confidence interval/);
  });
  it('CSV: runs, interval bounds (empty where unbounded), p and verdict per change', () => {
    const [head, a, b] = stageTableCsv(repeated)
      .trim()
      .split('\n')
      .map((l) => l.split(','));
    const col = (name: string) => head!.indexOf(name);
    expect(a![col('runs')]).toBe('5');
    expect(a![col('rps_ci_lo')]).toBe('');
    expect(a![col('rps_ci_hi')]).toBe('4519.54');
    expect(b![col('rps_vs_previous_p')]).toBe('0.007936507936507936');
    expect(b![col('rps_vs_previous_verdict')]).toBe('significant');
    expect(b![col('p99_vs_previous_verdict')]).toBe('no-change');
    expect(b![col('rps_vs_baseline_verdict')]).toBe('');
  });
});

describe('stage table columns', () => {
  it('leaves out latency columns no stage has', () => {
    expect(presentLatencyColumns(rows)).toEqual(['p50', 'p95', 'p99']);
    expect(presentLatencyColumns([rows[0]!])).toEqual(['p50', 'p99']);
    expect(presentLatencyColumns([])).toEqual([]);
  });
});
