/**
 * k6 (grafana/k6 v1): `--out json` metric points, `--out csv` rows, and the end-of-test summary
 * JSON (`--summary-export` legacy schema, `handleSummary` data, `--new-machine-readable-summary`).
 *
 * Definitions follow k6's own end-of-test summary:
 * - requests = sum of `http_reqs` (every request, failed ones included);
 * - latency = `http_req_duration` over ALL requests (k6's headline metric), percentiles with k6's
 *   TrendSink rule (linear interpolation at p/100 * (n - 1)); avg -> mean, med -> p50;
 * - transportErrors = requests whose `status` tag is 0 (no response); non2xx = other non-2xx
 *   statuses; k6's own `http_req_failed` count is kept in meta (k6 counts 3xx as expected);
 * - rps = requests / test-run duration. Raw points carry no run duration, so it is estimated from
 *   the first iteration's start to the last iteration's end (`iteration_duration` points).
 */
import type { LatencyMs, LoadTestMeta, LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { lineSpans, type ByteSource } from '../source.ts';
import { FieldText, forEachCsvRow } from './common/csv.ts';
import { curve, k6Rule, latencyFromSorted, meanOf } from './common/percentiles.ts';
import { GrowableF64, GrowableU8, NON2XX, OK, TRANSPORT } from './common/rows.ts';
import { run, summary } from './common/summary.ts';
import { headText, isObj, parseJson, readNonBlankText, SpanText } from './common/text.ts';
import { parseRfc3339, parseRfc3339Bytes, rfc3339 } from './common/time.ts';
import { secondsOf, timelineAndSorted } from './common/timeline.ts';
import { num } from './common/units.ts';
import type { LoadTestImporter } from './types.ts';
import { k6ConsoleImporter, k6Summary, k6TrendLatency } from './k6-stdout.ts';
import { headUtf8 } from '../head-text.ts';

const K6_NOTES = [
  'latency = http_req_duration over all requests (k6 headline metric); percentiles with k6 TrendSink rule (linear interpolation at p*(n-1)), as k6 prints them',
  "transportErrors = requests with status tag 0, non2xx = other non-2xx statuses; k6's own http_req_failed count is meta.k6Failed",
];

/** Per-request points gathered from either the JSON or the CSV output. */
class K6Points {
  private baseSec = NaN;
  // http_req_duration points: time (ns since baseSec), value (ms), outcome
  private durT = new GrowableF64();
  private durV = new GrowableF64();
  private durO = new GrowableU8();
  requests = 0;
  transport = 0;
  non2xx = 0;
  private statusKnown = false;
  failed = 0;
  private failedSeen = false;
  private firstReqT = Infinity;
  private lastReqT = -Infinity;
  private iterStart = Infinity;
  private iterEnd = -Infinity;
  private url: string | null = null;
  private scenarios = new Set<string>();
  private dataReceived = 0;
  private dataSeen = false;

  /** True once a target URL is known (later ones are ignored, so callers need not decode them). */
  hasUrl(): boolean {
    return this.url !== null;
  }

  rel(sec: number, ns: number): number {
    if (Number.isNaN(this.baseSec)) this.baseSec = sec;
    return (sec - this.baseSec) * 1e9 + ns;
  }

  private outcomeOf(status: string | undefined): number {
    if (status === undefined || status === '') return OK;
    this.statusKnown = true;
    const code = Number(status);
    if (code === 0) return TRANSPORT;
    if (!(code >= 200 && code <= 299)) return NON2XX;
    return OK;
  }

  httpReqs(t: number, value: number, status: string | undefined, url: string | undefined): void {
    this.requests += value;
    const o = this.outcomeOf(status);
    if (o === TRANSPORT) this.transport += value;
    else if (o === NON2XX) this.non2xx += value;
    if (t < this.firstReqT) this.firstReqT = t;
    if (t > this.lastReqT) this.lastReqT = t;
    if (this.url === null && url) this.url = url;
  }

  duration(t: number, ms: number, status: string | undefined): void {
    this.durT.push(t);
    this.durV.push(ms);
    this.durO.push(this.outcomeOf(status));
  }

  failedPoint(value: number): void {
    this.failedSeen = true;
    if (value !== 0) this.failed++;
  }

  iteration(t: number, ms: number): void {
    const start = t - ms * 1e6;
    if (start < this.iterStart) this.iterStart = start;
    if (t > this.iterEnd) this.iterEnd = t;
  }

  data(bytes: number): void {
    this.dataSeen = true;
    this.dataReceived += bytes;
  }

  scenario(s: string | undefined): void {
    if (s && this.scenarios.size < 20) this.scenarios.add(s);
  }

  /**
   * One point of wanted metric `metric` (its index in WANTED_LIST) at time t. `url` matters only
   * for http_reqs while no URL is known; callers skip decoding it otherwise.
   */
  point(metric: number, t: number, value: number, status: string | undefined, url: string | undefined): void {
    switch (metric) {
      case 0:
        this.httpReqs(t, value, status, url);
        break;
      case 1:
        this.duration(t, value, status);
        break;
      case 2:
        this.failedPoint(value);
        break;
      case 3:
        this.iteration(t, value);
        break;
      case 4:
        this.data(value);
        break;
    }
  }

  finish(format: 'k6-json' | 'k6-csv', resolutionNote: string, coarseClock = false): LoadTestRun {
    if (this.requests === 0 && this.durV.length === 0)
      throw new IngestError('no-run', 'no http_reqs or http_req_duration points: no HTTP request in this k6 output');
    const requests = this.requests > 0 ? this.requests : this.durV.length;
    const notes = [...K6_NOTES];
    // run duration: first iteration start .. last iteration end (k6 divides by the test-run duration)
    let spanNs: number;
    // with whole-second stamps, subtracting sub-second iteration durations only adds error
    if (!coarseClock && Number.isFinite(this.iterStart) && this.iterEnd > this.iterStart) {
      spanNs = this.iterEnd - this.iterStart;
      notes.push(
        'durationSeconds = first iteration start to last iteration end (iteration_duration points), an estimate of the test-run duration k6 divides http_reqs by',
      );
    } else {
      spanNs = this.lastReqT - this.firstReqT;
      notes.push('durationSeconds = span of http_reqs timestamps (no iteration_duration points)');
    }
    notes.push(resolutionNote);
    const secs = spanNs > 0 ? spanNs / 1e9 : null;
    const values = Float64Array.from(this.durV.view()).sort();
    const outcomes = this.durO.view();
    let anyResponse = false;
    for (let i = 0; i < outcomes.length; i++) if (outcomes[i] !== TRANSPORT) anyResponse = true;
    let latency: LatencyMs = emptyLatency();
    let distribution: PercentilePoint[] | null = null;
    if (anyResponse || !this.statusKnown) {
      latency = latencyFromSorted(values, k6Rule, meanOf(values));
      distribution = curve(values, k6Rule);
    } else {
      notes.push(
        'no request got a response: k6 records http_req_duration 0 for them, which is not a latency, so latency is left null',
      );
    }
    // timeline: buckets on the run's clock, t = 0 at the first iteration start (or first point)
    const t0 = Number.isFinite(this.iterStart) ? Math.min(this.iterStart, this.minDurT()) : this.minDurT();
    const dt = this.durT.view();
    const startSec = new Float64Array(dt.length);
    for (let i = 0; i < dt.length; i++) startSec[i] = (dt[i]! - t0) / 1e9;
    const tl = timelineAndSorted({
      second: secondsOf(startSec),
      latencyMs: this.durV.view(),
      error: outcomes,
      rule: k6Rule,
      bucketMean: 'ascending',
    });
    const timeline = tl.timeline.length > 0 ? tl.timeline : null;
    notes.push('timeline buckets by each http_req_duration point time (k6 stamps a request when it completes)');
    const meta: LoadTestMeta = {
      tool: 'k6',
      targetUrl: this.url,
      source: 'computed',
      ...(Number.isFinite(t0) ? { startedAt: t0 / 1e6 } : {}),
      notes,
      k6Failed: this.failedSeen ? this.failed : null,
      scenarios: [...this.scenarios],
      dataReceivedBytes: this.dataSeen ? this.dataReceived : null,
    };
    const s = summary({
      requests,
      durationSeconds: secs,
      rps: secs ? requests / secs : null,
      transportErrors: this.statusKnown ? this.transport : null,
      non2xx: this.statusKnown ? this.non2xx : null,
      errors: this.statusKnown ? undefined : this.failedSeen ? this.failed : null,
      latencyMs: latency,
      bytesPerSecond: this.dataSeen && secs ? this.dataReceived / secs : null,
      meta,
    });
    return run(format, s, timeline, distribution);
  }

  private minDurT(): number {
    const v = this.durT.view();
    let m = Infinity;
    for (let i = 0; i < v.length; i++) if (v[i]! < m) m = v[i]!;
    return Number.isFinite(m) ? m : 0;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON points

/** The metrics we read; a point's index in this list is what `K6Points.point` dispatches on. */
const WANTED_LIST = [
  'http_reqs',
  'http_req_duration',
  'http_req_failed',
  'iteration_duration',
  'data_received',
] as const;
type WantedMetric = (typeof WANTED_LIST)[number];

const lit = (t: string): Uint8Array => Buffer.from(t, 'latin1');
const K_METRIC = lit('{"metric":"');
const K_POINT = lit('","type":"Point","data":{"time":"');
const K_VALUE = lit('","value":');
const K_TAGS = lit(',"tags":{');
const K_STATUS = lit('status');
const K_SCENARIO = lit('scenario');
const K_URL = lit('url');

function hasAt(b: Uint8Array, p: number, end: number, k: Uint8Array): boolean {
  const n = k.length;
  if (p + n > end) return false;
  for (let i = 0; i < n; i++) if (b[p + i] !== k[i]) return false;
  return true;
}

function sameAs(b: Uint8Array, s: number, e: number, k: Uint8Array): boolean {
  return e - s === k.length && hasAt(b, s, e, k);
}

/** End of a JSON string body starting at p: the closing quote, or -1 for an escape, a control byte or no end. */
function stringEnd(b: Uint8Array, p: number, e: number): number {
  for (; p < e; p++) {
    const c = b[p]!;
    if (c === 34) return p;
    if (c === 92 || c < 32) return -1;
  }
  return -1;
}

/** What the fast path read from one point line (spans are -1 when a tag is absent). */
const pt = {
  tsFrom: 0,
  tsTo: 0,
  value: 0,
  statusFrom: -1,
  statusTo: -1,
  scenarioFrom: -1,
  scenarioTo: -1,
  urlFrom: -1,
  urlTo: -1,
};

/**
 * Reads a point line of a wanted metric in place, for the exact shape k6's JSON output writes:
 * {"metric":"NAME","type":"Point","data":{"time":"…","value":N,"tags":{"k":"v",…}}}
 * with string tags (Go sorts the keys; order does not matter here). A JSON.parse of each of these
 * lines — about a third of a k6 file — would alone cost most of a million-row budget. The path only
 * accepts what it can read exactly as JSON.parse would: strings without escapes or control
 * characters, a plain decimal value of at most 15 digits, nothing after the closing braces.
 * Anything else returns false and the line goes through JSON.parse as before.
 * `nameEnd` is the position of the quote closing the metric name.
 */
function fastK6Point(b: Uint8Array, nameEnd: number, e: number): boolean {
  let p = nameEnd;
  if (!hasAt(b, p, e, K_POINT)) return false;
  p += K_POINT.length;
  const tsTo = stringEnd(b, p, e);
  if (tsTo < 0) return false;
  pt.tsFrom = p;
  pt.tsTo = tsTo;
  p = tsTo;
  if (!hasAt(b, p, e, K_VALUE)) return false;
  p += K_VALUE.length;
  // plain JSON decimal: no sign, no exponent, no leading zero before another digit
  let m = 0;
  let digits = 0;
  let scale = 1;
  if (b[p] === 48 && b[p + 1]! >= 48 && b[p + 1]! <= 57) return false;
  while (p < e && b[p]! >= 48 && b[p]! <= 57) {
    m = m * 10 + (b[p]! - 48);
    digits++;
    p++;
  }
  if (digits === 0) return false;
  if (b[p] === 46) {
    p++;
    const fracStart = p;
    while (p < e && b[p]! >= 48 && b[p]! <= 57) {
      m = m * 10 + (b[p]! - 48);
      scale *= 10;
      digits++;
      p++;
    }
    if (p === fracStart) return false;
  }
  if (digits > 15) return false;
  pt.value = scale === 1 ? m : m / scale;
  if (!hasAt(b, p, e, K_TAGS)) return false;
  p += K_TAGS.length;
  pt.statusFrom = pt.scenarioFrom = pt.urlFrom = -1;
  if (b[p] === 125) p++;
  else {
    for (;;) {
      if (b[p] !== 34) return false;
      const kFrom = p + 1;
      const kTo = stringEnd(b, kFrom, e);
      if (kTo < 0 || b[kTo + 1] !== 58 || b[kTo + 2] !== 34) return false;
      const vFrom = kTo + 3;
      const vTo = stringEnd(b, vFrom, e);
      if (vTo < 0) return false;
      if (sameAs(b, kFrom, kTo, K_STATUS)) {
        pt.statusFrom = vFrom;
        pt.statusTo = vTo;
      } else if (sameAs(b, kFrom, kTo, K_SCENARIO)) {
        pt.scenarioFrom = vFrom;
        pt.scenarioTo = vTo;
      } else if (sameAs(b, kFrom, kTo, K_URL)) {
        pt.urlFrom = vFrom;
        pt.urlTo = vTo;
      }
      p = vTo + 1;
      if (b[p] === 44) {
        p++;
        continue;
      }
      if (b[p] === 125) {
        p++;
        break;
      }
      return false;
    }
  }
  return p + 2 === e && b[p] === 125 && b[p + 1] === 125;
}

/**
 * k6 JSON lines, read as bytes (`lineSpans`): points of metrics we do not use are recognised by
 * their name bytes and skipped, points we use are read in place (`fastK6Point`), and only other
 * lines (metric definitions, unusual shapes) are decoded and given to JSON.parse.
 */
async function parseK6Json(src: ByteSource): Promise<LoadTestRun> {
  const acc = new K6Points();
  let sawK6 = false;
  const statusText = new SpanText();
  const scenarioText = new SpanText();
  const urlText = new SpanText();
  for await (const batch of lineSpans(src)) {
    const buf = batch.buf;
    for (let k = 0; k < batch.count; k++) {
      const ls = batch.start[k]!;
      const le = batch.end[k]!;
      const lineNo = batch.firstLine + k;
      if (le === ls) continue;
      // k6 writes {"metric":"NAME","type":"Point",...}; points of metrics we do not use are skipped
      // without a full JSON.parse (they are most of a big file), but must still look like JSON objects
      if (hasAt(buf, ls, le, K_METRIC)) {
        let end = ls + 11;
        while (end < le && buf[end] !== 34) end++;
        // no closing quote: the name runs to the last byte but one (as String.slice(11, -1) did)
        const nameEnd = end < le ? end : le - 1;
        const metric = nameEnd > ls + 11 ? wantedAt(buf, ls + 11, nameEnd) : -1;
        if (metric < 0) {
          if (buf[le - 1] !== 125) throw new IngestError('malformed', 'cut or broken k6 JSON line', lineNo);
          sawK6 = true;
          continue;
        }
        if (end < le && fastK6Point(buf, end, le)) {
          sawK6 = true;
          if (!parseRfc3339Bytes(buf, pt.tsFrom, pt.tsTo))
            throw new IngestError('malformed', 'k6 Point with a bad time or value', lineNo);
          const t = acc.rel(rfc3339.sec, rfc3339.ns);
          const status = pt.statusFrom < 0 ? undefined : statusText.get(buf, pt.statusFrom, pt.statusTo);
          acc.scenario(pt.scenarioFrom < 0 ? undefined : scenarioText.get(buf, pt.scenarioFrom, pt.scenarioTo));
          const url =
            metric !== 0 || pt.urlFrom < 0 || acc.hasUrl() ? undefined : urlText.get(buf, pt.urlFrom, pt.urlTo);
          acc.point(metric, t, pt.value, status, url);
          continue;
        }
      }
      const line = buf.toString('utf8', ls, le);
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        throw new IngestError('malformed', 'not a k6 JSON output line (invalid JSON)', lineNo);
      }
      if (!isObj(o) || typeof o.type !== 'string')
        throw new IngestError('malformed', 'not a k6 JSON output line', lineNo);
      sawK6 = true;
      if (o.type !== 'Point') continue;
      const metric = o.metric;
      const data = o.data;
      if (typeof metric !== 'string' || !isObj(data) || typeof data.time !== 'string') {
        throw new IngestError('malformed', 'k6 Point without metric, time or data', lineNo);
      }
      if (!WANTED_LIST.includes(metric as WantedMetric)) continue;
      const value = num(data.value);
      const ts = parseRfc3339(data.time);
      if (value === null || !ts) throw new IngestError('malformed', 'k6 Point with a bad time or value', lineNo);
      const t = acc.rel(ts[0], ts[1]);
      const tags = isObj(data.tags) ? data.tags : {};
      const status = typeof tags.status === 'string' ? tags.status : undefined;
      acc.scenario(typeof tags.scenario === 'string' ? tags.scenario : undefined);
      acc.point(
        WANTED_LIST.indexOf(metric as WantedMetric),
        t,
        value,
        status,
        typeof tags.url === 'string' ? tags.url : undefined,
      );
    }
  }
  if (!sawK6) throw new IngestError('empty', 'the file is empty');
  return acc.finish('k6-json', 'point times have nanosecond resolution');
}

// ---------------------------------------------------------------------------------------------
// CSV

/** k6 CSV timestamps: Unix seconds (default), milli/micro seconds, or RFC 3339. */
function csvTime(v: string): [number, number] | null {
  if (/^\d+$/.test(v)) {
    const n = v.length;
    if (n <= 11) return [Number(v), 0];
    if (n <= 14) return [Number(v.slice(0, n - 3)), Number(v.slice(n - 3)) * 1e6];
    if (n <= 17) return [Number(v.slice(0, n - 6)), Number(v.slice(n - 6)) * 1e3];
    return [Number(v.slice(0, n - 9)), Number(v.slice(n - 9))];
  }
  if (/^\d+\.\d+$/.test(v)) {
    const [a, b] = v.split('.');
    return [Number(a), Number(`${b!}000000000`.slice(0, 9))];
  }
  return parseRfc3339(v);
}

/** The wanted metric names as bytes, for `wantedAt`. */
const WANTED_BYTES = WANTED_LIST.map((n) => Buffer.from(n, 'latin1'));

/** Which wanted metric b[s, e) names, or -1 (a byte comparison: most rows are other metrics). */
function wantedAt(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  for (let w = 0; w < WANTED_BYTES.length; w++) {
    const k = WANTED_BYTES[w]!;
    if (k.length !== n) continue;
    let j = 0;
    while (j < n && b[s + j] === k[j]) j++;
    if (j === n) return w;
  }
  return -1;
}

/**
 * k6 CSV rows through `forEachCsvRow`: the metric name is compared as bytes and rows of metrics
 * we do not use (most of the file) are dropped without splitting them further; whole-second
 * timestamps and plain values are read in place; tag fields are decoded only when they change.
 */
async function parseK6Csv(src: ByteSource): Promise<LoadTestRun> {
  const acc = new K6Points();
  let cols: Map<string, number> | null = null;
  let wholeSeconds = true;
  let cMetric = 0;
  let cTs = 0;
  let cValue = 0;
  let cStatus = -1;
  let cScenario = -1;
  let cUrl = -1;
  const statusText = new FieldText();
  const scenarioText = new FieldText();
  const urlText = new FieldText();
  await forEachCsvRow(src, (row) => {
    if (!cols) {
      const f = row.all();
      cols = new Map(f.map((name, i) => [name.trim(), i]));
      for (const need of ['metric_name', 'timestamp', 'metric_value']) {
        if (!cols.has(need)) throw new IngestError('malformed', `k6 CSV header without "${need}"`, row.line);
      }
      cMetric = cols.get('metric_name')!;
      cTs = cols.get('timestamp')!;
      cValue = cols.get('metric_value')!;
      cStatus = cols.get('status') ?? -1;
      cScenario = cols.get('scenario') ?? -1;
      cUrl = cols.get('url') ?? -1;
      return;
    }
    let metric: number;
    if (row.fields === null) {
      if (!row.has(cMetric)) return; // undefined is no wanted metric
      metric = wantedAt(row.buf, row.start[cMetric]!, row.end[cMetric]!);
    } else metric = WANTED_LIST.indexOf(row.fields[cMetric] as WantedMetric);
    if (metric < 0) return;
    // timestamp: whole Unix seconds (k6's default) are read in place; anything else as text
    let sec: number;
    let ns = 0;
    const tsDigits = row.isDigits(cTs);
    if (tsDigits && row.end[cTs]! - row.start[cTs]! <= 11 && row.fields === null) {
      sec = row.decimal(cTs);
    } else {
      const tsText = row.text(cTs) ?? '';
      const ts = csvTime(tsText);
      if (!ts) throw new IngestError('malformed', 'k6 CSV row with a bad timestamp or value', row.line);
      if (!/^\d{1,11}$/.test(tsText)) wholeSeconds = false;
      sec = ts[0];
      ns = ts[1];
    }
    let value = row.decimal(cValue);
    if (Number.isNaN(value)) {
      const v = num(row.text(cValue));
      if (v === null) throw new IngestError('malformed', 'k6 CSV row with a bad timestamp or value', row.line);
      value = v;
    }
    const t = acc.rel(sec, ns);
    const status = cStatus < 0 ? undefined : statusText.get(row, cStatus);
    acc.scenario(cScenario < 0 ? undefined : scenarioText.get(row, cScenario));
    acc.point(metric, t, value, status, metric !== 0 || cUrl < 0 || acc.hasUrl() ? undefined : urlText.get(row, cUrl));
  });
  if (!cols) throw new IngestError('empty', 'the file is empty');
  return acc.finish(
    'k6-csv',
    wholeSeconds
      ? 'CSV timestamps are whole Unix seconds (k6 default), so durationSeconds/rps and the timeline have 1 s resolution'
      : 'CSV timestamps have sub-second resolution',
    wholeSeconds,
  );
}

// ---------------------------------------------------------------------------------------------
// End-of-test summary JSON

/** Trend values keyed by percentile (0 = min, 100 = max), plus the mean; percentiles named p(90) or p90. */
function trendLatency(v: Record<string, unknown>): { latency: LatencyMs; dist: PercentilePoint[] | null } {
  const values = new Map<string, number | null>();
  for (const [k, raw] of Object.entries(v)) values.set(k, num(raw));
  return k6TrendLatency(values, /^p\(?([\d.]+)\)?$/);
}

function parseK6Summary(text: string): LoadTestRun {
  const o = parseJson(text, 'k6 summary');
  if (!isObj(o)) throw new IngestError('not-a-profile', 'not a k6 summary');
  // normalise the three shapes to name -> flat values
  const metrics = new Map<string, Record<string, unknown>>();
  let durationSeconds: number | null = null;
  let schema: string;
  let version: string | null = null;
  if (o.version !== undefined && isObj(o.results) && Array.isArray(o.results.metrics)) {
    schema = 'new machine-readable summary (--new-machine-readable-summary)';
    for (const m of o.results.metrics)
      if (isObj(m) && typeof m.name === 'string' && isObj(m.values)) metrics.set(m.name, m.values);
    if (isObj(o.config)) durationSeconds = num(o.config.duration);
    if (isObj(o.metadata) && typeof o.metadata.k6_version === 'string') version = o.metadata.k6_version;
  } else if (isObj(o.metrics)) {
    let wrapped = false;
    for (const [name, m] of Object.entries(o.metrics)) {
      if (!isObj(m)) continue;
      if (isObj(m.values)) {
        wrapped = true;
        metrics.set(name, m.values);
      } else metrics.set(name, m);
    }
    schema = wrapped ? 'handleSummary() data' : '--summary-export (legacy schema)';
    if (isObj(o.state)) {
      const ms = num(o.state.testRunDurationMs);
      if (ms !== null) durationSeconds = ms / 1000;
    }
  } else throw new IngestError('not-a-profile', 'not a k6 summary (no metrics)');

  const reqs = metrics.get('http_reqs');
  if (!reqs) throw new IngestError('no-run', 'k6 summary without http_reqs: no HTTP request was made');
  const requests = num(reqs.count);
  if (requests === null || requests === 0) throw new IngestError('no-run', 'k6 summary with zero HTTP requests');
  const rate = num(reqs.rate);
  if (durationSeconds === null && rate) durationSeconds = requests / rate;
  const rps = rate ?? (durationSeconds ? requests / durationSeconds : null);
  const failed = metrics.get('http_req_failed');
  // Rate metric: legacy/handleSummary count failures as "passes"; the new schema as "matches"
  const errors = failed ? (num(failed.passes) ?? num(failed.matches)) : null;
  const dur = metrics.get('http_req_duration');
  let { latency, dist } = dur ? trendLatency(dur) : { latency: emptyLatency(), dist: null };
  const notes = [
    `k6 end-of-test summary, ${schema}; figures as k6 computed them (ms)`,
    'latency = http_req_duration over all requests; avg -> mean, med -> p50',
    "errors = http_req_failed (k6's failed requests); the summary does not split them into HTTP statuses and transport errors",
    'durationSeconds = the test-run duration k6 divides http_reqs by',
  ];
  if (errors !== null && errors === requests && (latency.max ?? 0) === 0) {
    latency = emptyLatency();
    dist = null;
    notes.push('every request failed without a response (durations are 0 placeholders): latency left null');
  }
  const okDur = metrics.get('http_req_duration{expected_response:true}');
  const meta: LoadTestMeta = {
    tool: 'k6',
    version,
    source: 'printed',
    notes,
    successfulOnlyLatencyMs: okDur ? trendLatency(okDur).latency : null,
  };
  const dataRecv = metrics.get('data_received');
  const bytes = dataRecv ? num(dataRecv.count) : null;
  const s = k6Summary({
    requests,
    durationSeconds,
    rps,
    errors,
    latencyMs: latency,
    bytesPerSecond: bytes !== null && durationSeconds ? bytes / durationSeconds : null,
    meta,
  });
  return run('k6-summary', s, null, dist);
}

// ---------------------------------------------------------------------------------------------
// Importers

export const k6JsonImporter: LoadTestImporter = {
  formats: ['k6-json'],
  detect(head) {
    // BOM kept: a line that starts with one is not a line k6 wrote, and JSON.parse refuses it
    const t = headUtf8(head);
    if (/^\{"(type":"Metric"|metric":"[a-z_]+","type":"(Point|Metric)")/.test(t)) return 0.95;
    if (/^\{"type":"(Point|Metric)","data":\{/.test(t) && t.includes('"metric":')) return 0.9;
    return 0;
  },
  parse: (src) => parseK6Json(src),
};

export const k6CsvImporter: LoadTestImporter = {
  formats: ['k6-csv'],
  detect(head) {
    const t = headText(head).replace(/^\uFEFF/, '');
    return /^metric_name,timestamp,metric_value(,|\r?\n)/.test(t) ? 0.95 : 0;
  },
  parse: (src) => parseK6Csv(src),
};

export const k6SummaryImporter: LoadTestImporter = {
  formats: ['k6-summary'],
  detect(head) {
    const t = headText(head);
    if (!/^\s*\{/.test(t)) return 0;
    if (t.includes('"root_group"') && t.includes('"metrics"')) return 0.9;
    if (t.includes('"http_reqs"') && (t.includes('"http_req_duration') || t.includes('"iterations"'))) {
      if (t.includes('"k6_version"') || t.includes('"testRunDurationMs"') || t.includes('"metrics"')) return 0.85;
    }
    return 0;
  },
  async parse(src) {
    return parseK6Summary(await readNonBlankText(src));
  },
};

export const k6Importers: LoadTestImporter[] = [k6JsonImporter, k6CsvImporter, k6SummaryImporter, k6ConsoleImporter];
