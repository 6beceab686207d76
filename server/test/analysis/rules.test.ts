/**
 * The analysis rules on small profiles written as text: flat/cum under recursion, the call tree and
 * its trimming, the diff in every mode, merging, and the sandwich view. Each expectation is worked
 * out by hand from pprof's definitions (see docs/architecture.md).
 */
import { describe, expect, it } from 'vitest';
import { callTree } from '../../src/analysis/call-tree.ts';
import { diffProfiles } from '../../src/analysis/diff.ts';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';
import { mergeProfiles } from '../../src/analysis/merge.ts';
import { sandwich } from '../../src/analysis/sandwich.ts';
import { formatTree, profileFromText } from '../helpers/profile-text.ts';

const byName = (rows: { name: string; flat: number; cum: number }[]) =>
  Object.fromEntries(rows.map((r) => [r.name, [r.flat, r.cum]]));

describe('flat and cum', () => {
  it('recursion counts once per sample: A;B;A;B weight 1', () => {
    const p = profileFromText('A;B;A;B 1');
    expect(byName(flatCum(p, 0))).toEqual({ A: [0, 1], B: [1, 1] });
  });

  it('flat goes to the leaf, cum to every distinct function on the stack', () => {
    const p = profileFromText(`
      main;handler;json.Marshal 30
      main;handler;log.Write 10
      main;handler 5
      main;gc 2
    `);
    expect(byName(flatCum(p, 0))).toEqual({
      main: [0, 47],
      handler: [5, 45],
      'json.Marshal': [30, 30],
      'log.Write': [10, 10],
      gc: [2, 2],
    });
    expect(total(p, 0)).toBe(47);
  });

  it('samples of the same stack add up, and a second sample type is kept apart', () => {
    const p = profileFromText(
      `
      main;alloc 1 512
      main;alloc 2 1024
      main 1 8
    `,
      [
        { type: 'alloc_objects', unit: 'count' },
        { type: 'alloc_space', unit: 'bytes' },
      ],
    );
    expect(byName(flatCum(p, 0))).toEqual({ main: [1, 4], alloc: [3, 3] });
    expect(byName(flatCum(p, 1))).toEqual({ main: [8, 1544], alloc: [1536, 1536] });
  });
});

describe('call tree', () => {
  it('merges equal paths and keeps recursion as nested frames', () => {
    const p = profileFromText(`
      main;a;b 3
      main;a;b 2
      main;a;c 1
      main;r;r;r 4
    `);
    expect(formatTree(callTree(p, 0).tree)).toEqual([
      'root 10',
      '  main 10',
      '    a 6',
      '      b 5',
      '      c 1',
      '    r 4',
      '      r 4',
      '        r 4',
    ]);
  });

  it('minFraction prunes small subtrees and says how much it pruned', () => {
    const p = profileFromText(`
      main;hot 97
      main;cold;x 2
      main;tiny 1
    `);
    const { tree, trim } = callTree(p, 0, 0.05);
    expect(formatTree(tree)).toEqual(['root 100', '  main 100', '    hot 97']);
    expect(trim.prunedNodes).toBeGreaterThanOrEqual(2);
  });
});

