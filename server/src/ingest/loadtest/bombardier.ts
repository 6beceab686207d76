/**
 * bombardier (codesenberg/bombardier 1.2.x) → LoadTestRun, both outputs under format 'bombardier'
 * (the reference expectations name the text output 'bombardier' too; meta.output says which):
 *
 * JSON (`-o json`, with or without `-p r`): latency is in MICROSECONDS (mean/max floats, possibly in
 * exponent notation; percentiles integers) → /1000. durationSeconds = timeTakenSeconds; rps =
 * rps.mean (bombardier's only rate: the mean of its 10 ms rate samples).
 *
 * Text (default, or `-p r`): figures as printed (two decimals, unit per value, like wrk): rps =
 * "Reqs/sec" Avg (not Max), latency Avg/Max and the "Latency Distribution" 50/75/90/95/99. The
 * header's "for 5s" is the configured duration, not a measurement: durationSeconds stays null.
 *
 * Both: requests = every HTTP code count + "others" (attempts that got no HTTP response);
 * non2xx = 1xx + 4xx + 5xx (3xx is an answer: the errors rule of common/summary.ts); transportErrors
 * = others. bombardier prints no minimum.
 */
import type { LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { setPrintedPercentiles } from './common/percentiles.ts';
import { blankSummary, run as runOf, sumErrors } from './common/summary.ts';
import { headText, readText, refuseSeveralRuns } from './common/text.ts';
import { parseBinaryBytes, parseDurationMs, parseNumber } from './common/units.ts';

interface Codes {
  c1xx: number;
  c2xx: number;
  c3xx: number;
  c4xx: number;
  c5xx: number;
  others: number;
}

function fillCounts(run: LoadTestRun, c: Codes): void {
  const s = run.summary;
  const responses = c.c1xx + c.c2xx + c.c3xx + c.c4xx + c.c5xx;
  s.requests = responses + c.others;
  s.non2xx = c.c1xx + c.c4xx + c.c5xx; // 3xx is an answer (common/summary.ts's errors rule)
  s.transportErrors = c.others;
  s.errors = sumErrors(c.others, s.non2xx);
  s.meta.httpCodes = { '1xx': c.c1xx, '2xx': c.c2xx, '3xx': c.c3xx, '4xx': c.c4xx, '5xx': c.c5xx, others: c.others };
  s.meta.responses = responses;
}

function setPercentiles(run: LoadTestRun, dist: PercentilePoint[]): void {
  setPrintedPercentiles(run.summary.latencyMs, dist, [50, 75, 90, 95, 99, 99.9]);
  run.latencyDistribution = dist.length > 0 ? dist : null;
}

// ---------------------------------------------------------------------------------------------

function finiteOr(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new IngestError('malformed', `bombardier JSON: ${what} is not a number`);
  return v;
}

export function parseBombardierJson(text: string): LoadTestRun {
  const start = text.indexOf('{');
  if (start < 0) throw new IngestError('malformed', 'bombardier JSON: no JSON object in the file');
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(start));
  } catch (e) {
    const line = text.slice(0, start).split('\n').length;
    throw new IngestError('malformed', `bombardier JSON: ${(e as Error).message}`, line);
  }
  const o = doc as { spec?: Record<string, unknown>; result?: Record<string, unknown> };
  const r = o.result;
  if (!r || typeof r !== 'object') throw new IngestError('malformed', 'bombardier JSON: no "result" object');
  const spec = o.spec ?? {};
  const run = runOf(
    'bombardier',
    blankSummary({
      tool: 'bombardier',
      version: null,
      targetUrl: typeof spec.url === 'string' ? spec.url : null,
      connections: typeof spec.numberOfConnections === 'number' ? spec.numberOfConnections : null,
      rate: typeof spec.rate === 'number' ? spec.rate : null,
      source: 'printed',
      output: 'json',
      spec,
      notes: [
        'bombardier JSON: latency converted from microseconds to ms; rps = rps.mean (mean of 10 ms rate samples).',
        'requests = HTTP code counts + others (attempts without an HTTP response = transportErrors).',
      ],
    }),
  );
  const n = (k: string) => finiteOr(r[k] ?? 0, k);
  fillCounts(run, {
    c1xx: n('req1xx'),
    c2xx: n('req2xx'),
    c3xx: n('req3xx'),
    c4xx: n('req4xx'),
    c5xx: n('req5xx'),
    others: n('others'),
  });
  const s = run.summary;
  const taken = finiteOr(r.timeTakenSeconds, 'timeTakenSeconds');
  s.durationSeconds = taken;
  const rps = r.rps as { mean?: unknown } | undefined;
  s.rps = rps && typeof rps.mean === 'number' ? rps.mean : taken > 0 ? (s.meta.responses as number) / taken : null;
  s.bytesPerSecond = typeof r.bytesRead === 'number' && taken > 0 ? r.bytesRead / taken : null;
  const lat = r.latency as
    | { mean?: unknown; max?: unknown; stddev?: unknown; percentiles?: Record<string, unknown> }
    | undefined;
  if (lat) {
    s.latencyMs.mean = typeof lat.mean === 'number' ? lat.mean / 1000 : null;
    s.latencyMs.max = typeof lat.max === 'number' ? lat.max / 1000 : null;
    if (typeof lat.stddev === 'number') s.meta.latencyStdevMs = lat.stddev / 1000;
    const dist: PercentilePoint[] = [];
    for (const [k, v] of Object.entries(lat.percentiles ?? {})) {
      const p = Number(k);
      if (Number.isFinite(p) && typeof v === 'number') dist.push({ percentile: p, ms: v / 1000 });
    }
    dist.sort((a, b) => a.percentile - b.percentile);
    setPercentiles(run, dist);
  }
  if (Array.isArray(r.errors)) s.meta.errorMessages = r.errors;
  return run;
}

