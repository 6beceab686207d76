import { pooledTTest } from './student-t.ts';

/*
 * Change points in a series of stages (one value per stage, in order): the windowed E-Divisive method with
 * a Student t-test for significance, as Apache Otava 0.8.0's `compute_change_points` does it (Fleming et al.,
 * "Hunter", ICPE 2023, on top of Matteson & James's E-Divisive). Written from the method, checked against
 * otava's answers in fixtures/reference/change-points/.
 *
 * 1. Split. Windows of `windowLen` stages, each starting half a window after the previous one (or at the last
 *    change point the previous window found, if that is later). In a window, E-Divisive repeatedly takes the
 *    segment whose best split maximizes the energy-distance statistic Q̂ and keeps the split while the t-test
 *    between the two sides gives p ≤ 10 × maxPValue (a looser first pass). The union over all windows gives the
 *    "weak" change points.
 * 2. Merge. With each weak point's t-test taken between its neighbouring points, the weakest point (largest p
 *    above maxPValue, else smallest relative change not above minMagnitude) is dropped and its neighbours
 *    re-tested, until every remaining point passes.
 *
 * The sums are taken in the order numpy takes them (sequential cumulative sums, pairwise summation for means),
 * so that near-ties between candidate splits resolve as otava resolves them.
 */

export interface ChangePointOptions {
  /** Stages per window of the split step (at least 2). */
  windowLen?: number;
  /** A change point is kept when its two-sided t-test p-value is at most this. */
  maxPValue?: number;
  /** …or, if all p-values pass, when its relative change exceeds this (0.05 = 5 %). */
  minMagnitude?: number;
}

export interface ChangePoint {
  /** Index of the first stage after the change. */
  index: number;
  pValue: number;
  /** Mean of the stages from the previous change point (or the start) up to this one. */
  meanBefore: number;
  /** Mean of the stages from this change point up to the next one (or the end). */
  meanAfter: number;
  /** (meanAfter / meanBefore − 1) × 100; 0 when meanBefore is 0. */
  forwardChangePercent: number;
}

/** Otava 0.8.0's defaults (its AnalysisOptions and compute_change_points). */
export const CHANGE_POINT_DEFAULTS: Required<ChangePointOptions> = {
  windowLen: 50,
  maxPValue: 0.001,
  minMagnitude: 0,
};

interface Stats {
  mean1: number;
  mean2: number;
  pValue: number;
}

interface Point {
  index: number;
  stats: Stats;
}

/** Sum of a[lo..hi) in numpy's pairwise order (blocks of 128 with 8 partial sums, halves above that). */
function pairwiseSum(a: ArrayLike<number>, lo: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[lo + i] as number;
    return res;
  }
  if (n <= 128) {
    const r = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let j = 0; j < 8; j++) r[j] = a[lo + j] as number;
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j] = (r[j] as number) + (a[lo + i + j] as number);
    }
    let res =
      (r[0] as number) +
      (r[1] as number) +
      ((r[2] as number) + (r[3] as number)) +
      ((r[4] as number) + (r[5] as number) + ((r[6] as number) + (r[7] as number)));
    for (; i < n; i++) res += a[lo + i] as number;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
}

function meanAndStd(series: readonly number[], lo: number, hi: number): { mean: number; std: number } {
  const n = hi - lo;
  const mean = pairwiseSum(series, lo, n) / n;
  if (n < 2) return { mean, std: 0 };
  const sq = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const d = (series[lo + i] as number) - mean;
    sq[i] = d * d;
  }
  return { mean, std: Math.sqrt(pairwiseSum(sq, 0, n) / n) };
}

/** The t-test between series[lo..mid) and series[mid..hi). */
function compare(series: readonly number[], lo: number, mid: number, hi: number): Stats {
  const left = meanAndStd(series, lo, mid);
  const right = meanAndStd(series, mid, hi);
  const n1 = mid - lo;
  const n2 = hi - mid;
  const pValue = n1 + n2 > 2 ? pooledTTest(left.mean, left.std, n1, right.mean, right.std, n2).pValue : 1;
  return { mean1: left.mean, mean2: right.mean, pValue };
}

/** The segments [start, stop) between sorted change points over a series of length n. */
function intervals(points: readonly Point[], n: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i <= points.length; i++) {
    const start = i === 0 ? 0 : (points[i - 1] as Point).index;
    const stop = i === points.length ? n : (points[i] as Point).index;
    if (start !== stop) out.push([start, stop]);
  }
  return out;
}

