/**
 * Apache JMeter (5.x): JTL results as CSV (the default, with or without a header line) and XML,
 * the HTML dashboard's `statistics.json`, and the non-GUI console summariser (also with a log prefix
 * such as Maven's `[INFO] `, and with the rate in a decimal-comma locale: `1,1/s`). A CSV whose last
 * row is cut off is read without that row, and the notes say so.
 *
 * JTL figures follow JMeter's HTML dashboard ("Statistics" table, Total row):
 * - requests = samples (top-level samples only; XML sub-samples of redirects are not counted);
 * - latency = `elapsed` (XML `t`) in whole ms — not `Latency` (time to first byte); mean is the plain
 *   mean, median and 90/95/99 use commons-math `Percentile` with the LEGACY estimation
 *   (position p(n+1)/100, linear interpolation); p75/p99.9 follow the same rule; like the
 *   dashboard, percentiles see only the last 20,000 samples (its statistic_window) of a longer file;
 * - rps = samples / (last sample end - first sample start), durationSeconds = that span;
 * - errors = samples with success=false; transportErrors = failed samples whose response code is
 *   "Non HTTP response code: …" (no response), non2xx = failed samples with an HTTP status.
 */
import type { LoadTestMeta, LoadTestRun } from '../../model/loadtest.ts';
import { emptyLatency } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { lineBatches, type ByteSource } from '../source.ts';
import { asciiBytes, type CsvRow, forEachCsvRow } from './common/csv.ts';
import { commonsMathLegacyRule, curve, latencyFromSorted, meanOf } from './common/percentiles.ts';
import { GrowableF64, GrowableU8, NON2XX, OK, TRANSPORT } from './common/rows.ts';
import { run, summary } from './common/summary.ts';
import { headText, isObj, parseJson, readNonBlankText, refuseSeveralRuns } from './common/text.ts';
import { secondsOf, timelineAndSorted } from './common/timeline.ts';
import { num } from './common/units.ts';
import type { LoadTestImporter } from './types.ts';

/** JMeter's dashboard default for jmeter.reportgenerator.statistic_window: percentiles see the last N samples. */
const STATISTIC_WINDOW = 20_000;

/** JMeter's default CSV columns, used when the file has no header line. */
const DEFAULT_COLUMNS = [
  'timeStamp',
  'elapsed',
  'label',
  'responseCode',
  'responseMessage',
  'threadName',
  'dataType',
  'success',
  'failureMessage',
  'bytes',
  'sentBytes',
  'grpThreads',
  'allThreads',
  'URL',
  'Latency',
  'IdleTime',
  'Connect',
];

class JtlSamples {
  private starts = new GrowableF64(); // ms since the first sample's start
  private elapsed = new GrowableF64();
  private outcome = new GrowableU8();
  private base = NaN;
  n = 0;
  private minStart = Infinity;
  private maxEnd = -Infinity;
  private failed = 0;
  private transport = 0;
  private non2xx = 0;
  private bytes = 0;
  private bytesSeen = false;
  private labels = new Set<string>();
  url: string | null = null;

  add(
    tsMs: number,
    elapsedMs: number,
    success: boolean,
    code: string,
    bytes: number | null,
    label: string | null,
  ): void {
    if (Number.isNaN(this.base)) this.base = tsMs;
    const start = tsMs - this.base;
    this.n++;
    this.starts.push(start);
    this.elapsed.push(elapsedMs);
    if (start < this.minStart) this.minStart = start;
    if (start + elapsedMs > this.maxEnd) this.maxEnd = start + elapsedMs;
    let o = OK;
    if (!success) {
      this.failed++;
      if (/^\d{3}$/.test(code)) {
        o = NON2XX;
        this.non2xx++;
      } else {
        o = TRANSPORT;
        this.transport++;
      }
    }
    this.outcome.push(o);
    if (bytes !== null) {
      this.bytes += bytes;
      this.bytesSeen = true;
    }
    if (label !== null && this.labels.size < 50) this.labels.add(label);
  }

