/**
 * ghz (bojand/ghz, gRPC): the JSON report (`-O json` / `-O pretty`), the default text summary,
 * and the per-call CSV (`-O csv`).
 *
 * ghz's own definitions are kept: requests = every call; errors = calls with a non-OK gRPC status
 * (gRPC has no HTTP status, so the non2xx / transport split is null); the mean is over ALL calls,
 * while fastest/slowest and the 10/25/50/75/90/95/99 distribution are over OK calls only; a
 * percentile is the value at rank ceil(p/100 * n) of the sorted OK latencies.
 */
import type { LatencyMs, LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { nearestRankRule, printedAt } from './common/percentiles.ts';
import { GrowableF64, GrowableU8, NON2XX, OK } from './common/rows.ts';
import { run, summary } from './common/summary.ts';
import { commandLineOf, headText, isObj, parseJson, readNonBlankText, refuseSeveralRuns } from './common/text.ts';
import { parseRfc3339 } from './common/time.ts';
import { secondsOf, timelineAndSorted } from './common/timeline.ts';
import { num, parseGoDurationMs, TIME_TO_MS } from './common/units.ts';
import type { LoadTestImporter } from './types.ts';

const GHZ_PCTS = [10, 25, 50, 75, 90, 95, 99];

const NOTES = [
  'gRPC: errors = calls with a non-OK status; there is no HTTP status, so non2xx and transportErrors are null',
  "ghz's own mix: mean over all calls (errors included); min/max and percentiles over OK calls only",
];

function latencyFromDist(
  dist: PercentilePoint[],
  min: number | null,
  mean: number | null,
  max: number | null,
): LatencyMs {
  const at = (p: number): number | null => printedAt(dist, p);
  return { ...emptyLatency(), min, mean, max, p50: at(50), p75: at(75), p90: at(90), p95: at(95), p99: at(99) };
}

function parseReport(text: string): LoadTestRun {
  const o = parseJson(text, 'ghz report');
  if (!isObj(o)) throw new IngestError('not-a-profile', 'not a ghz JSON report');
  const count = num(o.count);
  if (count === null) throw new IngestError('malformed', 'ghz report without "count"');
  if (count === 0) throw new IngestError('no-run', 'ghz report of zero calls');
  let errors = 0;
  let okCalls = 0;
  if (isObj(o.statusCodeDistribution)) {
    for (const [k, v] of Object.entries(o.statusCodeDistribution)) {
      if (k === 'OK') okCalls += num(v) ?? 0;
      else errors += num(v) ?? 0;
    }
    // 2018-era reports list only OK in statusCodeDistribution and the failures in
    // errorDistribution: every call that is not OK failed
    errors = Math.max(errors, count - okCalls);
  } else if (isObj(o.errorDistribution)) {
    for (const v of Object.values(o.errorDistribution)) errors += num(v) ?? 0;
    okCalls = count - errors;
  }
  const dist: PercentilePoint[] = [];
  if (Array.isArray(o.latencyDistribution)) {
    for (const d of o.latencyDistribution) {
      if (!isObj(d)) continue;
      const p = num(d.percentage);
      const ns = num(d.latency);
      if (p !== null && ns !== null) dist.push({ percentile: p, ms: ns / 1e6 });
    }
  }
  const ms = (v: unknown): number | null => {
    const n = num(v);
    return n === null ? null : n / 1e6;
  };
  const notes = ['ghz JSON report, figures as printed (ns -> ms)', ...NOTES];
  let latency: LatencyMs;
  if (okCalls === 0 || dist.length === 0) {
    latency = emptyLatency();
    notes.push(
      'no successful call: latency left null (ghz average is the mean duration of the failed calls, see meta.averageMs)',
    );
  } else latency = latencyFromDist(dist, ms(o.fastest), ms(o.average), ms(o.slowest));

  // timeline from per-call details, when present
  let timeline = null;
  if (Array.isArray(o.details) && o.details.length > 0) {
    const t = new GrowableF64();
    const lat = new GrowableF64();
    const out = new GrowableU8();
    let base = NaN;
    let min = Infinity;
    for (const d of o.details) {
      if (!isObj(d) || typeof d.timestamp !== 'string') continue;
      const ts = parseRfc3339(d.timestamp);
      if (!ts) throw new IngestError('malformed', `ghz detail with a bad timestamp "${d.timestamp}"`);
      if (Number.isNaN(base)) base = ts[0];
      const rel = (ts[0] - base) * 1e9 + ts[1];
      if (rel < min) min = rel;
      t.push(rel);
      lat.push((num(d.latency) ?? NaN) / 1e6);
      out.push(d.status === 'OK' || (d.status === undefined && !d.error) ? OK : NON2XX);
    }
    const tv = t.view();
    const startSec = new Float64Array(tv.length);
    for (let i = 0; i < tv.length; i++) startSec[i] = (tv[i]! - min) / 1e9;
    const tl = timelineAndSorted({
      second: secondsOf(startSec),
      latencyMs: lat.view(),
      error: out.view(),
      rule: nearestRankRule,
      bucketMean: 'ascending',
    });
    timeline = tl.timeline.length > 0 ? tl.timeline : null;
    notes.push(
      'timeline from the per-call details (call start times); bucket percentiles are nearest-rank over all calls of the second',
    );
  }
  const options = isObj(o.options) ? o.options : {};
  const totalNs = num(o.total);
  const s = summary({
    requests: count,
    durationSeconds: totalNs === null ? null : totalNs / 1e9,
    rps: num(o.rps),
    errors,
    latencyMs: latency,
    meta: {
      tool: 'ghz',
      source: 'printed',
      targetUrl: typeof options.host === 'string' ? options.host : null,
      connections: num(options.connections),
      concurrency: num(options.concurrency),
      rate: num(options.rps) || null,
      call: typeof options.call === 'string' ? options.call : null,
      averageMs: ms(o.average),
      statusCodeDistribution: o.statusCodeDistribution ?? null,
      notes,
    },
  });
  return run('ghz', s, timeline, latency.p50 === null ? null : dist);
}

function parseSummaryText(text: string): LoadTestRun {
  refuseSeveralRuns(text, /^Summary:\s*$/, 'ghz');
  const field = (name: string): string | null => new RegExp(`^\\s+${name}:\\s+(.+?)\\s*$`, 'm').exec(text)?.[1] ?? null;
  const dur = (name: string): number | null => {
    const v = field(name);
    if (v === null) return null;
    const m = /^([\d.]+)\s*(ns|µs|μs|us|ms|s)$/.exec(v);
    if (m) return Number(m[1]) * TIME_TO_MS[m[2]!]!;
    return parseGoDurationMs(v.replace(/\s+/g, ''));
  };
  const count = num(field('Count'));
  if (count === null) throw new IngestError('malformed', 'ghz summary without a Count line');
  if (count === 0) throw new IngestError('no-run', 'ghz summary of zero calls');
  const dist: PercentilePoint[] = [];
  // "10 % in 0.18 ms" (ghz today) or "10% in 28.48 ms" (the layout of ghz's docs)
  for (const m of text.matchAll(/^\s+([\d.]+)\s*% in ([\d.]+) ?(ns|µs|μs|us|ms|s)\s*$/gm)) {
    dist.push({ percentile: Number(m[1]), ms: Number(m[2]) * TIME_TO_MS[m[3]!]! });
  }
  let errors: number | null = 0;
  let ok = 0;
  for (const m of text.matchAll(/^\s+\[([A-Za-z]+)\]\s+(\d+) responses/gm)) {
    if (m[1] === 'OK') ok += Number(m[2]);
    else errors += Number(m[2]);
  }
  const notes = ['ghz default summary text, as printed (2 decimals)', ...NOTES];
  const statusListed = /^Status code distribution:/m.test(text);
  if (!statusListed || ok + errors < count) {
    // a paste or file cut before (or inside) the status list: the failures are not all there
    errors = null;
    notes.push('the status code list is missing or incomplete (cut off?): errors unknown');
  }
  const totalMs = dur('Total');
  // Fastest/Average/Slowest are printed whatever else is; percentiles only when listed. Only a
  // complete status list without an OK call means no latency at all (a cut list may just end early).
  const noOkCall = statusListed && errors !== null && ok === 0;
  const latency = noOkCall ? emptyLatency() : latencyFromDist(dist, dur('Fastest'), dur('Average'), dur('Slowest'));
  const s = summary({
    requests: count,
    // "181.57 ms" is 0.18157 s as printed (a division gives 0.18156999…)
    durationSeconds: totalMs === null ? null : Number(`${totalMs}e-3`),
    rps: num(field('Requests/sec')),
    errors,
    latencyMs: latency,
    meta: {
      tool: 'ghz',
      source: 'printed',
      variant: 'summary text',
      commandLine: commandLineOf(text, 'ghz'),
      notes,
    },
  });
  return run('ghz', s, null, dist.length ? dist : null);
}

function parseDetailsCsv(text: string): LoadTestRun {
  // ghz writes the error text raw (unquoted commas and quotes), so this is not RFC 4180 CSV:
  // a row is "duration,status," followed by the rest of the line as the error
  const all: number[] = [];
  const ok: number[] = [];
  let errors = 0;
  let header = false;
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    if (!header) {
      header = true;
      return;
    }
    const c1 = line.indexOf(',');
    const c2 = c1 < 0 ? -1 : line.indexOf(',', c1 + 1);
    const d = num(line.slice(0, c1));
    if (c1 < 0 || d === null) throw new IngestError('malformed', 'ghz CSV row without a duration', i + 1);
    const status = c2 < 0 ? line.slice(c1 + 1) : line.slice(c1 + 1, c2);
    all.push(d);
    if (status === 'OK') ok.push(d);
    else errors++;
  });
  if (all.length === 0) throw new IngestError('no-run', 'ghz CSV without calls');
  const recs = all;
  const sorted = Float64Array.from(ok).sort();
  const dist = sorted.length ? GHZ_PCTS.map((p) => ({ percentile: p, ms: nearestRankRule(sorted, p)! })) : [];
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  const latency =
    sorted.length === 0 ? emptyLatency() : latencyFromDist(dist, sorted[0]!, mean, sorted[sorted.length - 1]!);
  const s = summary({
    requests: recs.length,
    errors,
    latencyMs: latency,
    meta: {
      tool: 'ghz',
      source: 'computed',
      variant: 'details csv',
      notes: [
        'ghz -O csv: one row per call (ms, 2 decimals), no timestamps: no rate, duration or timeline',
        ...NOTES,
        "percentiles with ghz's rank rule",
      ],
    },
  });
  return run('ghz', s, null, dist.length ? dist : null);
}

