import { describe, expect, it } from 'vitest';
import { verdictWords } from '../../../server/src/api/words.ts';
import type { Diff } from './api.ts';
import { fullVerdict, untestedReason } from './diff-verdicts.ts';

/** The `noise` of GET …/diff for 2+2, 1+1 and 6+6 profiles per stage (the demo's and fixtures/repeated-runs'). */
const noise = (nBase: number, nTarget: number, status: 'tested' | 'too-few-runs' | 'single-run', minP: number) =>
  ({
    status,
    tested: 304,
    candidates: 1299,
    floor: 0.01,
    normalisation: 'per-request',
    unit: 'nanoseconds/request',
    nBase,
    nTarget,
    alpha: 0.05,
    minP,
    runsNeeded: 4,
  }) satisfies NonNullable<Diff['noise']>;

describe('diff verdicts', () => {
  it('says why nothing is judged when the run counts alone decide it', () => {
    expect(untestedReason(noise(2, 2, 'too-few-runs', 1 / 3))).toBe(
      '2+2 runs: too few to test — record at least 4 per stage',
    );
    expect(untestedReason(noise(2, 6, 'too-few-runs', 2 / 28))).toBe(
      '2+6 runs: too few to test — record at least 4 per stage',
    );
    expect(untestedReason(noise(1, 1, 'single-run', 1))).toBe('1+1 runs: no noise estimate');
    expect(untestedReason(noise(6, 6, 'tested', 2 / 924))).toBe(null);
    expect(untestedReason(null)).toBe(null);
  });
  it('words a row’s brief verdict with the diff’s run counts', () => {
    const tested = noise(6, 6, 'tested', 2 / 924);
    expect(verdictWords(fullVerdict({ status: 'significant', p: 2 / 924, q: 0.0036 }, tested, 37.6, 0))).toBe(
      'significant (p=0.002, q=0.004, n=6+6)',
    );
    expect(verdictWords(fullVerdict({ status: 'no-change', p: 0.31, q: 0.52 }, tested, 10, 11))).toBe(
      '~ within the noise (p=0.310, q=0.520, n=6+6)',
    );
    // Below the test floor: not tested, no p.
    expect(verdictWords(fullVerdict({ status: 'no-change', p: null, q: null }, tested, 10, 11))).toBe(
      '~ within the noise (n=6+6)',
    );
    expect(fullVerdict({ status: 'no-change', p: 0.31, q: 0.52 }, tested, 0, 11).ratio).toBe(null);
  });
});
