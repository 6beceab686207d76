import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mannWhitneyU } from '../../src/analysis/benchstat.ts';
import {
  benjaminiHochberg,
  estimate,
  judgedFamily,
  minimumUTestP,
  runsNeeded,
  verdict,
} from '../../src/analysis/significance.ts';
import { parse } from '../../src/ingest/gobench.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { goFixed, readBenchstatCsv } from './benchstat-reference.ts';

/*
 * The per-run figures of real wrk runs (fixtures/repeated-runs), written as benchmark files with custom
 * units and fed to the real benchstat (fixtures/repeated-runs/benchstat.sh): our median, interval,
 * p-value and verdict must print as benchstat printed them.
 */
const dir = `${fixturesDir}repeated-runs/benchstat/`;
const PAIRS = [
  ['fast-json', 'pooled'],
  ['pooled', 'pooled-rerun'],
  ['fast-json-first3', 'pooled-first3'],
  ['pooled-first3', 'pooled-rerun-first3'],
  ['fast-json-first2', 'pooled-first2'],
  ['fast-json-first1', 'pooled-first1'],
  ['pooled', 'pooled-rerun-first3'],
  ['fast-json-first2', 'pooled'],
  ['fast-json', 'pooled-both'],
  ['pooled-both', 'fast-json-first3'],
] as const;

function values(file: string, unit: string): number[] {
  const run = parse(readFileSync(`${dir}${file}.txt`));
  const s = run.benchmarks.find((b) => b.unit === unit);
  if (!s) throw new Error(`${file}: no ${unit}`);
  return s.values;
}

const ciCell = (ci: number | null) => (ci === null ? '∞' : `${goFixed(100 * ci, 0)}%`);

/** The "need >= N samples to detect a difference" footnote per table of benchstat's text output, in order. */
function needMoreRuns(text: string): boolean[] {
  return text
    .split(/\n(?=\s*│[^\n]*│\n\s*│)/)
    .filter((t) => t.includes('│'))
    .map((t) => {
      const row = t.split('\n').find((l) => l.startsWith('Wrk'))!;
      const marks = /\)\s*([¹²³])\s*$/.exec(row)?.[1];
      if (!marks) return false;
      const note = t.split('\n').find((l) => l.startsWith(marks));
      return /need >= \d+ samples to detect a difference/.test(note ?? '');
    });
}

describe('repeated runs: our statistics print as benchstat printed them', () => {
  for (const [a, b] of PAIRS) {
    it(`${a} vs ${b}`, () => {
      const csv = readBenchstatCsv(readFileSync(`${dir}expected/${a}--${b}.csv`, 'utf8'));
      const needs = needMoreRuns(readFileSync(`${dir}expected/${a}--${b}.txt`, 'utf8'));
      expect(csv.map((r) => r.unit)).toEqual(['req/s', 'p50-ms', 'p99-ms']);
      expect(needs).toHaveLength(3);
      csv.forEach((ref, i) => {
        const base = values(a, ref.unit);
        const target = values(b, ref.unit);
        const eb = estimate(base)!;
        const et = estimate(target)!;
        expect(eb.median).toBe(Number(ref.base.center));
        expect(et.median).toBe(Number(ref.target.center));
        expect(ciCell(eb.ci)).toBe(ref.base.ci);
        expect(ciCell(et.ci)).toBe(ref.target.ci);
        const v = verdict(base, target);
        const n = base.length === target.length ? `${base.length}` : `${base.length}+${target.length}`;
        // benchstat tests single runs too (p = 1); we report them as having no noise estimate.
        const p = v.p ?? mannWhitneyU(base, target).p;
        expect(`p=${goFixed(p, 3)} n=${n}`).toBe(ref.pn);
        expect(v.status === 'significant').toBe(ref.delta !== '~');
        // Where benchstat asks for more samples, no verdict is given; we also withhold one wherever no
        // ordering of these runs could reach alpha (benchstat prints "~" for, e.g., 2+5 runs).
        if (needs[i]) expect(['too-few-runs', 'single-run']).toContain(v.status);
        const unreachable = base.length > 1 && target.length > 1 && minimumUTestP(base.length, target.length) > 0.05;
        expect(v.status === 'too-few-runs').toBe(unreachable);
        if (base.length === 1 || target.length === 1) expect(v.status).toBe('single-run');
        expect(v.ratio).toBe(et.median / eb.median);
      });
    });
  }

  it('the headline facts of the recording', () => {
    // fast-json → pooled: every pooled run beat every fast-json run, the smallest p 5+5 runs can give.
    const gain = verdict(values('fast-json', 'req/s'), values('pooled', 'req/s'));
    expect(gain).toMatchObject({ status: 'significant', nBase: 5, nTarget: 5 });
    expect(gain.p).toBeCloseTo(2 / 252, 12);
    expect(gain.ratio).toBeGreaterThan(2);
    // the same code measured twice: no significant difference.
    expect(verdict(values('pooled', 'req/s'), values('pooled-rerun', 'req/s')).status).toBe('no-change');
  });
});

