/**
 * Locust (2.x): the `--csv` family (`_stats.csv`, `_stats_history.csv`, `_failures.csv`,
 * `_exceptions.csv`), the `--json-file` final stats, and the console table.
 *
 * Locust's own definitions apply: requests = Request Count (failures included), errors = Failure
 * Count, rps = Locust's total_rps (requests / (last request - start)); percentiles come from
 * Locust's histogram of rounded response times (whole ms below 100 ms, then coarser), so they are
 * buckets rather than exact values. Failures are split into HTTP errors (non2xx) and transport
 * errors only where the failures CSV names them.
 * Note: the history file is returned with format `locust`, as fixtures/reference/loadtests/expected.json
 * pins it (the design's list also names `locust-history`).
 */
import type { LatencyMs, LoadTestRun, PercentilePoint, TimelineBucket } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { csvText } from './common/csv.ts';
import { printedAt } from './common/percentiles.ts';
import { isFailedStatus, run, summary } from './common/summary.ts';
import { headText, isObj, parseJson, readNonBlankText, refuseSeveralRuns } from './common/text.ts';
import { cellNum, num } from './common/units.ts';
import type { LoadTestImporter } from './types.ts';

const STATS_HEAD = 'Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time';
const HISTORY_HEAD = 'Timestamp,User Count,Type,Name,Requests/s,Failures/s';
const FAILURES_HEAD = 'Method,Name,Error,Occurrences';
const EXCEPTIONS_HEAD = 'Count,Message,Traceback,Nodes';

type Kind = 'stats' | 'history' | 'failures' | 'exceptions' | 'json' | 'console';

