import { describe, expect, it } from 'vitest';
import { type Aligned, alignLines, splitLines } from '../../src/sources/line-diff.ts';

/** The longest common subsequence's length, by the textbook table (small inputs only). */
function lcs(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      dp[i]![j] = a[i] === b[j] ? dp[i + 1]![j + 1]! + 1 : Math.max(dp[i + 1]![j]!, dp[i]![j + 1]!);
  return dp[0]![0]!;
}

function sides(al: Aligned[], a: string[], b: string[]) {
  return {
    a: al.flatMap((x) => (x.kind === 'added' ? [] : [a[x.a]])),
    b: al.flatMap((x) => (x.kind === 'removed' ? [] : [b[x.b]])),
    same: al.filter((x) => x.kind === 'same'),
  };
}

describe('line alignment', () => {
  it('is a shortest edit script: both files in order, pairs equal, as many pairs as the LCS (2,000 seeded cases)', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let t = 0; t < 2000; t++) {
      const gen = () => Array.from({ length: Math.floor(rnd() * 30) }, () => 'abcde'[Math.floor(rnd() * 5)]!);
      const a = gen();
      const b = gen();
      const al = alignLines(a, b);
      const s = sides(al, a, b);
      expect(s.a).toEqual(a);
      expect(s.b).toEqual(b);
      for (const x of s.same) if (x.kind === 'same') expect(a[x.a]).toBe(b[x.b]);
      expect(s.same.length).toBe(lcs(a, b));
    }
  });

  it('pairs unchanged lines below inserted code, and splits text into lines without their endings', () => {
    const a = splitLines('package main\n\nfunc f() {\n\tx()\n}\n');
    const b = splitLines('package main\r\n\r\nconst c = 1\r\n\r\nfunc f() {\r\n\ty()\r\n}\r\n');
    expect(a).toEqual(['package main', '', 'func f() {', '\tx()', '}']);
    const al = alignLines(a, b);
    expect(al.find((x) => x.kind === 'same' && a[x.a] === 'func f() {')).toEqual({ kind: 'same', a: 2, b: 4 });
    expect(al.filter((x) => x.kind === 'removed')).toEqual([{ kind: 'removed', a: 3 }]);
  });
});
