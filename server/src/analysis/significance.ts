import { BENCHSTAT_ALPHA, BENCHSTAT_CONFIDENCE, choose, mannWhitneyU, summarizeMedian } from './benchstat.ts';

/*
 * Noise and significance for figures measured once per run (a load test's QPS, a profile's CPU time per
 * request): the same statistics benchstat applies to `go test -bench -count N`, on per-run values.
 * Nothing here is computed twice: the median, its interval and the U test are benchstat.ts's.
 */

/**
 * The median of per-run values with benchstat's 95 % confidence interval (api/changes.ts `Estimate`):
 * `values` one per run in the figure's own unit; `lo`/`hi` null where benchstat prints "± ∞" (fewer than
 * 6 runs); `ci` benchstat's relative half-width (0.05 for "± 5%"), null for "± ∞" or "± ?".
 */
export interface RunEstimate {
  n: number;
  values: number[];
  median: number;
  lo: number | null;
  hi: number | null;
  ci: number | null;
}

/** A verdict's status (the contract's `VerdictStatus`, api/changes.ts, says what each means). */
export type VerdictStatus = 'significant' | 'no-change' | 'too-few-runs' | 'single-run' | 'missing' | 'not-comparable';

/** The judgement of one figure between two stages (the contract's `Verdict` describes each field). */
export interface Verdict {
  status: VerdictStatus;
  ratio: number | null;
  p: number | null;
  q?: number | null;
  nBase: number;
  nTarget: number;
  alpha: number;
  minP: number | null;
  runsNeeded: number;
  reason?: string;
}

/**
 * The smallest p the two-sided U test can give for nBase runs against nTarget: every run of one side
 * beyond every run of the other, the most extreme ranking there is (2 / C(nBase + nTarget, nBase)).
 */
export function minimumUTestP(nBase: number, nTarget: number = nBase): number {
  return nBase < 1 || nTarget < 1 ? 1 : Math.min(1, 2 / choose(nBase + nTarget, nBase));
}

/** Runs per side the U test needs before any result can be significant at `alpha` (benchstat: 4 at 0.05). */
export function runsNeeded(alpha = BENCHSTAT_ALPHA): number {
  for (let n = 1; n < 64; n++) if (minimumUTestP(n) <= alpha) return n;
  return 64;
}

/**
 * The verdict every comparison of nBase against nTarget runs shares before any value is seen, or null
 * when the values decide: `missing` (a side has none), `single-run` (a side has one), `too-few-runs`
 * (no ranking of the runs could reach alpha).
 */
export function verdictByCounts(
  nBase: number,
  nTarget: number,
  alpha = BENCHSTAT_ALPHA,
): Extract<VerdictStatus, 'missing' | 'single-run' | 'too-few-runs'> | null {
  if (nBase === 0 || nTarget === 0) return 'missing';
  if (nBase === 1 || nTarget === 1) return 'single-run';
  if (minimumUTestP(nBase, nTarget) > alpha) return 'too-few-runs';
  return null;
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

/**
 * Compares per-run values of a base and a target the way benchstat compares two benchmark files: the
 * medians' ratio, the two-sided Mann–Whitney U p-value, and the verdict (see VerdictStatus).
 */
export function verdict(
  base: readonly (number | null)[],
  target: readonly (number | null)[],
  alpha = BENCHSTAT_ALPHA,
): Verdict {
  const b = base.filter((v): v is number => v !== null && Number.isFinite(v));
  const t = target.filter((v): v is number => v !== null && Number.isFinite(v));
  const common = testCounts(b.length, t.length, alpha);
  if (b.length === 0 || t.length === 0) return { status: 'missing', ratio: null, p: null, ...common };
  const mb = summarizeMedian(b).median;
  const mt = summarizeMedian(t).median;
  const ratio = mb !== 0 ? mt / mb : null;
  if (verdictByCounts(b.length, t.length, alpha) === 'single-run')
    return { status: 'single-run', ratio, p: null, ...common };
  return judged({ p: mannWhitneyU(b, t).p, nBase: b.length, nTarget: t.length, ratio }, alpha);
}

/** What every verdict states of its test: the run counts, alpha, the smallest p they allow, the runs needed. */
function testCounts(nBase: number, nTarget: number, alpha: number) {
  return {
    nBase,
    nTarget,
    alpha,
    minP: nBase > 0 && nTarget > 0 ? minimumUTestP(nBase, nTarget) : null,
    runsNeeded: runsNeeded(alpha),
  };
}

/**
 * The verdict of a U test already run (benchstat's comparison of two benchmark files gives p and the
 * run counts): the same statuses as `verdict`.
 */
export function judged(
  t: { p: number; nBase: number; nTarget: number; ratio: number | null },
  alpha = BENCHSTAT_ALPHA,
): Verdict {
  const byCounts = verdictByCounts(t.nBase, t.nTarget, alpha);
  const common = { ...testCounts(t.nBase, t.nTarget, alpha), ratio: t.ratio };
  if (byCounts === 'missing') return { status: 'missing', ...common, ratio: null, p: null };
  if (byCounts === 'single-run') return { status: 'single-run', ...common, p: null };
  if (t.p <= alpha) return { status: 'significant', ...common, p: t.p };
  return { status: byCounts ?? 'no-change', ...common, p: t.p };
}

/**
 * Benjamini–Hochberg adjusted p-values (q-values) of a family of tests, in the order given: the i-th
 * smallest p times m / i, made non-decreasing from the largest down and capped at 1. A test whose q is
 * ≤ alpha is a discovery of the step-up procedure at false discovery rate alpha.
 */
export function benjaminiHochberg(ps: readonly number[]): number[] {
  const m = ps.length;
  const order = ps.map((_, i) => i).sort((a, b) => ps[a]! - ps[b]! || a - b);
  const q = new Array<number>(m).fill(1);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const i = order[r]!;
    running = Math.min(running, (ps[i]! * m) / (r + 1));
    q[i] = Math.min(1, running);
  }
  return q;
}

/**
 * Verdicts of a family of U tests judged together: each test's own p, and significant only where its
 * Benjamini–Hochberg q is ≤ alpha (the false discovery rate across the family held at alpha). The run
 * counts decide as in `judged` (too few runs or one run: no test says anything).
 */
export function judgedFamily(
  tests: readonly { p: number; nBase: number; nTarget: number; ratio: number | null }[],
  alpha = BENCHSTAT_ALPHA,
): (Verdict & { q: number | null })[] {
  const q = benjaminiHochberg(tests.map((t) => t.p));
  return tests.map((t, i) => {
    const v = judged(t, alpha);
    if (v.status !== 'significant' && v.status !== 'no-change') return { ...v, q: null };
    return { ...v, status: q[i]! <= alpha ? 'significant' : 'no-change', q: q[i]! };
  });
}
