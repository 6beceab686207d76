/**
 * k6's end-of-test console summary (what `k6 run` prints on stdout, copied from a terminal or a CI
 * log) → LoadTestRun, format `k6-stdout`. Two layouts are read:
 *
 * - classic (k6 v0.x): one block of `name.....: values` lines after the checks, thresholds marked
 *   by a leading ✓/✗ on the metric's line, `http_req_failed` as `2.64% ✓ 4 ✗ 147` (✓ counts the
 *   failed requests: the rate's "true" values);
 * - grouped (k6 v1.x): `█ TOTAL RESULTS` with `HTTP`, `EXECUTION`, `NETWORK` sections,
 *   `http_req_failed` as `2.64% 4 out of 151`; with `--summary-mode=full` per-group and
 *   per-scenario blocks follow, which are not the run's totals and are skipped.
 *
 * Every figure is taken as printed: http_reqs count and rate, http_req_failed's count (errors),
 * http_req_duration's avg/min/med/max and every p(N) column (ms), data_received's rate (bytes/s, SI
 * units as k6 prints them). durationSeconds = requests / printed rate (what k6 divided by). The
 * console does not split failures into statuses and transport errors, so those two stay null
 * unless no request failed. A paste missing a line leaves its figures null; a file holding no
 * metric line at all, or two runs' summaries, is refused.
 *
 * The banner's settings are kept in meta where printed: `vus` (the `N max VUs` of the scenarios line),
 * and for a single scenario its executor's `iterationRate` (iterations/s, not requests: `50.00 iterations/s
 * for 2s`) and `configuredDuration`
 * (`for 2s`, also `N looping VUs for 10s`).
 */
import type { LatencyMs, LoadTestRun, LoadTestSummary, PercentilePoint } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { run, summary, type SummaryInit } from './common/summary.ts';
import { headText, readNonBlankText } from './common/text.ts';
import { parseGoDurationMs, parseNumber } from './common/units.ts';

/** A metric line: optional threshold mark, the name (or a `{ tag:value }` sub-metric), dots, values. */
const METRIC_LINE = /^\s*(?:[✓✗]\s+)?([A-Za-z_]\w*|\{[^}]*\})\.{2,}:\s*(.*)$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes in a CI log start with ESC
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** k6's humanised durations: "952.98µs", "38.4ms", "1.2s", "1m2s", "2m0.5s", "0s" → ms. */
function k6DurationMs(token: string): number | null {
  const m = /^([-+]?\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s)$/.exec(token);
  if (m) {
    // divide for sub-millisecond units: 287.03µs is 0.28703 ms exactly as printed, not 287.03 * 1e-3
    const v = Number(m[1]);
    const unit = m[2]!;
    return unit === 'ns' ? Number(`${m[1]}e-6`) : unit === 'ms' ? v : unit === 's' ? v * 1000 : Number(`${m[1]}e-3`);
  }
  // "1m2.5s": k6 prints minutes only with seconds after them, so a lone "2.3m" is a cut "2.3ms"
  return token.endsWith('s') ? parseGoDurationMs(token) : null;
}

/** SI sizes as k6 prints them: "28 kB", "9.3 kB/s", "1.2 MB" → bytes (1 kB = 1000 B). */
function k6Bytes(value: string, unit: string): number | null {
  const v = parseNumber(value);
  const pow = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'].indexOf(unit);
  return v === null || pow < 0 ? null : v * 1000 ** pow;
}

interface MetricLine {
  name: string;
  values: string;
  line: number;
  /** The metric the `{ tag }` sub-metric line belongs to, for sub-metrics. */
  parent?: string;
}

/** key=value pairs of a trend line: avg=952.98µs min=… p(90)=1.19ms. */
function trend(values: string, line: number): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const m of values.matchAll(/([\w()._]+)=(\S+)/g)) {
    if (m[1] === 'count') continue; // a plain count column (summaryTrendStats "count"), not a time
    const ms = k6DurationMs(m[2]!);
    if (ms === null && m[2] !== 'NaN' && m[2] !== '0')
      throw new IngestError('malformed', `k6 console summary: unreadable ${m[1]}=${m[2]}`, line);
    out.set(m[1]!, m[2] === '0' ? 0 : ms);
  }
  return out;
}

/**
 * A k6 run's summary (console or JSON): k6 counts failed requests without telling transport errors from
 * HTTP statuses, so both are 0 when none failed and unknown otherwise.
 */
export function k6Summary(init: Omit<SummaryInit, 'transportErrors' | 'non2xx'>): LoadTestSummary {
  const none = init.errors === 0 ? 0 : null;
  return summary({ ...init, transportErrors: none, non2xx: none });
}

/** A percentile column of the console summary: p(90). */
const CONSOLE_PERCENTILE = /^p\(([\d.]+)\)$/;