describe('diff (target − base)', () => {
  const base = profileFromText(`
    main;handler;json.Marshal 60
    main;handler;log.Write 30
    main;gc 10
  `);
  const target = profileFromText(`
    main;handler;appendJSON 10
    main;handler;log.Write 30
    main;gc 20
  `);

  it('absolute: rows ranked by |Δflat| then name, with their status, tree with per-node deltas', () => {
    const d = diffProfiles(base, target, { sampleType: 'cpu', mode: 'absolute' });
    expect([d.baseTotal, d.targetTotal]).toEqual([100, 60]);
    expect(d.rows.map((r) => [r.name, r.deltaFlat, r.deltaCum, r.status])).toEqual([
      ['json.Marshal', -60, -60, 'removed'],
      ['appendJSON', 10, 10, 'new'],
      ['gc', 10, 10, 'changed'],
      ['handler', 0, -50, 'changed'],
      ['log.Write', 0, 0, 'unchanged'],
      ['main', 0, -40, 'changed'],
    ]);
    expect(formatTree(d.tree)).toEqual([
      'root 100 → 60 (Δ -40)',
      '  main 100 → 60 (Δ -40)',
      '    gc 10 → 20 (Δ +10)',
      '    handler 90 → 40 (Δ -50)',
      '      appendJSON 0 → 10 (Δ +10)',
      '      json.Marshal 60 → 0 (Δ -60)',
      '      log.Write 30 → 30 (Δ +0)',
    ]);
  });

  it('normalize: the target is scaled to the base total, each sample rounded (pprof -normalize)', () => {
    const d = diffProfiles(base, target, { sampleType: 'cpu', mode: 'normalize' });
    // scale 100/60: 10 → 16.67 → 17, 30 → 50, 20 → 33.33 → 33
    expect(d.targetTotal).toBe(100);
    expect(byName(d.rows.map((r) => ({ name: r.name, flat: r.target.flat, cum: r.target.cum })))).toEqual({
      appendJSON: [17, 17],
      'log.Write': [50, 50],
      gc: [33, 33],
      handler: [0, 67],
      main: [0, 100],
      'json.Marshal': [0, 0],
    });
  });

  it('share: each side as a fraction of its own total', () => {
    const d = diffProfiles(base, target, { sampleType: 'cpu', mode: 'share' });
    expect(d.unit).toBe('fraction');
    const logWrite = d.rows.find((r) => r.name === 'log.Write')!;
    expect(logWrite.base.flat).toBeCloseTo(0.3, 12);
    expect(logWrite.target.flat).toBeCloseTo(0.5, 12);
    expect(logWrite.deltaFlat).toBeCloseTo(0.2, 12);
  });

  it('per-request: each side divided by the requests it served', () => {
    const d = diffProfiles(base, target, {
      sampleType: 'cpu',
      mode: 'per-request',
      baseRequests: 10,
      targetRequests: 20,
    });
    expect(d.unit).toBe('nanoseconds/request');
    expect([d.baseTotal, d.targetTotal]).toEqual([10, 3]);
    expect(() => diffProfiles(base, target, { sampleType: 'cpu', mode: 'per-request' })).toThrow(/requests/);
  });

  it('refuses sample types that do not match', () => {
    const heap = profileFromText('main 1', [{ type: 'inuse_space', unit: 'bytes' }]);
    expect(() => diffProfiles(base, heap, { sampleType: 'cpu', mode: 'absolute' })).toThrow(/no sample type "cpu"/);
  });
});

describe('merge', () => {
  it('concatenates samples: the merged figures are the sums', () => {
    const a = profileFromText('main;a 3\nmain;b 1');
    const b = profileFromText('main;a 2\nmain;c 4');
    const m = mergeProfiles([a, b]);
    expect(byName(flatCum(m, 0))).toEqual({ main: [0, 10], a: [5, 5], b: [1, 1], c: [4, 4] });
    expect(formatTree(callTree(m, 0).tree)).toEqual(['root 10', '  main 10', '    a 5', '    b 1', '    c 4']);
  });

  it('refuses profiles of different kinds', () => {
    const cpu = profileFromText('main 1');
    const heap = profileFromText('main 1', [{ type: 'inuse_space', unit: 'bytes' }]);
    expect(() => mergeProfiles([cpu, heap])).toThrow(/different sample types/);
  });
});

describe('sandwich', () => {
  it('callers above and callees below one function, each sample once under recursion', () => {
    const p = profileFromText(`
      main;handler;encode;reflect 4
      main;worker;encode 2
      main;handler;encode;encode;write 3
    `);
    const s = sandwich(p, 0, 'encode');
    expect([s.flat, s.cum]).toEqual([2, 9]);
    expect(formatTree(s.callers)).toEqual([
      'encode 9',
      '  encode 3',
      '    handler 3',
      '      main 3',
      '  handler 4',
      '    main 4',
      '  worker 2',
      '    main 2',
    ]);
    expect(formatTree(s.callees)).toEqual(['encode 9', '  encode 3', '    write 3', '  reflect 4']);
  });
});