type Kind = 'json' | 'text' | 'csv' | 'stderr';

function kindOf(text: string): Kind | null {
  const t = text.replace(/^\uFEFF/, '');
  if (
    /^\s*\{/.test(t) &&
    /"(statusCodeDistribution|latencyDistribution)"/.test(t) &&
    /"count"\s*:/.test(t) &&
    /"fastest"\s*:/.test(t)
  )
    return 'json';
  // also below the command line that ran it (ghz's docs print the command above the summary)
  if (/^\s*Summary:[ \t]*\r?\n\s+(Name:.*\n\s+)?Count:/m.test(t)) return 'text';
  if (t.trimStart().startsWith('duration (ms),status,error')) return 'csv';
  if (/^rpc error: code = \w+ desc = /.test(t.trim()) && t.trim().split('\n').length <= 3) return 'stderr';
  return null;
}

export const ghzImporter: LoadTestImporter = {
  formats: ['ghz'],
  runStart: /^Summary:\s*$/,
  detect(head) {
    const k = kindOf(headText(head));
    if (k === 'json') return 0.95;
    if (k === 'text' || k === 'csv') return 0.9;
    if (k === 'stderr') return 0.5;
    return 0;
  },
  async parse(src) {
    const text = await readNonBlankText(src);
    switch (kindOf(text)) {
      case 'json':
        return parseReport(text);
      case 'text':
        return parseSummaryText(text);
      case 'csv':
        return parseDetailsCsv(text);
      case 'stderr':
        throw new IngestError('no-run', `ghz made no call: ${text.trim().split('\n')[0]!.slice(0, 200)}`);
      default:
        throw new IngestError('not-a-profile', 'not a ghz output file');
    }
  },
};

export const ghzImporters: LoadTestImporter[] = [ghzImporter];
