/**
 * The words a function's change is said in: its figures must agree with the change they name. A path
 * whose own part moved while a callee's change is named on its own says which figures are the whole
 * call's, so "−7.96 µs/req (251 → 171)" never reads as arithmetic that does not add up.
 */
import { describe, expect, it } from 'vitest';
import type { FunctionChange } from '../../src/api/changes.ts';
import { functionSentence } from '../../src/api/words.ts';

const verdict = {
  status: 'significant',
  ratio: 0.68,
  p: 0.0021645021645021645,
  nBase: 6,
  nTarget: 6,
  alpha: 0.05,
  minP: 0.0021645021645021645,
  runsNeeded: 4,
} as FunctionChange['verdict'];
const unit = { unit: 'nanoseconds/request' };
const change = (c: Partial<FunctionChange>): FunctionChange => ({
  name: 'net/http.(*conn).serve',
  change: 'shrank',
  base: 0,
  target: 0,
  delta: 0,
  ofBaseTotal: 0,
  path: [],
  verdict,
  ...c,
});

describe('functionSentence', () => {
  it('a removed or added subtree: its whole value', () => {
    expect(functionSentence(change({ name: 'f', change: 'removed', base: 58_200, delta: -58_200 }), unit)).toBe(
      'Removed f: 58.2 µs/req → 0 (p=0.002, n=6+6)',
    );
    expect(functionSentence(change({ name: 'g', change: 'added', target: 17_400, delta: 17_400 }), unit)).toBe(
      'Added g: 0 → 17.4 µs/req (p=0.002, n=6+6)',
    );
  });

  it('a path whose whole change is its own: the change and the figures it is the difference of', () => {
    expect(
      functionSentence(
        change({ name: 'runtime.gcDrain', change: 'grew', base: 11_058, target: 15_395, delta: 4_337 }),
        unit,
      ),
    ).toBe('runtime.gcDrain +4.34 µs/req (11.1 µs/req → 15.4 µs/req; p=0.002, n=6+6)');
  });

  it('a path whose own part is not its whole change: the whole call is named as such', () => {
    expect(functionSentence(change({ base: 251_350, target: 171_244, delta: -7_961 }), unit)).toBe(
      'net/http.(*conn).serve −7.96 µs/req in its own code and small callees (whole call 251 µs/req → 171 µs/req; p=0.002, n=6+6)',
    );
  });
});
