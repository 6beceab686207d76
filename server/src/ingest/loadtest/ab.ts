/**
 * ApacheBench (ab 2.3) → LoadTestRun, three outputs:
 *
 * `ab` — the text report, figures as printed: requests = "Complete requests", durationSeconds =
 * "Time taken for tests", rps = "Requests per second"; latency in integer ms: min and mean from
 * the Connection Times "Total:" row, p50…p99 and max from "Percentage of the requests served"
 * (50/66/75/80/90/95/98/99/100 → latencyDistribution; no p99.9). non2xx = "Non-2xx responses"
 * (3xx included: ab does not split them). "Failed requests" counts failure events: a non-2xx
 * response of another length than the first is a Length failure too, connect failures are retried
 * attempts outside "Complete requests", and a receive error may be counted again as a Length
 * failure. So transportErrors = Failed − Connect − Non-2xx, capped at Complete − Non-2xx, and
 * errors = transportErrors + non2xx never exceeds the requests (breakdown in meta.failedBreakdown).
 *
 * `ab-gnuplot` — `-g FILE`, one row per request (starttime, seconds, ctime, dtime, ttime, wait;
 * whole ms), streamed. Latency from ttime with ab's rule (sorted, value at index ⌊n·p/100⌋;
 * 100 % = the longest), so our percentiles equal ab's report. The only clock is the whole second a
 * request started, so duration/rps are estimates (see `estimateDuration`); no status column, so
 * errors are unknown (null).
 *
 * `ab-csv` — `-e FILE`, "Percentage served,Time in ms" rows 0…100 (ms, 3 decimals): the
 * distribution as printed; min = row 0, max = row 100. No counts, rate or duration in the file.
 */
