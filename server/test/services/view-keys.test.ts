import { describe, expect, it } from 'vitest';
import type { AnalysisOp } from '../../src/services/analysis-ops.ts';
import { ServiceError } from '../../src/services/errors.ts';
import { canonicalView } from '../../src/services/view-keys.ts';

const op = (o: unknown) => o as AnalysisOp;

describe('canonical view keys', () => {
  it('gives near-identical diff images one key: noise and width on the steps the UI offers, ignored parameters dropped', () => {
    const base = { base: 'a', target: 'b', mode: 'auto', minFraction: 0, width: 1200, noise: 0.001 };
    const keys = [
      { ...base },
      { ...base, noise: 0.00105 },
      { ...base, noise: 0.0012 },
      { ...base, width: 1240 },
      { ...base, width: 1150 },
      { ...base, limit: 50, sort: 'cum' },
      { ...base, focus: [] },
      { ...base, focus: '' },
    ].map((query) => canonicalView(op({ op: 'diffPng', query }), 2400).key);
    expect(new Set(keys).size).toBe(1);
    const other = canonicalView(op({ op: 'diffPng', query: { ...base, noise: 0.0013 } }), 2400);
    expect(other.key).not.toBe(keys[0]);
    expect((other.op as { query: { noise: number } }).query.noise).toBe(0.0015);
  });

  it('joins a repeated filter with "|" as the analysis does, so both spellings share a key', () => {
    const a = canonicalView(op({ op: 'top', query: { stage: 's', focus: ['net/http', 'json'] } }), 2400);
    const b = canonicalView(op({ op: 'top', query: { stage: 's', focus: 'net/http|json' } }), 2400);
    expect(a.key).toBe(b.key);
    expect((a.op as { query: { focus: string } }).query.focus).toBe('net/http|json');
  });

  it('keeps a call path as its frames: a frame name holding a comma is not two frames', () => {
    const one = canonicalView(
      op({ op: 'flamegraph', query: { stage: 's', root: ['main', 'pkg.Map[int,string]'] } }),
      2400,
    );
    const three = canonicalView(
      op({ op: 'flamegraph', query: { stage: 's', root: ['main', 'pkg.Map[int', 'string]'] } }),
      2400,
    );
    expect(one.key).not.toBe(three.key);
    expect(one.key).toBe('flamegraph?root=main&root=pkg.Map%5Bint%2Cstring%5D&stage=s');
  });

  it('keeps JSON views as asked (a JSON view costs 1)', () => {
    const v = canonicalView(op({ op: 'diff', query: { base: 'a', target: 'b', limit: 50, sort: 'cum' } }), 2400);
    expect(v.key).toBe('diff?base=a&limit=50&sort=cum&target=b');
    expect(v.cost).toBe(1);
    expect(canonicalView(op({ op: 'stageTable' }), 2400)).toMatchObject({ key: 'stageTable', cost: 1 });
  });

  it('charges an image by its width, a PNG twice, and refuses a width over IMAGE_MAX_WIDTH naming it', () => {
    const q = { stage: 's', minFraction: 0 };
    expect(canonicalView(op({ op: 'flamegraphSvg', query: { ...q, width: 1200 } }), 2400).cost).toBe(2);
    expect(canonicalView(op({ op: 'flamegraphSvg', query: { ...q, width: 800 } }), 2400).cost).toBe(1);
    expect(canonicalView(op({ op: 'flamegraphPng', query: { ...q, width: 2400 } }), 2400).cost).toBe(6);
    let e: unknown;
    try {
      canonicalView(op({ op: 'flamegraphPng', query: { ...q, width: 2500 } }), 2400);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).detail.param).toBe('width');
    expect((e as ServiceError).message).toMatch(/at most 2400 pixels .*IMAGE_MAX_WIDTH/);
  });
});
