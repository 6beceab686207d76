/**
 * The option vocabulary, declared once as plain data: the values a view's query, a CLI flag, an MCP tool
 * and the page's address may take, and their defaults. The schemas (views.ts), the server's query
 * handling, the CLI's flags and `check`'s rule names are built from these lists; no run-time imports, so
 * the web bundle imports it as it is.
 */
import type { ProfileKind as ModelProfileKind } from '../model/profile.ts';
import { NAMED_REQUEST_PARTS } from '../model/trace-requests.ts';

/** Profile kinds (model/profile.ts): a view is always of one kind; profiles of different kinds never merge. */
export const PROFILE_KINDS = [
  'cpu',
  'wall',
  'allocs',
  'heap',
  'mutex',
  'block',
  'goroutine',
  'trace-net',
  'trace-sync',
  'trace-syscall',
  'trace-sched',
  'other',
] as const;
export type ProfileKind = (typeof PROFILE_KINDS)[number];

/** What rows and tree nodes stand for, as `go tool pprof -functions|-lines|-files`. */
export const GRANULARITIES = ['functions', 'lines', 'files'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
/** pprof's default: a row per function. */
export const DEFAULT_GRANULARITY: Granularity = 'functions';

/** How a diff divides its two sides (views.ts DiffMode says what each means). */
export const DIFF_MODES = ['absolute', 'share', 'normalize', 'per-request'] as const;
export type DiffMode = (typeof DIFF_MODES)[number];
/** What a request may ask for: a mode, or `auto` (per request when it can be measured, else absolute). */
export const DIFF_MODE_PARAMS = ['auto', ...DIFF_MODES] as const;
export type DiffModeParam = (typeof DIFF_MODE_PARAMS)[number];
export const DEFAULT_DIFF_MODE: DiffModeParam = 'auto';

/** Whether `changes` lists the functions whose cost changed: `auto` when the stages have profiles. */
export const FUNCTIONS_OPTIONS = ['auto', 'on', 'off'] as const;
export type FunctionsOption = (typeof FUNCTIONS_OPTIONS)[number];
export const DEFAULT_FUNCTIONS: FunctionsOption = 'auto';

/** pprof's name filters, in the order pprof applies them; given several times, joined with "|". */
export const NAME_FILTERS = ['focus', 'ignore', 'hide', 'show'] as const;
/** pprof's tag (label) filters, applied after the others; one expression each. */
export const TAG_FILTERS = ['tagfocus', 'tagignore', 'tagshow', 'taghide'] as const;
/** Every filter, in pprof's order (the query's order too). */
export const FILTERS = [...NAME_FILTERS, ...TAG_FILTERS] as const;
export type NameFilter = (typeof NAME_FILTERS)[number];
export type TagFilter = (typeof TAG_FILTERS)[number];
export type FilterName = (typeof FILTERS)[number];

/**
 * The figures `stagediff check --fail-on` and the report name (`metric`): the stage table's load-test
 * and per-request figures (labels.ts FIGURES gives each its words), then the runtime rows the change
 * engine judges from execution traces and from runtime metrics (api/changes.ts RuntimeChanges), and the
 * traced requests' rows.
 */
export const FIGURE_METRICS = [
  'rps',
  'p50',
  'p95',
  'p99',
  'error-rate',
  'cpu-per-request',
  'alloc-per-request',
] as const;
export const TRACE_METRICS = [
  'sched-wait-mean',
  'sched-wait-p99',
  'gc-stw',
  'blocked-channel',
  'blocked-select',
  'blocked-sync',
  'blocked-network',
  'syscall',
  'goroutines-created',
] as const;
export const RUNTIME_METRICS = ['gc-cpu', 'allocated-bytes', 'sched-latency-p99'] as const;
/** The parts of a traced request's time a reason names (model/trace-requests.ts), each a `request-tail-PART` row. */
export const REQUEST_PARTS = NAMED_REQUEST_PARTS;
/** The traced requests' rows: latency percentiles and the slowest 1 %'s parts. */
export const REQUEST_METRICS = [
  'request-p50',
  'request-p90',
  'request-p99',
  ...REQUEST_PARTS.map((p) => `request-tail-${p}` as const),
] as const;
export type FigureMetric = (typeof FIGURE_METRICS)[number];
export type TraceMetric = (typeof TRACE_METRICS)[number];
export type RuntimeMetric = (typeof RUNTIME_METRICS)[number];
/** Every metric name a rule may gate (besides `bench:UNIT`). */
export const METRICS = [...FIGURE_METRICS, ...TRACE_METRICS, ...RUNTIME_METRICS, ...REQUEST_METRICS] as const;

/** Whether `s` is one of `values` (narrowing a string read from a URL, a flag or a file). */
export function isOneOf<T extends string>(values: readonly T[], s: string): s is T {
  return (values as readonly string[]).includes(s);
}

// The model's kinds and the contract's are one list: the build fails when either gains a kind alone.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const kindsAgree: Same<ProfileKind, ModelProfileKind> = true;
void kindsAgree;
