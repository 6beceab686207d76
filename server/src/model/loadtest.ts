/**
 * The canonical load-test model: one run of one load generator. Every load-test parser produces
 * this; nothing downstream knows which tool wrote the file. Latencies are milliseconds, rates per second.
 */

export type LoadTestFormat =
  | 'wrk'
  | 'wrk2'
  | 'hey'
  | 'hey-csv'
  | 'vegeta-json'
  | 'vegeta-csv'
  | 'vegeta-report'
  | 'vegeta-hist'
  | 'k6-json'
  | 'k6-csv'
  | 'k6-summary'
  | 'k6-stdout'
  | 'ab'
  | 'ab-gnuplot'
  | 'ab-csv'
  | 'autocannon'
  | 'bombardier'
  | 'bombardier-text'
  | 'locust'
  | 'locust-history'
  | 'locust-failures'
  | 'jmeter'
  | 'jmeter-xml'
  | 'ghz';

/** Latency figures in milliseconds; null where the source neither gives nor allows computing one. */
export interface LatencyMs {
  min: number | null;
  mean: number | null;
  p50: number | null;
  p75: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
}

/** Where each headline figure came from: printed by the tool, or computed by us from per-request data. */
export type FigureSource = 'printed' | 'computed';

export interface LoadTestMeta {
  tool: string;
  version?: string | null;
  targetUrl?: string | null;
  connections?: number | null;
  threads?: number | null;
  /** Requested constant rate (req/s), for open-model tools (wrk2 -R, vegeta -rate, ...). */
  rate?: number | null;
  commandLine?: string | null;
  /** How the headline figures were obtained, e.g. "printed", or "computed: vegeta t-digest". */
  source: FigureSource;
  /**
   * When the run's first request started, in Unix epoch milliseconds, where the file records
   * absolute times (vegeta and k6 logs). Per-request diffs use it to count the requests served
   * during a profile's window.
   */
  startedAt?: number | null;
  /** Free-form notes a reader should know (e.g. "percentiles estimated as vegeta's report does"). */
  notes?: string[];
  /** Exact order-statistic percentiles from per-request data, where headline figures are estimates. */
  exactLatencyMs?: Partial<LatencyMs>;
  [extra: string]: unknown;
}

export interface LoadTestSummary {
  /** Requests as the tool counts them (see each parser's doc comment). */
  requests: number | null;
  durationSeconds: number | null;
  rps: number | null;
  /** transportErrors + non2xx; null when neither is known. */
  errors: number | null;
  /** Requests that got no HTTP response (refused, reset, timed out). */
  transportErrors: number | null;
  /** Responses with a status outside 2xx (for tools that count 3xx as success, their own rule applies). */
  non2xx: number | null;
  latencyMs: LatencyMs;
  bytesPerSecond: number | null;
  meta: LoadTestMeta;
}

/** One second of the run, on the run's own clock (t = seconds since the first request started). */
export interface TimelineBucket {
  t: number;
  requests: number;
  rps: number;
  errors: number;
  latencyMs: { mean: number | null; p50: number | null; p95: number | null; p99: number | null };
}

export interface PercentilePoint {
  /** 0..100 */
  percentile: number;
  ms: number;
}

export interface LoadTestRun {
  kind: 'loadtest';
  format: LoadTestFormat;
  summary: LoadTestSummary;
  timeline: TimelineBucket[] | null;
  latencyDistribution: PercentilePoint[] | null;
}

export function emptyLatency(): LatencyMs {
  return { min: null, mean: null, p50: null, p75: null, p90: null, p95: null, p99: null, p999: null, max: null };
}
