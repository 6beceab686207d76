/**
 * Shared helpers of the group-B load-test importers (vegeta, k6, Locust, JMeter, ghz): growable
 * typed arrays for per-request data, the percentile definitions of each tool, per-second timelines,
 * timestamp and Go-duration parsing, and small constructors for the canonical model.
 */
import type { LatencyMs, LoadTestFormat, LoadTestMeta, LoadTestRun, LoadTestSummary, PercentilePoint, TimelineBucket } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { readAllBytes, type ByteSource } from '../source.ts';

/** A Float64Array that grows by doubling; per-request logs keep numbers here, never row objects. */
export class GrowableF64 {
  private buf: Float64Array;
  length = 0;
  constructor(initial = 4096) {
    this.buf = new Float64Array(initial);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  /** A view of the filled part (shares memory with the array). */
  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Same as GrowableF64 for small codes (error class of a request, ...). */
export class GrowableU8 {
  private buf: Uint8Array;
  length = 0;
  constructor(initial = 4096) {
    this.buf = new Uint8Array(initial);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Decodes byte spans to strings, remembering the last one: a field that repeats from row to row
 * (a status "200", a scenario, a URL) is then compared byte by byte instead of decoded again.
 */
export class SpanText {
  private bytes = new Uint8Array(64);
  private len = -1;
  private text = '';
  get(b: Buffer, s: number, e: number): string {
    const n = e - s;
    if (n === this.len) {
      const k = this.bytes;
      let same = true;
      for (let j = 0; j < n; j++) {
        if (b[s + j] !== k[j]) {
          same = false;
          break;
        }
      }
      if (same) return this.text;
    }
    this.text = b.toString('utf8', s, e);
    if (n > this.bytes.length) this.bytes = new Uint8Array(n * 2);
    this.bytes.set(b.subarray(s, e));
    this.len = n;
    return this.text;
  }
}

/** Request outcome classes kept per request. */
export const OK = 0;
export const TRANSPORT = 1;
export const NON2XX = 2;

// ---------------------------------------------------------------------------------------------
// Percentile definitions. Each takes an ascending Float64Array and p in 0..100.

/** Exact order statistic, nearest rank: the smallest value with at least p % of values at or below it. */
export function nearestRank(sorted: Float64Array, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  let idx = Math.ceil((p / 100) * n) - 1;
  if (idx < 0) idx = 0;
  if (idx > n - 1) idx = n - 1;
  return sorted[idx]!;
}

/** k6's TrendSink rule: linear interpolation at position p/100 * (n - 1). */
export function k6Percentile(sorted: Float64Array, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  if (n === 1) return sorted[0]!;
  const i = (p / 100) * (n - 1);
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  const j = sorted[lo]!;
  const k = sorted[hi]!;
  return j + (k - j) * (i - lo);
}

/**
 * Apache commons-math `Percentile` with the LEGACY estimation (what JMeter's HTML dashboard uses):
 * position p(n+1)/100, clamped to the ends, linear interpolation between neighbours.
 */
export function legacyPercentile(sorted: Float64Array, p: number): number | null {
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
}

export type PercentileFn = (sorted: Float64Array, p: number) => number | null;

/** Fills the nine headline latency fields from sorted values with one percentile definition. */
export function latencyFromSorted(sorted: Float64Array, pct: PercentileFn, mean: number | null): LatencyMs {
  if (sorted.length === 0) return emptyLatency();
  return {
    min: sorted[0]!,
    mean,
    p50: pct(sorted, 50),
    p75: pct(sorted, 75),
    p90: pct(sorted, 90),
    p95: pct(sorted, 95),
    p99: pct(sorted, 99),
    p999: pct(sorted, 99.9),
    max: sorted[sorted.length - 1]!,
  };
}

export function meanOf(values: Float64Array): number | null {
  if (values.length === 0) return null;
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  return s / values.length;
}

/** Percentiles offered as a computed distribution curve. */
export const CURVE_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.99, 100];

export function curve(sorted: Float64Array, pct: PercentileFn, points = CURVE_PERCENTILES): PercentilePoint[] | null {
  if (sorted.length === 0) return null;
  const out: PercentilePoint[] = [];
  for (const p of points) {
    const ms = p === 0 ? sorted[0]! : p === 100 ? sorted[sorted.length - 1]! : pct(sorted, p);
    if (ms !== null) out.push({ percentile: p, ms });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Timelines

export interface TimelineInput {
  /** Seconds since the run's own start (the earliest request), one per request; any order. */
  startSec: Float64Array;
  /** Latency in ms per request, NaN where the request has none. */
  latencyMs: Float64Array | null;
  /** Per request: OK, TRANSPORT or NON2XX (anything non-zero counts as an error). */
  outcome: Uint8Array | null;
  pct: PercentileFn;
}

/**
 * Per-second buckets t = 0, 1, ... up to the last request's second, with explicit zero buckets for
 * seconds without requests. Bucket percentiles use the tool's own percentile definition.
 */
export function buildTimeline(input: TimelineInput): TimelineBucket[] | null {
  return buildTimelineSorted(input).timeline;
}

/**
 * `buildTimeline`, plus every non-NaN latency in ascending order as a by-product: the per-second
 * slices are sorted anyway, and merging them is several times cheaper than sorting all the
 * latencies a second time (which a million-row log would otherwise pay for its headline figures).
 */
export function buildTimelineSorted(input: TimelineInput): { timeline: TimelineBucket[] | null; sorted: Float64Array } {
  const { startSec, latencyMs, outcome, pct } = input;
  const n = startSec.length;
  if (n === 0) return { timeline: null, sorted: new Float64Array(0) };
  let maxB = 0;
  const bucketOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let b = Math.floor(startSec[i]!);
    if (!(b >= 0)) b = 0; // clock skew before the earliest start: put it in the first second
    bucketOf[i] = b;
    if (b > maxB) maxB = b;
  }
  if (maxB > 10_000_000) throw new IngestError('value-out-of-range', `timestamps span more than ${maxB} seconds`);
  const nb = maxB + 1;
  const counts = new Int32Array(nb);
  const errs = new Int32Array(nb);
  const latCounts = new Int32Array(nb);
  for (let i = 0; i < n; i++) {
    const b = bucketOf[i]!;
    counts[b]!++;
    if (outcome && outcome[i]! !== 0) errs[b]!++;
    if (latencyMs && !Number.isNaN(latencyMs[i]!)) latCounts[b]!++;
  }
  // counting sort of latencies into buckets, then each bucket sorted on its own
  const offsets = new Int32Array(nb + 1);
  for (let b = 0; b < nb; b++) offsets[b + 1] = offsets[b]! + latCounts[b]!;
  const fill = offsets.slice(0, nb);
  const lat = new Float64Array(offsets[nb]!);
  if (latencyMs) {
    for (let i = 0; i < n; i++) {
      const v = latencyMs[i]!;
      if (Number.isNaN(v)) continue;
      const b = bucketOf[i]!;
      lat[fill[b]!++] = v;
    }
  }
  const out: TimelineBucket[] = [];
  for (let b = 0; b < nb; b++) {
    const part = lat.subarray(offsets[b]!, offsets[b + 1]!);
    part.sort();
    out.push({
      t: b,
      requests: counts[b]!,
      rps: counts[b]!,
      errors: errs[b]!,
      latencyMs: { mean: meanOf(part), p50: pct(part, 50), p95: pct(part, 95), p99: pct(part, 99) },
    });
  }
  return { timeline: out, sorted: mergeRuns(lat, offsets) };
}

/** Bottom-up merge of the ascending runs a[runs[i], runs[i + 1]) into one ascending array. */
function mergeRuns(a: Float64Array, runStarts: Int32Array): Float64Array {
  let runs: number[] = [];
  for (let i = 0; i < runStarts.length; i++) if (i === 0 || runStarts[i]! !== runStarts[i - 1]!) runs.push(runStarts[i]!);
  if (runs.length <= 2) return a;
  let src: Float64Array = a;
  let dst: Float64Array = new Float64Array(a.length);
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

// ---------------------------------------------------------------------------------------------
// Time parsing

let cachedPrefix = '';
let cachedPrefixSec = 0;

/**
 * Parses an RFC 3339 timestamp ("2026-11-22T01:39:41.764020722Z", any fraction length, Z or ±hh:mm)
 * found in `s` between `from` and `to` into [whole Unix seconds, nanoseconds]. Returns null when the
 * text is not such a timestamp. Nanosecond epoch values exceed 2^53, so callers keep seconds and
 * nanoseconds apart. The date-time prefix of the previous call is cached: in a log it changes once
 * per second, so most rows cost no Date arithmetic.
 */
export function parseRfc3339(s: string, from = 0, to = s.length): [number, number] | null {
  if (to - from < 20 || s.charCodeAt(from + 4) !== 45) return null;
  const sep = s.charCodeAt(from + 10);
  if (sep !== 84 && sep !== 32) return null;
  let sec: number;
  if (cachedPrefix.length === 19 && s.startsWith(cachedPrefix, from)) sec = cachedPrefixSec;
  else {
    const prefix = s.slice(from, from + 19);
    const y = +prefix.slice(0, 4), mo = +prefix.slice(5, 7), d = +prefix.slice(8, 10);
    const h = +prefix.slice(11, 13), mi = +prefix.slice(14, 16), se = +prefix.slice(17, 19);
    if (![y, mo, d, h, mi, se].every(Number.isInteger)) return null;
    sec = Date.UTC(y, mo - 1, d, h, mi, se) / 1000;
    if (!Number.isFinite(sec)) return null;
    cachedPrefix = prefix;
    cachedPrefixSec = sec;
  }
  let i = from + 19;
  let ns = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    let digits = 0;
    while (i < to) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      if (digits < 9) {
        ns = ns * 10 + (c - 48);
        digits++;
      }
      i++;
    }
    for (; digits < 9; digits++) ns *= 10;
  }
  if (i === to - 1 && (s.charCodeAt(i) === 90 || s.charCodeAt(i) === 122)) return [sec, ns];
  const m = /^([+-])(\d\d):?(\d\d)$/.exec(s.slice(i, to));
  if (!m) return null;
  const off = (Number(m[2]) * 3600 + Number(m[3]) * 60) * (m[1] === '+' ? 1 : -1);
  return [sec - off, ns];
}

/** The result of `parseRfc3339Bytes` (module-level, so a million-row loop allocates nothing). */
export const rfc3339 = { sec: 0, ns: 0 };

const bytePrefix = new Uint8Array(19);
let bytePrefixSet = false;
let bytePrefixSec = 0;

/**
 * `parseRfc3339` on raw bytes b[from, to): true with `rfc3339.sec`/`rfc3339.ns` set, false where
 * `parseRfc3339` would return null. Same rules and same results: an ASCII date-time prefix is
 * compared byte by byte with the previous one (it changes once a second in a log), and any
 * prefix that is new or not plain ASCII goes through `parseRfc3339` itself, so the two can never
 * disagree on what a timestamp means.
 */
export function parseRfc3339Bytes(b: Uint8Array, from: number, to: number): boolean {
  if (to - from < 20) return false; // bytes >= characters, so the text is shorter than 20 too
  let same = bytePrefixSet;
  for (let k = 0; same && k < 19; k++) if (b[from + k] !== bytePrefix[k]) same = false;
  if (!same) return slowBytes(b, from, to);
  let i = from + 19;
  let ns = 0;
  if (b[i] === 46) {
    i++;
    let digits = 0;
    while (i < to) {
      const c = b[i]!;
      if (c < 48 || c > 57) break;
      if (digits < 9) {
        ns = ns * 10 + (c - 48);
        digits++;
      }
      i++;
    }
    for (; digits < 9; digits++) ns *= 10;
  }
  if (i === to - 1 && (b[i] === 90 || b[i] === 122)) {
    rfc3339.sec = bytePrefixSec;
    rfc3339.ns = ns;
    return true;
  }
  // a numeric zone offset (rare in logs): the string parser has the rules
  return slowBytes(b, from, to);
}

function slowBytes(b: Uint8Array, from: number, to: number): boolean {
  let ascii = true;
  for (let k = from; k < to; k++) if (b[k]! > 127) ascii = false;
  const text = Buffer.from(b.buffer, b.byteOffset + from, to - from).toString(ascii ? 'latin1' : 'utf8');
  const r = parseRfc3339(text);
  if (!r) return false;
  if (ascii) {
    // parseRfc3339 has just cached this prefix and its seconds (before any zone offset)
    for (let k = 0; k < 19; k++) bytePrefix[k] = b[from + k]!;
    bytePrefixSet = true;
    bytePrefixSec = cachedPrefixSec;
  }
  rfc3339.sec = r[0];
  rfc3339.ns = r[1];
  return true;
}

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };

/** Go `time.Duration.String()` text ("1m2.5s", "679.121µs", "0s") to milliseconds, or null. */
export function parseGoDurationMs(text: string): number | null {
  const s = text.trim();
  if (s === '0' || s === '0s') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  let neg = false;
  let body = s;
  if (body.startsWith('-')) {
    neg = true;
    body = body.slice(1);
  }
  re.lastIndex = 0;
  while (pos < body.length) {
    re.lastIndex = pos;
    const m = re.exec(body);
    if (!m) return null;
    total += Number(m[1]) * GO_UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos === 0) return null;
  return neg ? -total : total;
}

// ---------------------------------------------------------------------------------------------
// Model helpers

export interface SummaryInit {
  requests?: number | null;
  durationSeconds?: number | null;
  rps?: number | null;
  transportErrors?: number | null;
  non2xx?: number | null;
  /** Only when the source gives a total that cannot be split; otherwise transport + non2xx. */
  errors?: number | null;
  latencyMs?: LatencyMs;
  bytesPerSecond?: number | null;
  meta: LoadTestMeta;
}

export function summary(init: SummaryInit): LoadTestSummary {
  const t = init.transportErrors ?? null;
  const h = init.non2xx ?? null;
  let errors = init.errors;
  if (errors === undefined) errors = t === null && h === null ? null : (t ?? 0) + (h ?? 0);
  return {
    requests: init.requests ?? null,
    durationSeconds: init.durationSeconds ?? null,
    rps: init.rps ?? null,
    errors,
    transportErrors: t,
    non2xx: h,
    latencyMs: init.latencyMs ?? emptyLatency(),
    bytesPerSecond: init.bytesPerSecond ?? null,
    meta: init.meta,
  };
}

export function run(
  format: LoadTestFormat,
  s: LoadTestSummary,
  timeline: TimelineBucket[] | null = null,
  latencyDistribution: PercentilePoint[] | null = null,
): LoadTestRun {
  return { kind: 'loadtest', format, summary: s, timeline, latencyDistribution };
}

/** Decodes the head buffer for detectors (a cut multi-byte character at the end is harmless). */
export function headText(head: Buffer): string {
  return head.toString('utf8');
}

/** Reads a small report whole as text, refusing empty input. */
export async function readText(src: ByteSource, limit = 64 * 1024 * 1024): Promise<string> {
  const buf = await readAllBytes(src, limit);
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  return text;
}

/** JSON.parse that reports a typed error. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = /position (\d+)/.exec(msg);
    const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined;
    throw new IngestError('malformed', `${what} is not valid JSON: ${msg}`, line);
  }
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function num(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** A number from a CSV cell; 'N/A' and empty cells are null. */
export function cellNum(v: string | undefined): number | null {
  if (v === undefined) return null;
  const t = v.trim();
  if (t === '' || t === 'N/A') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}
