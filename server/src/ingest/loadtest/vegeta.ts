/**
 * vegeta (tsenart/vegeta v12): per-request results (`vegeta encode -to=json|csv`) and reports
 * (`vegeta report` text, `-type=json`, `-type='hist[...]'`, `-type=hdrplot`).
 *
 * Definitions follow vegeta's `Metrics.Add/Close`:
 * - requests = every result (transport errors included); latencies cover every result too;
 * - durationSeconds = attack duration (latest start - earliest start); rps = vegeta's `rate`
 *   (requests / attack duration). vegeta's `throughput` (2xx/3xx results / (attack + wait)) and the
 *   total duration are kept in `meta`;
 * - mean = integer-nanosecond truncation of total / requests; min and max exact;
 * - p50/p75/p90/p95/p99/p99.9 = vegeta's t-digest (compression 100, fed in file order): these are the
 *   figures `vegeta report` prints for the same results. Exact order statistics go to
 *   `meta.exactLatencyMs`.
 * - transportErrors = results with status code 0; non2xx = results with any other code outside
 *   200–399 (vegeta's own success rule, and the errors rule of common/summary.ts).
 */
import type { LatencyMs, LoadTestMeta, LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { lineSpans, type ByteSource } from '../source.ts';
import { type CsvRow, forEachCsvRow } from './common/csv.ts';
import { nearestRankRule } from './common/percentiles.ts';
import { GrowableF64, GrowableU8, NON2XX, OK, TRANSPORT } from './common/rows.ts';
import { isFailedStatus, run, summary } from './common/summary.ts';
import { headText, isObj, parseJson, readNonBlankText, refuseSeveralRuns } from './common/text.ts';
import { parseRfc3339, parseRfc3339Bytes, rfc3339 } from './common/time.ts';
import { secondsOf, timelineAndSorted } from './common/timeline.ts';
import { num, parseGoDurationMs } from './common/units.ts';
import { VegetaTDigest } from './vegeta-tdigest.ts';
import type { LoadTestImporter } from './types.ts';

/** The quantiles `vegeta report -type=hdrplot` prints (its "logarithmic" list), as fractions. */
export const VEGETA_HDRPLOT_QUANTILES = [
  0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.775, 0.8, 0.825, 0.85, 0.875, 0.8875, 0.9, 0.9125, 0.925,
  0.9375, 0.94375, 0.95, 0.95625, 0.9625, 0.96875, 0.971875, 0.975, 0.978125, 0.98125, 0.984375, 0.985938, 0.9875,
  0.989062, 0.990625, 0.992188, 0.992969, 0.99375, 0.994531, 0.995313, 0.996094, 0.996484, 0.996875, 0.997266, 0.997656,
  0.998047, 0.998242, 0.998437, 0.998633, 0.998828, 0.999023, 0.999121, 0.999219, 0.999316, 0.999414, 0.999512,
  0.999561, 0.999609, 0.999658, 0.999707, 0.999756, 0.99978, 0.999805, 0.999829, 0.999854, 0.999878, 0.99989, 0.999902,
  0.999915, 0.999927, 0.999939, 0.999945, 0.999951, 0.999957, 0.999963, 0.999969, 0.999973, 0.999976, 0.999979,
  0.999982, 0.999985, 0.999986, 0.999988, 0.999989, 0.999991, 0.999992, 0.999993, 0.999994, 0.999995, 0.999996,
  0.999997, 0.999998, 0.999999, 1.0,
];

const TDIGEST_NOTE =
  "p50..p99.9 are vegeta's own t-digest estimates (influxdata/tdigest v0.0.1, compression 100, fed in file order), as `vegeta report` prints them; meta.exactLatencyMs holds exact nearest-rank order statistics of the same latencies";

// ---------------------------------------------------------------------------------------------
// Per-request accumulation (shared by the JSON and CSV readers)

class VegetaResults {
  private baseSec = NaN;
  private starts = new GrowableF64();
  private lats = new GrowableF64();
  private outcome = new GrowableU8();
  private digest = new VegetaTDigest(100);
  n = 0;
  private totalNs = 0;
  private minNs = 0;
  private maxNs = 0;
  private earliest = Infinity;
  private latest = -Infinity;
  private end = -Infinity;
  private success = 0;
  private transport = 0;
  private non2xx = 0;
  private bytesIn = 0;
  private bytesOut = 0;
  /** counts of the usual status codes 0..999 by code (a Map lookup per row costs more) */
  private smallCodes = new Float64Array(1000);
  private codes = new Map<number, number>();
  private errors = new Set<string>();
  private attack: string | null = null;
  private url: string | null = null;

  add(
    sec: number,
    nanos: number,
    code: number,
    latencyNs: number,
    bytesOut: number,
    bytesIn: number,
    error: string | boolean,
  ): void {
    if (Number.isNaN(this.baseSec)) this.baseSec = sec;
    const rel = (sec - this.baseSec) * 1e9 + nanos;
    this.n++;
    this.starts.push(rel);
    this.lats.push(latencyNs);
    this.digest.add(latencyNs);
    this.totalNs += latencyNs;
    if (latencyNs > this.maxNs) this.maxNs = latencyNs;
    if (latencyNs < this.minNs || this.minNs === 0) this.minNs = latencyNs; // vegeta's rule
    if (rel < this.earliest) this.earliest = rel;
    if (rel > this.latest) this.latest = rel;
    if (rel + latencyNs > this.end) this.end = rel + latencyNs;
    if (code >= 200 && code < 400) this.success++;
    let o = OK;
    if (code === 0) {
      o = TRANSPORT;
      this.transport++;
    } else if (isFailedStatus(code)) {
      o = NON2XX;
      this.non2xx++;
    }
    this.outcome.push(o);
    if (code >= 0 && code < 1000 && Number.isInteger(code)) this.smallCodes[code]!++;
    else this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
    this.bytesIn += bytesIn;
    this.bytesOut += bytesOut;
    if (typeof error === 'string' && error !== '' && this.errors.size < 20) this.errors.add(error);
  }

  /** False once the error set is full (add() then ignores any further message). */
  wantsErrorText(): boolean {
    return this.errors.size < 20;
  }

  setContext(attack: string | null, url: string | null): void {
    if (this.attack === null && attack) this.attack = attack;
    if (this.url === null && url) this.url = url;
  }

  finish(format: 'vegeta-json' | 'vegeta-csv', parseNote: string): LoadTestRun {
    if (this.n === 0) throw new IngestError('no-run', 'no vegeta results in the file');
    const n = this.n;
    const durNs = this.latest - this.earliest;
    const waitNs = this.end - this.latest;
    const secs = durNs / 1e9;
    const rate = secs > 0 ? n / secs : null;
    const throughput = secs > 0 ? this.success / ((durNs + waitNs) / 1e9) : null;
    const q = (x: number): number | null => {
      const v = this.digest.quantile(x);
      return Number.isNaN(v) ? null : Math.trunc(v) / 1e6; // time.Duration(float64) truncates
    };
    const latency: LatencyMs = {
      min: this.minNs / 1e6,
      mean: Math.trunc(this.totalNs / n) / 1e6,
      p50: q(0.5),
      p75: q(0.75),
      p90: q(0.9),
      p95: q(0.95),
      p99: q(0.99),
      p999: q(0.999),
      max: this.maxNs / 1e6,
    };
    // timeline on the run's own clock: t = 0 at the earliest request start
    const starts = this.starts.view();
    const startSec = new Float64Array(n);
    for (let i = 0; i < n; i++) startSec[i] = (starts[i]! - this.earliest) / 1e9;
    const latMs = new Float64Array(n);
    const lv = this.lats.view();
    for (let i = 0; i < n; i++) latMs[i] = lv[i]! / 1e6;
    const tl = timelineAndSorted({
      second: secondsOf(startSec),
      latencyMs: latMs,
      error: this.outcome.view(),
      rule: nearestRankRule,
      bucketMean: 'ascending',
    });
    const timeline = tl.timeline;
    // All latencies in ms, ascending (the timeline's by-product). ns -> ms is monotonic, so its
    // order statistics are exactly those of the nanoseconds divided by 1e6.
    const sortedMs = tl.sorted.length === n ? tl.sorted : Float64Array.from(latMs).sort();
    const exact = (p: number): number | null => nearestRankRule(sortedMs, p);
    const exactLatencyMs = {
      min: sortedMs[0]!,
      p50: exact(50),
      p75: exact(75),
      p90: exact(90),
      p95: exact(95),
      p99: exact(99),
      p999: exact(99.9),
      max: sortedMs[n - 1]!,
    };
    const distribution: PercentilePoint[] = [];
    for (const x of VEGETA_HDRPLOT_QUANTILES) {
      const v = q(x);
      if (v !== null) distribution.push({ percentile: Math.round(x * 100 * 1e6) / 1e6, ms: v });
    }

    const statusCodes: Record<string, number> = {};
    const codeCounts = [...this.codes.entries()];
    for (let c = 0; c < 1000; c++) if (this.smallCodes[c]! > 0) codeCounts.push([c, this.smallCodes[c]!]);
    for (const [c, k] of codeCounts.sort((a, b) => a[0] - b[0])) statusCodes[String(c)] = k;
    const meta: LoadTestMeta = {
      tool: 'vegeta',
      version: null,
      targetUrl: this.url,
      source: 'computed',
      startedAt: this.baseSec * 1000 + this.earliest / 1e6,
      attack: this.attack,
      notes: [
        parseNote,
        "computed from per-request results with vegeta's report definitions (Metrics.Add/Close)",
        TDIGEST_NOTE,
        'durationSeconds = attack duration (latest - earliest request start); rps = vegeta rate (requests / attack duration); vegeta throughput and total duration are in meta',
        'timeline buckets and their percentiles are exact nearest-rank per second',
        'latencyDistribution = the t-digest quantiles `vegeta report -type=hdrplot` prints',
        'bytesPerSecond is left null: vegeta counts captured body bytes (capped by -max-body), not bytes on the wire; see meta.bytesIn',
      ],
      exactLatencyMs,
      throughput,
      totalDurationSeconds: (durNs + waitNs) / 1e9,
      waitSeconds: waitNs / 1e9,
      success: this.success / n,
      statusCodes,
      errorSet: [...this.errors],
      bytesIn: { total: this.bytesIn, mean: this.bytesIn / n },
      bytesOut: { total: this.bytesOut, mean: this.bytesOut / n },
    };
    const s = summary({
      requests: n,
      durationSeconds: secs > 0 ? secs : null,
      rps: rate,
      transportErrors: this.transport,
      non2xx: this.non2xx,
      latencyMs: latency,
      meta,
    });
    return run(format, s, timeline, distribution);
  }
}

// ---------------------------------------------------------------------------------------------
// JSON lines

interface FastRow {
  code: number;
  /** timestamp position in the line's bytes (fast path) */
  tsFrom: number;
  tsTo: number;
  latency: number;
  bytesOut: number;
  bytesIn: number;
  hasError: boolean;
}

const lit = (t: string): Uint8Array => Buffer.from(t, 'latin1');
const K_ATTACK = lit('{"attack":"');
const K_SEQ = lit(',"seq":');
const K_CODE = lit(',"code":');
const K_TIMESTAMP = lit(',"timestamp":"');
const K_LATENCY = lit(',"latency":');
const K_BYTES_OUT = lit(',"bytes_out":');
const K_BYTES_IN = lit(',"bytes_in":');
const K_ERROR = lit(',"error":"');

/** True when b[p, p + k.length) holds the bytes of `k` (and lies before `end`). */
function hasAt(b: Uint8Array, p: number, end: number, k: Uint8Array): boolean {
  const n = k.length;
  if (p + n > end) return false;
  for (let i = 0; i < n; i++) if (b[p + i] !== k[i]) return false;
  return true;
}

let intEnd = 0;

/** Reads a non-negative integer at `pos` (end position in `intEnd`); -1 when there is none. */
function intAt(b: Uint8Array, pos: number, end: number): number {
  let v = 0;
  let i = pos;
  for (; i < end; i++) {
    const c = b[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  intEnd = i;
  return i === pos || i - pos > 15 ? -1 : v;
}

/**
 * Fast path for the exact field order vegeta's generated (easyjson) encoder writes:
 * {"attack":"…","seq":N,"code":N,"timestamp":"…","latency":N,"bytes_out":N,"bytes_in":N,"error":"…",…}.
 * It reads the line's raw bytes in place: JSON.parse of every line (body, headers, …), or even
 * decoding every line to a string, would cost several times the whole budget of a million-row
 * log, and we need only six leading fields, all ASCII. Anything unexpected — another field order,
 * escapes in the attack name, numbers in another notation or over 15 digits, a line cut short —
 * returns false and the caller falls back to JSON.parse for that line, so correctness never
 * depends on this path: it accepts only lines whose fields it reads exactly as JSON.parse would.
 */
function fastVegetaJson(b: Uint8Array, s: number, e: number, out: FastRow): boolean {
  if (!hasAt(b, s, e, K_ATTACK)) return false;
  let attackEnd = s + 11;
  while (attackEnd < e && b[attackEnd] !== 34) attackEnd++;
  if (attackEnd >= e || b[attackEnd - 1] === 92 /* backslash: let JSON.parse decide */) return false;
  let p = attackEnd + 1;
  if (!hasAt(b, p, e, K_SEQ) || intAt(b, p + 7, e) < 0) return false;
  p = intEnd;
  if (!hasAt(b, p, e, K_CODE)) return false;
  out.code = intAt(b, p + 8, e);
  if (out.code < 0) return false;
  p = intEnd;
  if (!hasAt(b, p, e, K_TIMESTAMP)) return false;
  let tsEnd = p + 14;
  while (tsEnd < e && b[tsEnd] !== 34) tsEnd++;
  if (tsEnd >= e) return false;
  out.tsFrom = p + 14;
  out.tsTo = tsEnd;
  p = tsEnd + 1;
  if (!hasAt(b, p, e, K_LATENCY)) return false;
  out.latency = intAt(b, p + 11, e);
  if (out.latency < 0) return false;
  p = intEnd;
  if (!hasAt(b, p, e, K_BYTES_OUT)) return false;
  out.bytesOut = intAt(b, p + 13, e);
  if (out.bytesOut < 0) return false;
  p = intEnd;
  if (!hasAt(b, p, e, K_BYTES_IN)) return false;
  out.bytesIn = intAt(b, p + 12, e);
  if (out.bytesIn < 0) return false;
  p = intEnd;
  if (!hasAt(b, p, e, K_ERROR) || p + 10 >= e) return false;
  out.hasError = b[p + 10] !== 34;
  return b[e - 1] === 125; // a cut line must not pass as a good one
}

function badLine(lineNo: number, what: string): IngestError {
  return new IngestError('malformed', `not a vegeta JSON result: ${what}`, lineNo);
}

async function parseVegetaJson(src: ByteSource): Promise<LoadTestRun> {
  const acc = new VegetaResults();
  const row: FastRow = { code: 0, tsFrom: 0, tsTo: 0, latency: 0, bytesOut: 0, bytesIn: 0, hasError: false };
  let slow = 0;
  let contextSet = false;
  for await (const batch of lineSpans(src)) {
    const buf = batch.buf;
    for (let k = 0; k < batch.count; k++) {
      const s = batch.start[k]!;
      const e = batch.end[k]!;
      const lineNo = batch.firstLine + k;
      if (e === s || (buf[s] !== 123 && buf.toString('utf8', s, e).trim() === '')) continue;
      if (fastVegetaJson(buf, s, e, row)) {
        if (!contextSet) {
          const o = parseJson(buf.toString('utf8', s, e), `line ${lineNo}`);
          if (isObj(o))
            acc.setContext(typeof o.attack === 'string' ? o.attack : null, typeof o.url === 'string' ? o.url : null);
          contextSet = true;
        }
        if (!parseRfc3339Bytes(buf, row.tsFrom, row.tsTo))
          throw badLine(lineNo, `bad timestamp "${buf.toString('utf8', row.tsFrom, row.tsTo)}"`);
        acc.add(rfc3339.sec, rfc3339.ns, row.code, row.latency, row.bytesOut, row.bytesIn, row.hasError);
        continue;
      }
      slow++;
      let o: unknown;
      try {
        o = JSON.parse(buf.toString('utf8', s, e));
      } catch {
        throw badLine(lineNo, 'invalid JSON');
      }
      if (!isObj(o)) throw badLine(lineNo, 'not an object');
      const code = num(o.code);
      const latency = num(o.latency);
      if (code === null || latency === null || typeof o.timestamp !== 'string') {
        throw badLine(lineNo, 'missing code, timestamp or latency');
      }
      const errText = typeof o.error === 'string' ? o.error : false;
      acc.setContext(typeof o.attack === 'string' ? o.attack : null, typeof o.url === 'string' ? o.url : null);
      const t = parseRfc3339(o.timestamp);
      if (!t) throw badLine(lineNo, `bad timestamp "${o.timestamp}"`);
      acc.add(t[0], t[1], code, latency, num(o.bytes_out) ?? 0, num(o.bytes_in) ?? 0, errText);
    }
  }
  return acc.finish('vegeta-json', `read ${acc.n} JSON results (${slow} through the generic JSON path)`);
}

// ---------------------------------------------------------------------------------------------
// CSV

/** A number field of a vegeta CSV row: read from the bytes when plain, else as Number(text). */
function csvNumber(row: CsvRow, i: number): number {
  const v = row.decimal(i);
  return Number.isNaN(v) ? Number(row.text(i)) : v;
}

async function parseVegetaCsv(src: ByteSource): Promise<LoadTestRun> {
  const acc = new VegetaResults();
  let contextSet = false;
  await forEachCsvRow(src, (row) => {
    if (!row.has(5))
      throw new IngestError(
        'malformed',
        `not a vegeta CSV result: expected at least 6 fields, got ${row.count}`,
        row.line,
      );
    // timestamp: Unix nanoseconds, split into seconds and nanoseconds (the whole exceeds 2^53)
    let sec: number;
    let nanos: number;
    const tsLen = row.fields === null && row.has(0) ? row.end[0]! - row.start[0]! : -1;
    if (tsLen >= 10 && tsLen <= 19 && row.isDigits(0)) {
      // all digits: the leading digits are the seconds, the last nine the nanoseconds
      const b = row.buf;
      const s0 = row.start[0]!;
      const cut = s0 + tsLen - 9;
      sec = 0;
      for (let i = s0; i < cut; i++) sec = sec * 10 + (b[i]! - 48);
      nanos = 0;
      for (let i = cut; i < cut + 9; i++) nanos = nanos * 10 + (b[i]! - 48);
    } else {
      const ts = row.text(0)!;
      if (!/^-?\d{1,19}$/.test(ts))
        throw new IngestError('malformed', `not a vegeta CSV result: bad timestamp "${ts}"`, row.line);
      sec = ts.length > 9 ? Number(ts.slice(0, ts.length - 9)) : 0;
      nanos = Number(ts.length > 9 ? ts.slice(ts.length - 9) : ts);
    }
    const code = csvNumber(row, 1);
    const latency = csvNumber(row, 2);
    const bytesOut = csvNumber(row, 3);
    const bytesIn = csvNumber(row, 4);
    if (
      !Number.isInteger(code) ||
      !Number.isFinite(latency) ||
      !Number.isFinite(bytesOut) ||
      !Number.isFinite(bytesIn)
    ) {
      throw new IngestError(
        'malformed',
        'not a vegeta CSV result: code, latency and byte counts must be numbers',
        row.line,
      );
    }
    if (!contextSet) {
      acc.setContext(row.text(7) ?? null, row.text(10) ?? null);
      contextSet = true;
    }
    // the error text is only kept for the first distinct messages: decode it only while wanted
    const error = row.isEmpty(5) ? '' : acc.wantsErrorText() ? row.text(5)! : true;
    acc.add(sec, nanos, code, latency, bytesOut, bytesIn, error);
  });
  return acc.finish('vegeta-csv', `read ${acc.n} CSV results`);
}

// ---------------------------------------------------------------------------------------------
// Reports

function statusSplit(codes: Record<string, number>): { transport: number; non2xx: number } {
  let transport = 0;
  let non2xx = 0;
  for (const [c, k] of Object.entries(codes)) {
    const code = Number(c);
    if (code === 0) transport += k;
    else if (isFailedStatus(code)) non2xx += k;
  }
  return { transport, non2xx };
}

const REPORT_NOTES = [
  'figures as vegeta printed them (converted to ms)',
  "rps = vegeta's rate (requests / attack duration); durationSeconds = attack duration; throughput and total duration are in meta",
  'latencies cover every result, transport errors included; p50..p99 are t-digest estimates as vegeta prints them',
  "errors = status 0 (transport errors) + statuses outside 200–399 (vegeta's own success rule)",
];

function parseTextReport(text: string): LoadTestRun {
  refuseSeveralRuns(text, /^Requests\s+\[total/, 'vegeta report');
  const rows = new Map<string, string[]>();
  let errorSet: string[] = [];
  const all = text.split(/\r?\n/);
  for (let i = 0; i < all.length; i++) {
    const line = all[i]!;
    if (/^Error Set:/.test(line)) {
      errorSet = all.slice(i + 1).filter((l) => l.trim() !== '');
      break;
    }
    const m = /^([A-Za-z][A-Za-z ]*?)\s+\[([^\]]*)\]\s*(.*)$/.exec(line);
    if (!m) continue;
    const names = m[2]!.split(',').map((s) => s.trim());
    const key = m[1]!.trim();
    if (key === 'Status Codes') {
      rows.set(key, m[3]!.trim().split(/\s+/).filter(Boolean));
      continue;
    }
    const values = m[3]!.split(',').map((s) => s.trim());
    if (values.length !== names.length) {
      throw new IngestError(
        'malformed',
        `vegeta report line "${key}" has ${values.length} values for ${names.length} names`,
        i + 1,
      );
    }
    names.forEach((n, j) => {
      rows.set(`${key}.${n}`, [values[j]!]);
    });
  }
  const get = (k: string): string | undefined => rows.get(k)?.[0];
  const requests = num(get('Requests.total'));
  if (requests === null) throw new IngestError('malformed', 'vegeta report without a Requests line');
  if (requests === 0) throw new IngestError('no-run', 'vegeta report of zero requests');
  const dur = (k: string): number | null => {
    const v = get(k);
    if (v === undefined) return null;
    const ms = parseGoDurationMs(v);
    if (ms === null) throw new IngestError('malformed', `vegeta report: bad duration "${v}" for ${k}`);
    return ms;
  };
  const codes: Record<string, number> = {};
  for (const tok of rows.get('Status Codes') ?? []) {
    const m = /^(\d+):(\d+)$/.exec(tok);
    if (m) codes[m[1]!] = Number(m[2]);
  }
  const hasCodes = Object.keys(codes).length > 0;
  const split = statusSplit(codes);
  const attackMs = dur('Duration.attack');
  const latency: LatencyMs = {
    ...emptyLatency(),
    min: dur('Latencies.min'),
    mean: dur('Latencies.mean'),
    p50: dur('Latencies.50'),
    p90: dur('Latencies.90'),
    p95: dur('Latencies.95'),
    p99: dur('Latencies.99'),
    max: dur('Latencies.max'),
  };
  const bytesIn = num(get('Bytes In.total'));
  const meta: LoadTestMeta = {
    tool: 'vegeta',
    source: 'printed',
    notes: [...REPORT_NOTES, 'vegeta rounds printed durations to the next finer unit (e.g. 1.001s)'],
    throughput: num(get('Requests.throughput')),
    totalDurationSeconds: (dur('Duration.total') ?? NaN) / 1000 || null,
    waitSeconds: (dur('Duration.wait') ?? NaN) / 1000 || null,
    success: num((get('Success.ratio') ?? '').replace('%', '')),
    statusCodes: codes,
    errorSet,
    bytesIn: bytesIn === null ? null : { total: bytesIn, mean: num(get('Bytes In.mean')) },
  };
  const s = summary({
    requests,
    durationSeconds: attackMs === null ? null : attackMs / 1000,
    rps: num(get('Requests.rate')),
    transportErrors: hasCodes ? split.transport : null,
    non2xx: hasCodes ? split.non2xx : null,
    latencyMs: latency,
    meta,
  });
  return run('vegeta-report', s);
}

function parseJsonReport(text: string): LoadTestRun {
  const o = parseJson(text, 'vegeta JSON report');
  if (!isObj(o) || !isObj(o.latencies)) throw new IngestError('not-a-profile', 'not a vegeta JSON report');
  const requests = num(o.requests);
  if (requests === null) throw new IngestError('malformed', 'vegeta JSON report without "requests"');
  if (requests === 0) throw new IngestError('no-run', 'vegeta JSON report of zero requests');
  const l = o.latencies;
  const ns = (v: unknown): number | null => {
    const n = num(v);
    return n === null ? null : n / 1e6;
  };
  const codes: Record<string, number> = {};
  if (isObj(o.status_codes))
    for (const [c, k] of Object.entries(o.status_codes)) if (typeof k === 'number') codes[c] = k;
  const hasCodes = Object.keys(codes).length > 0;
  const split = statusSplit(codes);
  const durNs = num(o.duration);
  const waitNs = num(o.wait);
  const meta: LoadTestMeta = {
    tool: 'vegeta',
    source: 'printed',
    notes: REPORT_NOTES,
    throughput: num(o.throughput),
    totalDurationSeconds: durNs !== null && waitNs !== null ? (durNs + waitNs) / 1e9 : null,
    waitSeconds: waitNs === null ? null : waitNs / 1e9,
    success: num(o.success),
    statusCodes: codes,
    errorSet: Array.isArray(o.errors) ? o.errors.filter((e): e is string => typeof e === 'string') : [],
    bytesIn: o.bytes_in ?? null,
    bytesOut: o.bytes_out ?? null,
    earliest: typeof o.earliest === 'string' ? o.earliest : null,
  };
  const s = summary({
    requests,
    durationSeconds: durNs === null ? null : durNs / 1e9,
    rps: num(o.rate),
    transportErrors: hasCodes ? split.transport : null,
    non2xx: hasCodes ? split.non2xx : null,
    latencyMs: {
      ...emptyLatency(),
      min: ns(l.min),
      mean: ns(l.mean),
      p50: ns(l['50th']),
      p90: ns(l['90th']),
      p95: ns(l['95th']),
      p99: ns(l['99th']),
      max: ns(l.max),
    },
    meta,
  });
  // The JSON and the text report carry the same figures under one format name; meta.output tells them apart.
  s.meta.output = 'report-json';
  return run('vegeta-report', s);
}

function parseHist(text: string): LoadTestRun {
  const buckets: { from: string; to: string; count: number }[] = [];
  const all = text.split(/\r?\n/);
  for (let i = 1; i < all.length; i++) {
    const line = all[i]!;
    if (line.trim() === '') continue;
    const m = /^\[([^,\]]+),\s*([^\]]+)\]\s+(\d+)\s+([\d.]+)%/.exec(line);
    if (!m) throw new IngestError('malformed', 'not a vegeta histogram row', i + 1);
    buckets.push({ from: m[1]!.trim(), to: m[2]!.trim(), count: Number(m[3]) });
  }
  const requests = buckets.reduce((a, b) => a + b.count, 0);
  if (buckets.length === 0 || requests === 0) throw new IngestError('no-run', 'vegeta histogram with no requests');
  const s = summary({
    requests,
    meta: {
      tool: 'vegeta',
      source: 'printed',
      histogram: buckets,
      notes: [
        'vegeta report -type=hist: bucket counts only; requests = sum of the counts. No latency figure can be read exactly from buckets, and no rate, duration or error split is printed.',
      ],
    },
  });
  return run('vegeta-hist', s);
}

function parseHdrPlot(text: string): LoadTestRun {
  const pts: { q: number; ms: number; count: number }[] = [];
  const all = text.split(/\r?\n/);
  for (let i = 1; i < all.length; i++) {
    const line = all[i]!.trim();
    if (line === '') continue;
    const f = line.split(/\s+/);
    const ms = Number(f[0]);
    const q = Number(f[1]);
    const count = Number(f[2]);
    if (f.length < 3 || !Number.isFinite(ms) || !Number.isFinite(q) || !Number.isFinite(count)) {
      throw new IngestError('malformed', 'not a vegeta hdrplot row', i + 1);
    }
    pts.push({ q, ms, count });
  }
  if (pts.length === 0) throw new IngestError('no-run', 'vegeta hdrplot without rows');
  const at = (q: number): number | null => pts.find((p) => Math.abs(p.q - q) < 1e-9)?.ms ?? null;
  const last = pts[pts.length - 1]!;
  if (last.count === 0) throw new IngestError('no-run', 'vegeta hdrplot of zero requests');
  const s = summary({
    requests: Math.abs(last.q - 1) < 1e-9 ? last.count : null,
    latencyMs: { ...emptyLatency(), min: at(0), p50: at(0.5), p75: at(0.75), p90: at(0.9), p95: at(0.95), max: at(1) },
    meta: {
      tool: 'vegeta',
      source: 'printed',
      variant: 'hdrplot',
      notes: [
        'vegeta report -type=hdrplot: t-digest quantiles of the run at fixed percentiles, as printed',
        'min/max = the rows at 0 and 1; p50/p75/p90/p95 = the rows at exactly those percentiles; there is no row at exactly 0.99 or 0.999, so p99 and p99.9 are left null; no mean, rate or errors are printed',
      ],
    },
  });
  return run(
    'vegeta-report',
    s,
    null,
    pts.map((p) => ({ percentile: Math.round(p.q * 100 * 1e6) / 1e6, ms: p.ms })),
  );
}

// ---------------------------------------------------------------------------------------------
// Importers

const RE_CSV_ROW = /^\d{16,19},\d{1,3},\d+,\d+,\d+,/;

function firstLine(text: string): string {
  const nl = text.indexOf('\n');
  return (nl < 0 ? text : text.slice(0, nl)).replace(/\r$/, '').replace(/^\uFEFF/, '');
}

export const vegetaJsonImporter: LoadTestImporter = {
  formats: ['vegeta-json'],
  detect(head) {
    const l = firstLine(headText(head));
    if (l.startsWith('{"attack":"') && l.includes('"latency":')) return 0.95;
    if (
      l.startsWith('{') &&
      /"code":\d/.test(l) &&
      /"timestamp":"/.test(l) &&
      /"latency":\d/.test(l) &&
      l.includes('"bytes_in"')
    )
      return 0.8;
    return 0;
  },
  parse: (src) => parseVegetaJson(src),
};

export const vegetaCsvImporter: LoadTestImporter = {
  formats: ['vegeta-csv'],
  detect(head) {
    return RE_CSV_ROW.test(firstLine(headText(head))) ? 0.9 : 0;
  },
  parse: (src) => parseVegetaCsv(src),
};

function isGob(head: Buffer): boolean {
  const s = head.subarray(0, 400).toString('latin1');
  return (
    s.includes('Result') &&
    s.includes('Attack') &&
    s.includes('Timestamp') &&
    s.includes('Latency') &&
    s.includes('BytesIn')
  );
}

function reportKind(head: Buffer): 'text' | 'json' | 'hist' | 'hdrplot' | 'plot' | 'gob' | null {
  const t = headText(head).replace(/^\uFEFF/, '');
  // vegeta 12+ prints [total, rate, throughput]; v11 and before [total, rate]
  if (/^Requests\s+\[total, rate(?:, throughput)?\]/m.test(t)) return 'text';
  if (/^\s*\{\s*"latencies"\s*:\s*\{/.test(t) && t.includes('"status_codes"')) return 'json';
  if (/^Bucket\s+#\s+%\s+Histogram/.test(t)) return 'hist';
  if (/^Value\(ms\)\s+Percentile\s+TotalCount/.test(t)) return 'hdrplot';
  if (/^\s*<!doctype html/i.test(t) && t.includes('dygraph')) return 'plot';
  if (isGob(head)) return 'gob';
  return null;
}

export const vegetaReportImporter: LoadTestImporter = {
  formats: ['vegeta-report', 'vegeta-hist'],
  runStart: /^Requests\s+\[total/,
  detect(head) {
    const k = reportKind(head);
    if (k === 'plot') return 0.6;
    return k === null ? 0 : 0.95;
  },
  async parse(src) {
    const text = await readNonBlankText(src);
    const head = Buffer.from(text.slice(0, 65536), 'utf8');
    switch (reportKind(head)) {
      case 'text':
        return parseTextReport(text);
      case 'json':
        return parseJsonReport(text);
      case 'hist':
        return parseHist(text);
      case 'hdrplot':
        return parseHdrPlot(text);
      case 'plot':
        throw new IngestError(
          'unsupported',
          'vegeta plot HTML is not supported: upload the results (vegeta encode -to=json) or the report instead',
        );
      case 'gob':
        throw new IngestError(
          'unsupported',
          "vegeta's binary results (gob) are not supported: convert them with `vegeta encode -to=json`",
        );
      default:
        throw new IngestError('not-a-profile', 'not a vegeta report');
    }
  },
};

export const vegetaImporters: LoadTestImporter[] = [vegetaJsonImporter, vegetaCsvImporter, vegetaReportImporter];
