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
  | 'ghz'
  | 'oha'
  | 'oha-json'
  /** The requests a Prometheus-compatible server counted over an imported run (model/requests-record.ts). */
  | 'prometheus';

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
  /** Virtual users (k6's `N max VUs`), for tools that count users rather than connections. */
  vus?: number | null;
  /** The duration the run was configured with, as the tool printed it (`8s`, `1m`). */
  configuredDuration?: string | null;
  /** The HTTP method, where the output names it. */
  method?: string | null;
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
  /**
   * Set when the file holds several runs of the tool (outputs appended one after another): this run
   * is run `index` (1-based) of the file's `count`, its output starting at `line`.
   */
  fileRun?: { index: number; count: number; line: number };
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

/**
 * What the store keeps for a load-test file: its run's summary; for a file of several runs, every
 * run's summary in the file's order (`runs`), and at the top the file's totals: requests and errors
 * added up, every other figure null (no single rate or latency describes several runs), the first
 * run's meta with a note.
 */
export type LoadTestArtifactSummary = LoadTestSummary & { runs?: LoadTestSummary[] };

/** The stored summary of a file's runs (see LoadTestArtifactSummary). */
export function loadTestArtifactSummary(runs: readonly LoadTestRun[]): LoadTestArtifactSummary {
  if (runs.length === 1) return runs[0]!.summary;
  const sum = (pick: (s: LoadTestSummary) => number | null): number | null =>
    runs.every((r) => pick(r.summary) === null) ? null : runs.reduce((a, r) => a + (pick(r.summary) ?? 0), 0);
  const first = runs[0]!.summary.meta;
  const { fileRun: _f, ...meta } = first;
  return {
    requests: sum((s) => s.requests),
    durationSeconds: null,
    rps: null,
    errors: sum((s) => s.errors),
    transportErrors: sum((s) => s.transportErrors),
    non2xx: sum((s) => s.non2xx),
    latencyMs: emptyLatency(),
    bytesPerSecond: null,
    meta: { ...meta, notes: [`${runs.length} runs read from one file: each run's figures are in runs`] },
    runs: runs.map((r) => r.summary),
  };
}

/**
 * The runs behind a stored load-test summary, in the file's order: the summary itself for a file of
 * one run, each of `runs` for a file of several. `runInFile` is 1-based, null for a file of one run.
 */
export function summaryRuns(s: LoadTestArtifactSummary): { summary: LoadTestSummary; runInFile: number | null }[] {
  if (Array.isArray(s.runs) && s.runs.length > 0) return s.runs.map((r, i) => ({ summary: r, runInFile: i + 1 }));
  return [{ summary: s, runInFile: null }];
}
