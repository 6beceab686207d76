/**
 * hey (rakyll/hey v0.1.x) → LoadTestRun, two outputs:
 *
 * `hey` — the default text summary. Figures as printed (seconds with 4 decimals → ms):
 * - requests = sum of "Status code distribution" + sum of "Error distribution" (hey prints no
 *   request count; this is exactly what its Requests/sec divides Total by, so rps includes
 *   transport errors); durationSeconds = Total; rps = Requests/sec;
 * - latency min/mean/max = Fastest/Average/Slowest, p50…p99 from "Latency distribution"
 *   (10/25/50/75/90/95/99; no p99.9); latency covers responses of any status, not transport errors;
 * - non2xx = status codes outside 200–399 (the errors rule of common/summary.ts), transportErrors =
 *   the Error distribution total.
 *
 * `hey-csv` — `hey -o csv`, one row per completed HTTP exchange (transport errors are left out of
 * the file by hey, so transportErrors is null). Streamed row by row; figures are computed with
 * hey's own rules (requester/report.go): mean = sum/n, percentile p = sorted[i] for the first i
 * with ⌊i·100/n⌋ ≥ p. durationSeconds = the last completion (offset + response-time), rps =
 * rows / duration; the timeline buckets rows by the second of their start offset.
 */
import type { LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { lineSpans, type ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { heyRule, latencyFromSorted, setPrintedPercentiles } from './common/percentiles.ts';
import { GrowableF64, GrowableI32, GrowableU8 } from './common/rows.ts';
import { blankSummary, isFailedStatus, sumErrors } from './common/summary.ts';
import { headText, peekSource, readText } from './common/text.ts';
import { timelineAndSorted } from './common/timeline.ts';
import { parseNumber } from './common/units.ts';

// ---------------------------------------------------------------------------------------------
// Text summary

function secsToMs(token: string): number | null {
  const v = parseNumber(token);
  // "0.0069" secs is 6.9 ms as printed: shift the decimal point instead of multiplying (6.8999…)
  return v === null ? null : Number(`${token.trim()}e3`);
}

/** The one integer in [lo, hi], or null when there is none or more than one. */
function onlyIntegerBetween(lo: number, hi: number): number | null {
  const a = Math.ceil(lo);
  return a <= hi && a + 1 > hi ? a : null;
}

export function parseHeySummary(text: string): LoadTestRun {
  const ls = text.split(/\r?\n/);
  let total: number | null = null;
  let slowestToken: string | null = null;
  let fastestToken: string | null = null;
  let averageToken: string | null = null;
  let rps: number | null = null;
  let totalData: number | null = null;
  let section = '';
  let sawSummary = false;
  const summaryLines: number[] = [];
  const sawSection = new Set<string>();
  const dist: PercentilePoint[] = [];
  const histogram: { ms: number; count: number }[] = [];
  const statusCodes: Record<string, number> = {};
  const errorsList: { count: number; message: string }[] = [];

  for (let i = 0; i < ls.length; i++) {
    const line = ls[i]!;
    const ln = i + 1;
    let m: RegExpExecArray | null;
    if (/^\S.*:\s*$/.test(line)) {
      section = line.trim().replace(/:$/, '');
      sawSection.add(section);
      if (section === 'Summary') {
        sawSummary = true;
        summaryLines.push(ln);
      }
      continue;
    }
    if (line.trim() === '') continue;
    switch (section) {
      case 'Summary':
        if ((m = /^\s*(Total|Slowest|Fastest|Average):\s*(\S+) secs/.exec(line))) {
          const v = parseNumber(m[2]!); // " NaN" when nothing arrived
          if (v === null && !/nan/i.test(m[2]!))
            throw new IngestError('malformed', `hey summary: unreadable ${m[1]} "${m[2]}"`, ln);
          const tok = v === null ? null : m[2]!;
          if (m[1] === 'Total') total = v;
          else if (m[1] === 'Slowest') slowestToken = tok;
          else if (m[1] === 'Fastest') fastestToken = tok;
          else averageToken = tok;
        } else if ((m = /^\s*Requests\/sec:\s*(\S+)/.exec(line))) {
          rps = parseNumber(m[1]!);
          if (rps === null) throw new IngestError('malformed', `hey summary: unreadable Requests/sec "${m[1]}"`, ln);
        } else if ((m = /^\s*Total data:\s*(\d+) bytes/.exec(line))) {
          totalData = Number(m[1]);
        }
        break;
      case 'Response time histogram':
        if ((m = /^\s*([\d.]+) \[(\d+)\]/.exec(line))) histogram.push({ ms: Number(m[1]) * 1000, count: Number(m[2]) });
        break;
      case 'Latency distribution':
        if ((m = /^\s*(\d+)%{1,2} in (\S+) secs/.exec(line))) {
          const ms = secsToMs(m[2]!);
          if (ms === null)
            throw new IngestError('malformed', `hey summary: unreadable percentile line "${line.trim()}"`, ln);
          dist.push({ percentile: Number(m[1]), ms });
        } else
          throw new IngestError(
            'malformed',
            `hey summary: unexpected line in Latency distribution: "${line.trim()}"`,
            ln,
          );
        break;
      case 'Status code distribution':
        if ((m = /^\s*\[(\d+)\]\s+(\d+) responses?/.exec(line)))
          statusCodes[m[1]!] = (statusCodes[m[1]!] ?? 0) + Number(m[2]);
        else
          throw new IngestError(
            'malformed',
            `hey summary: unexpected line in Status code distribution: "${line.trim()}"`,
            ln,
          );
        break;
      case 'Error distribution':
        if ((m = /^\s*\[(\d+)\]\s+(.*)$/.exec(line))) errorsList.push({ count: Number(m[1]), message: m[2]!.trim() });
        else
          throw new IngestError(
            'malformed',
            `hey summary: unexpected line in Error distribution: "${line.trim()}"`,
            ln,
          );
        break;
      default:
        break;
    }
  }
  if (summaryLines.length > 1)
    throw new IngestError(
      'concatenated',
      `the file holds ${summaryLines.length} hey summaries (lines ${summaryLines.join(', ')}): upload each run as its own file`,
    );
  if (!sawSummary || total === null)
    throw new IngestError('no-run', 'not a hey summary: no "Summary:" section with a Total');
  if (rps === null) throw new IngestError('no-run', 'hey summary has no Requests/sec line');

  let responses = 0;
  let non2xx = 0;
  for (const [code, n] of Object.entries(statusCodes)) {
    responses += n;
    const c = Number(code);
    if (isFailedStatus(c)) non2xx += n;
  }
  const transport = errorsList.reduce((a, e) => a + e.count, 0);
  // A paste cut before "Status code distribution" (and the Error distribution after it): statuses
  // are unknown. hey's histogram holds every answered request (its 11 buckets end at Slowest), so
  // its sum counts the responses when all 11 rows are there. Requests/sec × Total must agree with
  // it at Total's printed precision; if it does not, requests failed without a response and the
  // count is the one integer that product allows, or unknown.
  const statusKnown = sawSection.has('Status code distribution');
  const errorsKnown = statusKnown || sawSection.has('Error distribution');
  let partialCount: number | null = null;
  if (!statusKnown) {
    const lo = rps * (total - 0.00005);
    const hi = rps * (total + 0.00005);
    const hist = histogram.length === 11 ? histogram.reduce((a, h) => a + h.count, 0) : null;
    const n = hist === null ? null : hist + transport;
    partialCount = n !== null && n >= lo - 1e-6 && n <= hi + 1e-6 ? n : onlyIntegerBetween(lo, hi);
    responses = -1;
  }
  if (statusKnown && responses + transport === 0)
    throw new IngestError('no-run', 'hey summary counts no response and no error');

  const summary = blankSummary({
    tool: 'hey',
    version: null,
    source: 'printed',
    notes: [
      'Figures as hey printed them (seconds with 4 decimals, converted to ms).',
      'requests = status-code counts + error counts (what hey divides Total by for Requests/sec).',
    ],
  });
  summary.requests = statusKnown ? responses + transport : partialCount;
  summary.durationSeconds = total;
  summary.rps = rps;
  summary.non2xx = statusKnown ? non2xx : null;
  summary.transportErrors = errorsKnown ? transport : null;
  summary.errors = sumErrors(summary.transportErrors, summary.non2xx);
  summary.bytesPerSecond = totalData !== null && total > 0 ? totalData / total : null;
  if (!statusKnown)
    summary.meta.notes!.push(
      `No "Status code distribution" (a partial paste): ${
        partialCount === null
          ? 'requests unknown (null): neither the histogram nor Requests/sec × Total gives one count'
          : 'requests = the histogram counts (every answered request), as Requests/sec × Total confirms'
      }; non2xx${errorsKnown ? '' : ' and transport errors'} unknown (null).`,
    );
  if (statusKnown) summary.meta.statusCodes = statusCodes;
  if (errorsList.length > 0) summary.meta.errorMessages = errorsList;
  if (histogram.length > 0) summary.meta.histogram = histogram;
  if (responses !== 0) {
    const L = summary.latencyMs;
    L.min = fastestToken === null ? null : secsToMs(fastestToken);
    L.max = slowestToken === null ? null : secsToMs(slowestToken);
    L.mean = averageToken === null ? null : secsToMs(averageToken);
    setPrintedPercentiles(L, dist, [50, 75, 90, 95, 99]);
  } else {
    summary.meta.notes!.push('No response arrived: hey printed NaN/0 placeholders, so every latency figure is null.');
  }
  return {
    kind: 'loadtest',
    format: 'hey',
    summary,
    timeline: null,
    latencyDistribution: dist.length > 0 && responses !== 0 ? dist : null,
  };
}

// ---------------------------------------------------------------------------------------------
// CSV (-o csv)

export const HEY_CSV_HEADER =
  'response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset';

/**
 * Parses the decimal number in bytes b[from, to) without allocating ("0.0042", "200", "5.0015").
 * Returns NaN for anything else (signs, exponents, spaces, junk), and the caller then falls back to
 * Number() on the decoded text. The arithmetic (int + frac / 10^k) is the one this parser has
 * always used on hey's ≤ 15-digit values, so the figures do not move.
 */
function fastDecimal(b: Uint8Array, from: number, to: number): number {
  let int = 0;
  let frac = 0;
  let scale = 1;
  let i = from;
  let digits = 0;
  for (; i < to; i++) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) break;
    int = int * 10 + c;
    digits++;
  }
  if (i < to && b[i] === 46) {
    for (i++; i < to; i++) {
      const c = b[i]! - 48;
      if (c < 0 || c > 9) return NaN;
      frac = frac * 10 + c;
      scale *= 10;
      digits++;
    }
  }
  if (i !== to || digits === 0 || digits > 15) return NaN;
  return scale === 1 ? int : int + frac / scale;
}

