/**
 * Go benchmark results (`go test -bench -benchmem -count N`) and their benchstat-style comparison.
 * Plain JSON-serialisable data; the shapes are part of the API contract (server/src/api/).
 */

/**
 * File-level configuration from the `key: value` header lines of a `go test -bench` output.
 * A key that is absent (or takes several values across the file, e.g. `pkg` when several packages ran
 * in one `go test`) is `null`; every benchmark also carries its own `pkg`.
 */
export interface BenchConfig {
  goos: string | null;
  goarch: string | null;
  pkg: string | null;
  cpu: string | null;
}

/**
 * All runs of one benchmark for one unit.
 * - `name`: as benchstat prints it — without the `Benchmark` prefix, with the `-N` GOMAXPROCS suffix
 *   (e.g. `Encode/small-2`).
 * - `unit`: benchstat's tidied unit: `ns/op` becomes `sec/op` (values in seconds), `MB/s` becomes `B/s`
 *   (values in bytes per second, 1 MB = 10^6 B); `B/op`, `allocs/op` and custom units (`b.ReportMetric`)
 *   are kept as written.
 * - `values`: one per run, in file order, in `unit`.
 * - `median`: the sample median as benchstat computes it (its quantile estimator at 0.5).
 */
export interface BenchmarkSeries {
  pkg: string;
  name: string;
  unit: string;
  /**
   * Every `key: value` configuration line in effect for these results (pkg, goos, cpu, notes, …), in
   * the order set. benchstat compares results only under equal configurations: two files whose `note:`
   * lines differ land in separate tables, and so here in no row.
   */
  config: Record<string, string>;
  values: number[];
  median: number;
}

/**
 * A parsed `go test -bench` output. `benchmarks` holds one entry per (pkg, name, unit), in order of
 * first appearance (benchmarks by line, units by column), as benchstat lists them.
 */
export interface BenchmarkRun {
  kind: 'benchmark';
  format: 'go-bench';
  config: BenchConfig;
  benchmarks: BenchmarkSeries[];
}

/**
 * One side of a compared row: the median and its 95 % confidence interval as a fraction of the median
 * (0.11 for benchstat's "± 11%"). `ci` is `null` where benchstat prints "± ∞" (too few runs for a 95 %
 * interval) or "± ?" (the interval crosses zero).
 */
export interface BenchSideSummary {
  median: number;
  ci: number | null;
}

/**
 * One benchmark and unit compared across two files, as benchstat reports it.
 * - `deltaPercent`: (target / base − 1) · 100; `null` where benchstat prints "?" (base median 0, target not).
 * - `p`: the two-sided Mann-Whitney U test p-value (1 when every value on both sides is equal).
 * - `n`: as benchstat prints it: the run count when both sides have the same number, else "N1+N2".
 * - `significant`: p ≤ 0.05; benchstat prints "~" where this is false.
 */
export interface BenchmarkDiffRow {
  pkg: string;
  name: string;
  unit: string;
  base: BenchSideSummary;
  target: BenchSideSummary;
  deltaPercent: number | null;
  p: number;
  n: number | string;
  nBase: number;
  nTarget: number;
  significant: boolean;
}

/**
 * The comparison of two benchmark files. Rows exist for every (configuration, pkg, name, unit) present
 * in both files, ordered like benchstat's tables: by package, then unit, then benchmark, each in order
 * of first appearance (base file first). `unpaired` counts the series of each side with no partner;
 * `reason` says, when no row could be paired although both sides have results, which configuration
 * lines differ.
 */
export interface BenchmarkDiff {
  kind: 'benchmark-diff';
  /** The significance level used: benchstat's default 0.05. */
  alpha: number;
  rows: BenchmarkDiffRow[];
  unpaired: { base: number; target: number };
  reason: string | null;
}
