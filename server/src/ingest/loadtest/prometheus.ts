/**
 * The requests a Prometheus-compatible server's counter says were served over an imported run's
 * window (model/requests-record.ts, written by `stagediff import --requests-query`), read as a load
 * run of the `prometheus` format. There is no latency (a counter holds none) and no error count; the
 * req/s is the load the clients sent while the profiler scraped, not a load test's throughput, and
 * the run's notes say so.
 *
 * The count is read from the counter's raw samples around the window (the answer to a range
 * selector), not from `increase()`: Prometheus's `increase` extrapolates the samples inside its range
 * to the range's edges, which over a window a few scrapes long is off by several percent whenever
 * the rate moves (12.6 % for one 10 s run of the recording in fixtures/parca, 5 s scrapes). Here
 * each series is taken at the window's start and end by straight-line interpolation between the
 * samples either side, after undoing counter resets (a sample lower than the one before means the
 * process restarted and counts again from zero), and the series are added up.
 */
import { REQUESTS_SCHEMA, type RequestsRecord } from '../../model/requests-record.ts';
import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import { run, summary } from './common/summary.ts';
import { headText, isObj, parseJson, readText } from './common/text.ts';
import type { LoadTestImporter } from './types.ts';

/** Series a requests counter is read from at most (a selector matching every series is refused, not stored). */
export const MAX_COUNTER_SERIES = 1000;

/** The requests a counter's series served in [fromMs, toMs], or why the answer cannot say. */
export interface CounterCount {
  requests: number;
  series: number;
  /** Counter resets undone inside the window's samples. */
  resets: number;
}

/** A series' labels for a message: the server's words, so controls and bidirectional overrides become `?`. */
function labelsText(metric: unknown): string {
  if (!isObj(metric)) return '{}';
  const parts = Object.entries(metric).map(([k, v]) => `${k}="${String(v)}"`);
  return `{${parts.join(',')}}`.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, '?').slice(0, 200);
}

/** One series' samples as [ms, value], checked. */
function samplesOf(values: unknown): [number, number][] | null {
  if (!Array.isArray(values)) return null;
  const out: [number, number][] = [];
  for (const p of values) {
    if (!Array.isArray(p) || typeof p[0] !== 'number' || typeof p[1] !== 'string') return null;
    const t = Math.round(p[0] * 1000);
    const v = Number(p[1]);
    if (!Number.isFinite(t) || !Number.isFinite(v) || v < 0) return null;
    if (out.length > 0 && t <= out[out.length - 1]![0]) return null;
    out.push([t, v]);
  }
  return out;
}

/** The reset-corrected counter at `t`, between the samples either side (null: none on one side). */
function at(corrected: [number, number][], t: number): number | null {
  for (let i = 0; i < corrected.length; i++) {
    const [ti, vi] = corrected[i]!;
    if (ti === t) return vi;
    if (ti > t) {
      if (i === 0) return null;
      const [t0, v0] = corrected[i - 1]!;
      return v0 + ((vi - v0) * (t - t0)) / (ti - t0);
    }
  }
  return null;
}

export function counterRequests(answer: unknown, fromMs: number, toMs: number): CounterCount | { why: string } {
  if (!isObj(answer)) return { why: 'not the Prometheus API JSON' };
  if (answer.status !== 'success') return { why: `its status is ${JSON.stringify(answer.status ?? null)}` };
  const data = answer.data;
  if (!isObj(data)) return { why: 'it has no data' };
  if (data.resultType !== 'matrix' || !Array.isArray(data.result))
    return {
      why: `a ${String(data.resultType).slice(0, 40)} answered, where a counter's samples (a matrix) were asked: give a counter selector, as http_requests_total{job="api"}`,
    };
  if (data.result.length === 0)
    return { why: 'no series answered: check the selector, and that the server scraped the service then' };
  if (data.result.length > MAX_COUNTER_SERIES)
    return {
      why: `${data.result.length} series answered, more than the ${MAX_COUNTER_SERIES} a requests counter is read from: narrow the selector (job, instance, route…)`,
    };
  let requests = 0;
  let resets = 0;
  for (const s of data.result) {
    const labels = labelsText(isObj(s) ? s.metric : undefined);
    const samples = samplesOf(isObj(s) ? s.values : undefined);
    if (!samples) return { why: `the samples of ${labels} are not [seconds, "value"] pairs in time order` };
    let offset = 0;
    const corrected = samples.map(([t, v], i): [number, number] => {
      if (i > 0 && v < samples[i - 1]![1]) {
        offset += samples[i - 1]![1];
        // counted when the restart may lie inside the window
        if (t > fromMs && samples[i - 1]![0] < toMs) resets++;
      }
      return [t, v + offset];
    });
    const a = at(corrected, fromMs);
    const b = at(corrected, toMs);
    if (a === null)
      return {
        why: `${labels} has no sample at or before the window's start ${new Date(fromMs).toISOString()}: a series that began inside the window cannot say what it served before its first sample; start the window later`,
      };
    if (b === null)
      return {
        why: `${labels} has no sample at or after the window's end ${new Date(toMs).toISOString()} yet: import again after the next scrape`,
      };
    requests += b - a;
  }
  return { requests, series: data.result.length, resets };
}

function isoMs(v: unknown): number {
  return typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : Number.NaN;
}

export const prometheusImporter: LoadTestImporter = {
  formats: ['prometheus'],
  detect(head) {
    return /^\s*\{\s*"schema"\s*:\s*"stagediff-requests\/1"/.test(headText(head)) ? 1 : 0;
  },
  async parse(src: ByteSource) {
    // The upload names the file in front of every message; these say what in it is wrong.
    const what = 'the requests record';
    const doc = parseJson(await readText(src, what), what);
    if (!isObj(doc) || doc.schema !== REQUESTS_SCHEMA)
      throw new IngestError('malformed', `not a ${REQUESTS_SCHEMA} record`);
    const r = doc as unknown as RequestsRecord;
    const fromMs = isoMs(r.from);
    const toMs = isoMs(r.to);
    if (!(toMs > fromMs))
      throw new IngestError('malformed', `"from" and "to" must be ISO 8601 times, "to" after "from"`);
    const c = counterRequests(r.answer, fromMs, toMs);
    if ('why' in c) throw new IngestError('malformed', `the answer holds no count of requests: ${c.why}`);
    const seconds = (toMs - fromMs) / 1000;
    const url = typeof r.url === 'string' ? r.url.slice(0, 200) : '?';
    return run(
      'prometheus',
      summary({
        requests: c.requests,
        durationSeconds: seconds,
        rps: c.requests / seconds,
        meta: {
          tool: 'prometheus',
          source: 'computed',
          startedAt: fromMs,
          commandLine: typeof r.evaluated === 'string' ? r.evaluated.slice(0, 2000) : null,
          // the counter's server is not the target of the load
          targetUrl: null,
          notes: [
            `requests from the counter ${typeof r.query === 'string' ? r.query.slice(0, 200) : '?'} at ${url} over run ${Number(r.run) || '?'} of ${Number(r.runs) || '?'}'s window (${c.series} series${c.resets ? `, ${c.resets} counter reset${c.resets === 1 ? '' : 's'} undone` : ''}); req/s is the load clients sent while the profiler scraped, not a load test's throughput; no latency or errors`,
          ],
        },
      }),
    );
  },
};
