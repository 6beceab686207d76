/**
 * autocannon (mcollina/autocannon 7–9) → LoadTestRun, format 'autocannon', from either output:
 *
 * `--json`: requests = requests.total (responses; requests.sent is kept in meta), durationSeconds =
 * duration, rps = requests.average ("Req/Sec Avg": the mean of the one-second samples — autocannon
 * prints no overall rate). transportErrors = errors (socket errors, timeouts included), non2xx =
 * non2xx. Latency in ms from its 1 ms-resolution histogram: min, average → mean, p50, p75, p90,
 * p99, p99_9 → p999, max (there is no p95: it stays null); every p* key → latencyDistribution.
 *
 * The human tables (stderr; `-l` adds the percentile table, `--renderStatusCodes` the code table):
 * figures as printed. requests = the status-code table's sum (exact) or the "N 2xx responses, M non
 * 2xx responses" line; autocannon prints that line only when some response is not 2xx, so without
 * it non2xx = 0 and requests is the closing "500 requests in 1.19s" count when it is exact (below
 * 1000, no error), else null ("17k requests" is rounded; kept as meta.requestsSentApprox). The
 * closing line gives the duration; "N errors (M timeouts)" gives transportErrors.
 *
 * With no response at all, autocannon prints 0 placeholders for latency: those become null.
 */
import type { LoadTestRun, LoadTestSummary, PercentilePoint } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { setPrintedPercentiles } from './common/percentiles.ts';
import { blankSummary, isFailedStatus, sumErrors } from './common/summary.ts';
import { headText, readText, refuseSeveralRuns } from './common/text.ts';
import { parseAbbrevCount, parseNumber, parseSiBytes } from './common/units.ts';

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** "p99_9" → 99.9, "p0_001" → 0.001, "p50" → 50. */
function keyPercentile(k: string): number | null {
  const m = /^p(\d+)(?:_(\d+))?$/.exec(k);
  return m ? Number(m[2] ? `${m[1]}.${m[2]}` : m[1]) : null;
}

