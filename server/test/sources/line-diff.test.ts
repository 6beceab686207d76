import { describe, expect, it } from 'vitest';
import { type Aligned, alignLines, alignWindows, splitLines } from '../../src/sources/line-diff.ts';

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

  it('over windows: the shown pairs of the whole alignment, in order, the rest counted (500 seeded cases)', () => {
    let seed = 11;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let t = 0; t < 500; t++) {
      const gen = () => Array.from({ length: Math.floor(rnd() * 40) }, () => 'abc'[Math.floor(rnd() * 3)]!);
      const a = gen();
      const b = gen();
      const showA = Uint8Array.from(a, () => (rnd() < 0.2 ? 1 : 0));
      const showB = Uint8Array.from(b, () => (rnd() < 0.2 ? 1 : 0));
      const whole = alignLines(a, b).filter(
        (x) => (x.kind !== 'added' && showA[x.a]) || (x.kind !== 'removed' && showB[x.b]),
      );
      // Aligned whole (a small middle): exactly the whole alignment's shown entries.
      const got = alignWindows(a, b, showA, showB, 1000);
      expect(got.filter((x) => x.kind !== 'elided')).toEqual(whole);
      // Aligned over the shown lines only (every middle too large): still both files in order, every line
      // shown or counted once, pairs equal.
      for (const w of [got, alignWindows(a, b, showA, showB, 0)]) {
        let na = 0;
        let nb = 0;
        for (const x of w) {
          if (x.kind === 'elided') {
            expect(x.a + x.b).toBeGreaterThan(0);
            na += x.a;
            nb += x.b;
            continue;
          }
          if (x.kind !== 'added') expect(x.a).toBe(na++);
          if (x.kind !== 'removed') expect(x.b).toBe(nb++);
          if (x.kind === 'same') expect(a[x.a]).toBe(b[x.b]);
        }
        if (w.length > 0) {
          expect(na).toBe(a.length);
          expect(nb).toBe(b.length);
        }
      }
    }
  });

  it('a million equal lines with two shown: three entries, no walk of the rest', () => {
    const a = Array.from({ length: 1_000_000 }, () => '');
    const show = new Uint8Array(a.length);
    show[0] = 1;
    show[999_999] = 1;
    expect(alignWindows(a, a, show, new Uint8Array(a.length), 20_000)).toEqual([
      { kind: 'same', a: 0, b: 0 },
      { kind: 'elided', a: 999_998, b: 999_998 },
      { kind: 'same', a: 999_999, b: 999_999 },
    ]);
  });
});
