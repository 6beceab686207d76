/**
 * The decisions of `stagediff bisect` on recorded run figures: the demo's wrk runs (fixtures/demo,
 * recorded on a quiet machine, read from their files as the bisect reads a run) and the eight A/A runs
 * a bisect of the demo service printed on this machine while it ran at load average 17 (other jobs'
 * CPU beside it).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aaCheck, judgeStep, regressionCheck } from '../../src/cli/bisect-decide.ts';
import { verdict } from '../../src/analysis/significance.ts';
import { readLoad } from '../../src/cli/capture-load.ts';
import { fixturesDir } from '../helpers/paths.ts';

async function rps(stage: string): Promise<number[]> {
  const out: number[] = [];
  for (let k = 1; k <= 6; k++) {
    const r = await readLoad(join(fixturesDir, 'demo', stage, `run-${k}`, 'wrk.txt'));
    if (typeof r === 'string' || r.rps === null) throw new Error(`${stage} run ${k}: ${String(r)}`);
    out.push(r.rps);
  }
  return out;
}

const o = { metric: 'rps' as const, minChange: 0.05 };

describe('bisect decisions on recorded figures', () => {
  it('A/A: the demo baseline, split in two sets, passes; the runs recorded at load 17 stop it as too noisy', async () => {
    const base = await rps('baseline');
    expect(base).toEqual([4428.8, 5452.47, 4920.67, 5628.67, 5519.78, 4767.59]);
    const quiet = aaCheck(base.slice(0, 3), base.slice(3), o);
    expect(quiet.reason).toBe('');
    expect(quiet.ok).toBe(true);
    expect(quiet.verdict.status).not.toBe('significant');

    // `stagediff bisect --metric rps --runs 4` on the demo service, 2026-11-29 04:15 UTC, load average 17.
    const noisy = aaCheck([2022, 2058, 3245, 1473], [4639, 5072, 1747, 1864], o);
    expect(noisy.ok).toBe(false);
    expect(noisy.reason).toMatch(/^the median of 8 runs is known only to ±\d+\.\d %, more than the ±20 % allowed$/);
    expect(noisy.spread!.range).toBeGreaterThan(1.5);
    // The same runs with the spread rule widened: the two sets themselves are not apart (U test).
    expect(aaCheck([2022, 2058, 3245, 1473], [4639, 5072, 1747, 1864], { ...o, maxSpread: 100 }).ok).toBe(true);
  });

  it('A/A: two sets apart (a machine that changed between them) stop it, naming the shift and p', () => {
    const r = aaCheck([5000, 5050, 4980, 5020, 5010], [4000, 4050, 3980, 4020, 4010], o);
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/^two sets of runs of the same commit differ by -20\.0 % \(p=0\.00\d, 5\+5 runs\)/);
  });

  it('good against bad: the demo JSON change read backwards is a regression; pooled → async-log is not', async () => {
    const [baseline, fastJson, pooled, asyncLog] = await Promise.all(
      ['baseline', 'fast-json', 'pooled', 'async-log'].map(rps),
    );
    const halves = (xs: number[]) => [xs.slice(0, 3), xs.slice(3)];
    const r = regressionCheck([fastJson!], baseline!, o);
    expect(r.verdict.status).toBe('significant');
    expect(r.ok).toBe(true);
    expect(regressionCheck([asyncLog!], pooled!, o).ok).toBe(false);
    expect(regressionCheck(halves(pooled!), asyncLog!, o).ok).toBe(false);
    // A faster stage is no regression.
    expect(regressionCheck(halves(baseline!), fastJson!, o).ok).toBe(false);
  });

  it('good against bad: a machine that got busier after the first A/A set is not taken for a regression', () => {
    // scripts/bisect-demo.sh clean (no slowdown anywhere), MIN_CHANGE=50, 2026-11-29 04:31 UTC, load
    // average 12.6: the two A/A sets of commit 1, then commit 16's runs.
    const sets = [
      [3443, 5766, 4089, 3728],
      [8119, 8538, 8180, 4994],
    ];
    const bad = [2442, 4527, 3410, 4570, 1197];
    const wide = { metric: 'rps' as const, minChange: 0.5 };
    // Pooled, the good runs would call it a regression (-37 %, significant)…
    const pooled = verdict(sets.flat(), bad);
    expect(pooled.status).toBe('significant');
    expect(pooled.ratio!).toBeLessThan(1 / 1.5);
    // …but against the first set, which ran on the same busy machine, it is not.
    const r = regressionCheck(sets, bad, wide);
    expect(r.verdict).toEqual(pooled);
    expect(r.perSet[0]!.status).toBe('no-change');
    expect(r.ok).toBe(false);
  });

  it('steps: a commit like the bad one is bad, like the good one good, and a half-way one goes to the nearer side', async () => {
    const [baseline, fastJson] = await Promise.all(['baseline', 'fast-json'].map(rps));
    expect(judgeStep(fastJson!, baseline!, baseline!.slice(0, 4), o).answer).toBe('bad');
    expect(judgeStep(fastJson!, baseline!, fastJson!, o).answer).toBe('good');
    // Four of its runs, one of them among the baseline's: not decided yet.
    expect(judgeStep(fastJson!, baseline!, fastJson!.slice(2), o).answer).toBe('undecided');
    // Four runs between the two, nearer the good side's median.
    const between = judgeStep([100, 101, 99, 100, 102, 98], [50, 51, 49, 50, 52, 48], [90, 91, 89, 90], o);
    expect(between).toMatchObject({ answer: 'good' });
    expect(between.reason).toMatch(/^between good and bad, nearer good/);
    // Too few runs to say anything yet: undecided (the loop adds runs, then skips).
    expect(judgeStep(fastJson!, baseline!, [5500], o).answer).toBe('undecided');
  });
});