  finish(variant: 'CSV' | 'XML', extraNotes: string[] = []): LoadTestRun {
    if (this.n === 0) throw new IngestError('no-run', 'the JTL file holds no samples');
    const spanMs = this.maxEnd - this.minStart;
    const secs = spanMs > 0 ? spanMs / 1000 : null;
    const startSec = new Float64Array(this.n);
    const sv = this.starts.view();
    for (let i = 0; i < this.n; i++) startSec[i] = (sv[i]! - this.minStart) / 1000;
    const tl = timelineAndSorted({
      second: secondsOf(startSec),
      latencyMs: this.elapsed.view(),
      error: this.outcome.view(),
      rule: commonsMathLegacyRule,
      bucketMean: 'ascending',
    });
    const timeline = tl.timeline;
    // the timeline's by-product is every elapsed time in ascending order (none is NaN)
    const sorted = tl.sorted.length === this.n ? tl.sorted : Float64Array.from(this.elapsed.view()).sort();
    const latency = latencyFromSorted(sorted, commonsMathLegacyRule, meanOf(sorted));
    // JMeter's dashboard computes percentiles over a window of the last
    // jmeter.reportgenerator.statistic_window samples (20,000 by default); min, max and mean over all
    const windowed = this.n > STATISTIC_WINDOW;
    if (windowed) {
      const last = Float64Array.from(this.elapsed.view().subarray(this.n - STATISTIC_WINDOW)).sort();
      const w = latencyFromSorted(last, commonsMathLegacyRule, meanOf(last));
      Object.assign(latency, { p50: w.p50, p75: w.p75, p90: w.p90, p95: w.p95, p99: w.p99, p999: w.p999 });
      extraNotes.push(
        `percentiles over the last ${STATISTIC_WINDOW} samples in file order, as JMeter's dashboard computes them (jmeter.reportgenerator.statistic_window); min, max and mean over all ${this.n}`,
      );
    }
    const meta: LoadTestMeta = {
      tool: 'jmeter',
      targetUrl: this.url,
      source: 'computed',
      labels: [...this.labels],
      jmeterFailures: this.failed,
      notes: [
        `JTL ${variant}: one sample per request; figures computed as JMeter's HTML dashboard does (Total row of statistics.json)`,
        'latency = elapsed in whole ms; median/percentiles with commons-math LEGACY estimation (p(n+1)/100, linear interpolation)',
        'rps = samples / (last sample end - first sample start); durationSeconds = that span',
        'errors = samples with success=false: non2xx = those with an HTTP status (an assertion failure on a 2xx response also lands here), transportErrors = "Non HTTP response code" samples',
        'timeline buckets by sample start time; bucket percentiles use the same LEGACY rule',
        ...extraNotes,
      ],
    };
    const s = summary({
      requests: this.n,
      durationSeconds: secs,
      rps: secs ? this.n / secs : null,
      transportErrors: this.transport,
      non2xx: this.non2xx,
      latencyMs: latency,
      bytesPerSecond: this.bytesSeen && secs ? this.bytes / secs : null,
      meta,
    });
    return run('jmeter', s, timeline, curve(sorted, commonsMathLegacyRule));
  }
}

