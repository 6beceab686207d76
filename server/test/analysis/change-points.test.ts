import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChangePointOptions, changePoints } from '../../src/analysis/change-points.ts';
import { samplePath } from '../helpers/paths.ts';

/*
 * Apache Otava 0.8.0's change points on its own kinds of synthetic series, recorded by
 * scripts/change-points-reference.py (see fixtures/reference/change-points/README.md).
 */
interface Recorded {
  name: string;
  kind: string;
  options: { window_len?: number; max_pvalue?: number; min_magnitude?: number };
  series: number[];
  changePoints: {
    index: number;
    pValue: number;
    meanBefore: number;
    meanAfter: number;
    forwardChangePercent: number;
  }[];
}

const answers = JSON.parse(readFileSync(samplePath('change-points/answers.json'), 'utf8')) as {
  tool: string;
  cases: Recorded[];
};

function options(o: Recorded['options']): ChangePointOptions {
  return { windowLen: o.window_len, maxPValue: o.max_pvalue, minMagnitude: o.min_magnitude };
}

/** Relative difference, with p-values below 1e-300 (near double underflow) counted as equal to each other. */
function relDiff(got: number, want: number): number {
  if (Math.abs(got) < 1e-300 && Math.abs(want) < 1e-300) return 0;
  return Math.abs(got - want) / Math.abs(want);
}

/** A seeded standard normal stream (mulberry32 + Box–Muller), so the A/A series is the same on every run. */
function normals(seed: number): () => number {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

describe('changePoints', () => {
  it('the recording covers every kind of series, with and without change points', () => {
    expect(answers.tool).toBe('apache-otava 0.8.0');
    const kinds = new Set(answers.cases.map((c) => c.kind));
    for (const k of ['mean-step', 'variance-step', 'none', 'multi-step', 'ties', 'constant', 'options'])
      expect(kinds).toContain(k);
    expect(answers.cases.filter((c) => c.changePoints.length === 0).length).toBeGreaterThan(10);
    expect(answers.cases.filter((c) => c.changePoints.length >= 2).length).toBeGreaterThan(5);
  });

  for (const c of answers.cases) {
    it(`equals otava on ${c.name}`, () => {
      const got = changePoints(c.series, options(c.options));
      expect(got.map((p) => p.index)).toEqual(c.changePoints.map((p) => p.index));
      for (const [i, want] of c.changePoints.entries()) {
        const p = got[i];
        if (p === undefined) throw new Error('missing change point');
        expect(relDiff(p.pValue, want.pValue), `p-value at ${want.index}`).toBeLessThan(1e-9);
        expect(relDiff(p.meanBefore, want.meanBefore)).toBeLessThan(1e-12);
        expect(relDiff(p.meanAfter, want.meanAfter)).toBeLessThan(1e-12);
        expect(Math.abs(p.forwardChangePercent - want.forwardChangePercent)).toBeLessThan(1e-9);
      }
    });
  }

  it('finds no change point in a constant series', () => {
    expect(changePoints(new Array(60).fill(123.25))).toEqual([]);
    expect(changePoints([7, 7, 7])).toEqual([]);
    expect(changePoints([])).toEqual([]);
    expect(changePoints([1])).toEqual([]);
  });

  it('finds no change point in A/A noise, and finds a planted step in the same noise', () => {
    const z = normals(40);
    const aa = Array.from({ length: 120 }, () => 1000 * (1 + 0.02 * z()));
    expect(changePoints(aa)).toEqual([]);
    const stepped = aa.map((v, i) => (i >= 70 ? v * 1.1 : v));
    const found = changePoints(stepped);
    expect(found.map((p) => p.index)).toEqual([70]);
    expect(found[0]?.forwardChangePercent).toBeGreaterThan(8);
    expect(found[0]?.pValue).toBeLessThan(1e-6);
  });

  it('refuses options and values it cannot analyse', () => {
    expect(() => changePoints([1, 2, 3], { windowLen: 1 })).toThrow(/windowLen/);
    expect(() => changePoints([1, 2, 3], { maxPValue: 2 })).toThrow(/maxPValue/);
    expect(() => changePoints([1, 2, 3], { minMagnitude: -1 })).toThrow(/minMagnitude/);
    expect(() => changePoints([1, Number.NaN, 3])).toThrow(/series\[1\]/);
  });
});