function numberAt(b: Buffer, from: number, to: number): number {
  const v = fastDecimal(b, from, to);
  if (!Number.isNaN(v)) return v;
  const t = b.toString('utf8', from, to).trim();
  return t === '' ? NaN : Number(t);
}

export interface HeyCsvStats {
  rows: number;
}

/**
 * Streams a hey CSV. hey writes every row from a fixed numeric template (%4.4f seconds, integer
 * status), so a field can never hold a comma or a quote: a hand-rolled scan of the line is exact
 * here, and several times faster than a general CSV parser — which matters at millions of rows.
 * Rows are read as raw bytes (`lineSpans`): no string is made for a well-formed row.
 */
export async function parseHeyCsv(src: ByteSource): Promise<LoadTestRun> {
  let lineNo = 0;
  let rtCol = -1;
  let scCol = -1;
  let offCol = -1;
  let nCols = 0;
  const lat = new GrowableF64();
  const sec = new GrowableI32();
  const err = new GrowableU8();
  let sum = 0;
  let non2xx = 0;
  let lastEnd = 0;
  let firstStart = Infinity;
  for await (const batch of lineSpans(src)) {
    const buf = batch.buf;
    const starts = batch.start;
    const ends = batch.end;
    for (let k = 0; k < batch.count; k++) {
      lineNo = batch.firstLine + k;
      const ls = starts[k]!;
      const le = ends[k]!;
      if (lineNo === 1) {
        let header = buf.toString('utf8', ls, le);
        if (header.charCodeAt(0) === 0xfeff) header = header.slice(1);
        const cols = header.split(',').map((c) => c.trim());
        rtCol = cols.indexOf('response-time');
        scCol = cols.indexOf('status-code');
        offCol = cols.indexOf('offset');
        nCols = cols.length;
        if (rtCol < 0 || scCol < 0 || offCol < 0) {
          throw new IngestError('malformed', 'hey CSV: the header must name response-time, status-code and offset', 1);
        }
        continue;
      }
      if (le === ls) continue;
      let rt = NaN;
      let sc = NaN;
      let off = NaN;
      let col = 0;
      let start = ls;
      for (let i = ls; i <= le; i++) {
        if (i === le || buf[i] === 44) {
          if (col === rtCol) rt = numberAt(buf, start, i);
          else if (col === scCol) sc = numberAt(buf, start, i);
          else if (col === offCol) off = numberAt(buf, start, i);
          col++;
          start = i + 1;
        }
      }
      if (col !== nCols) throw new IngestError('malformed', `hey CSV: expected ${nCols} fields, found ${col}`, lineNo);
      if (!(rt >= 0) || !(off >= 0) || !(sc >= 0)) {
        const line = buf.toString('utf8', ls, le);
        throw new IngestError(
          'malformed',
          `hey CSV: response-time, status-code and offset must be numbers: "${line.slice(0, 120)}"`,
          lineNo,
        );
      }
      const ms = rt * 1000;
      lat.push(ms);
      sum += ms;
      sec.push(Math.floor(off));
      const bad = isFailedStatus(sc) ? 1 : 0;
      err.push(bad);
      non2xx += bad;
      const end = off + rt;
      if (end > lastEnd) lastEnd = end;
      if (off < firstStart) firstStart = off;
    }
  }
  if (lineNo === 0) throw new IngestError('empty', 'hey CSV: the file is empty');
  const n = lat.length;
  if (n === 0) {
    throw new IngestError(
      'no-run',
      'hey CSV has a header but no data rows: no HTTP exchange completed (hey leaves transport errors out of its CSV)',
    );
  }
  const { timeline, sorted } = timelineAndSorted({
    second: sec.view(),
    latencyMs: lat.view(),
    error: err.view(),
    rule: heyRule,
    bucketMean: 'row-order',
    reuseLatency: true,
  });
  const summary = blankSummary({
    tool: 'hey',
    version: null,
    source: 'computed',
    notes: [
      `Computed from ${n} per-request rows with hey's own rules: mean = sum/n, percentile p = sorted[i] for the first i with floor(i*100/n) >= p.`,
      'durationSeconds = last completion (offset + response-time) since hey started; rps = rows / durationSeconds.',
      'hey leaves transport errors out of its CSV: transportErrors is unknown (null); errors counts non-2xx rows only.',
      'Timeline buckets rows by the second of their start offset.',
    ],
  });
  summary.requests = n;
  summary.durationSeconds = lastEnd;
  summary.rps = lastEnd > 0 ? n / lastEnd : null;
  summary.non2xx = non2xx;
  summary.transportErrors = null;
  summary.errors = sumErrors(null, non2xx);
  summary.latencyMs = latencyFromSorted(sorted, heyRule, sum / n);
  summary.meta.firstStartOffsetSeconds = firstStart;
  return { kind: 'loadtest', format: 'hey-csv', summary, timeline, latencyDistribution: null };
}

