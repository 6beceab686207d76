/**
 * Runtime metrics sampled over a capture's profile window: what `stagediff capture --metrics URL`
 * scraped (a Prometheus text endpoint, e.g. client_golang's, or expvar's `/debug/vars`) once a second,
 * kept as the raw values of every scrape (`MetricsFile`, the file `metrics.json`), and what stagediff
 * reads from it (`MetricsModel`): counters as rates, histograms as deltas over the window.
 */

/** Labels of a series (Prometheus labels; none for expvar). */
export type MetricLabels = Record<string, string>;

/** What names a series: its metric name, labels and the endpoint's HELP text. */
interface SeriesHead {
  name: string;
  labels: MetricLabels;
  help: string;
}

/** One series of the file: its raw value at each scrape (null where a scrape failed or lacked it). */
export type RawSeries =
  | (SeriesHead & {
      /** counter, gauge or untyped (the endpoint's TYPE; expvar: counter for memstats' cumulative fields). */
      type: 'counter' | 'gauge' | 'untyped';
      values: (number | null)[];
    })
  | (SeriesHead & {
      type: 'histogram';
      /** Finite upper bounds (`le`), ascending; the +Inf bucket is `count`. */
      bounds: number[];
      /** Per scrape: the cumulative count of each bound, as exposed. */
      buckets: (number[] | null)[];
      sum: (number | null)[];
      count: (number | null)[];
    })
  | (SeriesHead & {
      type: 'summary';
      /** The quantiles the endpoint exposes (0.5, 0.99, …). */
      quantiles: number[];
      values: (number[] | null)[];
      sum: (number | null)[];
      count: (number | null)[];
    });

/** The file `metrics.json`: a capture's scrapes, raw. */
export interface MetricsFile {
  format: 'stagediff-metrics';
  version: 1;
  source: { url: string; kind: 'prometheus' | 'expvar' };
  /** The scrape interval asked for, ms. */
  intervalMs: number;
  /** When the first scrape started (ISO 8601). */
  start: string;
  /** Per scrape: when it started (ms after `start`), how long it took, and why it failed (else null). */
  scrapes: { t: number; ms: number; error: string | null }[];
  series: RawSeries[];
}

/** Over a series' values: min, mean, max, last (nulls skipped; all null when it has none). */
export interface SeriesStats {
  min: number | null;
  mean: number | null;
  max: number | null;
  last: number | null;
}

/** A series as stagediff reads it; `times` of the model are the x axis of every array here. */
export type MetricSeries =
  | (SeriesHead & {
      type: 'gauge' | 'untyped';
      values: (number | null)[];
      stats: SeriesStats;
      /** Last value minus first (null without both). */
      windowDelta: number | null;
    })
  | (SeriesHead & {
      type: 'counter';
      values: (number | null)[];
      /**
       * Per second between each scrape and the previous one (index i: from scrape i−1 to i; index 0 is
       * null). A counter that went down was reset: the new value is the increase, as Prometheus counts it.
       */
      rates: (number | null)[];
      /** Increase over the window (resets handled as above), and per second of it. */
      windowDelta: number | null;
      windowRate: number | null;
    })
  | (SeriesHead & {
      type: 'histogram';
      bounds: number[];
      /** Observations in the window per bucket (not cumulative; the last is the +Inf bucket). */
      windowCounts: number[];
      windowCount: number | null;
      windowSum: number | null;
      /**
       * Quantiles of the window's observations, by Prometheus' histogram_quantile rule (linear within a
       * bucket; past the last finite bound, that bound); null when the window saw none.
       */
      window: { p50: number | null; p90: number | null; p99: number | null };
      /** Per scrape interval (index i: scrape i−1 to i; index 0 null): observations and their p99. */
      perInterval: ({ count: number; p99: number | null } | null)[];
    })
  | (SeriesHead & {
      type: 'summary';
      quantiles: number[];
      /** The quantiles at the last scrape (since the process started, as the endpoint computes them). */
      last: number[] | null;
      windowCount: number | null;
      windowSum: number | null;
    });

/**
 * The figures most write-ups watch, found by their usual names (client_golang, runtime/metrics as
 * Prometheus names, expvar's memstats); null when the endpoint has none of the names.
 */
export interface MetricsHighlights {
  goroutines: SeriesStats | null;
  heapBytes: SeriesStats | null;
  /** Over the window. */
  gcCycles: number | null;
  gcCpuSeconds: number | null;
  gcPauseSeconds: number | null;
  allocatedBytes: number | null;
  /** The scheduling latency's p99 among the window's observations (runtime/metrics /sched/latencies). */
  schedLatencyP99Seconds: number | null;
}

export interface MetricsModel {
  kind: 'metrics';
  source: MetricsFile['source'];
  start: string;
  intervalMs: number;
  /** Seconds after `start` of each scrape: the x axis of every series. */
  times: number[];
  /** From the first successful scrape to the last, seconds. */
  windowSeconds: number;
  failedScrapes: number;
  highlights: MetricsHighlights;
  series: MetricSeries[];
}

/** The Go runtime's settings a metrics window states (runtime/metrics names as client_golang exports them). */
export interface MetricsRuntimeSettings {
  /** `go_info{version="go1.26.8"}`. */
  goVersion: string | null;
  /** `/sched/gomaxprocs:threads`, the window's last value. */
  gomaxprocs: number | null;
  /** `/gc/gogc:percent`: GOGC, "off" when negative (GOGC=off). */
  gogc: string | null;
  /** `/gc/gomemlimit:bytes`: GOMEMLIMIT in bytes, "none" for math.MaxInt64 (the default: no limit). */
  gomemlimit: string | null;
}