/**
 * A k6 trend's latency from its values by name (ms, null when unreadable): avg, min, max, med and the
 * percentile columns whose names `percentileKey` matches (its group 1 is the percentile), with the points
 * they print (0 = min, 50 = med when no p(50) is printed, 100 = max) when there is any percentile column.
 * Shared by the console summary and the end-of-test summary JSON.
 */
export function k6TrendLatency(
  t: ReadonlyMap<string, number | null>,
  percentileKey: RegExp,
): { latency: LatencyMs; dist: PercentilePoint[] | null } {
  const latency = emptyLatency();
  latency.mean = t.get('avg') ?? null;
  latency.min = t.get('min') ?? null;
  latency.max = t.get('max') ?? null;
  latency.p50 = t.get('med') ?? null;
  const pts: PercentilePoint[] = [];
  for (const [k, v] of t) {
    const m = percentileKey.exec(k);
    if (!m || v === null) continue;
    const p = Number(m[1]);
    pts.push({ percentile: p, ms: v });
    if (p === 50) latency.p50 = v;
    else if (p === 75) latency.p75 = v;
    else if (p === 90) latency.p90 = v;
    else if (p === 95) latency.p95 = v;
    else if (p === 99) latency.p99 = v;
    else if (p === 99.9) latency.p999 = v;
  }
  if (pts.length === 0) return { latency, dist: null };
  if (latency.min !== null) pts.push({ percentile: 0, ms: latency.min });
  if (latency.p50 !== null && !pts.some((p) => p.percentile === 50)) pts.push({ percentile: 50, ms: latency.p50 });
  if (latency.max !== null) pts.push({ percentile: 100, ms: latency.max });
  pts.sort((a, b) => a.percentile - b.percentile);
  return { latency, dist: pts };
}

/** The metric lines of the run's totals (the first block; per-group/scenario blocks are skipped). */
function totalsBlock(lines: string[]): { metrics: MetricLine[]; grouped: boolean } {
  const totalsAt = lines.flatMap((l, i) => (/^\s*█\s+TOTAL RESULTS\b/.test(l) ? [i] : []));
  const grouped = totalsAt.length > 0;
  if (totalsAt.length > 1)
    throw new IngestError(
      'concatenated',
      `k6 console output holds ${totalsAt.length} end-of-test summaries (lines ${totalsAt.map((i) => i + 1).join(', ')}): upload each run as its own file`,
    );
  const metrics: MetricLine[] = [];
  const seen = new Set<string>();
  let last: string | undefined;
  for (let i = grouped ? totalsAt[0]! + 1 : 0; i < lines.length; i++) {
    const l = lines[i]!;
    // grouped layout: the next █ section (GROUP, SCENARIO, …) holds figures of a part of the run
    if (grouped && /^\s*█\s+\S/.test(l) && !/█\s+THRESHOLDS/.test(l)) break;
    const m = METRIC_LINE.exec(l);
    if (!m) continue;
    const name = m[1]!;
    if (name.startsWith('{')) {
      if (last !== undefined) metrics.push({ name, values: m[2]!, line: i + 1, parent: last });
      continue;
    }
    if (seen.has(name)) {
      if (name === 'http_reqs')
        throw new IngestError(
          'concatenated',
          `k6 console output holds more than one end-of-test summary (http_reqs again at line ${i + 1}): upload each run as its own file`,
          i + 1,
        );
      continue;
    }
    seen.add(name);
    last = name;
    metrics.push({ name, values: m[2]!, line: i + 1 });
  }
  return { metrics, grouped };
}

