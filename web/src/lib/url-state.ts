import {
  DEFAULT_DIFF_MODE,
  DEFAULT_GRANULARITY,
  DIFF_MODE_PARAMS,
  FILTERS,
  GRANULARITIES,
  isOneOf,
} from '../../../server/src/api/options.ts';
import type { TreeChoice } from '../../../server/src/api/page-requests.ts';
import type { DiffModeParam, Granularity, ProfileKind } from './api.ts';
import { isProfileKind } from './profile-kinds.ts';

import { TABS, type Tab } from './tabs.ts';

export { TABS, type Tab };

/** The diff modes as the picker names them; `auto` lets the server choose (per request when it can). */
export const MODE_LABELS: Record<DiffModeParam, string> = {
  auto: 'auto',
  absolute: 'absolute',
  share: 'share of total',
  normalize: 'normalize',
  'per-request': 'per request',
};
export const MODES = DIFF_MODE_PARAMS;

/** What rows and frames stand for, as go tool pprof's -functions, -lines, -files. */
export const GRANULARITY_LABELS: Record<Granularity, string> = {
  functions: 'functions',
  lines: 'source lines',
  files: 'files',
};
export { GRANULARITIES };

/**
 * Every piece of the comparison page's view state. It lives in the query string so the address bar is
 * the share link. Empty strings mean "not set / default".
 */
export interface ViewState {
  tab: Tab;
  /** Stage ids: left/base and right/target. Empty → first and last stage. */
  base: string;
  target: string;
  /** The profile kind the views read ('' = the server's default: CPU when the stages have it). */
  kind: ProfileKind | '';
  sampleType: string;
  mode: DiffModeParam;
  granularity: Granularity;
  /** pprof's filters: Go regular expressions, checked and applied by the server. */
  focus: string;
  ignore: string;
  hide: string;
  show: string;
  /** pprof's tag (label) filters: `[KEY=]RANGE|REGEXPS` for tagfocus/tagignore, a key regexp for tagshow/taghide. */
  tagfocus: string;
  tagignore: string;
  tagshow: string;
  taghide: string;
  /** Search term shared by all flamegraphs. */
  search: string;
  /** Focused frame: the function zoomed in the flamegraphs and shown in the sandwich. */
  fn: string;
  /**
   * The frame zoomed into: its call path (names from the outermost frame), as clicked; empty: the
   * widest frame of `fn`, or the whole tree. Each graph asks the server for that subtree.
   */
  zoom: string[];
  /** Noise floor for diff colours, as a fraction of the larger total (0.001 = 0.1 %). */
  noise: number;
}

export const DEFAULT_VIEW: ViewState = {
  tab: 'flame',
  base: '',
  target: '',
  kind: '',
  sampleType: '',
  mode: DEFAULT_DIFF_MODE,
  granularity: DEFAULT_GRANULARITY,
  focus: '',
  ignore: '',
  hide: '',
  show: '',
  tagfocus: '',
  tagignore: '',
  tagshow: '',
  taghide: '',
  search: '',
  fn: '',
  zoom: [],
  noise: 0.001,
};

/**
 * The view after a change. Setting the focused function without a zoom path drops the path (it was the
 * frame of the function before): a hot-path row or a trajectory line zooms to the widest frame of its
 * function, "Reset zoom" to the whole tree.
 */
export function applyViewPatch(state: ViewState, patch: Partial<ViewState>): ViewState {
  const next = { ...state, ...patch };
  if (patch.fn !== undefined && patch.zoom === undefined) next.zoom = [];
  return next;
}

/** The filter fields, in pprof's order. */
export const FILTER_KEYS = FILTERS;

