import type {
  BenchmarkDiff,
  BenchmarkDiffRow,
  BenchmarkRun,
  BenchmarkSeries,
  BenchSideSummary,
} from '../model/benchmark.ts';

/*
 * benchstat's statistics (golang.org/x/perf/benchmath with its "assume nothing" default, on top of
 * github.com/aclements/go-moremath/stats), restated:
 *
 * - centre: the sample median, taken with the quantile estimator Hyndman & Fan call type 8;
 * - spread: a distribution-free 95 % confidence interval for the median whose bounds are two order
 *   statistics, picked from the Binomial(n, ½) distribution (normal approximation above 30 runs);
 *   benchstat prints it as the larger relative distance of a bound from the median;
 * - test: the two-sided Mann-Whitney U test, exact (ties included) for small samples, else the normal
 *   approximation with tie and continuity correction;
 * - verdict: significant when p ≤ alpha (0.05).
 *
 * The float operations mirror the order benchstat uses, so medians come out bit-identical to its CSV.
 */

/** benchstat's significance level. */
export const BENCHSTAT_ALPHA = 0.05;
/** benchstat's confidence level for the median's interval. */
export const BENCHSTAT_CONFIDENCE = 0.95;

/** Sample sizes above which the U test switches to the normal approximation (no ties / with ties). */
const U_EXACT_LIMIT = 50;
const U_EXACT_LIMIT_TIES = 25;
/** Sample size above which the median's interval uses the normal approximation of the binomial. */
const QUANTILE_CI_EXACT_LIMIT = 30;

/**
 * Quantile q of an ascending-sorted sample, type-8 estimator (Hyndman & Fan): position
 * h = 1/3 + q·(n + 1/3), linear interpolation between the neighbouring order statistics.
 */
export function quantileSorted(sorted: readonly number[], q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  if (q <= 0) return sorted[0]!;
  if (q >= 1) return sorted[n - 1]!;
  const h = 1 / 3 + q * (n + 1 / 3);
  const k = Math.trunc(h);
  const frac = h - k;
  if (k <= 0) return sorted[0]!;
  if (k >= n) return sorted[n - 1]!;
  const below = sorted[k - 1]!;
  return below + frac * (sorted[k]! - below);
}

/** The median of a benchmark's values, as benchstat reports it. Does not modify `values`. */
export function benchMedian(values: readonly number[]): number {
  return quantileSorted(ascending(values), 0.5);
}

function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Binomial coefficient; exact while the result stays below 2^53. */
export function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  if (k === 0 || k === n) return 1;
  const kk = Math.min(k, n - k);
  let c = 1;
  // Each partial product is itself a binomial coefficient, so the division is exact.
  for (let i = 1; i <= kk; i++) c = (c * (n - kk + i)) / i;
  return c;
}