function parseTimestamp(v: string, line: number): number {
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v.replace(/\//g, '-'));
  if (Number.isNaN(t)) throw new IngestError('malformed', `JTL sample with an unreadable timeStamp "${v}"`, line);
  return t;
}

/** Number(text) of a field that is all digits (as JMeter writes times), read in place when short. */
function digitsValue(row: CsvRow, i: number): number {
  const v = row.decimal(i);
  return Number.isNaN(v) ? Number(row.text(i)) : v;
}

/**
 * JTL CSV rows are read through `forEachCsvRow`: fields stay bytes, and only what a figure needs
 * is decoded (the URL once, the label when it changes, the response code of a failed sample).
 * A column the header does not name has index -1 and reads as missing, as with string rows.
 */
async function parseJtlCsv(src: ByteSource): Promise<LoadTestRun> {
  const acc = new JtlSamples();
  let idx: Map<string, number> | null = null;
  let cTs = -1;
  let cEl = -1;
  let cSuccess = -1;
  let cUrl = -1;
  let cCode = -1;
  let cBytes = -1;
  let cLabel = -1;
  let lastLabel: Uint8Array | null = null;
  let width = 0; // fields per row: the header's, or the first sample's when there is no header
  let shortRow = 0; // line of a row with fewer fields: the file's last row when it is cut off
  await forEachCsvRow(src, (row) => {
    if (shortRow !== 0)
      throw new IngestError('malformed', 'JTL sample with fewer fields than the header names', shortRow);
    if (!idx) {
      const f = row.all();
      if (f.includes('timeStamp') && f.includes('elapsed')) {
        idx = new Map(f.map((n, i) => [n, i]));
        cTs = idx.get('timeStamp') ?? -1;
        cEl = idx.get('elapsed') ?? -1;
        cSuccess = idx.get('success') ?? -1;
        cUrl = idx.get('URL') ?? -1;
        cCode = idx.get('responseCode') ?? -1;
        cBytes = idx.get('bytes') ?? -1;
        cLabel = idx.get('label') ?? -1;
        width = f.length;
        return;
      }
      idx = new Map(DEFAULT_COLUMNS.map((n, i) => [n, i]));
      [cTs, cEl, cSuccess, cUrl, cCode, cBytes, cLabel] = [0, 1, 7, 13, 3, 9, 2];
      width = row.count;
    }
    if (row.count < width) {
      shortRow = row.line;
      return;
    }
    if (!row.has(cTs) || !row.has(cEl) || !row.isDigits(cEl)) {
      throw new IngestError('malformed', 'not a JMeter JTL CSV sample (timeStamp and elapsed expected)', row.line);
    }
    let success = true;
    if (row.has(cSuccess)) {
      if (row.equals(cSuccess, FALSE, 'false')) success = false;
      else if (!row.equals(cSuccess, TRUE, 'true'))
        throw new IngestError('malformed', `JTL sample with success="${row.text(cSuccess)}"`, row.line);
    }
    if (acc.url === null && row.has(cUrl) && !row.isEmpty(cUrl)) acc.url = row.text(cUrl)!;
    const tsMs = row.isDigits(cTs) ? digitsValue(row, cTs) : parseTimestamp(row.text(cTs)!, row.line);
    // the response code matters only for a failed sample
    const code = success || !row.has(cCode) ? '' : row.text(cCode)!;
    let bytes: number | null = null;
    if (row.has(cBytes)) {
      bytes = row.decimal(cBytes);
      if (Number.isNaN(bytes)) bytes = num(row.text(cBytes));
    }
    // the label is kept in a set: decode it only when it differs from the previous row's
    let label: string | null = null;
    if (row.has(cLabel) && !row.sameBytes(cLabel, lastLabel)) {
      label = row.text(cLabel)!;
      lastLabel = row.copyBytes(cLabel);
    }
    acc.add(tsMs, digitsValue(row, cEl), success, code, bytes, label);
  });
  if (!idx) throw new IngestError('empty', 'the file is empty');
  return acc.finish(
    'CSV',
    shortRow === 0 ? [] : [`the file is cut off: its last row (line ${shortRow}) is incomplete and left out`],
  );
}

const TRUE = asciiBytes('true');
const FALSE = asciiBytes('false');

function attrs(tag: string): Map<string, string> {
  const m = new Map<string, string>();
  const re = /([\w.:-]+)="([^"]*)"/g;
  let a: RegExpExecArray | null;
  while ((a = re.exec(tag))) m.set(a[1]!, a[2]!);
  return m;
}

