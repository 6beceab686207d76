/**
 * Figures computed from per-request rows (hey -o csv, ab -g), shared by the group-A importers.
 *
 * Memory is a few typed arrays that grow with the row count (latency, second bucket, error flag:
 * 13 bytes a row) — never row objects, never the file's text. Percentiles follow the tool's own
 * definition, passed in as a `PercentileRule`, so our figures agree with the report the user saw.
 */
import type { LatencyMs, PercentilePoint, TimelineBucket } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';

/** Picks the value for percentile `p` (0..100) from an ascending, non-empty array. */
export type PercentileRule = (sorted: Float64Array, p: number) => number;

/**
 * hey (requester/report.go): walk the sorted latencies and take the first index i whose integer
 * percentage i*100/n (Go integer division) reaches p, i.e. i = ceil(p*n/100). When no index
 * reaches p (tiny samples) hey leaves the slot at 0; we clamp to the last value instead.
 */
export const heyRule: PercentileRule = (sorted, p) => {
  const n = sorted.length;
  let i = Math.ceil((p * n) / 100 - 1e-9);
  // Go compares integers: i*100/n >= p  <=>  i*100 >= p*n (for integer p); the epsilon above only
  // protects non-integer p (99.9) from float noise.
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
  if (p >= 100) return sorted[n - 1]!;
  let i = Math.floor((n * p) / 100 + 1e-9);
  if (i < 0) i = 0;
  if (i > n - 1) i = n - 1;
  return sorted[i]!;
};

/** A Float64Array that doubles when full (amortised O(1) push, no boxing). */
export class GrowableF64 {
  data: Float64Array;
  length = 0;
  constructor(capacity = 1 << 14) {
    this.data = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Same as GrowableF64 for small integers (second buckets). */
export class GrowableI32 {
  data: Int32Array;
  length = 0;
  constructor(capacity = 1 << 14) {
    this.data = new Int32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

/** Same for 0/1 flags (error per row). */
export class GrowableU8 {
  data: Uint8Array;
  length = 0;
  constructor(capacity = 1 << 14) {
    this.data = new Uint8Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint8Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Uint8Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * Summary latency from all rows: min/max of all, mean = sum/n, percentiles by `rule`.
 * `sorted` must be ascending. Returns all-null figures for an empty sample.
 */
export function latencyFromSorted(sorted: Float64Array, sum: number, rule: PercentileRule): LatencyMs {
  const n = sorted.length;
  if (n === 0) return emptyLatency();
  return {
    min: sorted[0]!,
    mean: sum / n,
    p50: rule(sorted, 50),
    p75: rule(sorted, 75),
    p90: rule(sorted, 90),
    p95: rule(sorted, 95),
    p99: rule(sorted, 99),
    p999: rule(sorted, 99.9),
    max: sorted[n - 1]!,
  };
}

/** A percentile curve (the points a tool's own report shows) from the sorted latencies. */
export function distributionFromSorted(sorted: Float64Array, percentiles: readonly number[], rule: PercentileRule): PercentilePoint[] {
  return percentiles.map((p) => ({ percentile: p, ms: rule(sorted, p) }));
}

/**
 * Per-second timeline plus the whole run's latencies in ascending order. `bucket[i]` is row i's
 * second (0-based, on the run's own clock), `lat[i]` its latency in ms, `err[i]` 1 when the row
 * is an error. Every second from 0 to the last one gets a bucket — a gap is an explicit zero
 * bucket. Per-bucket percentiles use the same rule as the summary.
 *
 * The rows are grouped by second (counting sort), each second's slice is sorted, and the sorted
 * slices are then merged pairwise into the run's sorted order — cheaper than sorting everything a
 * second time. `lat` is used as scratch space and its contents are lost.
 */
export function timelineAndSorted(
  lat: Float64Array,
  bucket: Int32Array,
  err: Uint8Array | null,
  rule: PercentileRule,
): { timeline: TimelineBucket[]; sorted: Float64Array } {
  const n = lat.length;
  if (n === 0) return { timeline: [], sorted: new Float64Array(0) };
  let maxB = 0;
  for (let i = 0; i < n; i++) if (bucket[i]! > maxB) maxB = bucket[i]!;
  const nb = maxB + 1;
  const counts = new Int32Array(nb);
  const errors = new Int32Array(nb);
  const sums = new Float64Array(nb);
  for (let i = 0; i < n; i++) {
    const b = bucket[i]!;
    counts[b]!++;
    if (err && err[i]) errors[b]!++;
  }
  const start = new Int32Array(nb + 1);
  for (let b = 0; b < nb; b++) start[b + 1] = start[b]! + counts[b]!;
  const fill = start.slice(0, nb);
  let grouped: Float64Array = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = bucket[i]!;
    const v = lat[i]!;
    grouped[fill[b]!++] = v;
    sums[b] = sums[b]! + v;
  }
  const timeline: TimelineBucket[] = [];
  for (let b = 0; b < nb; b++) {
    const slice = grouped.subarray(start[b]!, start[b + 1]!);
    slice.sort();
    const c = slice.length;
    timeline.push({
      t: b,
      requests: c,
      rps: c,
      errors: errors[b]!,
      latencyMs:
        c === 0
          ? { mean: null, p50: null, p95: null, p99: null }
          : { mean: sums[b]! / c, p50: rule(slice, 50), p95: rule(slice, 95), p99: rule(slice, 99) },
    });
  }
  // Bottom-up merge of the sorted runs [start[b], start[b+1]).
  let runs = Array.from(start);
  let scratch: Float64Array = lat;
  while (runs.length > 2) {
    const next: number[] = [0];
    for (let r = 0; r + 1 < runs.length; r += 2) {
      const lo = runs[r]!;
      const mid = runs[r + 1]!;
      const hi = r + 2 < runs.length ? runs[r + 2]! : mid;
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) scratch[k++] = grouped[i]! <= grouped[j]! ? grouped[i++]! : grouped[j++]!;
      while (i < mid) scratch[k++] = grouped[i++]!;
      while (j < hi) scratch[k++] = grouped[j++]!;
      next.push(hi);
    }
    runs = next;
    const t = grouped;
    grouped = scratch;
    scratch = t;
  }
  return { timeline, sorted: grouped };
}

/** Per-second timeline only (see `timelineAndSorted`); leaves `lat` untouched. */
export function buildTimeline(
  lat: Float64Array,
  bucket: Int32Array,
  err: Uint8Array | null,
  rule: PercentileRule,
): TimelineBucket[] {
  return timelineAndSorted(lat.slice(), bucket, err, rule).timeline;
}
