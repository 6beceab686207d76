import { describe, expect, it } from 'vitest';
import { percentileCurve, percentileToX, relativeSeries, sparklinePoints, xToPercentileLabel } from './charts.ts';
import { classifyDiff, diffColor } from './diff-color.ts';
import { countNodes, findWidest, loadSearchEngine, makeMatcher, pruneTree } from './tree.ts';

describe('charts helpers', () => {
  it('maps percentiles to 1/(1-p)', () => {
    expect(percentileToX(50)).toBeCloseTo(2);
    expect(percentileToX(99)).toBeCloseTo(100);
    expect(percentileToX(99.9)).toBeCloseTo(1000);
    expect(xToPercentileLabel(1000)).toBe('99.9 %');
    expect(xToPercentileLabel(2)).toBe('50 %');
    expect(
      percentileCurve([
        { percentile: 99, ms: 30 },
        { percentile: 50, ms: 3 },
        { percentile: 100, ms: 99 },
      ]),
    ).toEqual([
      [2, 3],
      [expect.closeTo(100, 6), 30],
    ]);
  });
  it('builds relative series and sparklines', () => {
    expect(
      relativeSeries(
        [
          { t: 10, v: 1 },
          { t: 11, v: null },
        ],
        (b) => b.v,
      ),
    ).toEqual([
      [0, 1],
      [1, null],
    ]);
    expect(sparklinePoints([0, 10], 100, 20)).toBe('2.0,18.0 98.0,2.0');
    expect(sparklinePoints([null, null], 100, 20)).toBe('');
  });
});

describe('diff colours', () => {
  const opts = { noiseFloor: 0.01, reference: 1000 };
  it('keeps changes under the noise floor neutral', () => {
    expect(classifyDiff({ base: 100, target: 105, delta: 5 }, opts).cls).toBe('neutral');
    expect(classifyDiff({ base: 100, target: 200, delta: 100 }, opts).cls).toBe('more');
    expect(classifyDiff({ base: 200, target: 100, delta: -100 }, opts).cls).toBe('less');
    expect(classifyDiff({ base: 0, target: 50, delta: 50 }, opts).cls).toBe('new');
    expect(classifyDiff({ base: 50, target: 0, delta: -50 }, opts).cls).toBe('removed');
  });
  it('is red for more and blue for less', () => {
    const red = diffColor({ base: 0, target: 50, delta: 50 }, opts);
    const blue = diffColor({ base: 50, target: 0, delta: -50 }, opts);
    expect(red).toBe('rgb(214, 39, 40)');
    expect(blue).toBe('rgb(31, 100, 200)');
  });
});

describe('tree helpers', () => {
  const tree = {
    name: 'root',
    value: 10,
    children: [
      { name: 'a', value: 3, children: [{ name: 'x', value: 1, children: [] }] },
      { name: 'b', value: 7, children: [{ name: 'x', value: 6, children: [] }] },
    ],
  };
  it('counts and finds the widest match', () => {
    expect(countNodes(tree)).toBe(5);
    expect(
      findWidest(
        tree,
        (n) => n.name === 'x',
        (n) => n.value,
      )?.value,
    ).toBe(6);
    expect(
      findWidest(
        tree,
        (n) => n.name === 'zz',
        (n) => n.value,
      ),
    ).toBeNull();
  });
  it('matches by Go regex (once its engine is loaded) or by substring when the regex is invalid', async () => {
    expect(makeMatcher('')('x')).toBe(false);
    expect(makeMatcher('JSON|^net/')('net/http.serve')).toBe(false); // a substring until the engine loads
    await loadSearchEngine();
    expect(makeMatcher('JSON|^net/')('net/http.serve')).toBe(true);
    expect(makeMatcher('json\\.M')('encoding/json.Marshal')).toBe(true);
    expect(makeMatcher('(*conn')('net/http.(*conn).serve')).toBe(true);
    // Linear time: a backtracking engine would not return from this.
    const t0 = performance.now();
    expect(makeMatcher('(a+)+b')('a'.repeat(5000))).toBe(false);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('pruneTree', () => {
  it('drops narrow subtrees and keeps the rest intact', () => {
    const tree = {
      name: 'root',
      value: 100,
      children: [
        {
          name: 'big',
          value: 90,
          children: [{ name: 'tiny', value: 0.5, children: [{ name: 'tinier', value: 0.1, children: [] }] }],
        },
        { name: 'small', value: 0.9, children: [] },
      ],
    };
    const { tree: pruned, dropped } = pruneTree(tree, 1);
    expect(dropped).toBe(3);
    expect(pruned).toEqual({ name: 'root', value: 100, children: [{ name: 'big', value: 90, children: [] }] });
    expect(tree.children).toHaveLength(2);
    expect(pruneTree(tree, 0.01).tree).toBe(tree);
  });
});