describe('too few runs: no ordering of the runs could reach alpha', () => {
  it('the smallest p of the two-sided U test for n against n runs', () => {
    expect(minimumUTestP(1)).toBe(1);
    expect(minimumUTestP(2)).toBeCloseTo(1 / 3, 15);
    expect(minimumUTestP(3)).toBeCloseTo(0.1, 15);
    expect(minimumUTestP(4)).toBeCloseTo(0.02857142857142857, 15);
    expect(minimumUTestP(5)).toBeCloseTo(0.007936507936507936, 15);
    expect(runsNeeded(0.05)).toBe(4);
    expect(runsNeeded(0.01)).toBe(5);
    // Unequal sides: 2 against 6 can give at best 2/C(8,2) = 0.071.
    expect(minimumUTestP(2, 6)).toBeCloseTo(2 / 28, 15);
    expect(minimumUTestP(3, 5)).toBeCloseTo(2 / 56, 15);
  });

  it('3 against 3 completely apart is too few runs: no 3+3 result can reach 0.05', () => {
    const v = verdict([1, 2, 3], [10, 11, 12]);
    expect(v).toMatchObject({ status: 'too-few-runs', minP: 0.1 });
    expect(v.p).toBeCloseTo(0.1, 12);
  });

  it('2 against 6 completely apart is too few runs, however many runs the other side has', () => {
    const v = verdict([1, 2], [10, 11, 12, 13, 14, 15]);
    expect(v.status).toBe('too-few-runs');
    expect(v.p).toBeCloseTo(2 / 28, 12);
    expect(v.minP).toBeCloseTo(2 / 28, 15);
  });

  it('4 against 3 (best p 2/35 = 0.057) is too few runs; 5 against 3 apart is significant', () => {
    expect(verdict([1, 2, 3, 4], [10, 11, 12]).status).toBe('too-few-runs');
    expect(verdict([1, 2, 3, 4, 5], [10, 11, 12]).status).toBe('significant');
    expect(verdict([1, 2, 3, 4], [10, 11, 12, 13]).status).toBe('significant');
    expect(verdict([1, 5, 3, 12], [10, 2, 11, 4]).status).toBe('no-change');
  });

  it('missing figures and single runs', () => {
    expect(verdict([], [1, 2]).status).toBe('missing');
    expect(verdict([null, null], [1, 2]).status).toBe('missing');
    expect(verdict([5], [10, 11])).toMatchObject({ status: 'single-run', p: null, ratio: 10.5 / 5 });
    expect(estimate([null])).toBeNull();
    expect(estimate([3])).toMatchObject({ n: 1, median: 3, lo: null, hi: null, ci: null });
  });
});

describe('false discovery rate across a family of tests (Benjamini–Hochberg)', () => {
  it('adjusts p-values step-up: p·m/rank, the running minimum from the largest, capped at 1', () => {
    // m = 8: p·8/i = 0.008, 0.032, 0.104, 0.082, 0.0672, 0.08, 0.0846, 0.205; minimum from the top down.
    const ps = [0.041, 0.001, 0.205, 0.039, 0.008, 0.06, 0.074, 0.042];
    const q = benjaminiHochberg(ps);
    const want = [0.0672, 0.008, 0.205, 0.0672, 0.032, 0.08, (0.074 * 8) / 7, 0.0672];
    for (const [i, x] of q.entries()) expect(x).toBeCloseTo(want[i]!, 12);
    expect(benjaminiHochberg([0.9, 0.95])).toEqual([0.95, 0.95]);
    expect(benjaminiHochberg([0.6, 0.6, 0.6]).every((x) => x === 0.6)).toBe(true);
    expect(benjaminiHochberg([])).toEqual([]);
    expect(benjaminiHochberg([0.5])).toEqual([0.5]);
  });

  it('judges a family: significant only where q ≤ alpha, run counts deciding as for one test', () => {
    const apart = { p: 2 / 924, nBase: 6, nTarget: 6, ratio: 0 };
    // One of 20 at 6+6's smallest p: q = 0.0022 · 20 = 0.043 ≤ 0.05; one of 30: q = 0.065, not significant.
    const family = (m: number) => [apart, ...Array.from({ length: m - 1 }, () => ({ ...apart, p: 0.5, ratio: 1 }))];
    expect(judgedFamily(family(20))[0]).toMatchObject({ status: 'significant', p: 2 / 924 });
    expect(judgedFamily(family(20))[0]!.q).toBeCloseTo((2 / 924) * 20, 12);
    expect(judgedFamily(family(30))[0]).toMatchObject({ status: 'no-change', p: 2 / 924 });
    expect(judgedFamily([{ p: 0.1, nBase: 3, nTarget: 3, ratio: 2 }])[0]).toMatchObject({
      status: 'too-few-runs',
      q: null,
    });
    expect(judgedFamily([{ p: 1, nBase: 1, nTarget: 5, ratio: 2 }])[0]).toMatchObject({
      status: 'single-run',
      q: null,
    });
  });
});
