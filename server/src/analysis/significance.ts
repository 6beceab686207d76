import { BENCHSTAT_ALPHA, BENCHSTAT_CONFIDENCE, choose, mannWhitneyU, summarizeMedian } from './benchstat.ts';

/*
 * Noise and significance for figures measured once per run (a load test's QPS, a profile's CPU time per
 * request): the same statistics benchstat applies to `go test -bench -count N`, on per-run values.
 * Nothing here is computed twice: the median, its interval and the U test are benchstat.ts's.
 */

/**
 * The median of per-run values with benchstat's 95 % confidence interval.
 * - `values`: one per run, in run order, in the figure's own unit;
 * - `lo`/`hi`: the interval's bounds, `null` where benchstat prints "± ∞" (fewer than 6 runs);
 * - `ci`: benchstat's relative half-width (0.05 for "± 5%"), `null` for "± ∞" or "± ?".
 */
export interface RunEstimate {
  n: number;
  values: number[];
  median: number;
  lo: number | null;
  hi: number | null;
  ci: number | null;
}

/**
 * How a change between two sets of runs reads, the way benchstat decides it:
 * - `significant`: Mann–Whitney U p ≤ α;
 * - `no-change`: p > α with enough runs that a real change could have shown (benchstat's "~");
 * - `need-more-runs`: p > α and both sides have fewer runs than the U test needs to ever reach α
 *   (benchstat's "need >= 4 samples to detect a difference"); also "~";
 * - `single-run`: a side has one run: there is no noise estimate, so no verdict;
 * - `missing`: a side has no value.
 */
export type VerdictStatus = 'significant' | 'no-change' | 'need-more-runs' | 'single-run' | 'missing';

/**
 * One stage-to-stage comparison of a per-run figure.
 * - `ratio`: target median / base median (null when a side is missing or the base median is 0);
 * - `p`: two-sided Mann–Whitney U p-value (null for `single-run` and `missing`);
 * - `nBase`/`nTarget`: runs on each side; `runsNeeded`: runs per side at which the test can reach α.
 */
export interface Verdict {
  status: VerdictStatus;
  significant: boolean;
  ratio: number | null;
  p: number | null;
  nBase: number;
  nTarget: number;
  alpha: number;
  runsNeeded: number;
}

/** The smallest p the two-sided U test can give for n runs against n runs: both orders apart. */
export function minimumUTestP(n: number): number {
  return n < 1 ? 1 : Math.min(1, 2 / choose(2 * n, n));
}

/** Runs per side the U test needs before any result can be significant at `alpha` (benchstat: 4 at 0.05). */
export function runsNeeded(alpha = BENCHSTAT_ALPHA): number {
  for (let n = 1; n < 64; n++) if (minimumUTestP(n) <= alpha) return n;
  return 64;
}

/** Median and 95 % interval of the finite values; null when there are none. */
export function estimate(values: readonly (number | null)[], confidence = BENCHSTAT_CONFIDENCE): RunEstimate | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (xs.length === 0) return null;
  const s = summarizeMedian(xs, confidence);
  return {
    n: xs.length,
    values: xs,
    median: s.median,
    lo: Number.isFinite(s.lo) ? s.lo : null,
    hi: Number.isFinite(s.hi) ? s.hi : null,
    ci: s.ci,
  };
}

/** Compares per-run values of a base and a target the way benchstat compares two benchmark files. */
export function verdict(
  base: readonly (number | null)[],
  target: readonly (number | null)[],
  alpha = BENCHSTAT_ALPHA,
): Verdict {
  const b = base.filter((v): v is number => v !== null && Number.isFinite(v));
  const t = target.filter((v): v is number => v !== null && Number.isFinite(v));
  const need = runsNeeded(alpha);
  const common = { nBase: b.length, nTarget: t.length, alpha, runsNeeded: need };
  if (b.length === 0 || t.length === 0)
    return { status: 'missing', significant: false, ratio: null, p: null, ...common };
  const mb = summarizeMedian(b).median;
  const mt = summarizeMedian(t).median;
  const ratio = mb !== 0 ? mt / mb : null;
  if (b.length < 2 || t.length < 2) return { status: 'single-run', significant: false, ratio, p: null, ...common };
  const { p } = mannWhitneyU(b, t);
  if (p <= alpha) return { status: 'significant', significant: true, ratio, p, ...common };
  const status = b.length < need && t.length < need ? 'need-more-runs' : 'no-change';
  return { status, significant: false, ratio, p, ...common };
}