export function parseK6Console(input: string): LoadTestRun {
  const lines = input.replace(ANSI, '').split(/\r?\n/);
  const { metrics, grouped } = totalsBlock(lines);
  const get = (name: string): MetricLine | undefined => metrics.find((m) => m.name === name && !m.parent);
  const reqs = get('http_reqs');
  const dur = get('http_req_duration');
  if (!reqs && !dur)
    throw new IngestError(
      'no-run',
      'k6 console output without an end-of-test summary (no http_reqs or http_req_duration line): was it cut before the summary, or did the test make no HTTP request?',
    );
  const notes = [
    `k6 end-of-test console summary (${grouped ? 'grouped layout of k6 v1.x' : 'classic layout of k6 v0.x'}); figures as printed, durations in ms`,
    'latency = http_req_duration over all requests; avg -> mean, med -> p50',
  ];
  let requests: number | null = null;
  let rps: number | null = null;
  if (reqs) {
    const m = /^(\d+)\s+([\d.]+)\/s/.exec(reqs.values.trim());
    if (!m)
      throw new IngestError('malformed', `k6 console summary: unreadable http_reqs "${reqs.values.trim()}"`, reqs.line);
    requests = Number(m[1]);
    rps = Number(m[2]);
  } else notes.push('no http_reqs line: request count and rate unknown');
  if (requests === 0) throw new IngestError('no-run', 'k6 console summary with zero HTTP requests');

  let errors: number | null = null;
  const failed = get('http_req_failed');
  if (failed) {
    const v = failed.values.trim();
    const outOf = /^[\d.]+%\s+(\d+)\s+out of\s+(\d+)/.exec(v);
    const marks = /^[\d.]+%\s+✓\s*(\d+)\s+✗\s*(\d+)/.exec(v);
    if (outOf) errors = Number(outOf[1]);
    else if (marks) errors = Number(marks[1]);
    else throw new IngestError('malformed', `k6 console summary: unreadable http_req_failed "${v}"`, failed.line);
    notes.push(
      "errors = http_req_failed (k6's failed requests); the console does not split them into HTTP statuses and transport errors",
    );
  } else notes.push('no http_req_failed line: errors unknown');

  let latency = emptyLatency();
  let dist: PercentilePoint[] | null = null;
  let successfulOnlyLatencyMs: LatencyMs | null = null;
  if (dur) {
    ({ latency, dist } = k6TrendLatency(trend(dur.values, dur.line), CONSOLE_PERCENTILE));
    const ok = metrics.find((m) => m.parent === 'http_req_duration' && /expected_response:\s*true/.test(m.name));
    if (ok) successfulOnlyLatencyMs = k6TrendLatency(trend(ok.values, ok.line), CONSOLE_PERCENTILE).latency;
  } else notes.push('no http_req_duration line: latency unknown');
  if (errors !== null && requests !== null && errors === requests && (latency.max ?? 0) === 0) {
    latency = emptyLatency();
    dist = null;
    notes.push('every request failed without a response (durations are 0 placeholders): latency left null');
  }

  let bytesPerSecond: number | null = null;
  const recv = get('data_received');
  if (recv) {
    const m = /\s([\d.]+)\s+([kMGTP]?B)\/s/.exec(` ${recv.values}`);
    if (m) bytesPerSecond = k6Bytes(m[1]!, m[2]!);
  }
  const durationSeconds = requests !== null && rps ? requests / rps : null;
  if (durationSeconds !== null) notes.push('durationSeconds = http_reqs / its printed rate (what k6 divided by)');
  const s = k6Summary({
    requests,
    durationSeconds,
    rps,
    errors,
    latencyMs: latency,
    bytesPerSecond,
    meta: {
      tool: 'k6',
      version: null,
      source: 'printed',
      notes,
      successfulOnlyLatencyMs,
      layout: grouped ? 'grouped' : 'classic',
      ...bannerSettings(lines),
    },
  });
  return run('k6-stdout', s, null, dist);
}

/** The load settings k6's banner prints: max VUs; a single scenario's arrival rate and duration. */
function bannerSettings(lines: readonly string[]): {
  vus?: number;
  iterationRate?: number;
  configuredDuration?: string;
} {
  const out: { vus?: number; iterationRate?: number; configuredDuration?: string } = {};
  const i = lines.findIndex((l) => /^\s*scenarios: \([\d.]+%\) (\d+) scenarios?, (\d+) max VUs/.test(l));
  if (i < 0) return out;
  const m = /^\s*scenarios: \([\d.]+%\) (\d+) scenarios?, (\d+) max VUs/.exec(lines[i]!)!;
  out.vus = Number(m[2]);
  if (m[1] !== '1') return out;
  const e =
    /^\s*\* [^:]+: (?:([\d.]+) iterations\/s|\d+ (?:looping VUs|iterations? shared among \d+ VUs)) for (\w+)/.exec(
      lines[i + 1] ?? '',
    );
  if (e?.[1]) out.iterationRate = Number(e[1]);
  if (e?.[2]) out.configuredDuration = e[2];
  return out;
}

/** k6's console output: the banner, the scenarios line or a summary's metric lines. */
export function detectK6Console(head: Buffer): number {
  const t = headText(head).replace(ANSI, '');
  const metricLines = /^\s*(?:[✓✗]\s+)?(http_req_duration|http_reqs|iteration_duration|iterations)\.{3,}:\s/m;
  if (/█\s+TOTAL RESULTS/.test(t)) return 0.9;
  if (metricLines.test(t)) return 0.85;
  if (/\/\\\s+(Grafana|\|‾‾\|)|execution: local/.test(t) && /scenarios:|http_reqs/.test(t)) return 0.6;
  return 0;
}

export const k6ConsoleImporter: LoadTestImporter = {
  formats: ['k6-stdout'],
  runStart: /^\s*execution: local\s*$/,
  detect: (head) => detectK6Console(head),
  async parse(src: ByteSource) {
    return parseK6Console(await readNonBlankText(src));
  },
};