const STRING_KEYS = ['base', 'target', 'sampleType', ...FILTER_KEYS, 'search', 'fn'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Record<FilterKey, string>;

/** Parse a query string ("?tab=diff&…" or URLSearchParams); unknown or invalid values fall back to defaults. */
export function parseViewState(search: string | URLSearchParams): ViewState {
  const q = typeof search === 'string' ? new URLSearchParams(search) : search;
  const state: ViewState = { ...DEFAULT_VIEW };
  const tab = q.get('tab');
  if (tab && isOneOf(TABS, tab)) state.tab = tab;
  const mode = q.get('mode');
  if (mode && isOneOf(MODES, mode)) state.mode = mode;
  const granularity = q.get('granularity');
  if (granularity && isOneOf(GRANULARITIES, granularity)) state.granularity = granularity;
  const kind = q.get('kind');
  if (kind && isProfileKind(kind)) state.kind = kind;
  for (const key of STRING_KEYS) {
    const v = q.get(key);
    if (v !== null) state[key] = v;
  }
  state.zoom = q.getAll('zoom');
  const noise = q.get('noise');
  if (noise !== null && noise !== '') {
    const n = Number(noise);
    if (Number.isFinite(n) && n >= 0 && n < 1) state.noise = n;
  }
  return state;
}

/** Serialise to a query string (with leading "?", or "" when everything is default); stable key order. */
export function serializeViewState(state: ViewState): string {
  const q = new URLSearchParams();
  if (state.tab !== DEFAULT_VIEW.tab) q.set('tab', state.tab);
  for (const key of ['base', 'target', 'kind', 'sampleType'] as const) if (state[key]) q.set(key, state[key]);
  if (state.mode !== DEFAULT_VIEW.mode) q.set('mode', state.mode);
  if (state.granularity !== DEFAULT_VIEW.granularity) q.set('granularity', state.granularity);
  for (const key of [...FILTER_KEYS, 'search', 'fn'] as const) if (state[key]) q.set(key, state[key]);
  for (const frame of state.zoom) q.append('zoom', frame);
  if (state.noise !== DEFAULT_VIEW.noise) q.set('noise', String(state.noise));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * The filters to send: those set in the view, less the one the server refused (Go's syntax is not
 * JavaScript's, so only the server can say; its message is shown at that field instead).
 */
export function filtersToSend(state: ViewState, refused: { param: string; value: string } | null): Filters {
  const out = Object.fromEntries(FILTER_KEYS.map((k) => [k, ''])) as Filters;
  for (const k of FILTER_KEYS) if (!(refused && refused.param === k && refused.value === state[k])) out[k] = state[k];
  return out;
}

/** What a view's flamegraphs and diffs are drawn from: its profile choice, and the filters sent. */
export function treeChoice(state: ViewState, filters: Filters): TreeChoice {
  return { kind: state.kind, sampleType: state.sampleType, granularity: state.granularity, filters };
}

/** The pair of stages a view shows, and the sides whose stage the state named but the comparison no longer has. */
export interface ResolvedStages {
  base: string;
  target: string;
  gone: ('base' | 'target')[];
}

/**
 * The base/target stage ids a view shows: those the state names, where the comparison has them; else
 * the last two stages that have what the view needs (`eligible`: e.g. a profile of the chosen kind) —
 * the last of them as target, the one before it as base. Without eligible stages, the last two stages.
 * A named stage that is gone counts as not named (and is listed in `gone`).
 */
export function resolveStages(
  state: Pick<ViewState, 'base' | 'target'>,
  stageIds: readonly string[],
  eligible: ReadonlySet<string> | null = null,
): ResolvedStages {
  const has = (id: string) => id !== '' && stageIds.includes(id);
  const gone: ('base' | 'target')[] = [];
  if (state.base && !has(state.base)) gone.push('base');
  if (state.target && !has(state.target)) gone.push('target');
  const pool = eligible ? stageIds.filter((id) => eligible.has(id)) : [...stageIds];
  const usable = pool.length > 0 ? pool : [...stageIds];
  const last = usable[usable.length - 1] ?? '';
  const target = has(state.target) ? state.target : last;
  // The base: the usable stage before the target; at the first one, the target itself.
  const before = usable.filter((id) => stageIds.indexOf(id) < stageIds.indexOf(target));
  const base = has(state.base) ? state.base : (before[before.length - 1] ?? target);
  return { base, target, gone };
}
