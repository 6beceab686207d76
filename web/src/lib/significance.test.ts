import { describe, expect, it } from 'vitest';
import type { BenchmarkDiff, BenchmarkDiffRow } from './api-types.ts';
import { benchVerdicts, estimateTitle, formatCi, verdictText, type Verdict } from './significance.ts';

/** Verdicts as the server computes them on fixtures/repeated-runs (benchstat agrees: p=0.008, p=0.151). */
const v = (over: Partial<Verdict>): Verdict => ({
  status: 'significant',
  significant: true,
  ratio: 9742.1 / 4087.94,
  p: 0.007936507936507936,
  nBase: 5,
  nTarget: 5,
  alpha: 0.05,
  runsNeeded: 4,
  ...over,
});

describe('verdict wording', () => {
  it('a significant change: the figure with p and both run counts, coloured', () => {
    expect(verdictText(v({}), 'ratio')).toMatchObject({ text: '×2.38 (p=0.008, n=5+5)', significant: true });
    expect(verdictText(v({ ratio: 2.58 / 6.43 }), 'percent').text).toBe('−60 % (p=0.008, n=5+5)');
  });
  it('inside the noise: "~" with p, never coloured; the figure stays in the tooltip', () => {
    const t = verdictText(
      v({ status: 'no-change', significant: false, ratio: 8944.03 / 9742.1, p: 0.1507936 }),
      'ratio',
    );
    expect(t).toMatchObject({ text: '~ (p=0.151, n=5+5)', change: '~', significant: false });
    expect(t.title).toContain('×0.92');
  });
  it('benchstat’s rule: with fewer than 4 runs per side, say more runs are needed', () => {
    const t = verdictText(v({ status: 'need-more-runs', significant: false, p: 0.1, nBase: 3, nTarget: 3 }), 'ratio');
    expect(t.text).toBe('~ (p=0.100, n=3+3, need ≥ 4 runs)');
    expect(t.significant).toBe(false);
  });
  it('one run: the change is shown but not judged', () => {
    const t = verdictText(
      v({ status: 'single-run', significant: false, p: null, nBase: 1, nTarget: 1, ratio: 1.032 }),
      'ratio',
    );
    expect(t.text).toBe('×1.03 · 1 run: no noise estimate');
    expect(t.significant).toBe(false);
    expect(t.title).toContain('each stage has a single run');
  });
  it('missing figures', () => {
    expect(verdictText(null, 'ratio').text).toBe('—');
    expect(verdictText(v({ status: 'missing', ratio: null, p: null }), 'percent').text).toBe('—');
  });
});

describe('median spread', () => {
  it('prints benchstat’s ±, ∞ below 6 runs, nothing for one run', () => {
    expect(formatCi({ n: 10, values: [], median: 9216.24, lo: 8120.86, hi: 9742.1, ci: 0.1688 })).toBe('± 17 %');
    expect(formatCi({ n: 5, values: [], median: 1, lo: null, hi: 2, ci: null })).toBe('± ∞');
    expect(formatCi({ n: 1, values: [1], median: 1, lo: null, hi: null, ci: null })).toBe('');
    expect(formatCi(null)).toBe('');
  });
  it('the tooltip lists the runs and the interval', () => {
    const e = { n: 3, values: [1, 2, 3], median: 2, lo: null, hi: 3, ci: null };
    expect(estimateTitle(e, String)).toBe(
      'median of 3 runs (1, 2, 3); no 95 % confidence interval with 3 runs (benchstat needs 6)',
    );
    const f = { ...e, n: 6, values: [1, 2, 3, 4, 5, 6], lo: 1, hi: 6, median: 3.5 };
    expect(estimateTitle(f, String)).toContain('95 % confidence interval of the median 1 – 6');
  });
});

describe('benchmark verdicts in the stage table', () => {
  const row = (name: string, unit: string, b: number, t: number, p: number): BenchmarkDiffRow => ({
    pkg: 'x',
    name,
    unit,
    base: { median: b, ci: 0.01 },
    target: { median: t, ci: 0.01 },
    deltaPercent: (t / b - 1) * 100,
    p,
    n: 6,
    nBase: 6,
    nTarget: 6,
    significant: p <= 0.05,
  });
  const diff: BenchmarkDiff = {
    kind: 'benchmark-diff',
    alpha: 0.05,
    rows: [
      row('A', 'sec/op', 4, 1, 0.002),
      row('B', 'sec/op', 9, 1, 0.002),
      row('C', 'sec/op', 1, 1.01, 0.3),
      row('A', 'B/op', 100, 100, 1),
      row('A', 'allocs/op', 10, 2, 0.002),
      row('A', 'widgets/op', 1, 2, 0.002),
    ],
  };
  it('benchstat’s geomean per unit and the count of significant changes; ~ when none is', () => {
    const vs = benchVerdicts(diff);
    expect(vs.map((x) => x.unit)).toEqual(['sec/op', 'B/op', 'allocs/op']);
    // geomean of the ratios 1/4, 1/9, 1.01 = (0.25 · 0.1111 · 1.01)^(1/3) = 0.30394 → −69.61 %
    expect(vs[0]).toMatchObject({
      text: 'sec/op −69.61 % geomean, 2 of 3 significant',
      significant: true,
      better: true,
    });
    expect(vs[1]).toMatchObject({ text: 'B/op ~ (p=1.000 n=6)', significant: false });
    expect(vs[2]).toMatchObject({ text: 'allocs/op −80.00 % (p=0.002 n=6)', significant: true, better: true });
  });
});
