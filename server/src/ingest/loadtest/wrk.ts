/**
 * wrk (wg/wrk 4.x) text report → LoadTestRun. The text layout is shared with wrk2, whose importer
 * (wrk2.ts) reuses `parseWrkText` and adds the HdrHistogram blocks.
 *
 * Figures are taken as printed (two decimals with a unit chosen per value: us/ms/s/m for times,
 * k/M for counts, KB/MB for bytes), converted to ms, req/s and bytes/s:
 * - requests / durationSeconds from "N requests in Xs" (wrk counts completed responses, any status);
 * - rps from the total "Requests/sec:" line, never the per-thread "Req/Sec" row;
 * - mean / max from the "Latency" row of Thread Stats (wrk prints no minimum: min stays null);
 * - p50/p75/p90/p99 from "Latency Distribution" (--latency only; wrk prints no p95 or p99.9);
 * - transportErrors = the "Socket errors" counters (connect + read + write + timeout),
 *   non2xx = "Non-2xx or 3xx responses" (wrk counts status > 399 there); both 0 when absent.
 */
import type { LoadTestFormat, LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { setPrintedPercentiles } from './common/percentiles.ts';
import { blankSummary, sumErrors } from './common/summary.ts';
import { headText, nameHints, readText, refuseSeveralRuns } from './common/text.ts';
import { parseBinaryBytes, parseDurationMs, parseMetricCount, parseNumber } from './common/units.ts';

const RUNNING = /^Running (\S+) test @ (\S+)/m;
const THREADS = /^\s*(\d+) threads? and (\d+) connections?/m;
const UNABLE = /^unable to connect to (\S+) (.*)$/m;
/** Lines only wrk2 prints: calibration, HdrHistogram blocks, "-nan" rates of short runs. */
export const WRK2_MARKERS = /Thread calibration:|\(HdrHistogram - |Detailed Percentile spectrum|Req\/Sec\s+-nan/;

/** A wrk report without its first line: the threads/connections line, Thread Stats, the totals. */
function pastedBody(text: string): boolean {
  return THREADS.test(text) && /^\s*Thread Stats\s+Avg\s+Stdev\s+Max/m.test(text) && /^Requests\/sec:/m.test(text);
}

/** Confidence that `text` is a wrk-family report (either tool), without the wrk2 split. */
export function wrkFamilyConfidence(text: string): number {
  if (text.includes('│')) return 0; // autocannon's box tables also start "Running 5s test @"
  const running = RUNNING.test(text);
  const threads = THREADS.test(text);
  if (running && threads) return /^Requests\/sec:/m.test(text) ? 0.95 : 0.85;
  if (running && /\btest @ http/.test(text)) return 0.6;
  if (pastedBody(text)) return 0.8;
  // wrk's only output when the target refuses: one stderr line. Recognised so that parse can say
  // "no run" instead of "unsupported".
  if (UNABLE.test(text) && text.trim().split(/\r?\n/).length <= 3) return 0.5;
  return 0;
}

interface HdrBlock {
  /** Printed "Latency Distribution (HdrHistogram - …)" lines, percentile 0..100 → ms. */
  printed: PercentilePoint[];
  /** "Detailed Percentile spectrum" rows (value ms, percentile 0..100). */
  spectrum: PercentilePoint[];
  mean: number | null;
  max: number | null;
  totalCount: number | null;
}

/** Everything the wrk/wrk2 layout carries, before the two tools' rules make a summary of it. */
export interface WrkText {
  targetUrl: string | null;
  configuredDuration: string | null;
  threads: number | null;
  connections: number | null;
  latencyAvgMs: number | null;
  latencyStdevMs: number | null;
  latencyMaxMs: number | null;
  reqPerThreadAvg: number | null;
  /** Plain wrk --latency lines (or, for wrk2, the first HdrHistogram block's printed lines). */
  distribution: PercentilePoint[] | null;
  /** wrk2 only: the corrected ("Recorded") block and the uncorrected (-U) block. */
  recorded: HdrBlock | null;
  uncorrected: HdrBlock | null;
  calibration: string[];
  requests: number;
  durationSeconds: number;
  bytesRead: number | null;
  socketErrors: { connect: number; read: number; write: number; timeout: number } | null;
  non2xx: number;
  rps: number;
  bytesPerSecond: number | null;
}

function fail(tool: string, line: number, what: string): never {
  throw new IngestError('malformed', `${tool} report: ${what}`, line);
}

/**
 * Parses the wrk/wrk2 text layout. Throws IngestError 'no-run' when the file holds no result
 * (wrk's "unable to connect" line, a report cut before its totals) and 'malformed' naming the line
 * when a known line does not read.
 */
export function parseWrkText(text: string, tool: 'wrk' | 'wrk2'): WrkText {
  const lines = text.split(/\r?\n/);
  const unable = UNABLE.exec(text);
  refuseSeveralRuns(text, /^Requests\/sec:/, tool);
  // a paste that starts below the "Running … test @" line still has wrk's own table and totals
  if (!RUNNING.test(text) && !pastedBody(text)) {
    if (unable)
      throw new IngestError(
        'no-run',
        `${tool} wrote no results: unable to connect to ${unable[1]} (${unable[2]!.trim()})`,
      );
    throw new IngestError('no-run', `not a ${tool} report: no "Running … test @ URL" line`);
  }
  const out: Partial<WrkText> & { calibration: string[] } = {
    targetUrl: null,
    configuredDuration: null,
    threads: null,
    connections: null,
    latencyAvgMs: null,
    latencyStdevMs: null,
    latencyMaxMs: null,
    reqPerThreadAvg: null,
    distribution: null,
    recorded: null,
    uncorrected: null,
    calibration: [],
    bytesRead: null,
    socketErrors: null,
    non2xx: 0,
    bytesPerSecond: null,
  };
  let requests: number | null = null;
  let duration: number | null = null;
  let rps: number | null = null;

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const ln = i + 1;
    let m: RegExpExecArray | null;
    if ((m = /^Running (\S+) test @ (\S+)/.exec(line))) {
      out.configuredDuration = m[1]!;
      out.targetUrl = m[2]!;
    } else if ((m = /^\s*(\d+) threads? and (\d+) connections?/.exec(line))) {
      out.threads = Number(m[1]);
      out.connections = Number(m[2]);
    } else if (/^\s*Thread calibration:/.test(line)) {
      out.calibration.push(line.trim());
    } else if (!/Distribution/.test(line) && (m = /^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$/.exec(line))) {
      out.latencyAvgMs = parseDurationMs(m[1]!);
      out.latencyStdevMs = parseDurationMs(m[2]!);
      out.latencyMaxMs = parseDurationMs(m[3]!);
      if (out.latencyAvgMs === null && !/nan/i.test(m[1]!)) fail(tool, ln, `unreadable Latency row "${line.trim()}"`);
    } else if ((m = /^\s*Req\/Sec\s+(\S+)/.exec(line))) {
      out.reqPerThreadAvg = parseMetricCount(m[1]!); // "-nan" in short wrk2 runs: stays null
    } else if (/^\s*Latency Distribution\s*$/.test(line)) {
      // wrk --latency: "     50%    1.72ms" lines follow.
      const pts: PercentilePoint[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const pm = /^\s*([\d.]+)%\s+(\S+)\s*$/.exec(lines[j]!);
        if (!pm) break;
        const ms = parseDurationMs(pm[2]!);
        if (ms === null) fail(tool, j + 1, `unreadable latency percentile "${lines[j]!.trim()}"`);
        pts.push({ percentile: Number(pm[1]), ms });
      }
      out.distribution = pts;
      i = j - 1;
    } else if ((m = /^\s*Latency Distribution \(HdrHistogram - (.*)\)\s*$/.exec(line))) {
      const { block, next } = parseHdrBlock(lines, i + 1, tool);
      if (/^Uncorrected/.test(m[1]!)) out.uncorrected = block;
      else out.recorded = block;
      i = next - 1;
    } else if ((m = /^\s*(\d+) requests in (\S+?),\s*(\S+) read/.exec(line))) {
      requests = Number(m[1]);
      const d = parseDurationMs(m[2]!);
      if (d === null) fail(tool, ln, `unreadable duration "${m[2]}"`);
      duration = d / 1000;
      out.bytesRead = parseBinaryBytes(m[3]!);
    } else if ((m = /^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(line))) {
      out.socketErrors = { connect: Number(m[1]), read: Number(m[2]), write: Number(m[3]), timeout: Number(m[4]) };
    } else if ((m = /^\s*Non-2xx or 3xx responses: (\d+)/.exec(line))) {
      out.non2xx = Number(m[1]);
    } else if ((m = /^Requests\/sec:\s*(\S+)/.exec(line))) {
      rps = parseNumber(m[1]!);
      if (rps === null) fail(tool, ln, `unreadable Requests/sec "${m[1]}"`);
    } else if ((m = /^Transfer\/sec:\s*(\S+)/.exec(line))) {
      out.bytesPerSecond = parseBinaryBytes(m[1]!);
    }
  }
  if (requests === null || duration === null) {
    throw new IngestError('no-run', `${tool} report has no "N requests in T" totals line (the run did not finish?)`);
  }
  if (rps === null)
    throw new IngestError('no-run', `${tool} report has no "Requests/sec:" line (the run did not finish?)`);
  return { ...(out as WrkText), requests, durationSeconds: duration, rps };
}

/** One wrk2 HdrHistogram block: printed percentiles, then the detailed spectrum and its footer. */
function parseHdrBlock(lines: string[], from: number, tool: string): { block: HdrBlock; next: number } {
  const block: HdrBlock = { printed: [], spectrum: [], mean: null, max: null, totalCount: null };
  let i = from;
  for (; i < lines.length; i++) {
    const pm = /^\s*([\d.]+)%\s+(\S+)\s*$/.exec(lines[i]!);
    if (!pm) break;
    const ms = parseDurationMs(pm[2]!);
    if (ms === null) fail(tool, i + 1, `unreadable latency percentile "${lines[i]!.trim()}"`);
    block.printed.push({ percentile: Number(pm[1]), ms });
  }
  while (i < lines.length && lines[i]!.trim() === '') i++;
  if (i < lines.length && /Detailed Percentile spectrum/.test(lines[i]!)) {
    for (i++; i < lines.length; i++) {
      const line = lines[i]!;
      if (/^\s*$/.test(line) || /^\s*Value\s+Percentile/.test(line)) continue;
      const row = /^\s*([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\S+)\s*$/.exec(line);
      if (row) {
        block.spectrum.push({ percentile: Number(row[2]) * 100, ms: Number(row[1]) });
        continue;
      }
      let m: RegExpExecArray | null;
      if ((m = /^#\[Mean\s*=\s*(\S+?),/.exec(line))) block.mean = parseNumber(m[1]!);
      else if ((m = /^#\[Max\s*=\s*(\S+?),\s*Total count\s*=\s*(\d+)/.exec(line))) {
        block.max = parseNumber(m[1]!);
        block.totalCount = Number(m[2]);
      } else if (/^#\[Buckets/.test(line)) continue;
      else if (/^-{10,}/.test(line)) {
        i++;
        break;
      } else fail(tool, i + 1, `unexpected line in the percentile spectrum: "${line.trim()}"`);
    }
  }
  return { block, next: i };
}

/** Builds the wrk summary from the parsed text (wrk2.ts has its own rules for the HdrHistogram). */
export function wrkRunFromText(w: WrkText, format: LoadTestFormat, tool: string): LoadTestRun {
  const summary = blankSummary({
    tool,
    version: null,
    targetUrl: w.targetUrl,
    connections: w.connections,
    threads: w.threads,
    source: 'printed',
    configuredDuration: w.configuredDuration,
    notes: [
      `Figures as printed by ${tool} (two-decimal values with a unit per value), converted to ms and req/s.`,
      'rps is the total Requests/sec line; Req/Sec in Thread Stats is per thread.',
    ],
  });
  summary.requests = w.requests;
  summary.durationSeconds = w.durationSeconds;
  summary.rps = w.rps;
  const s = w.socketErrors;
  summary.transportErrors = s ? s.connect + s.read + s.write + s.timeout : 0;
  summary.non2xx = w.non2xx;
  summary.errors = sumErrors(summary.transportErrors, summary.non2xx);
  if (s) summary.meta.socketErrors = s;
  summary.bytesPerSecond = w.bytesPerSecond;
  summary.latencyMs.mean = w.latencyAvgMs;
  summary.latencyMs.max = w.latencyMaxMs;
  if (w.latencyStdevMs !== null) summary.meta.latencyStdevMs = w.latencyStdevMs;
  if (w.reqPerThreadAvg !== null) summary.meta.reqPerSecPerThread = w.reqPerThreadAvg;
  const dist = w.distribution;
  if (dist) setPrintedPercentiles(summary.latencyMs, dist, [50, 75, 90, 95, 99, 99.9]);
  return {
    kind: 'loadtest',
    format,
    summary,
    timeline: null,
    latencyDistribution: dist && dist.length > 0 ? dist : null,
  };
}

export const wrkImporter: LoadTestImporter = {
  formats: ['wrk'],
  runStart: /^Running \S+ test @ /,
  detect(head: Buffer, fileName?: string): number {
    const text = headText(head);
    const c = wrkFamilyConfidence(text);
    if (c === 0) return 0;
    if (WRK2_MARKERS.test(text)) return 0.3;
    if (nameHints(fileName, /wrk2/i)) return Math.min(c, 0.4);
    return c;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    const text = await readText(src, 'wrk report');
    return wrkRunFromText(parseWrkText(text, 'wrk'), 'wrk', 'wrk');
  },
};
