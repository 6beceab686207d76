/**
 * Constructors for the canonical load-test model, shared by every importer in this folder.
 *
 * The errors contract: `errors` = transportErrors + non2xx, null only when neither part is known;
 * an importer passes `errors` itself only when its source gives a total it cannot split.
 * Units are the model's: ms, seconds, requests per second, bytes per second.
 */
import type {
  LatencyMs,
  LoadTestFormat,
  LoadTestMeta,
  LoadTestRun,
  LoadTestSummary,
  PercentilePoint,
  TimelineBucket,
} from '../../../model/loadtest.ts';
import { emptyLatency } from '../../../model/loadtest.ts';

/**
 * The one rule for errors across tools: a request failed when it got no HTTP response
 * (transportErrors) or a response with a status outside 200–399 (`non2xx` keeps its historical
 * name). A 3xx is an answer, as wrk, k6, vegeta, Locust and bombardier count it. Where a tool
 * prints only a "non-2xx" total that cannot be split (ab's text, autocannon's "non 2xx" line and
 * --json total without the per-class counts), that total is used and the run's notes say so.
 */
export function isFailedStatus(code: number): boolean {
  return code < 200 || code > 399;
}

/** transportErrors + non2xx, null only when neither part is known. */
export function sumErrors(transportErrors: number | null, non2xx: number | null): number | null {
  if (transportErrors === null && non2xx === null) return null;
  return (transportErrors ?? 0) + (non2xx ?? 0);
}

export interface SummaryInit {
  requests?: number | null;
  durationSeconds?: number | null;
  rps?: number | null;
  transportErrors?: number | null;
  non2xx?: number | null;
  /** Only when the source gives a total that cannot be split; otherwise transport + non2xx. */
  errors?: number | null;
  latencyMs?: LatencyMs;
  bytesPerSecond?: number | null;
  meta: LoadTestMeta;
}

/** A summary from the figures given; every figure not given is null (latency: all null). */
export function summary(init: SummaryInit): LoadTestSummary {
  const t = init.transportErrors ?? null;
  const h = init.non2xx ?? null;
  return {
    requests: init.requests ?? null,
    durationSeconds: init.durationSeconds ?? null,
    rps: init.rps ?? null,
    errors: init.errors === undefined ? sumErrors(t, h) : init.errors,
    transportErrors: t,
    non2xx: h,
    latencyMs: init.latencyMs ?? emptyLatency(),
    bytesPerSecond: init.bytesPerSecond ?? null,
    meta: init.meta,
  };
}

/** A summary with every figure null, for an importer that fills it in as it reads. */
export function blankSummary(meta: LoadTestMeta): LoadTestSummary {
  return summary({ meta });
}

/** A run of `format`; timeline and distribution are null when the source has none. */
export function run(
  format: LoadTestFormat,
  s: LoadTestSummary,
  timeline: TimelineBucket[] | null = null,
  latencyDistribution: PercentilePoint[] | null = null,
): LoadTestRun {
  return { kind: 'loadtest', format, summary: s, timeline, latencyDistribution };
}
