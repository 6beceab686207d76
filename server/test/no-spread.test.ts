/**
 * No list is spread into a call's arguments anywhere in the server: `xs.push(...ys)`, `Math.max(...ys)`,
 * `String.fromCharCode(...ys)` put every item on the stack and throw a RangeError past about 120,000
 * items, and the server's lists (lines of a source file, samples, series) have no such bound.
 * (analysis/extent.ts has the loops to use instead.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendAll, maxOf, minOf } from '../src/analysis/extent.ts';

const SRC = join(import.meta.dirname, '../src');
const SPREAD_CALL =
  /\.(?:push|unshift|splice)\(\s*(?:[^()]*,\s*)?\.\.\.|Math\.(?:max|min|hypot)\(\s*(?:[^()]*,\s*)?\.\.\.|String\.(?:fromCharCode|fromCodePoint)\(\s*(?:[^()]*,\s*)?\.\.\.|\.apply\(/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(?:ts|mts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('no spread of a list into a call in server/src', () => {
  it('the pattern finds what it is meant to', () => {
    for (const bad of [
      'out.push(...rows);',
      'out.push(a, ...rows);',
      'Math.max(...xs)',
      'Math.min( ...xs.map((x) => x))',
      'String.fromCharCode(...codes)',
      'xs.splice(0, 0, ...ys)',
      'f.apply(null, xs)',
    ])
      expect(SPREAD_CALL.test(bad), bad).toBe(true);
    for (const good of ['out.push(x);', 'Math.max(a, b)', '[...xs].sort()', 'f({ ...o })', 'new Set([...a, ...b])'])
      expect(SPREAD_CALL.test(good), good).toBe(false);
  });

  it('no file of the server has one', () => {
    const found: string[] = [];
    for (const f of files(SRC))
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (SPREAD_CALL.test(line)) found.push(`${relative(SRC, f)}:${i + 1}: ${line.trim()}`);
        });
    expect(found).toEqual([]);
  });

  it('the loops that replace them take 200,000 items', () => {
    const xs = Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 200_003);
    expect(() => Math.max(...Array.from({ length: 1_000_000 }, (_, i) => i))).toThrow(RangeError);
    let largest = 0;
    for (const x of xs) if (x > largest) largest = x;
    expect(maxOf(xs)).toBe(largest);
    expect(minOf(xs)).toBe(0);
    expect(maxOf([])).toBe(Number.NEGATIVE_INFINITY);
    expect(minOf([], 0)).toBe(0);
    expect(appendAll([1], xs)).toHaveLength(200_001);
  });
});