function unescapeXml(s: string): string {
  return s.replace(
    /&(lt|gt|quot|apos|amp);/g,
    (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!,
  );
}

async function parseJtlXml(src: ByteSource): Promise<LoadTestRun> {
  const acc = new JtlSamples();
  let depth = 0;
  let lineNo = 0;
  let sawRoot = false;
  let pending: string | null = null;
  let pendingLine = 0;
  let expectUrl = false;
  for await (const batch of lineBatches(src))
    for (const raw of batch) {
      lineNo++;
      let line = raw.trim();
      if (pending !== null) {
        pending += ` ${line}`;
        if (!line.includes('>')) continue;
        line = pending;
        pending = null;
      }
      if (line.startsWith('<testResults')) sawRoot = true;
      const open = /^<(httpSample|sample)\s/.exec(line);
      if (open) {
        if (!line.includes('>')) {
          pending = line;
          pendingLine = lineNo;
          continue;
        }
        const selfClosing = /\/>\s*$/.test(line.slice(0, line.indexOf('>') + 1));
        if (depth === 0) {
          const a = attrs(line);
          const t = a.get('t');
          const ts = a.get('ts');
          if (t === undefined || ts === undefined || !/^\d+$/.test(t)) {
            throw new IngestError('malformed', 'JTL XML sample without t/ts attributes', pendingLine || lineNo);
          }
          const by = a.get('by');
          acc.add(
            parseTimestamp(ts, lineNo),
            Number(t),
            a.get('s') !== 'false',
            unescapeXml(a.get('rc') ?? ''),
            by === undefined ? null : Number(by),
            a.get('lb') ?? null,
          );
          expectUrl = acc.url === null;
        }
        pendingLine = 0;
        if (!selfClosing) depth++;
        continue;
      }
      if (line.startsWith('</httpSample>') || line.startsWith('</sample>')) {
        depth--;
        if (depth < 0) throw new IngestError('malformed', 'unbalanced sample end tag in JTL XML', lineNo);
        continue;
      }
      if (expectUrl && depth === 1 && line.startsWith('<java.net.URL>')) {
        acc.url = unescapeXml(line.replace(/<\/?java\.net\.URL>/g, ''));
        expectUrl = false;
      }
    }
  if (pending !== null) throw new IngestError('malformed', 'JTL XML ends inside a sample tag', pendingLine);
  if (!sawRoot) throw new IngestError('malformed', 'not a JMeter XML JTL (no <testResults>)');
  return acc.finish('XML');
}

// ---------------------------------------------------------------------------------------------
// statistics.json (HTML dashboard) and console summariser

function parseStatistics(text: string): LoadTestRun {
  const o = parseJson(text, 'JMeter statistics.json');
  if (!isObj(o) || !isObj(o.Total))
    throw new IngestError('not-a-profile', 'not a JMeter dashboard statistics.json (no Total entry)');
  const t = o.Total;
  const requests = num(t.sampleCount);
  if (!requests) throw new IngestError('no-run', 'JMeter statistics.json with zero samples');
  const rps = num(t.throughput);
  const errors = num(t.errorCount);
  const recvKB = num(t.receivedKBytesPerSec);
  const s = summary({
    requests,
    durationSeconds: rps ? requests / rps : null,
    rps,
    errors,
    transportErrors: errors === 0 ? 0 : null,
    non2xx: errors === 0 ? 0 : null,
    latencyMs: {
      ...emptyLatency(),
      min: num(t.minResTime),
      mean: num(t.meanResTime),
      p50: num(t.medianResTime),
      p90: num(t.pct1ResTime),
      p95: num(t.pct2ResTime),
      p99: num(t.pct3ResTime),
      max: num(t.maxResTime),
    },
    bytesPerSecond: recvKB === null ? null : recvKB * 1024,
    meta: {
      tool: 'jmeter',
      source: 'printed',
      notes: [
        'JMeter HTML dashboard statistics.json, Total row, as printed',
        'pct1/pct2/pct3 are taken as the default 90/95/99 percentiles (jmeter.reportgenerator aggregate_rpt_pct1..3)',
        'durationSeconds = samples / throughput; the file does not split errors by kind',
      ],
      transactions: Object.keys(o).filter((k) => k !== 'Total'),
    },
  });
  return run('jmeter', s);
}

function parseConsole(text: string): LoadTestRun {
  // "summary =" repeats as a running total; a second "Creating summariser" is a second run
  refuseSeveralRuns(text, /^.{0,200}?Creating summariser <summary>/, 'JMeter');
  // a log prefix ("[INFO] " from the Maven plugin, a log4j timestamp) may precede "summary =", and
  // the rate is formatted in the JVM's locale: "1,1/s" is 1.1 per second
  const re =
    /^.{0,200}?\bsummary =\s+(\d+) in (\d+):(\d\d):(\d\d) =\s+([\d.,]+)\/s Avg:\s+(-?\d+) Min:\s+(-?\d+) Max:\s+(-?\d+) Err:\s+(\d+)/gm;
  let m: RegExpExecArray | null;
  let last: RegExpExecArray | null = null;
  while ((m = re.exec(text))) last = m;
  if (!last) throw new IngestError('no-run', 'JMeter console output without a "summary =" line: the test did not run');
  const requests = Number(last[1]);
  const rps = Number(last[5]!.replace(',', '.'));
  if (!Number.isFinite(rps))
    throw new IngestError('malformed', `JMeter console summary: unreadable rate "${last[5]}/s"`);
  const errors = Number(last[9]);
  const s = summary({
    requests,
    durationSeconds: Number(last[2]) * 3600 + Number(last[3]) * 60 + Number(last[4]),
    rps,
    errors,
    transportErrors: errors === 0 ? 0 : null,
    non2xx: errors === 0 ? 0 : null,
    latencyMs: { ...emptyLatency(), mean: Number(last[6]), min: Number(last[7]), max: Number(last[8]) },
    meta: {
      tool: 'jmeter',
      source: 'printed',
      variant: 'console summariser',
      notes: [
        'JMeter console summariser, final "summary =" line, as printed (whole ms, rate with 1 decimal, elapsed in whole seconds)',
        "the summariser's rate is not the dashboard throughput: it divides by a longer elapsed time",
      ],
    },
  });
  return run('jmeter', s);
}

// ---------------------------------------------------------------------------------------------
// Importers

export const jmeterCsvImporter: LoadTestImporter = {
  formats: ['jmeter'],
  detect(head) {
    const t = headText(head).replace(/^\uFEFF/, '');
    if (/^timeStamp,elapsed,/.test(t) || (/^timeStamp,/.test(t) && /,elapsed,/.test(t.slice(0, 300)))) return 0.95;
    if (/^\d{13},\d+,[^,\n]*,[^,\n]*,[^,\n]*,[^,\n]*,[^,\n]*,(true|false),/.test(t)) return 0.8;
    return 0;
  },
  parse: (src) => parseJtlCsv(src),
};

export const jmeterXmlImporter: LoadTestImporter = {
  formats: ['jmeter'],
  detect(head) {
    return /<testResults[\s>]/.test(headText(head).slice(0, 2000)) ? 0.95 : 0;
  },
  parse: (src) => parseJtlXml(src),
};

export const jmeterReportImporter: LoadTestImporter = {
  formats: ['jmeter'],
  runStart: /Creating summariser <summary>/,
  detect(head) {
    const t = headText(head);
    if (/^\s*\{/.test(t) && t.includes('"Total"') && t.includes('"sampleCount"') && t.includes('"meanResTime"'))
      return 0.9;
    if (/Creating summariser <summary>|^summary [=+] /m.test(t) && /jmeter|Starting standalone test/i.test(t))
      return 0.8;
    if (/\bsummary [=+]\s+\d+ in \d+:\d\d:\d\d =\s+[\d.,]+\/s Avg:/.test(t)) return 0.75;
    return 0;
  },
  async parse(src) {
    const text = await readNonBlankText(src);
    return /^\s*\{/.test(text) ? parseStatistics(text) : parseConsole(text);
  },
};

export const jmeterImporters: LoadTestImporter[] = [jmeterCsvImporter, jmeterXmlImporter, jmeterReportImporter];