/**
 * Stats of a change point at `index` given the current segments: if it ends a segment, between that segment and
 * the next; if it falls inside one, between the two halves of it.
 */
function statsAt(series: readonly number[], index: number, segs: readonly [number, number][]): Stats {
  for (let i = 0; i < segs.length; i++) {
    const [start, stop] = segs[i] as [number, number];
    if (stop === index) {
      const next = segs[i + 1] as [number, number];
      return compare(series, start, index, next[1]);
    }
    if (start < index && index < stop) return compare(series, start, index, stop);
  }
  throw new Error(`change point ${index} is in no segment`);
}

/** Pairwise distances of one window and their running sums, reused for every segment of the window. */
class WindowDistances {
  readonly n: number;
  /** d[a * n + b] = |x_a − x_b| */
  private readonly d: Float64Array;
  /** v[c] = Σ_{r ≤ c} d(r, c + 1) */
  private readonly v: Float64Array;
  /** h[r * (n − 1) + c] = Σ_{r ≤ c' ≤ c} d(r, c' + 1), 0 for c < r */
  private readonly h: Float64Array;

  constructor(x: readonly number[]) {
    const n = x.length;
    this.n = n;
    this.d = new Float64Array(n * n);
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) this.d[a * n + b] = Math.abs((x[a] as number) - (x[b] as number));
    }
    const m = n - 1;
    this.v = new Float64Array(Math.max(m, 0));
    this.h = new Float64Array(Math.max(m * m, 0));
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let r = 0; r <= c; r++) s += this.d[r * n + c + 1] as number;
      this.v[c] = s;
    }
    for (let r = 0; r < m; r++) {
      let s = 0;
      for (let c = r; c < m; c++) {
        s += this.d[r * n + c + 1] as number;
        this.h[r * m + c] = s;
      }
    }
  }

  /**
   * The best split of the segment [s, e) (e − s ≥ 2): the τ maximizing Q̂(x[s..τ), x[τ..κ)) over s < τ < κ ≤ e,
   * with numpy's argmax tie rule (first in row-major order of the (τ, κ) matrix, whose unused cells are 0).
   */
  bestSplit(s: number, e: number): { index: number; qhat: number } {
    const n = this.n;
    const m = e - s; // the Q matrix is (m − 1) × (m − 1): row i ↔ τ = s + i + 1, column j ↔ κ = s + j + 2
    const k = m - 1;
    const hAt = (a: number, b: number) => this.h[(s + a) * (n - 1) + s + b] as number;
    // V restricted to the segment, then its running sum.
    const cumV = new Float64Array(k);
    let run = 0;
    for (let c = 0; c < k; c++) {
      let before = 0;
      for (let r = 0; r < s; r++) before += this.d[r * n + s + 1 + c] as number;
      run += (this.v[s + c] as number) - before;
      cumV[c] = run;
    }
    // Column sums of H from the top (for A) and from the bottom (for C).
    const top = new Float64Array(k * k);
    const bottom = new Float64Array(k * k);
    for (let j = 0; j < k; j++) {
      let acc = 0;
      for (let i = 0; i < k; i++) {
        acc += hAt(i, j);
        top[i * k + j] = acc;
      }
      acc = 0;
      for (let i = k - 1; i >= 1; i--) {
        acc += hAt(i, j);
        bottom[(i - 1) * k + j] = acc; // Σ_{a = i..k−1} H[a][j], used by row i − 1
      }
    }
    let best = Number.NEGATIVE_INFINITY;
    let bestI = 0;
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        let q = 0;
        if (j >= i) {
          const prev = i >= 1 ? (cumV[i - 1] as number) : 0;
          const a = (2 / (j + 2)) * ((top[i * k + j] as number) - prev);
          const b = i >= 1 ? ((2 * (j - i + 1)) / ((j + 2) * i)) * prev : 0;
          const c = j > i && i <= k - 2 ? ((2 * (i + 1)) / ((j + 2) * (j - i))) * (bottom[i * k + j] as number) : 0;
          q = a - b - c;
        }
        if (q > best) {
          best = q;
          bestI = i;
        }
      }
    }
    return { index: s + bestI + 1, qhat: best };
  }
}