import type { LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { lineSpans, type ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { abRule, latencyFromSorted, printedAt, setPrintedPercentiles } from './common/percentiles.ts';
import { GrowableF64, GrowableI32 } from './common/rows.ts';
import { blankSummary, sumErrors } from './common/summary.ts';
import { headText, peekSource, readText, refuseSeveralRuns } from './common/text.ts';
import { timelineAndSorted } from './common/timeline.ts';
import { parseNumber } from './common/units.ts';

const BANNER = /This is ApacheBench, Version (\S+)/;
const GNUPLOT_HEADER = /^starttime\tseconds\tctime\tdtime\tttime\twait\s*$/;
const CSV_HEADER = /^Percentage served,Time in ms\s*$/;
/** ab's stderr: progress lines and apr_* error lines, nothing else. */
const STDERR_LINE =
  /^(?:Completed \d+ requests|Finished \d+ requests|apr_\w+: .*|Test aborted after .*|Total of \d+ requests completed|)$/;

function isAbStderr(text: string): boolean {
  const ls = text.split(/\r?\n/);
  let meaningful = 0;
  for (const l of ls) {
    if (!STDERR_LINE.test(l.trim())) return false;
    if (l.trim() !== '') meaningful++;
  }
  return meaningful > 0;
}

// ---------------------------------------------------------------------------------------------
// Text report

export function parseAbText(text: string): LoadTestRun {
  refuseSeveralRuns(text, /^Complete requests:/, 'ab');
  const banner = BANNER.exec(text);
  if (!/^Complete requests:/m.test(text)) {
    if (isAbStderr(text)) {
      const reason = /^apr_\w+: .*$/m.exec(text)?.[0];
      throw new IngestError(
        'no-run',
        `this is ab's stderr (progress or error lines), not a result${reason ? `: ${reason}` : ''}`,
      );
    }
    if (banner) throw new IngestError('no-run', 'ab aborted before printing results (only the banner is in the file)');
    throw new IngestError('no-run', 'not an ab report: no "Complete requests:" line');
  }
  const ls = text.split(/\r?\n/);
  const f: Record<string, string> = {};
  const rows: Record<string, number[]> = {};
  const dist: PercentilePoint[] = [];
  let failedBreakdown: Record<string, number> | null = null;
  let perRequestMs: number | null = null;
  let perRequestAcrossMs: number | null = null;
  for (let i = 0; i < ls.length; i++) {
    const line = ls[i]!;
    const ln = i + 1;
    let m: RegExpExecArray | null;
    if ((m = /^\s*(Connect|Processing|Waiting|Total):\s+(.*)$/.exec(line))) {
      const nums = m[2]!.trim().split(/\s+/).map(Number);
      if (nums.length !== 5 || nums.some((x) => !Number.isFinite(x))) {
        throw new IngestError('malformed', `ab report: unreadable Connection Times row "${line.trim()}"`, ln);
      }
      rows[m[1]!] = nums;
    } else if ((m = /^\s*(\d+)%\s+(\d+)/.exec(line))) {
      dist.push({ percentile: Number(m[1]), ms: Number(m[2]) });
    } else if ((m = /^\s*\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)/.exec(line))) {
      failedBreakdown = {
        connect: Number(m[1]),
        receive: Number(m[2]),
        length: Number(m[3]),
        exceptions: Number(m[4]),
      };
    } else if ((m = /^Time per request:\s+([\d.]+) \[ms\] \(mean\)\s*$/.exec(line))) {
      perRequestMs = Number(m[1]);
    } else if ((m = /^Time per request:\s+([\d.]+) \[ms\] \(mean, across/.exec(line))) {
      perRequestAcrossMs = Number(m[1]);
    } else if ((m = /^([A-Z][\w/ -]*?):\s*(.*)$/.exec(line))) {
      f[m[1]!] = m[2]!.trim();
    }
  }
  const num = (key: string, required: boolean): number | null => {
    const raw = f[key];
    if (raw === undefined) {
      if (required) throw new IngestError('malformed', `ab report: no "${key}:" line`);
      return null;
    }
    const v = parseNumber(raw.split(/\s+/)[0]!);
    if (v === null) {
      const ln = ls.findIndex((l) => l.startsWith(`${key}:`)) + 1;
      throw new IngestError('malformed', `ab report: unreadable "${key}: ${raw}"`, ln || undefined);
    }
    return v;
  };
  const requests = num('Complete requests', true)!;
  const duration = num('Time taken for tests', true)!;
  const rps = num('Requests per second', false);
  const failed = num('Failed requests', false) ?? 0;
  const non2xx = num('Non-2xx responses', false) ?? 0;
  // ab's "Failed requests" is a count of failure events, not of requests: a connect failure is an
  // attempt outside "Complete requests" (ab retries it), a non-2xx response of another length is
  // counted as a Length failure too, and a receive error can be counted again as a Length failure
  // when the connection closes. Requests without a response are what is left, never more than the
  // requests that got no non-2xx answer.
  const connectFailures = failedBreakdown?.connect ?? 0;
  const transportEvents = Math.max(0, failed - connectFailures - non2xx);
  const transport = Math.min(transportEvents, Math.max(0, requests - non2xx));

  const host = f['Server Hostname'] ?? null;
  const port = f['Server Port'] ?? null;
  const path = f['Document Path'] ?? '';
  const tls = f['SSL/TLS Protocol'] !== undefined;
  const summary = blankSummary({
    tool: 'ab',
    version: banner ? banner[1]! : null,
    targetUrl: host ? `${tls ? 'https' : 'http'}://${host}${port ? `:${port}` : ''}${path}` : null,
    connections: num('Concurrency Level', false),
    source: 'printed',
    notes: [
      'Figures as ab printed them (latency in whole ms).',
      'transportErrors = Failed − Connect − Non-2xx (a non-2xx response is also a Length failure in ab; connect failures are retried attempts outside Complete requests), at most Complete − Non-2xx; errors = transportErrors + Non-2xx (3xx included: ab does not split them).',
    ],
  });
  summary.requests = requests;
  summary.durationSeconds = duration;
  summary.rps = rps ?? (duration > 0 ? requests / duration : null);
  summary.non2xx = non2xx;
  summary.transportErrors = transport;
  summary.errors = sumErrors(transport, non2xx);
  const kbps = num('Transfer rate', false);
  summary.bytesPerSecond = kbps === null ? null : kbps * 1024;
  if (failedBreakdown) summary.meta.failedBreakdown = failedBreakdown;
  summary.meta.failedRequests = failed;
  if (connectFailures > 0) summary.meta.connectFailures = connectFailures;
  if (transport < transportEvents)
    summary.meta.notes!.push(
      `ab counted ${failed} failure events for ${requests} requests: transportErrors capped at Complete − Non-2xx`,
    );
  const ka = num('Keep-Alive requests', false);
  if (ka !== null) summary.meta.keepAliveRequests = ka;
  if (perRequestMs !== null) summary.meta.timePerRequestMs = perRequestMs;
  if (perRequestAcrossMs !== null) summary.meta.timePerRequestAcrossMs = perRequestAcrossMs;
  summary.meta.connectionTimesMs = rows;
  const total = rows.Total;
  if (total) {
    summary.latencyMs.min = total[0]!;
    summary.latencyMs.mean = total[1]!;
  }
  setPrintedPercentiles(summary.latencyMs, dist, [50, 75, 90, 95, 99]);
  summary.latencyMs.max = printedAt(dist, 100) ?? (total ? total[4]! : null);
  return {
    kind: 'loadtest',
    format: 'ab',
    summary,
    timeline: null,
    latencyDistribution: dist.length > 0 ? dist : null,
  };
}

// ---------------------------------------------------------------------------------------------
// -g gnuplot TSV

/**
 * Duration of a run whose only clock is each request's start second. The first and last seconds
 * are partial; the seconds between them are full, so their mean count is the steady rate and
 * requests / rate is the run's length. The result is clamped to what the stamps allow:
 * [spanSeconds − 2, spanSeconds + longest request] where spanSeconds = distinct seconds covered.
 */
export function estimateDuration(
  counts: readonly number[],
  maxLatencyMs: number,
): { seconds: number; lo: number; hi: number } {
  const span = counts.length;
  const n = counts.reduce((a, b) => a + b, 0);
  const lo = Math.max(span - 2, 0);
  const hi = span + maxLatencyMs / 1000;
  let est: number;
  if (span >= 3) {
    const interior = counts.slice(1, -1).reduce((a, b) => a + b, 0);
    const rate = interior / (span - 2);
    est = rate > 0 ? n / rate : (lo + hi) / 2;
  } else {
    est = (lo + hi) / 2;
  }
  if (est < lo) est = lo;
  if (est > hi) est = hi;
  if (est <= 0) est = hi > 0 ? hi : 1;
  return { seconds: est, lo, hi };
}

/**
 * Number(text) of the bytes b[s, e): read in place when they are 1 to 15 ASCII digits (ab writes
 * plain integers), else through Number() on the decoded text, so the result is the same.
 */
function fieldInt(b: Buffer, s: number, e: number): number {
  if (e > s && e - s <= 15) {
    let v = 0;
    let i = s;
    for (; i < e; i++) {
      const c = b[i]! - 48;
      if (c < 0 || c > 9) break;
      v = v * 10 + c;
    }
    if (i === e) return v;
  }
  return Number(b.toString('utf8', s, e));
}

/** text.trim() === '' for the bytes b[s, e), without decoding the usual digit-led field. */
function isBlank(b: Buffer, s: number, e: number): boolean {
  if (e === s) return true;
  if (b[s]! >= 48 && b[s]! <= 57) return false;
  return b.toString('utf8', s, e).trim() === '';
}

/**
 * Streams an ab -g file. ab writes it with a fixed printf template — a date (spaces, no tabs) then
 * five integers, tab-separated — so splitting on tabs is exact; no quoting exists in this format.
 */
export async function parseAbGnuplot(src: ByteSource): Promise<LoadTestRun> {
  let lineNo = 0;
  const lat = new GrowableF64();
  const rel = new GrowableI32();
  let base = NaN;
  let minRel = Infinity;
  let sum = 0;
  // Rows are read as raw bytes (`lineSpans`): no string is made for a well-formed row.
  const tabAt = new Int32Array(7);
  for await (const batch of lineSpans(src)) {
    const buf = batch.buf;
    for (let k = 0; k < batch.count; k++) {
      lineNo = batch.firstLine + k;
      const ls = batch.start[k]!;
      const le = batch.end[k]!;
      if (lineNo === 1) {
        if (!GNUPLOT_HEADER.test(buf.toString('utf8', ls, le)))
          throw new IngestError(
            'malformed',
            'ab -g file: expected the header "starttime seconds ctime dtime ttime wait"',
            1,
          );
        continue;
      }
      if (le === ls) continue;
      // field f is buf[tabAt[f - 1] + 1, tabAt[f]) with tabAt[-1] = ls - 1 (stored shifted by one)
      let nf = 0;
      tabAt[0] = ls - 1;
      for (let i = ls; i < le && nf < 6; i++) if (buf[i] === 9) tabAt[++nf] = i;
      let count = nf + 1;
      if (count > 6) for (let i = tabAt[6]! + 1; i < le; i++) if (buf[i] === 9) count++;
      if (count !== 6)
        throw new IngestError('malformed', `ab -g file: expected 6 tab-separated fields, found ${count}`, lineNo);
      tabAt[6] = le;
      const secs = fieldInt(buf, tabAt[1]! + 1, tabAt[2]!);
      const ttime = fieldInt(buf, tabAt[4]! + 1, tabAt[5]!);
      if (!Number.isInteger(secs) || !Number.isFinite(ttime) || ttime < 0 || isBlank(buf, tabAt[4]! + 1, tabAt[5]!)) {
        const line = buf.toString('utf8', ls, le);
        throw new IngestError(
          'malformed',
          `ab -g file: "seconds" and "ttime" must be numbers: "${line.slice(0, 120)}"`,
          lineNo,
        );
      }
      if (Number.isNaN(base)) base = secs;
      const r = secs - base;
      if (r < minRel) minRel = r;
      rel.push(r);
      lat.push(ttime);
      sum += ttime;
    }
  }
  if (lineNo === 0) throw new IngestError('empty', 'ab -g file: the file is empty');
  const n = lat.length;
  if (n === 0) throw new IngestError('no-run', 'ab -g file has a header but no request rows');
  const buckets = rel.view();
  for (let i = 0; i < n; i++) buckets[i] = buckets[i]! - minRel;
  const { timeline, sorted } = timelineAndSorted({
    second: buckets,
    latencyMs: lat.view(),
    error: null,
    rule: abRule,
    bucketMean: 'row-order',
    reuseLatency: true,
  });
  const latency = latencyFromSorted(sorted, abRule, sum / n);
  const est = estimateDuration(
    timeline.map((b) => b.requests),
    latency.max ?? 0,
  );
  const summary = blankSummary({
    tool: 'ab',
    version: null,
    source: 'computed',
    notes: [
      `Computed from ${n} per-request rows (ttime, whole ms) with ab's rule: sorted, value at index floor(n*p/100); 100 % = longest.`,
      `The file stamps only the second each request started: durationSeconds is estimated as requests / (mean count of the ` +
        `full seconds between the first and last) and lies in [${est.lo}, ${est.hi.toFixed(3)}] s; rps = requests / durationSeconds.`,
      'No status column: errors, non2xx and transportErrors are unknown (null); timeline errors are 0.',
    ],
  });
  summary.requests = n;
  summary.durationSeconds = est.seconds;
  summary.rps = n / est.seconds;
  summary.latencyMs = latency;
  summary.meta.startEpochSeconds = base + minRel;
  summary.meta.durationBoundsSeconds = [est.lo, est.hi];
  return { kind: 'loadtest', format: 'ab-gnuplot', summary, timeline, latencyDistribution: null };
}

// ---------------------------------------------------------------------------------------------
// -e percentile CSV

/**
 * An ab -e file: 101 rows of two plain numbers written by ab's printf, no quoting possible, so a
 * split on the one comma is exact.
 */
export function parseAbPercentiles(text: string): LoadTestRun {
  const ls = text.split(/\r?\n/);
  if (!CSV_HEADER.test(ls[0] ?? ''))
    throw new IngestError('malformed', 'ab -e file: expected the header "Percentage served,Time in ms"', 1);
  const dist: PercentilePoint[] = [];
  for (let i = 1; i < ls.length; i++) {
    const line = ls[i]!.trim();
    if (line === '') continue;
    const parts = line.split(',');
    const p = parts.length === 2 ? parseNumber(parts[0]!) : null;
    const ms = parts.length === 2 ? parseNumber(parts[1]!) : null;
    if (p === null || ms === null || p < 0 || p > 100) {
      throw new IngestError('malformed', `ab -e file: expected "percentage,ms", found "${line.slice(0, 80)}"`, i + 1);
    }
    dist.push({ percentile: p, ms });
  }
  if (dist.length === 0) throw new IngestError('no-run', 'ab -e file has a header but no rows');
  const summary = blankSummary({
    tool: 'ab',
    version: null,
    source: 'printed',
    notes: ['ab -e percentile table as printed (ms); the file holds no request count, duration, rate or mean.'],
  });
  const L = summary.latencyMs;
  L.min = printedAt(dist, 0);
  setPrintedPercentiles(L, dist, [50, 75, 90, 95, 99]);
  L.max = printedAt(dist, 100);
  return { kind: 'loadtest', format: 'ab-csv', summary, timeline: null, latencyDistribution: dist };
}

// ---------------------------------------------------------------------------------------------

export const abImporter: LoadTestImporter = {
  formats: ['ab', 'ab-gnuplot', 'ab-csv'],
  runStart: /^This is ApacheBench, Version /,
  detect(head: Buffer): number {
    const text = headText(head);
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    if (GNUPLOT_HEADER.test(first)) return 0.98;
    if (CSV_HEADER.test(first)) return 0.98;
    if (BANNER.test(text)) return 0.98;
    if (/^Complete requests:/m.test(text) && /\[#\/sec\] \(mean\)/.test(text)) return 0.9;
    if (isAbStderr(text) && /Completed \d+ requests|Finished \d+ requests|apr_socket/.test(text)) return 0.6;
    return 0;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    const peek = await peekSource(src, 'ab output');
    const first = peek.head.split(/\r?\n/, 1)[0] ?? '';
    if (GNUPLOT_HEADER.test(first)) return parseAbGnuplot(peek.src);
    const text = await readText(peek.src, 'ab output');
    if (CSV_HEADER.test(first)) return parseAbPercentiles(text);
    return parseAbText(text);
  },
};
