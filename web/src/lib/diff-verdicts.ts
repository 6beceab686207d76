/**
 * The verdicts a diff carries, read for the page: thousands of rows and frames carry a brief verdict
 * (status and p); the run counts and the test's limits are the diff's own (`noise`), shared by all.
 */
import type { Change } from '../../../server/src/api/changes.ts';
import { formatChange, sig } from '../../../server/src/api/format.ts';
import { noVerdictReason } from '../../../server/src/api/words.ts';
import type { Diff, Verdict } from './api.ts';

type Noise = NonNullable<Diff['noise']>;

/** A row's or frame's brief verdict with the diff's run counts: a whole verdict the shared words can word. */
export function fullVerdict(
  brief: Pick<Verdict, 'status' | 'p' | 'q'>,
  noise: Noise,
  base: number,
  target: number,
): Verdict {
  return {
    status: brief.status,
    p: brief.p,
    ...(brief.q != null ? { q: brief.q } : {}),
    ratio: base !== 0 ? target / base : null,
    nBase: noise.nBase,
    nTarget: noise.nTarget,
    alpha: noise.alpha,
    minP: noise.minP,
    runsNeeded: noise.runsNeeded,
  };
}

/**
 * Why nothing in the diff is judged, when the run counts alone decide it: "2+2 runs: too few to test —
 * record at least 4 per stage", "1+1 runs: no noise estimate". Null when the functions were tested.
 */
export function untestedReason(noise: Diff['noise']): string | null {
  if (!noise || noise.status === 'tested') return null;
  const v: Verdict = {
    status: noise.status,
    p: null,
    ratio: null,
    nBase: noise.nBase,
    nTarget: noise.nTarget,
    alpha: noise.alpha,
    minP: noise.minP,
    runsNeeded: noise.runsNeeded,
  };
  return noise.status === 'too-few-runs'
    ? noVerdictReason(v)
    : `${noise.nBase}+${noise.nTarget} runs: no noise estimate`;
}

/** A figure row's verdict cell (the Runtime and Requests tables): its change and p, or why there is none. */
export function changeVerdictText(f: Pick<Change, 'deltaPercent' | 'reason' | 'verdict'>): string {
  if (f.deltaPercent === null) return f.reason ?? '';
  const change = formatChange(f.verdict.ratio ?? 1);
  if (f.verdict.status === 'significant') return `${change} (p=${sig(f.verdict.p ?? 0, 2)})`;
  if (f.verdict.status === 'no-change') return `~ within the noise (p=${sig(f.verdict.p ?? 0, 2)})`;
  return `${change} · ${f.reason ?? ''}`;
}
