/**
 * The tree requests of a comparison page, built in one place for both sides: the web client asks for its
 * flamegraphs and diffs with these URLs, and the server works out from a page's address alone which of
 * them the page's first view will make, to name them in the page (`<link rel="preload">`) so the browser
 * fetches them while the page's script loads. Plain functions over routes.ts: the web bundle imports it.
 */
import { isProfileKind } from './labels.ts';
import {
  DEFAULT_DIFF_MODE,
  DEFAULT_GRANULARITY,
  DIFF_MODE_PARAMS,
  FILTERS,
  type FilterName,
  GRANULARITIES,
  isOneOf,
} from './options.ts';
import { endpointUrl } from './routes.ts';

/** Server-side trimming: frames below this fraction of the tree's root are left out (the server counts them). */
export const TREE_MIN_FRACTION = 0.0005;
/** Most frames the page asks the server for in one tree (it raises the threshold above TREE_MIN_FRACTION to stay within). */
export const TREE_MAX_NODES = 20_000;

/** What a tree is drawn from: the kind, sample type and granularity chosen ('' or `functions`: the default), the filters. */
export interface TreeChoice {
  kind: string;
  sampleType: string;
  granularity: string;
  filters: Readonly<Record<FilterName, string>>;
}

function profileParams(c: TreeChoice) {
  return {
    kind: c.kind,
    sampleType: c.sampleType,
    granularity: c.granularity === DEFAULT_GRANULARITY ? '' : c.granularity,
  };
}

/**
 * One stage's flamegraph, trimmed for drawing, in the unit of the page's mode (`auto` or absent: the server
 * chooses, per request when the stage's profiles have their runs); with `root`, the subtree of the frame at
 * that call path.
 */
export function flamegraphUrl(
  id: string,
  stage: string,
  c: TreeChoice & { mode?: string },
  root: readonly string[] = [],
): string {
  return endpointUrl(
    'flamegraph',
    { id },
    {
      stage,
      ...profileParams(c),
      mode: !c.mode || c.mode === 'auto' ? '' : c.mode,
      minFraction: TREE_MIN_FRACTION,
      maxNodes: TREE_MAX_NODES,
      root: root.length > 0 ? root : undefined,
      ...c.filters,
    },
  );
}

/**
 * The diff of two stages, trimmed for drawing (`mode` auto: the server chooses); with `root`, the subtree
 * at that call path, and `limit` the hot-path rows wanted.
 */
export function diffUrl(
  id: string,
  base: string,
  target: string,
  c: TreeChoice & { mode: string },
  root: readonly string[] = [],
  limit?: number,
): string {
  return endpointUrl(
    'diff',
    { id },
    {
      base,
      target,
      ...profileParams(c),
      mode: c.mode === DEFAULT_DIFF_MODE ? '' : c.mode,
      minFraction: TREE_MIN_FRACTION,
      maxNodes: TREE_MAX_NODES,
      root: root.length > 0 ? root : undefined,
      limit,
      ...c.filters,
    },
  );
}

/** A pair's changes with "what changed"'s functions, in its order (the hot paths rank those first). */
export function pairChangesUrl(id: string, base: string, target: string): string {
  return endpointUrl('changes', { id }, { base, target });
}

/** A pair's figures as the change engine judges them, without the functions (the diff's own business). */
export function pairFiguresUrl(id: string, base: string, target: string): string {
  return endpointUrl('changes', { id }, { base, target, functions: 'off' });
}

/** A preloaded URL longer than this is left to the page (a deep zoom path): the page's head stays small. */
const MAX_PRELOAD_URL = 2000;

/**
 * The API requests the first view of a page at `pathname` + `search` makes, as far as its address tells:
 * none but for a comparison page (`/c/:id`); there the comparison and its stage table, and, when the
 * address names both stages, the flamegraphs (tab `flame`, the default) or the diff and the pair's figures
 * (tab `diff`) it draws first, with the subtree zoomed into when it names one. The address's values are
 * read as the page reads them (web/src/lib/url-state.ts); one it would not accept leaves the request out.
 */
export function firstViewRequests(pathname: string, search: string): string[] {
  const m = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (!m) return [];
  let id: string;
  try {
    id = decodeURIComponent(m[1] as string);
  } catch {
    return [];
  }
  const urls = [endpointUrl('getComparison', { id }), endpointUrl('stageTable', { id })];
  const q = new URLSearchParams(search);
  const tab = q.get('tab') ?? 'flame';
  const base = q.get('base') ?? '';
  const target = q.get('target') ?? '';
  // Without both stages named, the page picks the pair from the comparison's stages.
  if ((tab !== 'flame' && tab !== 'diff') || !base || !target) return urls;
  const kind = q.get('kind') ?? '';
  const granularity = q.get('granularity') ?? DEFAULT_GRANULARITY;
  const mode = q.get('mode') ?? DEFAULT_DIFF_MODE;
  if (kind && !isProfileKind(kind)) return urls;
  if (!isOneOf(GRANULARITIES, granularity) || !isOneOf(DIFF_MODE_PARAMS, mode)) return urls;
  const choice: TreeChoice = {
    kind,
    sampleType: q.get('sampleType') ?? '',
    granularity,
    filters: Object.fromEntries(FILTERS.map((k) => [k, q.get(k) ?? ''])) as Record<FilterName, string>,
  };
  // The zoom path; a focused function without one is zoomed into where the whole tree has it widest,
  // which only the page can tell.
  const zoom = q.getAll('zoom');
  const trees: string[] = [];
  if (tab === 'flame')
    for (const stage of new Set([base, target])) {
      trees.push(flamegraphUrl(id, stage, { ...choice, mode }));
      if (zoom.length > 0) trees.push(flamegraphUrl(id, stage, { ...choice, mode }, zoom));
    }
  else {
    const c = { ...choice, mode };
    trees.push(diffUrl(id, base, target, c));
    if (zoom.length > 0) trees.push(diffUrl(id, base, target, c, zoom, 1));
    if (base !== target) trees.push(pairFiguresUrl(id, base, target));
  }
  return [...urls, ...trees.filter((u) => u.length <= MAX_PRELOAD_URL)];
}
