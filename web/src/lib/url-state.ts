import type { DiffModeParam, ProfileKind } from './api.ts';
import { isProfileKind } from './profile-kinds.ts';

/** Tabs of the comparison page. */
export const TABS = ['flame', 'diff', 'trends', 'sandwich', 'load', 'bench', 'gc'] as const;
export type Tab = (typeof TABS)[number];

/** The diff modes as the picker names them; `auto` lets the server choose (per request when it can). */
export const MODE_LABELS: Record<DiffModeParam, string> = {
  auto: 'auto',
  absolute: 'absolute',
  share: 'share of total',
  normalize: 'normalize',
  'per-request': 'per request',
};
export const MODES = Object.keys(MODE_LABELS) as DiffModeParam[];

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
  /** pprof's filters: Go regular expressions, checked and applied by the server. */
  focus: string;
  ignore: string;
  hide: string;
  show: string;
  /** Search term shared by all flamegraphs. */
  search: string;
  /** Focused frame: the function zoomed in the flamegraphs and shown in the sandwich. */
  fn: string;
  /** Noise floor for diff colours, as a fraction of the larger total (0.001 = 0.1 %). */
  noise: number;
}

export const DEFAULT_VIEW: ViewState = {
  tab: 'flame',
  base: '',
  target: '',
  kind: '',
  sampleType: '',
  mode: 'auto',
  focus: '',
  ignore: '',
  hide: '',
  show: '',
  search: '',
  fn: '',
  noise: 0.001,
};

const STRING_KEYS = ['base', 'target', 'sampleType', 'focus', 'ignore', 'hide', 'show', 'search', 'fn'] as const;

/** The filter fields, in pprof's order. */
export const FILTER_KEYS = ['focus', 'ignore', 'hide', 'show'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type Filters = Record<FilterKey, string>;

/** Parse a query string ("?tab=diff&…" or URLSearchParams); unknown or invalid values fall back to defaults. */
export function parseViewState(search: string | URLSearchParams): ViewState {
  const q = typeof search === 'string' ? new URLSearchParams(search) : search;
  const state: ViewState = { ...DEFAULT_VIEW };
  const tab = q.get('tab');
  if (tab && (TABS as readonly string[]).includes(tab)) state.tab = tab as Tab;
  const mode = q.get('mode');
  if (mode && (MODES as readonly string[]).includes(mode)) state.mode = mode as DiffModeParam;
  const kind = q.get('kind');
  if (kind && isProfileKind(kind)) state.kind = kind;
  for (const key of STRING_KEYS) {
    const v = q.get(key);
    if (v !== null) state[key] = v;
  }
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
  for (const key of [...FILTER_KEYS, 'search', 'fn'] as const) if (state[key]) q.set(key, state[key]);
  if (state.noise !== DEFAULT_VIEW.noise) q.set('noise', String(state.noise));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * The filters to send: those set in the view, less the one the server refused (Go's syntax is not
 * JavaScript's, so only the server can say; its message is shown at that field instead).
 */
export function filtersToSend(state: ViewState, refused: { param: string; value: string } | null): Filters {
  const out = { focus: '', ignore: '', hide: '', show: '' };
  for (const k of FILTER_KEYS) if (!(refused && refused.param === k && refused.value === state[k])) out[k] = state[k];
  return out;
}

/** Resolve the base/target stage ids against the comparison's stages (default: first and last). */
export function resolveStages(state: ViewState, stageIds: string[]): { base: string; target: string } {
  const has = (id: string) => stageIds.includes(id);
  const first = stageIds[0] ?? '';
  const last = stageIds[stageIds.length - 1] ?? '';
  return { base: has(state.base) ? state.base : first, target: has(state.target) ? state.target : last };
}
