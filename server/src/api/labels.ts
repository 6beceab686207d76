/**
 * How the figures and the profile kinds are named, one table each for every reader: the change engine's
 * sentences, the stage table on the page and its CSV/Markdown exports, the pickers and the messages.
 * Plain data with no run-time imports, so the web bundle imports it as it is.
 */
import type { FigureKey } from './changes.ts';
import type { ChangeStyle } from './words.ts';
import { type FigureMetric, PROFILE_KINDS, type ProfileKind, isOneOf } from './options.ts';

export interface FigureText {
  /** The name `stagediff check --fail-on` and the report's `metric` use. */
  metric: FigureMetric;
  /** In sentences ("CPU per request −16 % …"). */
  label: string;
  /** In a table's column head. */
  short: string;
  /** The unit the engine gives the figure in. */
  unit: string;
  better: 'higher' | 'lower';
  /** How its change reads: a ratio (QPS ×2.05) or a percentage. */
  style: ChangeStyle;
  /** The column of the stage table's CSV. */
  csv: string;
}

/** Every figure of the stage table (the record makes the build fail when the contract gains one). */
export const FIGURES: Record<FigureKey, FigureText> = {
  rps: { metric: 'rps', label: 'QPS', short: 'QPS', unit: 'req/s', better: 'higher', style: 'ratio', csv: 'rps' },
  p50: { metric: 'p50', label: 'P50', short: 'P50', unit: 'ms', better: 'lower', style: 'percent', csv: 'p50_ms' },
  p95: { metric: 'p95', label: 'P95', short: 'P95', unit: 'ms', better: 'lower', style: 'percent', csv: 'p95_ms' },
  p99: { metric: 'p99', label: 'P99', short: 'P99', unit: 'ms', better: 'lower', style: 'percent', csv: 'p99_ms' },
  errorRate: {
    metric: 'error-rate',
    label: 'Errors',
    short: 'Error rate',
    unit: 'fraction',
    better: 'lower',
    style: 'percent',
    csv: 'error_rate',
  },
  cpuPerRequest: {
    metric: 'cpu-per-request',
    label: 'CPU per request',
    short: 'CPU/req',
    unit: 'nanoseconds/request',
    better: 'lower',
    style: 'percent',
    csv: 'cpu_ns_per_request',
  },
  allocPerRequest: {
    metric: 'alloc-per-request',
    label: 'Allocated per request',
    short: 'Alloc/req',
    unit: 'bytes/request',
    better: 'lower',
    style: 'percent',
    csv: 'alloc_bytes_per_request',
  },
};

/** Each profile kind in words, for pickers and messages. */
export const KIND_LABELS: Record<ProfileKind, string> = {
  cpu: 'CPU',
  wall: 'wall clock',
  allocs: 'allocations (window)',
  heap: 'heap (snapshot)',
  mutex: 'mutex',
  block: 'block',
  goroutine: 'goroutines',
  'trace-net': 'network blocking (trace)',
  'trace-sync': 'sync blocking (trace)',
  'trace-syscall': 'syscall blocking (trace)',
  'trace-sched': 'scheduler latency (trace)',
  other: 'other',
};

/** Whether `s` names a profile kind (options.ts PROFILE_KINDS). */
export function isProfileKind(s: string): s is ProfileKind {
  return isOneOf(PROFILE_KINDS, s);
}

/**
 * A service's own request counter among its runtime metrics, by client_golang's naming (`…requests_total`,
 * by route or code): the runtime timeline's QPS when no load run's timeline covers the window. Never
 * `promhttp_metric_handler_requests_total`, which counts the scrapes of /metrics itself.
 */
export function isRequestCounterName(name: string): boolean {
  return name.endsWith('requests_total') && name !== 'promhttp_metric_handler_requests_total';
}
