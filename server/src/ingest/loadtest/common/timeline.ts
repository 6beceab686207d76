/**
 * The per-second timeline of a run read from per-request rows, shared by every importer that has
 * such rows (hey -o csv, ab -g, vegeta results, k6 points, JMeter JTL, ghz details).
 *
 * Contract: one bucket per second t = 0, 1, … up to the last row's second, on the run's own clock
 * (t = 0 is the run's start, not a wall-clock second); a second without rows is an explicit zero
 * bucket — unless the span is far wider than the rows can fill (more than 2 × rows + 3600 seconds,
 * e.g. three requests ten million seconds apart): then only the seconds that have rows get a bucket,
 * so a timeline is always bounded by the input's content, never by its timestamps. `requests` and `rps` count the rows of the second, `errors` those flagged as errors;
 * the bucket's latency figures (ms) cover its rows that have a latency, with the percentiles of
 * the tool's own `PercentileRule` and null when there are none.
 *
 * The rows are grouped by second (a counting sort), each second's slice is sorted, and the sorted
 * slices are then merged into the run's ascending latencies — several times cheaper than sorting
 * every latency a second time, which a million-row log would otherwise pay for its headline
 * figures. Memory is a few typed arrays of the row count; no per-row objects.
 */
import type { TimelineBucket } from '../../../model/loadtest.ts';
import { IngestError } from '../../errors.ts';
import { meanOf, type PercentileRule } from './percentiles.ts';

export interface TimelineRows {
  /** Per row: its second on the run's clock (0-based, never negative). */
  second: Int32Array;
  /** Per row: latency in ms; NaN for a row that counts as a request but has no latency. */
  latencyMs: Float64Array;
  /** Per row: non-zero when the row is an error (an error flag or an outcome class); null: none is. */
  error: Uint8Array | null;
  rule: PercentileRule;
  /**
   * How a bucket's mean is summed: 'row-order' adds the latencies in row order (hey, ab), 'ascending'
   * adds them sorted (vegeta, k6, JMeter, ghz). Both are the same mean up to float rounding; each
   * importer keeps the one its figures have always used, so they do not move in the last digit.
   */
  bucketMean: 'row-order' | 'ascending';
  /** True when `latencyMs` may serve as scratch space for the merge (its contents are then lost). */
  reuseLatency?: boolean;
}

/** Longest run, in seconds, that a timeline is built for (a wider span means broken timestamps). */
const MAX_SECONDS = 10_000_000;

/**
 * Each row's second from its start time in seconds since the run's start (any order): the whole
 * second, and 0 for a start before the run's (clock skew). Throws IngestError 'value-out-of-range'
 * when the starts span more than MAX_SECONDS.
 */
export function secondsOf(startSec: Float64Array): Int32Array {
  const n = startSec.length;
  const second = new Int32Array(n);
  let maxB = 0;
  for (let i = 0; i < n; i++) {
    let b = Math.floor(startSec[i]!);
    if (!(b >= 0)) b = 0;
    second[i] = b;
    if (b > maxB) maxB = b;
  }
  if (maxB > MAX_SECONDS) throw new IngestError('value-out-of-range', `timestamps span more than ${maxB} seconds`);
  return second;
}

/**
 * The timeline (see the module comment) and, as a by-product, every latency that is not NaN in
 * ascending order. No rows: no buckets and an empty array.
 */
export function timelineAndSorted(rows: TimelineRows): { timeline: TimelineBucket[]; sorted: Float64Array } {
  const { latencyMs, error, rule } = rows;
  let second = rows.second;
  const n = second.length;
  if (n === 0) return { timeline: [], sorted: new Float64Array(0) };
  let maxB = 0;
  for (let i = 0; i < n; i++) if (second[i]! > maxB) maxB = second[i]!;
  let nb = maxB + 1;
  // Sparse: bucket b stands for second secondOf[b] (only seconds with rows).
  let secondOf: Int32Array | null = null;
  if (nb > 2 * n + 3600) {
    const sortedSeconds = Int32Array.from(second).sort();
    let k = 0;
    for (let i = 0; i < n; i++)
      if (i === 0 || sortedSeconds[i] !== sortedSeconds[i - 1]) sortedSeconds[k++] = sortedSeconds[i]!;
    secondOf = sortedSeconds.slice(0, k);
    const index = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let lo = 0;
      let hi = k - 1;
      const want = second[i]!;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (secondOf[mid]! < want) lo = mid + 1;
        else hi = mid;
      }
      index[i] = lo;
    }
    second = index;
    nb = k;
  }
  const counts = new Int32Array(nb);
  const errors = new Int32Array(nb);
  const latCounts = new Int32Array(nb);
  for (let i = 0; i < n; i++) {
    const b = second[i]!;
    counts[b]!++;
    if (error && error[i]! !== 0) errors[b]!++;
    if (!Number.isNaN(latencyMs[i]!)) latCounts[b]!++;
  }
  // counting sort of the latencies into their seconds
  const offsets = new Int32Array(nb + 1);
  for (let b = 0; b < nb; b++) offsets[b + 1] = offsets[b]! + latCounts[b]!;
  const fill = offsets.slice(0, nb);
  const grouped = new Float64Array(offsets[nb]!);
  const sums = rows.bucketMean === 'row-order' ? new Float64Array(nb) : null;
  for (let i = 0; i < n; i++) {
    const v = latencyMs[i]!;
    if (Number.isNaN(v)) continue;
    const b = second[i]!;
    grouped[fill[b]!++] = v;
    if (sums) sums[b] = sums[b]! + v;
  }
  const timeline: TimelineBucket[] = [];
  for (let b = 0; b < nb; b++) {
    const part = grouped.subarray(offsets[b]!, offsets[b + 1]!);
    part.sort();
    const c = part.length;
    timeline.push({
      t: secondOf ? secondOf[b]! : b,
      requests: counts[b]!,
      rps: counts[b]!,
      errors: errors[b]!,
      latencyMs:
        c === 0
          ? { mean: null, p50: null, p95: null, p99: null }
          : { mean: sums ? sums[b]! / c : meanOf(part), p50: rule(part, 50), p95: rule(part, 95), p99: rule(part, 99) },
    });
  }
  return { timeline, sorted: mergeRuns(grouped, offsets, rows.reuseLatency ? latencyMs : null) };
}

/**
 * Bottom-up merge of the ascending runs a[runStarts[i], runStarts[i + 1]) into one ascending
 * array (either `a` or the scratch space, whose first a.length entries it then overwrites).
 */
function mergeRuns(a: Float64Array, runStarts: Int32Array, scratch: Float64Array | null): Float64Array {
  let runs: number[] = [];
  for (let i = 0; i < runStarts.length; i++)
    if (i === 0 || runStarts[i]! !== runStarts[i - 1]!) runs.push(runStarts[i]!);
  if (runs.length <= 2) return a;
  let src: Float64Array = a;
  let dst: Float64Array = scratch ? scratch.subarray(0, a.length) : new Float64Array(a.length);
  while (runs.length > 2) {
    const next: number[] = [0];
    for (let r = 0; r + 1 < runs.length; r += 2) {
      const lo = runs[r]!;
      const mid = runs[r + 1]!;
      const hi = r + 2 < runs.length ? runs[r + 2]! : mid;
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[k++] = src[i]! <= src[j]! ? src[i++]! : src[j++]!;
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
      next.push(hi);
    }
    runs = next;
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}