/** Complementary error function, accurate to about 1e-13 absolute (plenty for 3 printed decimals). */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 2.5) {
    // Maclaurin series of erf: 2/√π · Σ (−1)^k x^(2k+1) / (k! (2k+1)).
    let term = x;
    let sum = x;
    const x2 = x * x;
    for (let k = 1; k < 200; k++) {
      term *= -x2 / k;
      const add = term / (2 * k + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (x > 27) return 0;
  // Continued fraction erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), modified Lentz.
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let j = 1; j < 500; j++) {
    const a = j / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** CDF of the normal distribution N(mu, sigma²). */
export function normalCdf(x: number, mu = 0, sigma = 1): number {
  return erfc(-(x - mu) / (sigma * Math.SQRT2)) / 2;
}

/**
 * Inverse CDF of N(mu, sigma²): Acklam's rational approximation refined by one Halley step (the
 * approach go-moremath takes).
 */
export function normalInvCdf(p: number, mu = 0, sigma = 1): number {
  if (!(p >= 0 && p <= 1)) return Number.NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    x = tail(Math.sqrt(-2 * Math.log(p)));
  } else if (p > 1 - pLow) {
    x = -tail(Math.sqrt(-2 * Math.log(1 - p)));
  } else {
    const q = p - 0.5;
    const r = q * q;
    x =
      ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
      (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
  }
  const e = 0.5 * erfc(-x / Math.SQRT2) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  x = x - u / (1 + (x * u) / 2);
  return x * sigma + mu;
}

/**
 * 1-based order statistics [lo, hi] bounding the confidence interval of the median of n values.
 * lo < 1 means −∞ and hi > n means +∞ (too few values for the requested confidence).
 */
export function medianCiOrders(n: number, confidence: number): { lo: number; hi: number } {
  if (confidence >= 1) return { lo: 0, hi: n + 1 };
  // k = how many of the n values fall below the population median: Binomial(n, ½). Interval k lies
  // between order statistics k and k+1; sum the most likely intervals until the confidence is met.
  let l: number;
  let r: number;
  if (n <= QUANTILE_CI_EXACT_LIMIT) {
    const pmf = (k: number) => (k < 0 || k > n ? 0 : choose(n, k) * 0.5 ** k * 0.5 ** (n - k));
    const mode = Math.ceil((n + 1) * 0.5) - 1; // the lower mode when there are two
    let accum = pmf(mode);
    l = mode;
    r = mode + 1;
    let lp = pmf(l - 1);
    let rp = pmf(r);
    while (accum < confidence && (lp > 0 || rp > 0)) {
      if (lp >= rp) {
        // Ties go left, as benchstat biases them.
        accum += lp;
        l--;
        lp = pmf(l - 1);
      } else {
        accum += rp;
        r++;
        rp = pmf(r);
      }
    }
  } else {
    const mu = n * 0.5;
    const sigma = Math.sqrt(n * 0.5 * 0.5);
    const l1 = normalInvCdf((1 - confidence) / 2, mu, sigma);
    const r1 = 2 * mu - l1;
    // Round out to half-integer band edges (continuity correction), then back to interval indices.
    l = Math.floor(Math.floor(l1 - 0.5) + 0.5) + 1;
    r = Math.floor(Math.ceil(r1 - 0.5) + 0.5) + 1;
    const cover = (lo: number, hi: number) => normalCdf(hi - 0.5, mu, sigma) - normalCdf(lo - 0.5, mu, sigma);
    const symmetric = cover(l, r);
    const leftBiased = cover(l, r - 1);
    if (leftBiased >= confidence && leftBiased < symmetric) r = r - 1;
  }
  return { lo: Math.max(l, 0), hi: Math.min(r, n + 1) };
}

/** The median and its confidence interval, with benchstat's relative width (null for ∞ or ?). */
export interface MedianSummary {
  median: number;
  lo: number;
  hi: number;
  /** max(hi/median − 1, 1 − lo/median); null where benchstat prints "∞" or "?"; 0 when everything is 0. */
  ci: number | null;
}

export function summarizeMedian(values: readonly number[], confidence = BENCHSTAT_CONFIDENCE): MedianSummary {
  const xs = ascending(values);
  const n = xs.length;
  const median = quantileSorted(xs, 0.5);
  const orders = medianCiOrders(n, confidence);
  const lo = orders.lo < 1 ? -Infinity : xs[orders.lo - 1]!;
  const hi = orders.hi - 1 >= n ? Infinity : xs[orders.hi - 1]!;
  return { median, lo, hi, ci: relativeCi(median, lo, hi) };
}

function relativeCi(center: number, lo: number, hi: number): number | null {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  const sc = Math.sign(center);
  if (sc !== Math.sign(lo) || sc !== Math.sign(hi)) return null;
  if (center === 0) return 0;
  return Math.max(hi / center - 1, 1 - lo / center);
}

/** Result of the two-sided Mann-Whitney U test. */
export interface UTestResult {
  /** U of the first sample: pairs (x from first, y from second) with x > y, plus ½ per tie. */
  u: number;
  p: number;
  /** How p was obtained; `all-equal` means every value is the same, and p is reported as 1. */
  method: 'exact' | 'normal' | 'all-equal';
}

/** Two-sided Mann-Whitney U test of x against y, as go-moremath computes it. */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): UTestResult {
  const n1 = x.length;
  const n2 = y.length;
  if (n1 === 0 || n2 === 0) throw new RangeError('Mann-Whitney U test needs at least one value on each side');
  // Walk both sorted samples together; each run of equal values is a tie group with mid-ranks.
  const a = ascending(x);
  const b = ascending(y);
  const groups: number[] = []; // tie group sizes, ascending by value
  let i = 0;
  let j = 0;
  let rankSum1 = 0;
  let hasTies = false;
  while (i < n1 || j < n2) {
    const v = j >= n2 || (i < n1 && a[i]! < b[j]!) ? a[i]! : b[j]!;
    const first = i + j + 1;
    let in1 = 0;
    while (i < n1 && a[i] === v) {
      i++;
      in1++;
    }
    while (j < n2 && b[j] === v) j++;
    const last = i + j;
    rankSum1 += ((first + last) / 2) * in1;
    groups.push(last - first + 1);
    if (last > first) hasTies = true;
  }
  const u1 = rankSum1 - (n1 * (n1 + 1)) / 2;
  const u2 = n1 * n2 - u1;
  const uSmall = Math.min(u1, u2);

  const exact = hasTies
    ? n1 <= U_EXACT_LIMIT_TIES && n2 <= U_EXACT_LIMIT_TIES
    : n1 <= U_EXACT_LIMIT && n2 <= U_EXACT_LIMIT;
  if (exact) {
    if (groups.length === 1) return { u: u1, p: 1, method: 'all-equal' };
    if (u1 === u2) return { u: u1, p: 1, method: 'exact' };
    return { u: u1, p: uCdf(n1, n2, groups, uSmall) * 2, method: 'exact' };
  }
  let tieSum = 0;
  for (const t of groups) tieSum += t * t * t - t;
  const N = n1 + n2;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt((n1 * n2 * (N + 1 - tieSum / (N * (N - 1)))) / 12);
  if (sigma === 0) return { u: u1, p: 1, method: 'all-equal' };
  let numer = u1 - mu;
  numer -= Math.sign(numer) * 0.5; // continuity correction
  const z = numer / sigma;
  const cdf = normalCdf(z);
  return { u: u1, p: 2 * Math.min(cdf, 1 - cdf), method: 'normal' };
}

/**
 * P(U ≤ u) under the null hypothesis, exactly, for samples of n1 and n2 values whose pooled values form
 * the given tie groups (ascending). Every choice of which n1 pooled positions belong to the first sample
 * is equally likely; a dynamic programme over the tie groups counts the choices by their 2U.
 */
function uCdf(n1: number, n2: number, groups: readonly number[], u: number): number {
  const cap = Math.floor(2 * u + 1e-9); // largest 2U counted
  const width = cap + 1;
  // ways[m * width + t] = number of ways to have m first-sample values so far with 2U = t.
  let ways = new Float64Array((n1 + 1) * width);
  let next = new Float64Array((n1 + 1) * width);
  ways[0] = 1;
  let seen = 0;
  for (const t of groups) {
    next.fill(0);
    for (let m = 0; m <= Math.min(n1, seen); m++) {
      const before2 = seen - m; // second-sample values below this group
      if (before2 > n2) continue;
      const row = m * width;
      for (let twoU = 0; twoU < width; twoU++) {
        const w = ways[row + twoU]!;
        if (w === 0) continue;
        const rMin = Math.max(0, t - (n2 - before2));
        const rMax = Math.min(t, n1 - m);
        for (let r = rMin; r <= rMax; r++) {
          // r first-sample values in this group beat every earlier second-sample value and tie with
          // the group's t − r second-sample values (½ each).
          const add = 2 * r * before2 + r * (t - r);
          const to = twoU + add;
          if (to > cap) continue; // not monotonic in r (ties within a group count ½), so no early exit
          next[(m + r) * width + to]! += w * choose(t, r);
        }
      }
    }
    [ways, next] = [next, ways];
    seen += t;
  }
  let count = 0;
  const row = n1 * width;
  for (let twoU = 0; twoU < width; twoU++) count += ways[row + twoU]!;
  return count / choose(n1 + n2, n1);
}

/** Options for `compareBenchmarks`. */
export interface CompareOptions {
  alpha?: number;
  confidence?: number;
}

/**
 * Compares two benchmark files the way `benchstat BASE TARGET` does: per (pkg, benchmark, unit) present
 * in both, each side's median and 95 % CI, the change in percent, the Mann-Whitney U p-value and
 * whether it is significant (p ≤ alpha).
 */
export function compareBenchmarks(
  base: BenchmarkRun,
  target: BenchmarkRun,
  options: CompareOptions = {},
): BenchmarkDiff {
  const alpha = options.alpha ?? BENCHSTAT_ALPHA;
  const confidence = options.confidence ?? BENCHSTAT_CONFIDENCE;
  const key = (s: BenchmarkSeries) => `${configText(s.config)}\u0000${s.pkg}\u0000${s.name}\u0000${s.unit}`;
  const targetByKey = new Map(target.benchmarks.map((s) => [key(s), s] as const));

  // benchstat's layout: a table per package and unit, rows by benchmark — each in order of first
  // appearance across the inputs (base first).
  const pkgRank = new Map<string, number>();
  const unitRank = new Map<string, number>();
  const nameRank = new Map<string, number>();
  for (const s of [...base.benchmarks, ...target.benchmarks]) {
    if (!pkgRank.has(s.pkg)) pkgRank.set(s.pkg, pkgRank.size);
    const uk = `${s.pkg}\u0000${s.unit}`;
    if (!unitRank.has(uk)) unitRank.set(uk, unitRank.size);
    const nk = `${s.pkg}\u0000${s.name}`;
    if (!nameRank.has(nk)) nameRank.set(nk, nameRank.size);
  }

  const rows: BenchmarkDiffRow[] = [];
  const paired = new Set<string>();
  for (const b of base.benchmarks) {
    const t = targetByKey.get(key(b));
    if (!t || b.values.length === 0 || t.values.length === 0) continue;
    paired.add(key(b));
    const bs = summarizeMedian(b.values, confidence);
    const ts = summarizeMedian(t.values, confidence);
    const test = mannWhitneyU(b.values, t.values);
    const nBase = b.values.length;
    const nTarget = t.values.length;
    rows.push({
      pkg: b.pkg,
      name: b.name,
      unit: b.unit,
      base: side(bs),
      target: side(ts),
      deltaPercent: deltaPercent(bs.median, ts.median),
      p: test.p,
      n: nBase === nTarget ? nBase : `${nBase}+${nTarget}`,
      nBase,
      nTarget,
      significant: test.p <= alpha,
    });
  }
  const rank = (r: BenchmarkDiffRow) => [
    pkgRank.get(r.pkg)!,
    unitRank.get(`${r.pkg}\u0000${r.unit}`)!,
    nameRank.get(`${r.pkg}\u0000${r.name}`)!,
  ];
  const ranked = rows.map((r) => ({ r, k: rank(r) }));
  ranked.sort((x, y) => x.k[0]! - y.k[0]! || x.k[1]! - y.k[1]! || x.k[2]! - y.k[2]!);
  const unpaired = {
    base: base.benchmarks.filter((s) => !paired.has(key(s))).length,
    target: target.benchmarks.filter((s) => !paired.has(key(s))).length,
  };
  return {
    kind: 'benchmark-diff',
    alpha,
    rows: ranked.map((x) => x.r),
    unpaired,
    reason: rows.length === 0 ? unpairedReason(base, target) : null,
  };
}

function configText(c: Record<string, string> | undefined): string {
  return Object.entries(c ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}

/**
 * Why no benchmark could be paired: the configuration lines that differ between the sides (benchstat
 * prints such files as separate tables), else that no benchmark name and unit is on both sides.
 */
function unpairedReason(base: BenchmarkRun, target: BenchmarkRun): string {
  const keysOf = (r: BenchmarkRun) => new Set(r.benchmarks.flatMap((s) => Object.keys(s.config ?? {})));
  const valuesOf = (r: BenchmarkRun, k: string) => [...new Set(r.benchmarks.map((s) => s.config?.[k] ?? null))];
  const differs: string[] = [];
  for (const k of new Set([...keysOf(base), ...keysOf(target)])) {
    const b = valuesOf(base, k);
    const t = valuesOf(target, k);
    if (b.length === t.length && b.every((v) => t.includes(v))) continue;
    const show = (vs: (string | null)[]) => vs.map((v) => (v === null ? '(none)' : `"${v}"`)).join(', ');
    differs.push(`${k}: ${show(b)} vs ${show(t)}`);
  }
  if (differs.length > 0)
    return `no benchmark can be compared: the configuration lines differ (${differs.join('; ')}), and benchstat compares results only under the same configuration (it prints them as separate tables; e.g. benchstat -ignore ${differs[0]!.split(':')[0]} pairs them)`;
  return 'no benchmark can be compared: no benchmark and unit appears on both sides';
}

function side(s: MedianSummary): BenchSideSummary {
  return { median: s.median, ci: s.ci };
}

/** (new/old − 1)·100 as benchstat computes it; 0 when equal; null when old is 0 (benchstat's "?"). */
function deltaPercent(oldMedian: number, newMedian: number): number | null {
  if (oldMedian === newMedian) return 0;
  if (oldMedian === 0) return null;
  return (newMedian / oldMedian - 1.0) * 100.0;
}