/** E-Divisive on one window: split the best segment while the split's t-test passes `maxPValue`. */
function divideWindow(window: readonly number[], maxPValue: number): number[] {
  const dist = new WindowDistances(window);
  const points: Point[] = [];
  for (;;) {
    const segs = intervals(points, window.length);
    let candidate: { index: number; qhat: number } | undefined;
    for (const [start, stop] of segs) {
      if (stop - start < 2) continue;
      const split = dist.bestSplit(start, stop);
      if (candidate === undefined || split.qhat > candidate.qhat) candidate = split;
    }
    if (candidate === undefined) break;
    const stats = statsAt(window, candidate.index, segs);
    if (!(stats.pValue <= maxPValue)) break;
    points.push({ index: candidate.index, stats });
    points.sort((p, q) => p.index - q.index);
  }
  return points.map((p) => p.index);
}

function magnitude(s: Stats): number {
  const forward = s.mean1 === 0 ? 0 : s.mean2 / s.mean1 - 1;
  const backward = s.mean2 === 0 ? 0 : s.mean1 / s.mean2 - 1;
  return Math.max(Math.abs(forward), Math.abs(backward));
}

function toChangePoint(p: Point): ChangePoint {
  const { mean1, mean2, pValue } = p.stats;
  return {
    index: p.index,
    pValue,
    meanBefore: mean1,
    meanAfter: mean2,
    forwardChangePercent: (mean1 === 0 ? 0 : mean2 / mean1 - 1) * 100,
  };
}

/**
 * Change points of `series` (one finite value per stage, in order), with Otava 0.8.0's defaults: window 50,
 * p ≤ 0.001, no minimum magnitude. Memory and time grow with windowLen² per window; callers bound both.
 */
export function changePoints(series: readonly number[], opts: ChangePointOptions = {}): ChangePoint[] {
  const windowLen = opts.windowLen ?? CHANGE_POINT_DEFAULTS.windowLen;
  const maxPValue = opts.maxPValue ?? CHANGE_POINT_DEFAULTS.maxPValue;
  const minMagnitude = opts.minMagnitude ?? CHANGE_POINT_DEFAULTS.minMagnitude;
  if (!Number.isInteger(windowLen) || windowLen < 2) throw new RangeError('windowLen must be an integer ≥ 2');
  if (!(maxPValue >= 0 && maxPValue <= 1)) throw new RangeError('maxPValue must be between 0 and 1');
  if (!(minMagnitude >= 0)) throw new RangeError('minMagnitude must be ≥ 0');
  for (let i = 0; i < series.length; i++) {
    if (!Number.isFinite(series[i])) throw new RangeError(`series[${i}] is not a finite number`);
  }
  const n = series.length;

  // Split step, at the looser first-pass threshold.
  const firstPass = maxPValue < 0.05 ? maxPValue * 10 : maxPValue < 0.5 ? maxPValue * 2 : maxPValue;
  const step = Math.floor(windowLen / 2);
  const found = new Set<number>();
  let start = 0;
  while (start < n) {
    const end = Math.min(start + windowLen, n);
    const local = divideWindow(series.slice(start, end), firstPass);
    for (const i of local) found.add(start + i);
    const last = local.length > 0 ? start + (local[local.length - 1] as number) : 0;
    start = Math.max(last, start + step);
  }
  const sorted = [...found].sort((a, b) => a - b);
  const weakSegs = intervals(
    sorted.map((index) => ({ index, stats: { mean1: 0, mean2: 0, pValue: 0 } })),
    n,
  );
  const points: Point[] = sorted.map((index) => ({ index, stats: statsAt(series, index, weakSegs) }));

  // Merge step: drop the weakest point until all pass, re-testing its neighbours each time.
  while (points.length > 0) {
    let weakest = 0;
    for (let i = 1; i < points.length; i++) {
      if ((points[i] as Point).stats.pValue > (points[weakest] as Point).stats.pValue) weakest = i;
    }
    if ((points[weakest] as Point).stats.pValue < maxPValue) {
      weakest = 0;
      for (let i = 1; i < points.length; i++) {
        if (magnitude((points[i] as Point).stats) < magnitude((points[weakest] as Point).stats)) weakest = i;
      }
      if (magnitude((points[weakest] as Point).stats) > minMagnitude) break;
    }
    points.splice(weakest, 1);
    const segs = intervals(points, n);
    for (const i of [weakest, weakest + 1]) {
      const p = points[i];
      if (p !== undefined) points[i] = { index: p.index, stats: statsAt(series, p.index, segs) };
    }
  }
  return points.map(toChangePoint);
}
