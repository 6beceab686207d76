import type {
  MetricSeries,
  MetricsRuntimeSettings,
  MetricsFile,
  MetricsHighlights,
  MetricsModel,
  RawSeries,
  SeriesStats,
} from '../../model/metrics.ts';
import { IngestError } from '../errors.ts';
import { maxOf, minOf } from '../../analysis/extent.ts';

export { MetricsRecorder, parseExpvar, parsePrometheusText, parseScrape, ScrapeError } from './scrape.ts';

/**
 * Importer for the runtime-metric series `stagediff capture --metrics` writes (`metrics.json`, see
 * MetricsFile): checks the file (untrusted like any upload) and derives rates, window deltas and
 * histogram quantiles (MetricsModel).
 */

export const METRICS_LIMITS = { maxBytes: 128 * 1024 * 1024, maxSeries: 50_000, maxScrapes: 100_000 };

/** Confidence that a file is a metrics file: JSON naming its format at the start. Works without the name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = head.subarray(0, 4096).toString('utf8').trimStart();
  return text.startsWith('{') && /"format"\s*:\s*"stagediff-metrics"/.test(text) ? 0.99 : 0;
}

function bad(message: string): IngestError {
  return new IngestError('malformed', `not a valid stagediff metrics file: ${message}`);
}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const numOrNull = (x: unknown): boolean => x === null || isNum(x);

function checkArray(a: unknown, n: number, what: string, item: (x: unknown) => boolean): void {
  if (!Array.isArray(a) || a.length !== n) throw bad(`${what} must have one entry per scrape (${n})`);
  if (!a.every(item)) throw bad(`${what} holds a value that is not a number or null`);
}

/** Checks the file's shape: every array one entry per scrape, every value a number or null. */
function check(f: unknown): MetricsFile {
  if (f === null || typeof f !== 'object') throw bad('not an object');
  const m = f as MetricsFile;
  if (m.format !== 'stagediff-metrics') throw bad('no "format": "stagediff-metrics"');
  if (m.version !== 1)
    throw new IngestError('unsupported', `metrics file version ${String(m.version)}: this stagediff reads version 1`);
  if (!m.source || typeof m.source.url !== 'string' || (m.source.kind !== 'prometheus' && m.source.kind !== 'expvar'))
    throw bad('"source" must name a url and a kind (prometheus or expvar)');
  if (!isNum(m.intervalMs) || typeof m.start !== 'string' || Number.isNaN(Date.parse(m.start)))
    throw bad('"intervalMs" and "start" (ISO 8601) are required');
  if (!Array.isArray(m.scrapes) || m.scrapes.length === 0)
    throw new IngestError('no-run', 'the metrics file holds no scrape');
  if (m.scrapes.length > METRICS_LIMITS.maxScrapes)
    throw new IngestError('too-large', `more than ${METRICS_LIMITS.maxScrapes} scrapes`);
  let prev = Number.NEGATIVE_INFINITY;
  for (const s of m.scrapes) {
    if (!s || !isNum(s.t) || !isNum(s.ms) || !(s.error === null || typeof s.error === 'string'))
      throw bad('each scrape needs "t", "ms" and "error"');
    if (s.t < prev) throw bad('scrapes must be in time order');
    prev = s.t;
  }
  if (!Array.isArray(m.series)) throw bad('"series" must be an array');
  if (m.series.length > METRICS_LIMITS.maxSeries)
    throw new IngestError('too-large', `more than ${METRICS_LIMITS.maxSeries} series`);
  const n = m.scrapes.length;
  for (const s of m.series as RawSeries[]) {
    if (!s || typeof s.name !== 'string' || typeof s.help !== 'string' || !s.labels || typeof s.labels !== 'object')
      throw bad('each series needs a name, labels and help');
    if (!Object.values(s.labels).every((v) => typeof v === 'string')) throw bad(`labels of ${s.name} must be strings`);
    if (s.type === 'counter' || s.type === 'gauge' || s.type === 'untyped') checkArray(s.values, n, s.name, numOrNull);
    else if (s.type === 'histogram') {
      if (!Array.isArray(s.bounds) || !s.bounds.every(isNum)) throw bad(`bounds of ${s.name} must be numbers`);
      for (let i = 1; i < s.bounds.length; i++)
        if (s.bounds[i]! <= s.bounds[i - 1]!) throw bad(`bounds of ${s.name} must ascend`);
      checkArray(
        s.buckets,
        n,
        s.name,
        (x) => x === null || (Array.isArray(x) && x.length === s.bounds.length && x.every(isNum)),
      );
      checkArray(s.sum, n, `${s.name} sum`, numOrNull);
      checkArray(s.count, n, `${s.name} count`, numOrNull);
    } else if (s.type === 'summary') {
      if (!Array.isArray(s.quantiles) || !s.quantiles.every(isNum)) throw bad(`quantiles of ${s.name} must be numbers`);
      checkArray(
        s.values,
        n,
        s.name,
        (x) => x === null || (Array.isArray(x) && x.length === s.quantiles.length && x.every(isNum)),
      );
      checkArray(s.sum, n, `${s.name} sum`, numOrNull);
      checkArray(s.count, n, `${s.name} count`, numOrNull);
    } else throw bad(`series ${s.name} has an unknown type`);
  }
  return m;
}

