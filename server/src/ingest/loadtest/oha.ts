/**
 * oha (the Rust load generator): its text summary (`oha …`, also `--no-tui`) and its JSON output
 * (`--output-format json`, `-j` in older versions).
 *
 * Text, as oha 1.x prints it (older versions print `Success rate: 1.0000`, times in `secs`, and a
 * "Latency distribution:" of `10% in 0.0245 secs`):
 *
 *   Summary:
 *     Success rate:	98.97%
 *     Total:	593.2375 ms
 *     Slowest:	10.6167 ms / Fastest: … / Average: …
 *     Requests/sec:	33713.3128
 *     Total data: 1.09 MiB / Size/request: 57 B / Size/sec: 1.84 MiB
 *   Response time histogram: …
 *   Response time distribution:
 *     10.00% in 0.0829 ms … 99.99% in 10.6161 ms
 *   Details (average, fastest, slowest): …
 *   Status code distribution:
 *     [200] 18845 responses
 *   Error distribution:
 *     [206] connection closed before message completed
 *
 * Figures as printed: rps, total time, fastest/average/slowest, every printed percentile, bytes/s.
 * oha prints no request count: requests are the responses of the status distribution plus the
 * requests of the error distribution (oha's success rate is responses / that sum), null when a paste
 * lacks the status distribution. Errors follow the one rule: the error distribution's requests got no
 * response (transportErrors), statuses outside 200–399 are non2xx. Requests oha itself cut off when a
 * `-z` duration ran out ("aborted due to deadline") are no failure of the target: they are left out
 * of requests and errors, and the run's notes say how many. `NaN`/`inf` (a run without a response)
 * read as null.
 */
