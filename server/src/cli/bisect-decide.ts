import { type RunEstimate, type Verdict, estimate, verdict } from '../analysis/significance.ts';

/**
 * The decisions of `stagediff bisect`, on per-run figures only (no git, no processes), so they can be
 * tested on recorded runs: the A/A pre-flight, the good-against-bad pre-flight, and each step's answer.
 * Every "changed" is the engine's verdict (benchstat's U test at its alpha, significance.ts) and, on
 * top of it, a median ratio at least `minChange` away from 1: a real but tiny shift is not the
 * regression being hunted.
 */

/**
 * The figures a bisect can follow: P99 and requests/s read from each run's load-test output; CPU per
 * request from a CPU profile taken over the run's load window (needs --pprof), as `capture` records it.
 */
export const BISECT_METRICS = {
  p99: { label: 'P99 latency', unit: 'ms', worse: 'higher' },
  rps: { label: 'requests/s', unit: 'req/s', worse: 'lower' },
  'cpu-per-request': { label: 'CPU per request', unit: 'µs', worse: 'higher' },
} as const;
export type BisectMetric = keyof typeof BISECT_METRICS;

export function isBisectMetric(s: string): s is BisectMetric {
  return Object.hasOwn(BISECT_METRICS, s);
}

export interface DecideOptions {
  metric: BisectMetric;
  /** Smallest relative change that counts (0.05: 5 %). */
  minChange: number;
  /** Widest benchstat ± of the A/A runs' median that still lets the bisect go on (default 4 × minChange). */
  maxSpread?: number;
}

/** Whether target's runs are significantly worse (or better) than base's, by at least minChange. */
function shifted(v: Verdict, o: DecideOptions, towards: 'worse' | 'better'): boolean {
  if (v.status !== 'significant' || v.ratio === null) return false;
  const higher = BISECT_METRICS[o.metric].worse === 'higher' ? towards === 'worse' : towards === 'better';
  return higher ? v.ratio >= 1 + o.minChange : v.ratio <= 1 / (1 + o.minChange);
}

export const isWorse = (v: Verdict, o: DecideOptions) => shifted(v, o, 'worse');
export const isBetter = (v: Verdict, o: DecideOptions) => shifted(v, o, 'better');

/** The spread of one commit's runs: benchstat's median ± (relative half-width of the 95 % interval) and the range. */
export interface Spread {
  estimate: RunEstimate;
  /** (max − min) / median of the runs. */
  range: number;
}

export function spreadOf(values: readonly number[]): Spread | null {
  const e = estimate(values);
  if (!e || e.median === 0) return null;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of e.values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return { estimate: e, range: (hi - lo) / Math.abs(e.median) };
}

export interface AaResult {
  ok: boolean;
  verdict: Verdict;
  spread: Spread | null;
  /** Why the machine is too noisy (empty when ok). */
  reason: string;
}

/**
 * The A/A pre-flight: two sets of runs of the same commit. The machine is quiet enough when the sets
 * come out "no change" (not significantly apart by minChange or more) and the median of all runs is
 * known to within maxSpread (benchstat's ±; "± ∞", fewer than 6 runs, counts as not known). Noise much
 * wider than the change hunted would leave every step undecided: better said before the first step.
 */
export function aaCheck(setA: readonly number[], setB: readonly number[], o: DecideOptions): AaResult {
  const v = verdict(setA, setB);
  const all = setA.concat(setB);
  const spread = spreadOf(all);
  const moved = isWorse(v, o) || isBetter(v, o);
  const ci = spread?.estimate.ci ?? null;
  const maxSpread = o.maxSpread ?? 4 * o.minChange;
  const wide = ci === null || ci > maxSpread;
  const reasons: string[] = [];
  if (moved)
    reasons.push(
      `two sets of runs of the same commit differ by ${pct(v.ratio)} (p=${v.p?.toFixed(3)}, ${v.nBase}+${v.nTarget} runs)`,
    );
  if (wide)
    reasons.push(
      ci === null
        ? `the median of ${all.length} runs has no finite 95 % interval`
        : `the median of ${all.length} runs is known only to ±${(ci * 100).toFixed(1)} %, more than the ±${(maxSpread * 100).toFixed(0)} % allowed`,
    );
  return { ok: reasons.length === 0, verdict: v, spread, reason: reasons.join('; ') };
}

export interface RegressionResult {
  ok: boolean;
  /** All good runs against the bad commit's. */
  verdict: Verdict;
  /** Each A/A set of the good commit against the bad commit's runs. */
  perSet: Verdict[];
}

/**
 * The second pre-flight: the bad commit's runs must be significantly worse than the good commit's, all
 * of them and each A/A set on its own. A machine that got busier between the good runs and the bad
 * ones shows as a bad commit worse than the pooled good runs but not than the set that ran on the busy
 * machine too; asking each set keeps such a drift from passing for a regression.
 */
export function regressionCheck(
  goodSets: readonly (readonly number[])[],
  bad: readonly number[],
  o: DecideOptions,
): RegressionResult {
  const all: number[] = [];
  for (const set of goodSets) for (const v of set) all.push(v);
  const v = verdict(all, bad);
  const perSet = goodSets.map((set) => verdict(set, bad));
  return { ok: isWorse(v, o) && perSet.every((p) => isWorse(p, o)), verdict: v, perSet };
}

export type StepAnswer = 'good' | 'bad' | 'undecided';

export interface StepJudgement {
  answer: StepAnswer;
  vsGood: Verdict;
  vsBad: Verdict;
  reason: string;
}

/**
 * One bisect step: a commit's runs against the good commit's and the bad commit's. Bad when worse than
 * good and not better than bad; good when better than bad and not worse than good; when it is both
 * (a partial regression) the side whose median is nearer (on a log scale); undecided when neither
 * verdict is significant yet (more runs, or skip at the cap).
 */
export function judgeStep(
  good: readonly number[],
  bad: readonly number[],
  cand: readonly number[],
  o: DecideOptions,
): StepJudgement {
  const vsGood = verdict(good, cand);
  const vsBad = verdict(bad, cand);
  const worse = isWorse(vsGood, o);
  const better = isBetter(vsBad, o);
  const say = (v: Verdict) => `${pct(v.ratio)} p=${v.p === null ? '–' : v.p.toFixed(3)}`;
  const detail = `vs good ${say(vsGood)}, vs bad ${say(vsBad)}`;
  if (worse && !better) return { answer: 'bad', vsGood, vsBad, reason: `worse than good (${detail})` };
  if (better && !worse) return { answer: 'good', vsGood, vsBad, reason: `better than bad (${detail})` };
  if (worse && better) {
    const dGood = Math.abs(Math.log(vsGood.ratio!));
    const dBad = Math.abs(Math.log(vsBad.ratio!));
    return {
      answer: dGood <= dBad ? 'good' : 'bad',
      vsGood,
      vsBad,
      reason: `between good and bad, nearer ${dGood <= dBad ? 'good' : 'bad'} (${detail})`,
    };
  }
  return { answer: 'undecided', vsGood, vsBad, reason: `neither verdict significant (${detail})` };
}

function pct(ratio: number | null): string {
  if (ratio === null) return '?';
  const d = (ratio - 1) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)} %`;
}