export function parseAutocannonJson(text: string): LoadTestRun {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new IngestError('malformed', `autocannon JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || typeof doc.requests !== 'object' || typeof doc.latency !== 'object') {
    throw new IngestError('malformed', 'autocannon JSON: no "requests" and "latency" objects');
  }
  const req = doc.requests as Record<string, unknown>;
  const lat = doc.latency as Record<string, unknown>;
  const summary = blankSummary({
    tool: 'autocannon',
    version: null,
    targetUrl: typeof doc.url === 'string' ? doc.url : null,
    connections: num(doc.connections),
    source: 'printed',
    output: 'json',
    pipelining: num(doc.pipelining),
    start: doc.start ?? null,
    finish: doc.finish ?? null,
    requestsSent: num(req.sent),
    timeouts: num(doc.timeouts),
    mismatches: num(doc.mismatches),
    resets: num(doc.resets),
    statusCodeStats: doc.statusCodeStats ?? null,
    notes: [
      'autocannon --json: requests = requests.total (responses); rps = requests.average (mean of one-second samples).',
      "Latency from autocannon's 1 ms-resolution histogram; it has no p95.",
    ],
  });
  const total = num(req.total);
  if (total === null) throw new IngestError('malformed', 'autocannon JSON: requests.total is missing');
  summary.requests = total;
  summary.durationSeconds = num(doc.duration);
  summary.rps = num(req.average) ?? num(req.mean);
  summary.transportErrors = num(doc.errors) ?? 0;
  // per-class counts split out the 3xx that autocannon's non2xx includes
  const classes = ['1xx', '4xx', '5xx'].map((k) => num(doc[k]));
  if (classes.every((v) => v !== null)) summary.non2xx = classes.reduce((a, b) => a! + b!, 0)!;
  else {
    summary.non2xx = num(doc.non2xx) ?? 0;
    summary.meta.notes!.push("no per-class status counts: non2xx is autocannon's non-2xx total (3xx included)");
  }
  summary.errors = sumErrors(summary.transportErrors, summary.non2xx);
  const tp = doc.throughput as Record<string, unknown> | undefined;
  summary.bytesPerSecond = tp ? num(tp.average) : null;
  const count = num(lat.totalCount) ?? total;
  let dist: PercentilePoint[] | null = null;
  if (count > 0) {
    const L = summary.latencyMs;
    L.min = num(lat.min);
    L.mean = num(lat.average) ?? num(lat.mean);
    L.p50 = num(lat.p50);
    L.p75 = num(lat.p75);
    L.p90 = num(lat.p90);
    L.p99 = num(lat.p99);
    L.p999 = num(lat.p99_9);
    L.max = num(lat.max);
    dist = [];
    for (const [k, v] of Object.entries(lat)) {
      const p = keyPercentile(k);
      if (p !== null && typeof v === 'number') dist.push({ percentile: p, ms: v });
    }
    dist.sort((a, b) => a.percentile - b.percentile);
  } else {
    summary.meta.notes!.push("No response arrived: autocannon's latency fields are 0 placeholders, kept as null.");
  }
  return autocannonRun(summary, dist);
}

// ---------------------------------------------------------------------------------------------

/** Cells of a box-drawing table row ("│ a │ b │"), or null for rule lines and other text. */
/** The run of either form: its summary and printed distribution (none when it has no point). */
function autocannonRun(summary: LoadTestSummary, dist: PercentilePoint[] | null): LoadTestRun {
  return {
    kind: 'loadtest',
    format: 'autocannon',
    summary,
    timeline: null,
    latencyDistribution: dist && dist.length > 0 ? dist : null,
  };
}

function cells(line: string): string[] | null {
  const t = line.trim();
  if (!t.startsWith('│')) return null;
  return t
    .split('│')
    .slice(1, -1)
    .map((c) => c.trim());
}

export function parseAutocannonTable(text: string): LoadTestRun {
  refuseSeveralRuns(text, /^\S+ requests in [\d.]+s, /, 'autocannon');
  const ls = text.split(/\r?\n/);
  const summary = blankSummary({
    tool: 'autocannon',
    version: null,
    source: 'printed',
    output: 'table',
    notes: [
      'autocannon tables: figures as printed; rps = Req/Sec Avg (mean of one-second samples).',
      'requests = responses (status-code table or the 2xx/non-2xx line); the "Nk requests" line counts requests sent, abbreviated.',
    ],
  });
  let header: string[] | null = null;
  let kind = '';
  const latencyShort = new Map<string, string>();
  const reqRow = new Map<string, string>();
  const bytesRow = new Map<string, string>();
  const codes: Record<string, number> = {};
  let sawCodeTable = false;
  const pctl: PercentilePoint[] = [];
  let ok2xx: number | null = null;
  let bad2xx: number | null = null;
  let sawRunning = false;
  let sawTotals = false;
  for (let i = 0; i < ls.length; i++) {
    const line = ls[i]!;
    const ln = i + 1;
    let m: RegExpExecArray | null;
    if ((m = /^Running (\S+(?: requests)?) test @ (\S+)/.exec(line))) {
      sawRunning = true;
      summary.meta.configuredDuration = m[1]!;
      summary.meta.targetUrl = m[2]!;
      continue;
    }
    if ((m = /^(\d+) connections?/.exec(line))) {
      summary.meta.connections = Number(m[1]);
      const pm = /with (\d+) pipelining/.exec(line);
      if (pm) summary.meta.pipelining = Number(pm[1]);
      continue;
    }
    const c = cells(line);
    if (c) {
      if (c[0] === 'Stat' || c[0] === 'Code' || c[0] === 'Percentile') {
        header = c;
        kind = c[0];
        if (kind === 'Code') sawCodeTable = true;
        continue;
      }
      if (!header) continue;
      const row = new Map<string, string>();
      header.forEach((h, j) => {
        row.set(h, c[j] ?? '');
      });
      if (kind === 'Stat' && c[0] === 'Latency')
        row.forEach((v, k) => {
          latencyShort.set(k, v);
        });
      else if (kind === 'Stat' && c[0] === 'Req/Sec')
        row.forEach((v, k) => {
          reqRow.set(k, v);
        });
      else if (kind === 'Stat' && c[0] === 'Bytes/Sec')
        row.forEach((v, k) => {
          bytesRow.set(k, v);
        });
      else if (kind === 'Code') {
        const n = parseNumber(c[1] ?? '');
        if (n === null)
          throw new IngestError('malformed', `autocannon table: unreadable status-code row "${line.trim()}"`, ln);
        codes[c[0]!] = n;
      } else if (kind === 'Percentile') {
        const p = parseNumber(c[0] ?? '');
        const v = parseNumber(c[1] ?? '');
        if (p === null || v === null)
          throw new IngestError('malformed', `autocannon table: unreadable percentile row "${line.trim()}"`, ln);
        pctl.push({ percentile: p, ms: v });
      }
      continue;
    }
    if ((m = /^(\d+) 2xx responses, (\d+) non 2xx responses/.exec(line))) {
      ok2xx = Number(m[1]);
      bad2xx = Number(m[2]);
    } else if ((m = /^(\S+) requests in ([\d.]+)s, (.+) read/.exec(line))) {
      sawTotals = true;
      summary.durationSeconds = Number(m[2]);
      summary.meta.requestsSentApprox = parseAbbrevCount(m[1]!);
      summary.meta.bytesReadApprox = parseSiBytes(m[3]!);
    } else if ((m = /^(\S+) errors? \((\S+) timeouts?\)/.exec(line))) {
      summary.transportErrors = parseAbbrevCount(m[1]!);
      summary.meta.timeouts = parseAbbrevCount(m[2]!);
    }
  }
  if (!sawRunning || !sawTotals) {
    throw new IngestError(
      'no-run',
      'autocannon output has no "Running … test @" header or no "requests in …s" totals line',
    );
  }
  if (sawCodeTable) {
    let total = 0;
    let bad = 0;
    for (const [code, n] of Object.entries(codes)) {
      total += n;
      if (!/^\d+$/.test(code) || isFailedStatus(Number(code))) bad += n;
    }
    summary.requests = total;
    summary.non2xx = bad;
    summary.meta.statusCodes = codes;
  } else if (ok2xx !== null && bad2xx !== null) {
    summary.requests = ok2xx + bad2xx;
    summary.non2xx = bad2xx;
    summary.meta.notes!.push(
      'non2xx = the "non 2xx responses" count, which includes 3xx (the line does not split them)',
    );
  } else if (noResponse(reqRow, latencyShort)) {
    summary.requests = 0; // nothing answered: every figure is a 0 placeholder
    summary.non2xx = 0;
  } else {
    // autocannon prints the "N 2xx responses, M non 2xx responses" line only when some response
    // is not 2xx: without it every response was 2xx. The exact count is then printed only below
    // 1000 ("500 requests in …"); above, "11k requests" is rounded, so requests stays unknown.
    summary.non2xx = 0;
    const sent = summary.meta.requestsSentApprox as number | null;
    if (sent !== null && sent < 1000 && summary.transportErrors === null) {
      summary.requests = sent;
      summary.meta.notes!.push(
        'every response was 2xx (no "non 2xx" line); requests = the exact "N requests in" count',
      );
    } else {
      summary.meta.notes!.push(
        'every response was 2xx (no "non 2xx" line); the table prints no exact request count (only a rounded one in meta.requestsSentApprox), so requests is null',
      );
    }
  }
  if (summary.transportErrors === null) summary.transportErrors = 0;
  summary.errors = sumErrors(summary.transportErrors, summary.non2xx);
  const avg = reqRow.get('Avg');
  summary.rps = avg === undefined ? null : parseNumber(avg);
  const bavg = bytesRow.get('Avg');
  summary.bytesPerSecond = bavg === undefined ? null : parseSiBytes(bavg);
  const ms = (v: string | undefined) => (v === undefined ? null : parseNumber(v.replace(/\s*ms$/, '')));
  let dist: PercentilePoint[] | null = null;
  if (summary.requests !== 0) {
    const L = summary.latencyMs;
    L.mean = ms(latencyShort.get('Avg'));
    L.max = ms(latencyShort.get('Max'));
    L.p50 = ms(latencyShort.get('50%'));
    L.p99 = ms(latencyShort.get('99%'));
    setPrintedPercentiles(L, pctl, [75, 90, 99.9]);
    if (pctl.length > 0) dist = pctl;
    else {
      dist = [];
      for (const [k, v] of latencyShort) {
        const pm = /^([\d.]+)%$/.exec(k);
        const val = ms(v);
        if (pm && val !== null) dist.push({ percentile: Number(pm[1]), ms: val });
      }
    }
  }
  return autocannonRun(summary, dist);
}

/** True when the tables show no response at all: every Req/Sec and latency figure is 0. */
function noResponse(reqRow: Map<string, string>, latency: Map<string, string>): boolean {
  const zero = (v: string | undefined) => v !== undefined && parseNumber(v.replace(/\s*ms$/, '')) === 0;
  return zero(reqRow.get('Avg')) && zero(reqRow.get('Max') ?? reqRow.get('Min')) && zero(latency.get('Max'));
}

// ---------------------------------------------------------------------------------------------

function looksLikeAutocannonJson(text: string): boolean {
  return (
    /^\s*\{/.test(text) &&
    /"sampleInt"\s*:/.test(text) &&
    /"latency"\s*:\s*\{/.test(text) &&
    /"requests"\s*:\s*\{/.test(text)
  );
}

function looksLikeAutocannonTable(text: string): boolean {
  return (
    /^Running \S+(?: requests)? test @ /m.test(text) &&
    /│\s*Stat\s*│/.test(text) &&
    /│\s*(Req\/Sec|Latency)\s*│/.test(text)
  );
}

export const autocannonImporter: LoadTestImporter = {
  formats: ['autocannon'],
  runStart: /^Running .*test @ \S+/,
  detect(head: Buffer): number {
    const text = headText(head);
    if (looksLikeAutocannonJson(text)) return 0.97;
    if (looksLikeAutocannonTable(text)) return 0.92;
    return 0;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    const text = await readText(src, 'autocannon output');
    if (/^\s*\{/.test(text)) return parseAutocannonJson(text);
    return parseAutocannonTable(text);
  },
};