/** Parses and reads a metrics file. Throws IngestError for anything it cannot read. */
export function parse(bytes: Buffer, _fileName?: string): MetricsModel {
  if (bytes.length > METRICS_LIMITS.maxBytes)
    throw new IngestError('too-large', `metrics file is larger than ${METRICS_LIMITS.maxBytes} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new IngestError('malformed', `not JSON: ${(e as Error).message}`);
  }
  const f = check(json);
  const times = f.scrapes.map((s) => s.t / 1000);
  const ok = f.scrapes.map((s, i) => (s.error === null ? i : -1)).filter((i) => i >= 0);
  const series = f.series.map((s) => derive(s, times));
  return {
    kind: 'metrics',
    source: f.source,
    start: f.start,
    intervalMs: f.intervalMs,
    times,
    windowSeconds: ok.length > 1 ? times[ok[ok.length - 1]!]! - times[ok[0]!]! : 0,
    failedScrapes: f.scrapes.length - ok.length,
    highlights: highlights(series),
    series,
  };
}

function stats(values: readonly (number | null)[]): SeriesStats {
  const xs = values.filter((v): v is number => v !== null);
  if (xs.length === 0) return { min: null, mean: null, max: null, last: null };
  return {
    min: minOf(xs),
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
    max: maxOf(xs),
    last: xs[xs.length - 1]!,
  };
}

/** First and last indexes holding a value. */
function ends(values: readonly unknown[]): [number, number] | null {
  let a = -1;
  let b = -1;
  values.forEach((v, i) => {
    if (v === null) return;
    if (a < 0) a = i;
    b = i;
  });
  return a < 0 ? null : [a, b];
}

/** A counter's increase from one value to the next: a drop is a reset, after which the new value is the increase. */
function increase(from: number, to: number): number {
  return to >= from ? to - from : to;
}

/** Prometheus' histogram_quantile over non-cumulative counts (the last one the +Inf bucket). */
export function histogramQuantile(q: number, bounds: readonly number[], counts: readonly number[]): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let cum = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (cum + c >= rank && c > 0) {
      if (i >= bounds.length) return bounds.length > 0 ? bounds[bounds.length - 1]! : null;
      const upper = bounds[i]!;
      const lower = i === 0 ? Math.min(0, upper) : bounds[i - 1]!;
      return lower + (upper - lower) * ((rank - cum) / c);
    }
    cum += c;
  }
  return bounds.length > 0 ? bounds[bounds.length - 1]! : null;
}

/** Observations between two scrapes of a histogram, per bucket (non-cumulative, +Inf last). */
function bucketDelta(
  bFrom: readonly number[] | null,
  cFrom: number | null,
  bTo: readonly number[],
  cTo: number,
): number[] {
  const reset = bFrom === null || cFrom === null || cTo < cFrom;
  const cum = bTo.map((v, i) => (reset ? v : v - bFrom![i]!));
  const total = reset ? cTo : cTo - cFrom!;
  const out = cum.map((v, i) => Math.max(0, v - (i > 0 ? cum[i - 1]! : 0)));
  out.push(Math.max(0, total - (cum.length > 0 ? cum[cum.length - 1]! : 0)));
  return out;
}

function derive(s: RawSeries, times: readonly number[]): MetricSeries {
  if (s.type === 'gauge' || s.type === 'untyped') {
    const e = ends(s.values);
    return {
      name: s.name,
      labels: s.labels,
      type: s.type,
      help: s.help,
      values: s.values,
      stats: stats(s.values),
      windowDelta: e ? s.values[e[1]]! - s.values[e[0]]! : null,
    };
  }
  if (s.type === 'counter') {
    const rates: (number | null)[] = s.values.map(() => null);
    // the increase is last − first, plus what each reset lost (the value before it)
    let lost = 0;
    let prev = -1;
    s.values.forEach((v, i) => {
      if (v === null) return;
      if (prev >= 0) {
        const from = s.values[prev]!;
        if (v < from) lost += from;
        if (prev === i - 1 && times[i]! > times[prev]!) rates[i] = increase(from, v) / (times[i]! - times[prev]!);
      }
      prev = i;
    });
    const e = ends(s.values);
    const delta = e ? s.values[e[1]]! - s.values[e[0]]! + lost : 0;
    const span = e ? times[e[1]]! - times[e[0]]! : 0;
    return {
      name: s.name,
      labels: s.labels,
      type: 'counter',
      help: s.help,
      values: s.values,
      rates,
      windowDelta: e && e[1] > e[0] ? delta : null,
      windowRate: e && span > 0 ? delta / span : null,
    };
  }
  if (s.type === 'histogram') {
    const valid = s.buckets.map((b, i) => (b !== null && s.count[i] !== null ? i : -1)).filter((i) => i >= 0);
    const a = valid[0];
    const b = valid[valid.length - 1];
    const windowCounts =
      a !== undefined && b !== undefined && b > a
        ? bucketDelta(s.buckets[a]!, s.count[a]!, s.buckets[b]!, s.count[b]!)
        : new Array(s.bounds.length + 1).fill(0);
    const perInterval = s.buckets.map((bk, i) => {
      if (i === 0 || bk === null || s.buckets[i - 1] === null || s.count[i] === null || s.count[i - 1] === null)
        return null;
      const d = bucketDelta(s.buckets[i - 1]!, s.count[i - 1]!, bk, s.count[i]!);
      return { count: d.reduce((x, y) => x + y, 0), p99: histogramQuantile(0.99, s.bounds, d) };
    });
    const has = a !== undefined && b !== undefined && b > a;
    const sumA = has ? s.sum[a!] : null;
    const sumB = has ? s.sum[b!] : null;
    return {
      name: s.name,
      labels: s.labels,
      type: 'histogram',
      help: s.help,
      bounds: s.bounds,
      windowCounts,
      windowCount: has ? windowCounts.reduce((x, y) => x + y, 0) : null,
      windowSum:
        sumA !== null && sumB !== null && sumA !== undefined && sumB !== undefined
          ? s.count[b!]! < s.count[a!]!
            ? sumB
            : sumB - sumA
          : null,
      window: {
        p50: histogramQuantile(0.5, s.bounds, windowCounts),
        p90: histogramQuantile(0.9, s.bounds, windowCounts),
        p99: histogramQuantile(0.99, s.bounds, windowCounts),
      },
      perInterval,
    };
  }
  return deriveSummary(s as Extract<RawSeries, { type: 'summary' }>);
}

function deriveSummary(s: Extract<RawSeries, { type: 'summary' }>): MetricSeries {
  const e = ends(s.count);
  const lastValues = ends(s.values);
  return {
    name: s.name,
    labels: s.labels,
    type: 'summary',
    help: s.help,
    quantiles: s.quantiles,
    last: lastValues ? s.values[lastValues[1]]! : null,
    windowCount: e && e[1] > e[0] ? increase(s.count[e[0]]!, s.count[e[1]]!) : null,
    windowSum:
      e && e[1] > e[0] && s.sum[e[0]] !== null && s.sum[e[1]] !== null ? increase(s.sum[e[0]]!, s.sum[e[1]]!) : null,
  };
}

/** The highlights, by the names client_golang, runtime/metrics (as Prometheus names) and expvar use. */
function highlights(series: readonly MetricSeries[]): MetricsHighlights {
  const find = (...names: string[]) => {
    for (const n of names) {
      const s = series.find((x) => x.name === n && Object.keys(x.labels).length === 0);
      if (s) return s;
    }
    return undefined;
  };
  const gaugeStats = (...names: string[]) => {
    const s = find(...names);
    return s && (s.type === 'gauge' || s.type === 'untyped') ? s.stats : null;
  };
  const delta = (...names: string[]) => {
    const s = find(...names);
    if (!s) return null;
    if (s.type === 'counter' || s.type === 'gauge' || s.type === 'untyped') return s.windowDelta;
    if (s.type === 'histogram' || s.type === 'summary') return s.windowSum;
    return null;
  };
  const gcCount = (() => {
    const c = delta('go_gc_cycles_total_gc_cycles_total', 'memstats.NumGC');
    if (c !== null) return c;
    const s = find('go_gc_duration_seconds');
    return s?.type === 'summary' ? s.windowCount : null;
  })();
  const pauseNs = delta('memstats.PauseTotalNs');
  const sched = find('go_sched_latencies_seconds');
  return {
    goroutines: gaugeStats('go_goroutines', 'go_sched_goroutines_goroutines'),
    heapBytes: gaugeStats('go_memstats_heap_alloc_bytes', 'go_memory_classes_heap_objects_bytes', 'memstats.HeapAlloc'),
    gcCycles: gcCount,
    gcCpuSeconds: delta('go_cpu_classes_gc_total_cpu_seconds_total'),
    gcPauseSeconds:
      pauseNs !== null ? pauseNs / 1e9 : delta('go_gc_duration_seconds', 'go_sched_pauses_total_gc_seconds'),
    allocatedBytes: delta('go_gc_heap_allocs_bytes_total', 'go_memstats_alloc_bytes_total', 'memstats.TotalAlloc'),
    schedLatencyP99Seconds: sched?.type === 'histogram' ? sched.window.p99 : null,
  };
}

/** The runtime settings of a metrics window, from the last scrape that has each. */
export function metricsRuntimeSettings(series: readonly MetricSeries[]): MetricsRuntimeSettings {
  const last = (name: string): number | null => {
    const s = series.find((x) => x.name === name && Object.keys(x.labels).length === 0);
    if (!s || !('values' in s)) return null;
    for (let i = s.values.length - 1; i >= 0; i--) {
      const v = s.values[i];
      if (typeof v === 'number' && Number.isFinite(v)) return v;
    }
    return null;
  };
  const info = series.find((x) => x.name === 'go_info' && typeof x.labels.version === 'string');
  const gogc = last('go_gc_gogc_percent');
  const limit = last('go_gc_gomemlimit_bytes');
  return {
    goVersion: info ? String(info.labels.version) : null,
    gomaxprocs: last('go_sched_gomaxprocs_threads'),
    gogc: gogc === null ? null : gogc < 0 ? 'off' : String(gogc),
    // math.MaxInt64 reads back as 2^63 in a float64.
    gomemlimit: limit === null ? null : limit >= 2 ** 63 ? 'none' : String(limit),
  };
}