import type { LatencyMs, LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import { setPrintedPercentiles } from './common/percentiles.ts';
import { isFailedStatus, run, summary } from './common/summary.ts';
import { commandLineOf, headText, isObj, parseJson, readText } from './common/text.ts';
import { TIME_TO_MS, parseNumber } from './common/units.ts';
import type { LoadTestImporter } from './types.ts';

/** Milliseconds per oha time unit (`-u ns|us|ms|s|m|h`; older versions print `secs`, `mins`, `hours`). */
const UNIT_MS: Record<string, number> = {
  ...TIME_TO_MS,
  sec: 1000,
  secs: 1000,
  min: 60_000,
  mins: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
};

/** Decimal powers of ten per unit: "0.0556 secs" is 55.6 ms as printed (a product gives 55.5999…). */
const UNIT_EXP: Record<string, number> = { ns: -6, us: -3, µs: -3, μs: -3, ms: 0, s: 3, sec: 3, secs: 3 };

/** `v` × 10^exp without binary rounding of the printed digits. */
function shift(v: number, exp: number): number {
  const [mant, e] = String(v).split('e');
  return Number(`${mant}e${Number(e ?? 0) + exp}`);
}

/** "10.6167 ms", "0.0245 secs", "NaN ns" → ms, or null (NaN, inf, no unit known). */
function timeMs(token: string): number | null {
  const m = /^([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*([a-zµμ]+)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  const scale = UNIT_MS[m[2]!];
  if (!Number.isFinite(v) || scale === undefined) return null;
  const exp = UNIT_EXP[m[2]!];
  return exp === undefined ? v * scale : shift(v, exp);
}

/** "1.09 MiB", "60 B", "234.26 KiB" → bytes (binary units), or null. */
function bytes(token: string): number | null {
  const m = /^([\d.]+)\s*(B|KiB|MiB|GiB|TiB)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  return Number.isFinite(v) ? v * 1024 ** ['B', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(m[2]!) : null;
}

const DEADLINE = /^aborted due to deadline$/i;

/** What oha printed, section by section (null where the paste does not have it). */
interface OhaFigures {
  totalMs: number | null;
  rps: number | null;
  latency: LatencyMs;
  dist: PercentilePoint[];
  bytesPerSecond: number | null;
  statuses: Map<number, number> | null;
  errors: { count: number; message: string }[];
}

/** Requests, errors and notes from the distributions (see the module comment). */
function counts(f: OhaFigures): {
  requests: number | null;
  transportErrors: number | null;
  non2xx: number | null;
  notes: string[];
} {
  const notes: string[] = [];
  const aborted = f.errors.filter((e) => DEADLINE.test(e.message)).reduce((a, e) => a + e.count, 0);
  if (aborted > 0)
    notes.push(`${aborted} request(s) oha cut off when its duration ran out ("aborted due to deadline") are left out`);
  const transport = f.errors.filter((e) => !DEADLINE.test(e.message)).reduce((a, e) => a + e.count, 0);
  if (f.statuses === null) {
    notes.push('the paste has no status code distribution: requests and errors are unknown');
    return { requests: null, transportErrors: null, non2xx: null, notes };
  }
  let responses = 0;
  let non2xx = 0;
  for (const [code, n] of f.statuses) {
    responses += n;
    if (isFailedStatus(code)) non2xx += n;
  }
  return { requests: responses + transport, transportErrors: transport, non2xx, notes };
}

function toRun(format: 'oha' | 'oha-json', f: OhaFigures, meta: { commandLine: string | null }): LoadTestRun {
  const c = counts(f);
  const targetUrl = meta.commandLine ? (/\bhttps?:\/\/\S+/.exec(meta.commandLine)?.[0] ?? null) : null;
  const connections = meta.commandLine ? /(?:^|\s)-c\s+(\d+)/.exec(meta.commandLine)?.[1] : undefined;
  const rate = meta.commandLine ? /(?:^|\s)-q\s+([\d.]+)/.exec(meta.commandLine)?.[1] : undefined;
  const dist = [...f.dist];
  if (f.latency.min !== null) dist.unshift({ percentile: 0, ms: f.latency.min });
  if (f.latency.max !== null) dist.push({ percentile: 100, ms: f.latency.max });
  return run(
    format,
    summary({
      requests: c.requests,
      durationSeconds: f.totalMs === null ? null : f.totalMs / 1000,
      rps: f.rps,
      transportErrors: c.transportErrors,
      non2xx: c.non2xx,
      latencyMs: f.latency,
      bytesPerSecond: f.bytesPerSecond,
      meta: {
        tool: 'oha',
        source: 'printed',
        commandLine: meta.commandLine,
        targetUrl,
        connections: connections === undefined ? null : Number(connections),
        rate: rate === undefined ? null : Number(rate),
        notes: c.notes,
      },
    }),
    null,
    dist.length > 0 ? dist : null,
  );
}

// ---------------------------------------------------------------------------------------------
// Text

/** True when `text` holds oha's text summary (its "Success rate:" line sets it apart from hey's). */
export function looksLikeOhaText(text: string): boolean {
  return /^Summary:\s*$/m.test(text) && /^\s+Success rate:\s+\S/m.test(text) && /^\s+Requests\/sec:/m.test(text);
}

export function parseOhaText(text: string): LoadTestRun {
  if (!looksLikeOhaText(text))
    throw new IngestError('no-run', 'not an oha summary: no "Summary:" with "Success rate:" and "Requests/sec:"');
  const lines = text.split(/\r?\n/);
  const f: OhaFigures = {
    totalMs: null,
    rps: null,
    latency: emptyLatency(),
    dist: [],
    bytesPerSecond: null,
    statuses: null,
    errors: [],
  };
  let section = '';
  let seenSummary = false;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\s+$/, '');
    if (/^\S.*:$/.test(line)) {
      section = line.slice(0, -1);
      if (section === 'Summary') seenSummary = true;
      if (section === 'Status code distribution') f.statuses = new Map();
      continue;
    }
    if (!seenSummary || line.trim() === '') continue;
    const kv = /^\s+([A-Za-z/+ -]+):\s+(.*)$/.exec(line);
    let m: RegExpExecArray | null;
    switch (section) {
      case 'Summary':
        if (!kv) break;
        switch (kv[1]) {
          case 'Total':
            f.totalMs = timeMs(kv[2]!);
            break;
          case 'Slowest':
            f.latency.max = timeMs(kv[2]!);
            break;
          case 'Fastest':
            f.latency.min = timeMs(kv[2]!);
            break;
          case 'Average':
            f.latency.mean = timeMs(kv[2]!);
            break;
          case 'Requests/sec':
            f.rps = parseNumber(kv[2]!);
            break;
          case 'Size/sec':
            f.bytesPerSecond = bytes(kv[2]!);
            break;
        }
        break;
      case 'Response time distribution':
      case 'Latency distribution':
        if ((m = /^\s+([\d.]+)%\s+in\s+(.+)$/.exec(line))) {
          const ms = timeMs(m[2]!);
          if (ms !== null) f.dist.push({ percentile: Number(m[1]), ms });
        }
        break;
      case 'Status code distribution':
        if ((m = /^\s+\[(\d+)\]\s+(\d+)\s+responses?$/.exec(line)))
          f.statuses!.set(Number(m[1]), (f.statuses!.get(Number(m[1])) ?? 0) + Number(m[2]));
        else throw new IngestError('malformed', `oha summary: unexpected status line "${line.trim()}"`, i + 1);
        break;
      case 'Error distribution':
        if ((m = /^\s+\[(\d+)\]\s+(.*)$/.exec(line))) f.errors.push({ count: Number(m[1]), message: m[2]!.trim() });
        break;
    }
  }
  if (f.rps === null) throw new IngestError('no-run', 'oha summary has no readable Requests/sec line');
  setPrintedPercentiles(f.latency, f.dist, [50, 75, 90, 95, 99, 99.9]);
  return toRun('oha', f, { commandLine: commandLineOf(text, 'oha') });
}

// ---------------------------------------------------------------------------------------------
// JSON

/** True when a parsed JSON document is oha's `--output-format json` output. */
function isOhaJson(doc: unknown): doc is Record<string, unknown> {
  return (
    isObj(doc) &&
    isObj(doc.summary) &&
    'successRate' in doc.summary &&
    'requestsPerSec' in doc.summary &&
    isObj(doc.statusCodeDistribution)
  );
}

const seconds = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? shift(v, 3) : null);

export function parseOhaJson(text: string): LoadTestRun {
  const doc = parseJson(text, 'oha JSON output');
  if (!isOhaJson(doc)) throw new IngestError('no-run', 'not oha JSON output: no summary with successRate');
  const s = doc.summary as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const dist: PercentilePoint[] = [];
  if (isObj(doc.latencyPercentiles))
    for (const [k, v] of Object.entries(doc.latencyPercentiles)) {
      const p = /^p([\d.]+)$/.exec(k);
      const ms = seconds(v);
      if (p && ms !== null) dist.push({ percentile: Number(p[1]), ms });
    }
  dist.sort((a, b) => a.percentile - b.percentile);
  const statuses = new Map<number, number>();
  for (const [code, n] of Object.entries(doc.statusCodeDistribution as Record<string, unknown>)) {
    if (!/^\d+$/.test(code) || typeof n !== 'number')
      throw new IngestError('malformed', `oha JSON output: status "${code}" has no count`);
    statuses.set(Number(code), n);
  }
  const errors: OhaFigures['errors'] = [];
  if (isObj(doc.errorDistribution))
    for (const [message, n] of Object.entries(doc.errorDistribution))
      if (typeof n === 'number') errors.push({ count: n, message });
  const latency = emptyLatency();
  latency.min = seconds(s.fastest);
  latency.max = seconds(s.slowest);
  latency.mean = seconds(s.average);
  setPrintedPercentiles(latency, dist, [50, 75, 90, 95, 99, 99.9]);
  return toRun(
    'oha-json',
    {
      totalMs: seconds(s.total),
      rps: num(s.requestsPerSec),
      latency,
      dist,
      bytesPerSecond: num(s.sizePerSec),
      statuses,
      errors,
    },
    { commandLine: null },
  );
}

export const ohaImporter: LoadTestImporter = {
  formats: ['oha', 'oha-json'],
  runStart: /^Summary:\s*$/,
  detect(head: Buffer): number {
    const text = headText(head);
    if (looksLikeOhaText(text)) return 0.97;
    const t = text.trimStart();
    if (t.startsWith('{') && /"summary"\s*:\s*\{\s*"successRate"/.test(t) && /"requestsPerSec"/.test(t)) return 0.97;
    return 0;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    const text = await readText(src, 'oha output');
    return text.trimStart().startsWith('{') ? parseOhaJson(text) : parseOhaText(text);
  },
};