// ---------------------------------------------------------------------------------------------

export function parseBombardierText(text: string): LoadTestRun {
  refuseSeveralRuns(text, /^Statistics\s+Avg\s+Stdev\s+Max/, 'bombardier');
  // The progress bar is redrawn with bare CRs; treat them as line breaks.
  const ls = text.split(/\r\n|\r|\n/);
  const run = runOf(
    'bombardier',
    blankSummary({
      tool: 'bombardier',
      version: null,
      source: 'printed',
      output: 'text',
      notes: [
        'bombardier text: figures as printed (two decimals, unit per value); rps = Reqs/sec Avg.',
        'requests = HTTP code counts + others (attempts without an HTTP response = transportErrors).',
        'The header names the configured duration only: durationSeconds is null.',
      ],
    }),
  );
  const s = run.summary;
  let codes: Partial<Codes> | null = null;
  let sawStats = false;
  const dist: PercentilePoint[] = [];
  const errs: { description: string; count: number }[] = [];
  let inErrors = false;
  for (let i = 0; i < ls.length; i++) {
    const line = ls[i]!;
    const ln = i + 1;
    let m: RegExpExecArray | null;
    if ((m = /^Bombarding (\S+) (?:for (\S+)|with (\d+) request\(s\)) using (\d+) connection/.exec(line))) {
      s.meta.targetUrl = m[1]!;
      if (m[2]) s.meta.configuredDuration = m[2];
      if (m[3]) s.meta.configuredRequests = Number(m[3]);
      s.meta.connections = Number(m[4]);
      continue;
    }
    if (/^Statistics\s+Avg\s+Stdev\s+Max/.test(line)) {
      sawStats = true;
      continue;
    }
    if (!sawStats) continue;
    if ((m = /^\s*Reqs\/sec\s+(\S+)\s+(\S+)\s+(\S+)/.exec(line))) {
      s.rps = parseNumber(m[1]!);
      if (s.rps === null) throw new IngestError('malformed', `bombardier report: unreadable Reqs/sec "${m[1]}"`, ln);
      s.meta.reqsPerSecMax = parseNumber(m[3]!);
      inErrors = false;
    } else if ((m = /^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s*$/.exec(line))) {
      s.latencyMs.mean = parseDurationMs(m[1]!);
      s.meta.latencyStdevMs = parseDurationMs(m[2]!);
      s.latencyMs.max = parseDurationMs(m[3]!);
      if (s.latencyMs.mean === null || s.latencyMs.max === null) {
        throw new IngestError('malformed', `bombardier report: unreadable Latency row "${line.trim()}"`, ln);
      }
    } else if ((m = /^\s*([\d.]+)%\s+(\S+)\s*$/.exec(line))) {
      const ms = parseDurationMs(m[2]!);
      if (ms === null)
        throw new IngestError('malformed', `bombardier report: unreadable percentile "${line.trim()}"`, ln);
      dist.push({ percentile: Number(m[1]), ms });
    } else if ((m = /^\s*1xx - (\d+), 2xx - (\d+), 3xx - (\d+), 4xx - (\d+), 5xx - (\d+)/.exec(line))) {
      codes = { ...(codes ?? {}), c1xx: +m[1]!, c2xx: +m[2]!, c3xx: +m[3]!, c4xx: +m[4]!, c5xx: +m[5]! };
    } else if ((m = /^\s*others - (\d+)/.exec(line))) {
      codes = { ...(codes ?? {}), others: Number(m[1]) };
    } else if (/^\s*Errors:\s*$/.test(line)) {
      inErrors = true;
    } else if ((m = /^\s*Throughput:\s*(\S+)\/s/.exec(line))) {
      inErrors = false;
      s.bytesPerSecond = m[1] === '0.00' ? 0 : parseBinaryBytes(m[1]!);
    } else if (inErrors && (m = /^\s+(.*) - (\d+)\s*$/.exec(line))) {
      errs.push({ description: m[1]!, count: Number(m[2]) });
    }
  }
  if (!sawStats)
    throw new IngestError('no-run', 'bombardier output has no "Statistics" table (the run did not finish?)');
  if (!codes || codes.c2xx === undefined)
    throw new IngestError('malformed', 'bombardier report: no "HTTP codes" lines');
  fillCounts(run, { c1xx: 0, c2xx: 0, c3xx: 0, c4xx: 0, c5xx: 0, others: 0, ...codes });
  if (errs.length > 0) s.meta.errorMessages = errs;
  setPercentiles(run, dist);
  return run;
}

// ---------------------------------------------------------------------------------------------

function looksLikeBombardierJson(text: string): boolean {
  return (
    /"spec"\s*:\s*\{/.test(text) &&
    /"result"\s*:\s*\{/.test(text) &&
    /"req2xx"|"numberOfConnections"|"timeTakenSeconds"/.test(text)
  );
}

export const bombardierImporter: LoadTestImporter = {
  formats: ['bombardier'],
  runStart: /^Bombarding \S+ /,
  detect(head: Buffer): number {
    const text = headText(head);
    if (looksLikeBombardierJson(text)) return 0.97;
    if (/^Statistics\s+Avg\s+Stdev\s+Max/m.test(text) && /^\s*Reqs\/sec\s/m.test(text)) return 0.95;
    if (/^Bombarding \S+ (?:for|with) /m.test(text)) return 0.9;
    return 0;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    const text = await readText(src, 'bombardier output');
    // JSON alone, or (without -p r) after the intro and progress lines.
    if (looksLikeBombardierJson(text) || /^\s*\{/.test(text) || /^\{"spec"/m.test(text))
      return parseBombardierJson(text);
    return parseBombardierText(text);
  },
};
