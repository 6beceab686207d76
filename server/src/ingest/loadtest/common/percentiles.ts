/**
 * Percentile definitions of the load-test tools, and the latency figures built with them.
 *
 * The tools disagree on what "p99" means, on purpose or by history, and a figure we compute from a
 * tool's per-request output must equal the one the tool printed for the same run. So each tool's
 * definition is a named `PercentileRule`, and every figure computed from sorted latencies (the
 * summary, a curve, a timeline bucket) takes the rule of the tool that wrote the file.
 * vegeta's p50..p99.9 are not order statistics at all but t-digest estimates: see vegeta-tdigest.ts.
 *
 * Units: latencies are milliseconds in and out; `p` is a percentage in 0..100.
 */
import type { LatencyMs, PercentilePoint } from '../../../model/loadtest.ts';
import { emptyLatency } from '../../../model/loadtest.ts';

/** Picks the value for percentile `p` (0..100) from an ascending array; null when it is empty. */
export type PercentileRule = (sorted: Float64Array, p: number) => number | null;

/**
 * hey (requester/report.go): walk the sorted latencies and take the first index i whose integer
 * percentage i*100/n (Go integer division) reaches p, i.e. i = ceil(p*n/100). When no index
 * reaches p (tiny samples) hey leaves the slot at 0; we clamp to the last value instead.
 */
export const heyRule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  if (n === 0) return null;
  // Go compares integers: i*100/n >= p  <=>  i*100 >= p*n (for integer p); the epsilon only
  // protects non-integer p (99.9) from float noise.
  let i = Math.ceil((p * n) / 100 - 1e-9);
  if (i < 0) i = 0;
  if (i > n - 1) i = n - 1;
  return sorted[i]!;
};

/**
 * ab (support/ab.c, the "Percentage of the requests served" table): the value at index
 * floor(n*p/100) of the requests sorted by total time; 100 % is the longest request.
 */
export const abRule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  if (n === 0) return null;
  if (p >= 100) return sorted[n - 1]!;
  let i = Math.floor((n * p) / 100 + 1e-9);
  if (i < 0) i = 0;
  if (i > n - 1) i = n - 1;
  return sorted[i]!;
};

/**
 * Exact order statistic, nearest rank: the smallest value with at least p % of the values at or
 * below it, index ceil(p/100 * n) - 1 (ghz's rank rule; also vegeta's exact figures and timeline).
 */
export const nearestRankRule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  if (n === 0) return null;
  let idx = Math.ceil((p / 100) * n) - 1;
  if (idx < 0) idx = 0;
  if (idx > n - 1) idx = n - 1;
  return sorted[idx]!;
};

/** k6's TrendSink rule: linear interpolation at position p/100 * (n - 1). */
export const k6Rule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  if (n === 0) return null;
  if (n === 1) return sorted[0]!;
  const i = (p / 100) * (n - 1);
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  const j = sorted[lo]!;
  const k = sorted[hi]!;
  return j + (k - j) * (i - lo);
};

/**
 * Apache commons-math `Percentile` with the LEGACY estimation (what JMeter's HTML dashboard uses):
 * position p(n+1)/100, clamped to the ends, linear interpolation between neighbours.
 */
export const commonsMathLegacyRule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  if (n === 0) return null;
  if (n === 1) return sorted[0]!;
  const pos = (p * (n + 1)) / 100;
  const fpos = Math.floor(pos);
  const dif = pos - fpos;
  if (pos < 1) return sorted[0]!;
  if (pos >= n) return sorted[n - 1]!;
  const lower = sorted[fpos - 1]!;
  const upper = sorted[fpos]!;
  return lower + dif * (upper - lower);
};

/**
 * The nine headline latency figures (ms) from ascending latencies: min and max exact, p50..p99.9
 * by `rule`, and `mean` as given (importers differ on how they sum). All null for an empty array.
 */
export function latencyFromSorted(sorted: Float64Array, rule: PercentileRule, mean: number | null): LatencyMs {
  const n = sorted.length;
  if (n === 0) return emptyLatency();
  return {
    min: sorted[0]!,
    mean,
    p50: rule(sorted, 50),
    p75: rule(sorted, 75),
    p90: rule(sorted, 90),
    p95: rule(sorted, 95),
    p99: rule(sorted, 99),
    p999: rule(sorted, 99.9),
    max: sorted[n - 1]!,
  };
}

/** Arithmetic mean summed in array order; null for an empty array. */
export function meanOf(values: Float64Array): number | null {
  if (values.length === 0) return null;
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  return s / values.length;
}

/** Percentiles offered as a computed distribution curve. */
export const CURVE_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100];

/**
 * A latency curve (percentile 0..100 → ms) from ascending latencies: 0 and 100 are the exact
 * min and max, the other points follow `rule`. Null for an empty array.
 */
export function curve(
  sorted: Float64Array,
  rule: PercentileRule,
  points = CURVE_PERCENTILES,
): PercentilePoint[] | null {
  if (sorted.length === 0) return null;
  const out: PercentilePoint[] = [];
  for (const p of points) {
    const ms = p === 0 ? sorted[0]! : p === 100 ? sorted[sorted.length - 1]! : rule(sorted, p);
    if (ms !== null) out.push({ percentile: p, ms });
  }
  return out;
}

/** The ms a printed distribution gives for exactly percentile `p`, or null when it has no such line. */
export function printedAt(dist: readonly PercentilePoint[], p: number): number | null {
  return dist.find((d) => d.percentile === p)?.ms ?? null;
}

const FIELD_OF = { 50: 'p50', 75: 'p75', 90: 'p90', 95: 'p95', 99: 'p99', 99.9: 'p999' } as const;

/** A headline percentile (50, 75, 90, 95, 99 or 99.9). */
export type HeadlinePercentile = keyof typeof FIELD_OF;

/**
 * Copies the printed lines for the percentiles `which` into `latency` (ms, each null when the
 * distribution has no line at exactly that percentile). The other fields are left as they are.
 */
export function setPrintedPercentiles(
  latency: LatencyMs,
  dist: readonly PercentilePoint[],
  which: readonly HeadlinePercentile[],
): void {
  for (const p of which) latency[FIELD_OF[p]] = printedAt(dist, p);
}