function kindOf(text: string): Kind | null {
  const t = text.replace(/^\uFEFF/, '');
  if (t.startsWith(STATS_HEAD)) return 'stats';
  if (t.startsWith(HISTORY_HEAD)) return 'history';
  if (t.startsWith(FAILURES_HEAD)) return 'failures';
  if (t.startsWith(EXCEPTIONS_HEAD)) return 'exceptions';
  if (/^\s*\[\s*\{/.test(t) && t.includes('"num_requests"') && t.includes('"response_times"')) return 'json';
  // the console table with (Locust 2) or without (Locust 1, the docs) its Type column
  if (/locust\.main: Starting Locust|^\s*(?:Type\s+)?Name\s+# reqs\s+# fails/m.test(t)) return 'console';
  return null;
}

function percentileColumns(header: string[]): { col: number; p: number }[] {
  const out: { col: number; p: number }[] = [];
  header.forEach((h, i) => {
    const m = /^([\d.]+)%$/.exec(h.trim());
    if (m) out.push({ col: i, p: Number(m[1]) });
  });
  return out;
}

function latencyFromPercentiles(pts: PercentilePoint[], base: Partial<LatencyMs>): LatencyMs {
  const at = (p: number): number | null => printedAt(pts, p);
  return {
    ...emptyLatency(),
    p75: at(75),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    p999: at(99.9),
    ...base,
  };
}

function splitKnownZero(errors: number | null): { transportErrors: number | null; non2xx: number | null } {
  // a file that shows no failure at all pins both parts to 0; otherwise it cannot tell them apart
  return errors === 0 ? { transportErrors: 0, non2xx: 0 } : { transportErrors: null, non2xx: null };
}

function parseStats(text: string): LoadTestRun {
  const recs = csvText(text);
  const header = recs[0]!.fields;
  const col = (name: string): number => header.indexOf(name);
  const agg = recs.slice(1).find((r) => r.fields[col('Name')] === 'Aggregated');
  if (!agg) throw new IngestError('no-run', 'Locust stats CSV without an Aggregated row');
  const f = agg.fields;
  const c = (name: string): number | null => cellNum(f[col(name)]);
  const requests = c('Request Count');
  if (!requests) throw new IngestError('no-run', 'Locust stats with zero requests');
  const errors = c('Failure Count');
  const rps = c('Requests/s');
  const dist: PercentilePoint[] = [];
  for (const { col: i, p } of percentileColumns(header)) {
    const v = cellNum(f[i]);
    if (v !== null) dist.push({ percentile: p, ms: v });
  }
  const size = c('Average Content Size');
  const s = summary({
    requests,
    durationSeconds: rps ? requests / rps : null,
    rps,
    errors,
    ...splitKnownZero(errors),
    latencyMs: latencyFromPercentiles(dist, {
      min: c('Min Response Time'),
      mean: c('Average Response Time'),
      p50: c('50%') ?? c('Median Response Time'),
      max: c('Max Response Time'),
    }),
    bytesPerSecond: size !== null && rps !== null ? size * rps : null,
    meta: {
      tool: 'locust',
      source: 'printed',
      variant: 'stats',
      endpoints: recs
        .slice(1)
        .filter((r) => r !== agg)
        .map((r) => `${r.fields[0]} ${r.fields[1]}`),
      notes: [
        'Locust --csv _stats.csv, Aggregated row, as printed',
        "rps = Locust's total_rps (requests / (last request - start)); durationSeconds = requests / rps",
        "percentiles are Locust's rounded-response-time buckets; mean/min/max are exact",
        'Locust rewrites its CSVs every second, so the file is a snapshot that may lag the final totals',
        'bytesPerSecond = average content size x rps (response bodies only)',
      ],
    },
  });
  return run('locust', s, null, dist.length ? dist : null);
}

function parseHistory(text: string): LoadTestRun {
  const recs = csvText(text);
  const header = recs[0]!.fields;
  const col = (name: string): number => header.indexOf(name);
  const rows = recs.slice(1).filter((r) => r.fields[col('Name')] === 'Aggregated');
  if (rows.length === 0) throw new IngestError('no-run', 'Locust stats history without Aggregated rows');
  const num0 = (r: string[], name: string): number | null => cellNum(r[col(name)]);
  const ts = rows.map((r) => {
    const v = num0(r.fields, 'Timestamp');
    if (v === null) throw new IngestError('malformed', 'Locust history row without a Timestamp', r.line);
    return v;
  });
  const last = rows[rows.length - 1]!.fields;
  const requests = num0(last, 'Total Request Count');
  if (!requests) throw new IngestError('no-run', 'Locust stats history with zero requests');
  const errors = num0(last, 'Total Failure Count');
  const t0 = ts[0]!;
  const span = ts[ts.length - 1]! - t0;
  // timeline: per-second differences of the cumulative totals (rows are about 1 s apart)
  const buckets: TimelineBucket[] = [];
  const nb = Math.max(0, Math.round(span)) + 1;
  for (let t = 0; t < nb; t++)
    buckets.push({ t, requests: 0, rps: 0, errors: 0, latencyMs: { mean: null, p50: null, p95: null, p99: null } });
  let prevN = 0;
  let prevE = 0;
  let prevSum = 0;
  rows.forEach((r, i) => {
    const n = num0(r.fields, 'Total Request Count') ?? prevN;
    const e = num0(r.fields, 'Total Failure Count') ?? prevE;
    const avg = num0(r.fields, 'Total Average Response Time') ?? 0;
    const sum = avg * n;
    const b = buckets[Math.min(nb - 1, Math.max(0, Math.round(ts[i]! - t0)))]!;
    const dn = n - prevN;
    b.requests += dn;
    b.rps += dn;
    b.errors += e - prevE;
    if (dn > 0) b.latencyMs.mean = (sum - prevSum) / dn;
    prevN = n;
    prevE = e;
    prevSum = sum;
  });
  const dist: PercentilePoint[] = [];
  for (const { col: i, p } of percentileColumns(header)) {
    const v = cellNum(last[i]);
    if (v !== null) dist.push({ percentile: p, ms: v });
  }
  const s = summary({
    requests,
    durationSeconds: span > 0 ? span : null,
    rps: span > 0 ? requests / span : null,
    errors,
    ...splitKnownZero(errors),
    latencyMs: latencyFromPercentiles(dist, {
      min: num0(last, 'Total Min Response Time'),
      mean: num0(last, 'Total Average Response Time'),
      p50: num0(last, 'Total Median Response Time'),
      max: num0(last, 'Total Max Response Time'),
    }),
    meta: {
      tool: 'locust',
      source: 'computed',
      variant: 'stats_history',
      notes: [
        'Locust --csv-full-history _stats_history.csv: requests/errors/mean/min/max/median from the last Aggregated row (cumulative Total columns)',
        'rps = last Total Request Count / (last - first row Timestamp); durationSeconds = that span (whole seconds)',
        "p75..p99.9 are the last row's 'current' percentile columns (Locust's recent window, about the last 10 s), not cumulative ones",
        'timeline: per-second differences of the cumulative totals; bucket mean from the cumulative averages; bucket percentiles are not in the file (null)',
      ],
    },
  });
  return run('locust', s, buckets, null);
}

function parseFailures(text: string): LoadTestRun {
  const recs = csvText(text);
  const header = recs[0]!.fields;
  const ci = header.indexOf('Error');
  const cn = header.indexOf('Occurrences');
  let transport = 0;
  let non2xx = 0;
  const kinds: { error: string; occurrences: number }[] = [];
  for (const r of recs.slice(1)) {
    const n = cellNum(r.fields[cn]);
    if (n === null) throw new IngestError('malformed', 'Locust failures row without Occurrences', r.line);
    const err = r.fields[ci] ?? '';
    kinds.push({ error: err, occurrences: n });
    // Locust 2 writes HTTPError('500 Server Error: …'), Locust 1 the bare '500 Server Error: …'
    const http = /^(?:HTTPError\(')?(\d{3}) \w/.exec(err) ?? /^CatchResponseError\('.*?(\d{3})/.exec(err);
    if (http) {
      if (isFailedStatus(Number(http[1]))) non2xx += n;
    } else transport += n;
  }
  const s = summary({
    transportErrors: transport,
    non2xx,
    meta: {
      tool: 'locust',
      source: 'printed',
      variant: 'failures',
      failures: kinds,
      notes: [
        'Locust _failures.csv: failure kinds only, no request count, rate or latency',
        "errors = sum of Occurrences; HTTPError('NNN ...') rows are non-2xx, the rest (timeouts, refused, dropped connections) transport errors",
        'a header-only file means no failures (errors 0)',
      ],
    },
  });
  return run('locust-failures', s);
}

// --- final JSON (--json-file) ------------------------------------------------------------

/** Locust's median_from_dict: the bucket holding position (n-1)/2 of the rounded response times. */
function medianFromDict(total: number, counts: [number, number][]): number | null {
  let pos = (total - 1) / 2;
  for (const [k, n] of counts) {
    if (pos < n) return k;
    pos -= n;
  }
  return null;
}

/** Locust's calculate_response_time_percentile: walk buckets from the top. */
function locustPercentile(counts: [number, number][], total: number, fraction: number): number | null {
  const target = Math.trunc(total * fraction);
  let processed = 0;
  for (let i = counts.length - 1; i >= 0; i--) {
    processed += counts[i]![1];
    if (total - processed <= target) return counts[i]![0];
  }
  return null;
}

function parseFinalJson(text: string): LoadTestRun {
  const o = parseJson(text, 'Locust JSON');
  if (!Array.isArray(o)) throw new IngestError('not-a-profile', 'not a Locust --json-file (array expected)');
  let requests = 0;
  let failures = 0;
  let totalRt = 0;
  let min = Infinity;
  let max = -Infinity;
  let start = Infinity;
  let lastReq = -Infinity;
  const rt = new Map<number, number>();
  const perSec = new Map<number, { n: number; e: number }>();
  for (const e of o) {
    if (!isObj(e)) continue;
    requests += num(e.num_requests) ?? 0;
    failures += num(e.num_failures) ?? 0;
    totalRt += num(e.total_response_time) ?? 0;
    const mn = num(e.min_response_time);
    const mx = num(e.max_response_time);
    if (mn !== null && mn < min) min = mn;
    if (mx !== null && mx > max) max = mx;
    const st = num(e.start_time);
    const lr = num(e.last_request_timestamp);
    if (st !== null && st < start) start = st;
    if (lr !== null && lr > lastReq) lastReq = lr;
    if (isObj(e.response_times))
      for (const [k, v] of Object.entries(e.response_times))
        rt.set(Number(k), (rt.get(Number(k)) ?? 0) + (num(v) ?? 0));
    for (const [field, key] of [
      ['num_reqs_per_sec', 'n'],
      ['num_fail_per_sec', 'e'],
    ] as const) {
      const d = e[field];
      if (!isObj(d)) continue;
      for (const [k, v] of Object.entries(d)) {
        const sec = Number(k);
        const cur = perSec.get(sec) ?? { n: 0, e: 0 };
        cur[key] += num(v) ?? 0;
        perSec.set(sec, cur);
      }
    }
  }
  if (requests === 0) throw new IngestError('no-run', 'Locust JSON with zero requests');
  const counts = [...rt.entries()].sort((a, b) => a[0] - b[0]);
  const pct = (f: number): number | null => locustPercentile(counts, requests, f);
  const dist: PercentilePoint[] = [50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100]
    .map((p) => ({ percentile: p, ms: p === 50 ? medianFromDict(requests, counts) : pct(p / 100) }))
    .filter((x): x is PercentilePoint => x.ms !== null);
  let timeline: TimelineBucket[] | null = null;
  if (perSec.size > 0) {
    const secs = [...perSec.keys()].sort((a, b) => a - b);
    const first = secs[0]!;
    timeline = [];
    for (let t = 0; t <= secs[secs.length - 1]! - first; t++) {
      const v = perSec.get(first + t) ?? { n: 0, e: 0 };
      timeline.push({
        t,
        requests: v.n,
        rps: v.n,
        errors: v.e,
        latencyMs: { mean: null, p50: null, p95: null, p99: null },
      });
    }
  }
  const span = lastReq - start;
  const s = summary({
    requests,
    errors: failures,
    ...splitKnownZero(failures),
    latencyMs: {
      min,
      mean: totalRt / requests,
      p50: medianFromDict(requests, counts),
      p75: pct(0.75),
      p90: pct(0.9),
      p95: pct(0.95),
      p99: pct(0.99),
      p999: pct(0.999),
      max,
    },
    meta: {
      tool: 'locust',
      source: 'computed',
      variant: 'json',
      rpsSinceEndpointStart: span > 0 ? requests / span : null,
      notes: [
        'Locust --json-file: final totals; mean = total_response_time / requests, min/max exact',
        "p50 = Locust's median_from_dict, other percentiles = Locust's calculate_response_time_percentile on the rounded response-time histogram",
        "rps/durationSeconds left null: Locust divides by the start of its Aggregated entry, which this file does not hold (meta.rpsSinceEndpointStart is requests / (last request - this entry's start), for information)",
        'timeline from num_reqs_per_sec / num_fail_per_sec; no per-second latency in the file',
      ],
    },
  });
  return run('locust', s, timeline, dist);
}

/**
 * The Aggregated row of the last "Response time percentiles (approximated)" table (printed at the
 * end of a run), as percentile points; none when the table is not there.
 */
function consolePercentiles(text: string): PercentilePoint[] {
  const lines = text.split('\n');
  let header: string[] | null = null;
  let out: PercentilePoint[] = [];
  for (const l of lines) {
    if (/^\s*Type\s+Name\s+50%/.test(l)) header = l.trim().split(/\s+/);
    else if (header && /^\s*(?:\S+\s+)?Aggregated\s+\d/.test(l)) {
      const nums = l
        .trim()
        .split(/\s+/)
        .filter((c) => /^(\d+(?:\.\d+)?|N\/A)$/.test(c));
      const cols = header.filter((h) => /^[\d.]+%$/.test(h));
      // the row's numbers are the percentile columns, then "# reqs"
      if (nums.length === cols.length + 1)
        out = cols.flatMap((h, i) =>
          nums[i] === 'N/A' ? [] : [{ percentile: Number(h.slice(0, -1)), ms: Number(nums[i]) }],
        );
      header = null;
    }
  }
  return out;
}

function parseConsole(text: string): LoadTestRun {
  // the table is printed again every few seconds; a second "Starting Locust" is a second run
  refuseSeveralRuns(text, /^.*locust\.main: Starting Locust/, 'Locust');
  const re = /^\s+Aggregated\s+(\d+)\s+(\d+)\([\d.]+%\)\s+\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s+([\d.]+)/gm;
  let m: RegExpExecArray | null;
  let last: RegExpExecArray | null = null;
  while ((m = re.exec(text))) last = m;
  if (!last || Number(last[1]) === 0)
    throw new IngestError('no-run', 'Locust console output without a request table holding requests');
  const errors = Number(last[2]);
  const pct = consolePercentiles(text);
  const s = summary({
    requests: Number(last[1]),
    errors,
    ...splitKnownZero(errors),
    latencyMs: {
      ...latencyFromPercentiles(pct, {}),
      mean: Number(last[3]),
      min: Number(last[4]),
      max: Number(last[5]),
      p50: Number(last[6]),
    },
    meta: {
      tool: 'locust',
      source: 'printed',
      variant: 'console',
      notes: [
        'Locust console: the last Aggregated row printed (integer ms, truncated); Locust prints it every 2 s before shutdown, so it lags the final totals',
        'p75..p99.9 from the last "Response time percentiles" table, when printed (Locust\'s rounded buckets)',
        "its req/s is Locust's current (windowed) rate, not the run's: rps/durationSeconds left null",
      ],
    },
  });
  return run('locust', s);
}

export const locustImporter: LoadTestImporter = {
  formats: ['locust', 'locust-failures'],
  runStart: /locust\.main: Starting Locust/,
  detect(head) {
    const k = kindOf(headText(head));
    if (k === null) return 0;
    return k === 'console' ? 0.7 : 0.95;
  },
  async parse(src) {
    // Python's csv writer ends rows with \r\n; on Windows the text-mode file turns that into \r\r\n
    const text = (await readNonBlankText(src)).replace(/\r+\n/g, '\n');
    switch (kindOf(text)) {
      case 'stats':
        return parseStats(text);
      case 'history':
        return parseHistory(text);
      case 'failures':
        return parseFailures(text);
      case 'json':
        return parseFinalJson(text);
      case 'console':
        return parseConsole(text);
      case 'exceptions':
        throw new IngestError(
          'unsupported',
          'Locust _exceptions.csv holds no run figures: upload _stats.csv or _stats_history.csv',
        );
      default:
        throw new IngestError('not-a-profile', 'not a Locust output file');
    }
  },
};

export const locustImporters: LoadTestImporter[] = [locustImporter];
