/**
 * The load behind a run imported from a continuous profiler: the requests a Prometheus-compatible
 * server counted over the run's window, as `stagediff import --requests-query` asked it. The import
 * writes one per run (`run-K-requests.json`, beside `run-K-cpu.pb.gz`), so the run's profiles are
 * divided by the requests served while they were taken; ingest/loadtest/prometheus.ts reads it back
 * as a load run of the `prometheus` format.
 *
 * The count is not stored on its own: it is the value in `answer`, Prometheus's answer kept as it
 * came, so the record cannot say one number and the answer another.
 */
export interface RequestsRecord {
  schema: 'stagediff-requests/1';
  /** Where it was asked: the server's base URL (scheme, host, path; no query). */
  url: string;
  /** The expression as the stage editor gave it, with `$__range`. */
  query: string;
  /** The expression as sent: `$__range` replaced by the window in milliseconds. */
  evaluated: string;
  /** The window counted (ISO 8601 UTC); the query was evaluated at its end. */
  from: string;
  to: string;
  /** This record's run (1-based) and the import's number of runs. */
  run: number;
  runs: number;
  /** The answer to `GET /api/v1/query`, parsed JSON as it came. */
  answer: unknown;
}

export const REQUESTS_SCHEMA = 'stagediff-requests/1';