// ---------------------------------------------------------------------------------------------
// Benchmark support: a synthetic hey CSV of any size, and a measurement of our parser on a source.

/**
 * A hey-shaped CSV of `rows` data rows, generated in ~1 MiB chunks (never held whole), with a
 * plausible latency spread, 1 % HTTP 500 and start offsets at `rate` rows per second.
 */
export async function* syntheticHeyCsv(rows: number, rate = 20_000): ByteSource {
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 4294967296;
  };
  let chunk = `${HEY_CSV_HEADER}\n`;
  for (let i = 0; i < rows; i++) {
    const rt = 0.0002 + rnd() * rnd() * 0.02;
    const status = rnd() < 0.01 ? 500 : 200;
    chunk += `${rt.toFixed(4)},0.0000,0.0000,0.0000,${(rt * 0.9).toFixed(4)},0.0000,${status},${(i / rate).toFixed(4)}\n`;
    if (chunk.length > 1 << 20) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk.length > 0) yield Buffer.from(chunk);
}

export interface HeyCsvMeasurement {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /**
   * Peak growth (MiB) of JS heap + ArrayBuffer memory sampled every 5 ms while parsing, over the
   * level before parsing. It grows with the row count (13 bytes a row of typed arrays, 8 more
   * while merging) and not with the file's bytes: no row text or row object is kept.
   */
  peakMemoryDeltaMb: number;
}

function usedBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Parses `src` as a hey CSV and reports the speed (rows/s) and the peak memory growth. */
export async function measureHeyCsv(src: ByteSource): Promise<HeyCsvMeasurement> {
  const before = usedBytes();
  let peak = before;
  const timer = setInterval(() => {
    const u = usedBytes();
    if (u > peak) peak = u;
  }, 5);
  const t0 = process.hrtime.bigint();
  try {
    const run = await parseHeyCsv(src);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const u = usedBytes();
    if (u > peak) peak = u;
    const rows = run.summary.requests ?? 0;
    return { rows, seconds, rowsPerSecond: rows / seconds, peakMemoryDeltaMb: (peak - before) / (1024 * 1024) };
  } finally {
    clearInterval(timer);
  }
}

// ---------------------------------------------------------------------------------------------

function looksLikeHeySummary(text: string): boolean {
  // oha's summary looks alike (older oha prints `secs` too) but has a "Success rate:" line
  if (/^\s+Success rate:/m.test(text)) return false;
  return /^Summary:\s*$/m.test(text) && /^\s+Total:\s+\S+ secs/m.test(text) && /^\s+Requests\/sec:/m.test(text);
}

export const heyImporter: LoadTestImporter = {
  formats: ['hey', 'hey-csv'],
  runStart: /^Summary:\s*$/,
  detect(head: Buffer): number {
    const text = headText(head);
    if (text.startsWith('response-time,') && text.slice(0, 200).split(/\r?\n/)[0]!.includes('status-code')) {
      return text.startsWith(HEY_CSV_HEADER) ? 0.98 : 0.8;
    }
    if (looksLikeHeySummary(text))
      return /Latency distribution:|Status code distribution:|Error distribution:/.test(text) ? 0.95 : 0.8;
    return 0;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    // Peek at the first chunk to choose: the CSV must stay streamed, the summary is tiny.
    const peek = await peekSource(src, 'hey output');
    if (peek.head.startsWith('response-time,')) return parseHeyCsv(peek.src);
    const text = await readText(peek.src, 'hey output');
    return parseHeySummary(text);
  },
};
