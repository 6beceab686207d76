import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import { formatDeltaPercent, formatShare, formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { verdictWords } from '../../../server/src/api/words.ts';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { DiffLegend } from '../components/diff-legend.tsx';
import { FlameGraph, HATCH, flameGraphSvg } from '../components/flame-graph.tsx';
import { HotPathTable } from '../components/hot-path-table.tsx';
import { Trajectory, printedUnit } from '../components/trajectory.tsx';
import { UnitNote } from '../components/unit-note.tsx';
import { PairChanges } from '../components/pair-changes.tsx';
import {
  ApiError,
  type ApiRequest,
  type ChangePointMark,
  type Diff,
  type DiffNode,
  type Flamegraph,
  type FlameNode,
  type Granularity,
  type ProfileKind,
  type Reply,
  type Stage,
  apiUrl,
} from '../lib/api.ts';
import { diffColor, hatchColors, neutralColor } from '../lib/diff-color.ts';
import { fullVerdict, untestedReason } from '../lib/diff-verdicts.ts';
import { downloadBlob, downloadText, slug, svgToPng } from '../lib/export-files.ts';
import { KIND_LABELS, hasProfile } from '../lib/profile-kinds.ts';
import { countNodes, findWidest } from '../lib/tree.ts';
import { fullNameTitle } from '../lib/full-names.ts';
import { diffUrl, flamegraphUrl, pairChangesUrl } from '../../../server/src/api/page-requests.ts';
import { type Filters, type ViewState, treeChoice } from '../lib/url-state.ts';
import { useApi, useFetch } from './use-fetch.ts';

/** Client-side: frames narrower than this many pixels are not drawn. */
export const MIN_FRAME_PX = 2;
/**
 * A zoom path whose URL would pass this many characters is zoomed in the browser only: servers
 * refuse request lines of a few tens of kilobytes.
 */
export const MAX_ROOT_URL = 12_000;

export interface PanelProps {
  comparisonId: string;
  /** The comparison's revision: a change (an upload, a deletion) fetches every view again. */
  revision: number;
  view: ViewState;
  setView: (p: Partial<ViewState>) => void;
  filters: Filters;
  dark: boolean;
  stages: Stage[];
  /** The profile kind the views read (the view's choice, else the server's default); null: no profile. */
  kind: ProfileKind | null;
  /** The stage table's change points (QPS, P99, CPU per request), marked where the stages are drawn. */
  changePoints?: readonly ChangePointMark[];
}

/** The profiles a view asks for: the kind and sample type chosen, if any (else the server's defaults). */
function profileQuery(view: ViewState): { kind?: ProfileKind; sampleType?: string; granularity?: Granularity } {
  return {
    ...(view.kind ? { kind: view.kind } : {}),
    ...(view.sampleType ? { sampleType: view.sampleType } : {}),
    ...(view.granularity !== 'functions' ? { granularity: view.granularity } : {}),
  };
}

/**
 * A link downloading the stage's merged profile (or, with a base, the diff of the two stages in
 * pprof's -diff_base convention) as a pprof file, for go tool pprof.
 */
export function PprofDownload(props: {
  comparisonId: string;
  view: ViewState;
  stage: Stage;
  base?: Stage;
  kind: ProfileKind | null;
}) {
  const { comparisonId, view, stage, base, kind } = props;
  const choice = { ...(kind ? { kind } : {}), ...(view.sampleType ? { sampleType: view.sampleType } : {}) };
  const href = base
    ? apiUrl('diffProfile', { params: { id: comparisonId }, query: { base: base.id, target: stage.id, ...choice } })
    : apiUrl('stageProfile', { params: { id: comparisonId, stageId: stage.id }, query: choice });
  const name = base ? `${stage.name} vs ${base.name}` : stage.name;
  return (
    <a
      className="pprof-download"
      href={href}
      download={`${slug(name)}${kind ? `.${kind}` : ''}.pb.gz`}
      title={
        base
          ? 'The diff as a pprof file (go tool pprof -diff_base convention): go tool pprof -top FILE prints it'
          : "The stage's profiles merged, as a pprof file for go tool pprof"
      }
    >
      pprof
    </a>
  );
}

/** A link downloading the stage's CPU profiles merged as default.pgo, the input of `go build -pgo`. */
export function PgoDownload({ comparisonId, stage }: { comparisonId: string; stage: Stage }) {
  return (
    <a
      className="pprof-download"
      href={apiUrl('stagePgo', { params: { id: comparisonId, stageId: stage.id } })}
      download="default.pgo"
      title="The stage's CPU profiles merged, for profile-guided optimisation: put it in the main package as default.pgo (or go build -pgo=FILE)"
    >
      default.pgo
    </a>
  );
}

/** "This stage has no CPU profile." */
function noProfile(kind: ProfileKind | null): string {
  return kind ? `This stage has no ${KIND_LABELS[kind]} profile.` : 'This stage has no profile.';
}

/** SVG/PNG export buttons for the flamegraph inside `scope`. */
function FlameExport({
  scope,
  name,
  dark,
}: {
  scope: React.RefObject<HTMLElement | null>;
  name: string;
  dark: boolean;
}) {
  const getSvg = () => flameGraphSvg(scope.current, dark ? '#16181d' : '#ffffff');
  return (
    <span className="export-buttons">
      <button
        type="button"
        aria-label={`Download ${name} as SVG`}
        onClick={() => {
          const svg = getSvg();
          if (svg) downloadText(`${slug(name)}.svg`, svg.svg, 'image/svg+xml');
        }}
      >
        SVG
      </button>
      <button
        type="button"
        aria-label={`Download ${name} as PNG`}
        onClick={async () => {
          const svg = getSvg();
          if (svg) downloadBlob(`${slug(name)}.png`, await svgToPng(svg.svg, svg.width, svg.height));
        }}
      >
        PNG
      </button>
    </span>
  );
}

function flameTooltip(unit: string, total: number, fullNames?: Flamegraph['fullNames']) {
  return (d: FlameNode) =>
    `${d.name}${asWritten(d.name, fullNames)}\n${formatValue(d.value, unit)} · ${formatShare(total ? d.value / total : 0)} of total (unit: ${unit})`;
}

/** The full name(s) behind a short (pprof default) name, as lines to add under it; '' for the others. */
function asWritten(name: string, fullNames: Flamegraph['fullNames']): string {
  const title = fullNameTitle(name, fullNames);
  return title === name ? '' : `\n${title}`;
}

/** The flamegraph request of one stage (shared with the prefetch in the comparison view). */
export function flameGraphUrl(
  comparisonId: string,
  stageId: string,
  view: ViewState,
  filters: Filters,
  root: readonly string[] = [],
): string {
  return flamegraphUrl(comparisonId, stageId, { ...treeChoice(view, filters), mode: view.mode }, root);
}

/** The diff request of a pair (shared with the prefetch in the comparison view); `limit`: hot-path rows. */
export function pairDiffUrl(
  comparisonId: string,
  base: string,
  target: string,
  view: ViewState,
  filters: Filters,
  root: readonly string[] = [],
  limit?: number,
): string {
  return diffUrl(comparisonId, base, target, { ...treeChoice(view, filters), mode: view.mode }, root, limit);
}

/** The node at a call path of a tree (names below its root), or null. */
function nodeAt<T extends { name: string; children: T[] }>(tree: T, path: readonly string[]): T | null {
  let n: T | undefined = tree;
  for (const name of path) {
    n = n.children.find((c) => c.name === name);
    if (!n) return null;
  }
  return n;
}

/** The call path of the widest frame of a function in a tree, or null when no frame of it is drawn. */
function widestPath<T extends { name: string; value: number; children: T[] }>(tree: T, fn: string): string[] | null {
  const parent = new Map<T, T>();
  const stack = [tree];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (const c of n.children) {
      parent.set(c, n);
      stack.push(c);
    }
  }
  const best = findWidest(
    tree,
    (n) => n !== tree && n.name === fn,
    (n) => Math.abs(n.value),
  );
  if (!best) return null;
  const path: string[] = [];
  for (let n: T | undefined = best; n && n !== tree; n = parent.get(n)) path.push(n.name);
  return path.reverse();
}

/** The call path the graphs zoom into: the frame clicked, else the widest frame of the focused function. */
function zoomPath<T extends { name: string; value: number; children: T[] }>(
  view: ViewState,
  whole: T | undefined,
): string[] {
  if (view.zoom.length > 0) return view.zoom;
  if (view.fn && whole) return widestPath(whole, view.fn) ?? [];
  return [];
}

/** What a graph draws: the whole tree, or the frame zoomed into, and what its trim left out. */
interface Drawn<T> {
  tree: T;
  rootPath: string[];
  trim: { prunedNodes: number; prunedValue: number; nodeCap: number | null; nodes: number } | null;
  /** The subtree's detail is on its way from the server. */
  pending: boolean;
  /** No sample of this side passes through the zoom path. */
  absent: boolean;
}

/**
 * Zoom with detail on demand: the whole tree is trimmed at TREE_MIN_FRACTION (page-requests.ts) of
 * its total, so a frame zoomed into may have lost its detail. The server is asked for that subtree,
 * trimmed at TREE_MIN_FRACTION of the subtree's own value; until it answers, the frame as the whole
 * tree has it is drawn, so a click zooms at once and the detail follows.
 */
function useZoomed<
  T extends { name: string; value: number; children: T[] },
  R extends { tree: T; trim: Drawn<T>['trim'] & object },
>(
  whole: R | null,
  path: string[],
  subUrl: (root: string[]) => string,
  revision: number,
): { drawn: Drawn<T> | null; error: unknown; reload: () => void } {
  const url = path.length > 0 ? subUrl(path) : null;
  const sub = useFetch<R>(url && url.length <= MAX_ROOT_URL ? url : null, revision);
  if (!whole) return { drawn: null, error: null, reload: sub.reload };
  if (path.length === 0)
    return {
      drawn: { tree: whole.tree, rootPath: [], trim: whole.trim, pending: false, absent: false },
      error: null,
      reload: sub.reload,
    };
  if (sub.data)
    return {
      drawn: { tree: sub.data.tree, rootPath: path, trim: sub.data.trim, pending: false, absent: false },
      error: null,
      reload: sub.reload,
    };
  const absent = sub.error instanceof ApiError && sub.error.status === 404;
  const local = nodeAt(whole.tree, path);
  if (local)
    return {
      drawn: { tree: local, rootPath: path, trim: null, pending: sub.loading, absent: false },
      error: absent ? null : sub.error,
      reload: sub.reload,
    };
  return {
    drawn: absent ? { tree: whole.tree, rootPath: [], trim: whole.trim, pending: false, absent: true } : null,
    error: absent ? null : sub.error,
    reload: sub.reload,
  };
}

/** "1.8 % in 4,203 frames too small to draw — zoom in", or how the detail is coming. */
function TrimNote<T extends { value: number }>({ drawn, unit }: { drawn: Drawn<T>; unit: string }) {
  if (drawn.pending)
    return (
      <p className="muted small trim-note" role="status">
        Fetching the detail of this subtree…
      </p>
    );
  const t = drawn.trim;
  if (!t || t.prunedNodes === 0) return null;
  const root = Math.abs(drawn.tree.value);
  return (
    <p className="muted small trim-note" data-pruned-nodes={t.prunedNodes}>
      {formatShare(root ? Math.abs(t.prunedValue) / root : 0)} ({formatValue(Math.abs(t.prunedValue), unit)}) in{' '}
      {t.prunedNodes.toLocaleString('en-US')} frames too small to draw — zoom in (click a frame) to see them
      {t.nodeCap ? `; the tree holds its ${t.nodes.toLocaleString('en-US')} heaviest frames` : ''}.
    </p>
  );
}

/** The zoom's messages: a side no sample of which passes through the path, or a failed detail request. */
function ZoomProblem({
  absent,
  error,
  stage,
  onRetry,
}: {
  absent: boolean;
  error: unknown;
  stage: string;
  onRetry: () => void;
}) {
  if (absent)
    return (
      <p className="muted small" role="note">
        No sample of {stage} passes through the frame zoomed into; the whole tree is shown.
      </p>
    );
  return error ? <ErrorBox error={error} onRetry={onRetry} /> : null;
}

/**
 * A click in a graph drawn from `rootPath`: zoom to the frame clicked (its call path in the whole
 * tree); a click on the frame drawn full width goes one level out.
 */
function zoomTo(setView: PanelProps['setView'], rootPath: readonly string[], name: string, below: string[]) {
  if (below.length > 0) return setView({ zoom: [...rootPath, ...below], fn: name });
  const up = rootPath.slice(0, -1);
  setView({ zoom: up, fn: up[up.length - 1] ?? '' });
}

/** The way back out of a zoom: each frame of the path zoomed into, the whole tree first. */
function ZoomTrail({ path, setView }: { path: readonly string[]; setView: PanelProps['setView'] }) {
  if (path.length === 0) return null;
  // A deep path shows its first frame and its last three.
  const shown = path.length > 5 ? [0, -1, path.length - 3, path.length - 2, path.length - 1] : path.map((_, i) => i);
  return (
    <nav className="zoom-trail small" aria-label="Zoomed to">
      <span className="muted">zoomed to </span>
      <button type="button" className="link-button" onClick={() => setView({ zoom: [], fn: '' })}>
        all
      </button>
      {shown.map((i) =>
        i < 0 ? (
          <span key="gap" className="muted">
            {' '}
            › …
          </span>
        ) : (
          <span key={i}>
            {' › '}
            {i === path.length - 1 ? (
              <code className="fn-name">{path[i]}</code>
            ) : (
              <button
                type="button"
                className="link-button fn-name"
                title={path[i]}
                onClick={() => setView({ zoom: path.slice(0, i + 1), fn: path[i] ?? '' })}
              >
                {path[i]}
              </button>
            )}
          </span>
        ),
      )}
    </nav>
  );
}

/** Matches the server lists at most (the heaviest first); the page shows the first few. */
const SEARCH_HITS = 20;
const SEARCH_SHOWN = 5;

type SearchAnswer = Reply<'search'>;

/**
 * The server's answer to the search over the whole tree (drawn or trimmed): "n matches, x % of total"
 * and the heaviest matching frames, each a button zooming to it; a frame the drawn tree left out is
 * said so, and zooming brings it back from the server.
 */
function SearchMatches({
  answer,
  whole,
  setView,
  sides,
}: {
  answer: SearchAnswer | null;
  whole: { name: string; children: { name: string }[] } | null;
  setView: PanelProps['setView'];
  /** Names of the stages searched, in the answer's order. */
  sides: string[];
}) {
  if (!answer) return null;
  const shares = answer.totals.map((t, i) => formatShare(t ? Math.abs(answer.matched[i] ?? 0) / Math.abs(t) : 0));
  const share =
    shares.length === 2 ? `${sides[0]} ${shares[0]} → ${sides[1]} ${shares[1]} of total` : `${shares[0]} of total`;
  const trimmed = (path: string[]) => {
    // biome-ignore lint/suspicious/noExplicitAny: walks the drawn tree by names only
    let n: any = whole;
    for (const name of path) {
      n = n?.children.find((c: { name: string }) => c.name === name);
      if (!n) return true;
    }
    return false;
  };
  return (
    <div className="search-matches small" role="status" data-frames={answer.frames}>
      <span>
        {answer.frames.toLocaleString('en-US')} {answer.frames === 1 ? 'match' : 'matches'}, {share}
      </span>
      {answer.hits.length > 0 && (
        <ul aria-label="Heaviest matches">
          {answer.hits.slice(0, SEARCH_SHOWN).map((h) => {
            const name = h.path[h.path.length - 1] ?? '';
            const hidden = trimmed(h.path);
            return (
              <li key={h.path.join('\n')}>
                <button
                  type="button"
                  className="link-button fn-name"
                  title={h.path.join(' → ')}
                  data-trimmed={hidden ? '1' : undefined}
                  onClick={() => setView({ zoom: h.path, fn: name })}
                >
                  {name}
                </button>{' '}
                <span className="muted">
                  {h.values
                    .map((v, i) => formatShare(answer.totals[i] ? Math.abs(v) / Math.abs(answer.totals[i] ?? 1) : 0))
                    .join(' → ')}
                  {hidden ? ' · not drawn: zoom to see it' : ''}
                </span>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

/** The search request of one stage, or of a diff's two (null: no search). */
function searchQuery(
  props: PanelProps,
  stages: { stage: string } | { base: string; target: string },
): Pick<ApiRequest<'search'>, 'params' | 'query'> | null {
  if (!props.view.search) return null;
  return {
    params: { id: props.comparisonId },
    query: { ...stages, q: props.view.search, ...profileQuery(props.view), limit: SEARCH_HITS, ...props.filters },
  };
}

function OneFlame(props: PanelProps & { stage: Stage | undefined; side: string }) {
  const { stage, view, setView, side, dark } = props;
  const url = hasProfile(stage, props.kind)
    ? flameGraphUrl(props.comparisonId, stage.id, props.view, props.filters)
    : null;
  const { data, error, loading, reload } = useFetch<Flamegraph>(url, props.revision);
  const path = zoomPath(view, data?.tree);
  const zoomed = useZoomed<FlameNode, Flamegraph>(
    data,
    path,
    (root) => flameGraphUrl(props.comparisonId, stage?.id ?? '', props.view, props.filters, root),
    props.revision,
  );
  const scope = useRef<HTMLDivElement>(null);
  const tooltip = useMemo(() => (data ? flameTooltip(data.unit, data.total, data.fullNames) : () => ''), [data]);
  const rootPath = zoomed.drawn?.rootPath ?? [];
  const searched = useApi(
    'search',
    hasProfile(stage, props.kind) ? searchQuery(props, { stage: stage.id }) : null,
    props.revision,
  );
  return (
    <div className="flame-panel" ref={scope} data-side={side}>
      <div className="panel-head">
        <h3>
          {side}: {stage?.name ?? '—'}
        </h3>
        {data && (
          <span className="muted small">
            {KIND_LABELS[data.kind]} · {data.sampleType} · total{' '}
            <span className="view-total" data-unit={data.unit}>
              {formatValue(data.total, data.unit)}
            </span>
          </span>
        )}
        {data && <FlameExport scope={scope} name={`flamegraph-${stage?.name ?? side}`} dark={dark} />}
        {data && stage && (
          <PprofDownload comparisonId={props.comparisonId} view={view} stage={stage} kind={props.kind} />
        )}
        {data && stage && data.kind === 'cpu' && <PgoDownload comparisonId={props.comparisonId} stage={stage} />}
      </div>
      {!hasProfile(stage, props.kind) ? (
        <Empty>{noProfile(props.kind)}</Empty>
      ) : data && data.total === 0 ? (
        <Empty>
          No samples{Object.values(props.filters).some(Boolean) ? ' left by the filters' : ''} for {data.sampleType} in
          this stage.
        </Empty>
      ) : data ? (
        <>
          <ZoomProblem
            absent={!!zoomed.drawn?.absent}
            error={zoomed.error}
            stage={stage.name}
            onRetry={zoomed.reload}
          />
          {view.search && (
            <SearchMatches answer={searched.data} whole={data.tree} setView={setView} sides={[stage.name]} />
          )}
          {zoomed.drawn ? (
            <>
              <ZoomTrail path={rootPath} setView={setView} />
              <FlameGraph<FlameNode>
                tree={zoomed.drawn.tree}
                label={`Flamegraph of ${stage.name}`}
                tooltipFor={tooltip}
                search={view.search}
                onFocus={(name, below) => zoomTo(setView, rootPath, name, below)}
                minFrameSize={MIN_FRAME_PX}
              />
              <TrimNote drawn={zoomed.drawn} unit={data.unit} />
            </>
          ) : (
            !zoomed.error && <Loading what={`the zoomed part of ${stage.name}`} />
          )}
        </>
      ) : loading ? (
        <Loading what={`flamegraph of ${stage.name}`} />
      ) : (
        <ErrorBox error={error} onRetry={reload} />
      )}
      {/* Under the graph: keyboard focus goes from the head's links straight into the tree. */}
      {data && stage && <UnitNote data={data} stage={stage.name} />}
    </div>
  );
}

/** Two stages' flamegraphs side by side; search and zoom are shared. */
export function FlamePanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  return (
    <div className="side-by-side">
      <OneFlame {...props} stage={props.base} side="Left" />
      <OneFlame {...props} stage={props.target} side="Right" />
    </div>
  );
}

/** Seconds since `since` changed, ticking while `on`. */
function useElapsed(on: boolean, since: unknown): number {
  const [start, setStart] = useState(() => performance.now());
  const [now, setNow] = useState(start);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `since` is the restart trigger
  useEffect(() => {
    const t0 = performance.now();
    setStart(t0);
    setNow(t0);
    if (!on) return;
    const timer = setInterval(() => setNow(performance.now()), 250);
    return () => clearInterval(timer);
  }, [on, since]);
  return Math.max(0, (now - start) / 1000);
}

/** Diff flamegraph with the pair's figures, legend, warnings, the hot-path table. */
export function DiffPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { base, target, view, setView, dark } = props;
  const ok = hasProfile(base, props.kind) && hasProfile(target, props.kind);
  const fetched = useFetch<Diff>(
    ok ? pairDiffUrl(props.comparisonId, base.id, target.id, view, props.filters) : null,
    props.revision,
  );
  // While another diff is computed (a new sample type, mode or pair), the last one stays on screen, dimmed.
  const [last, setLast] = useState<Diff | null>(null);
  if (fetched.data && fetched.data !== last) setLast(fetched.data);
  const data = fetched.data ?? (fetched.loading ? last : null);
  const stale = !fetched.data && !!data;
  const elapsed = useElapsed(fetched.loading, fetched.data);
  const path = zoomPath(view, fetched.data?.tree);
  // The zoomed subtree's own request needs no table: one row.
  const zoomed = useZoomed<DiffNode, Diff>(
    fetched.data,
    path,
    (root) => pairDiffUrl(props.comparisonId, base?.id ?? '', target?.id ?? '', view, props.filters, root, 1),
    props.revision,
  );
  const scope = useRef<HTMLDivElement>(null);
  const searched = useApi(
    'search',
    ok && base && target ? searchQuery(props, { base: base.id, target: target.id }) : null,
    props.revision,
  );
  const hatch = useMemo(() => hatchColors(dark), [dark]);
  const reference = data ? Math.max(Math.abs(data.baseTotal), Math.abs(data.targetTotal)) : 1;
  const tested = data?.noise?.status === 'tested';
  const colorFor = useCallback(
    // Below the noise floor: grey. Tested across the runs and within their noise: hatched. Else the
    // colour of the change's size — also when too few runs were recorded to test it at all.
    (d: DiffNode) => {
      const c = diffColor(d, { noiseFloor: view.noise, reference, dark });
      if (c === neutralColor(dark)) return c;
      // Tested: only a significant change takes the change's colour; the rest, untested ones too, is hatched.
      return tested && d.verdict?.status !== 'significant' ? HATCH : c;
    },
    [view.noise, reference, dark, tested],
  );
  // The hot-path table, below the graph, is rendered in the background after the panel's first commit,
  // so the graph is painted without waiting for its rows.
  const hotPathsShown = useDeferredValue(true, false);
  // "What changed"'s functions, in its order: the hot paths rank them first.
  const changes = useFetch<Reply<'changes'>>(
    hotPathsShown && base && target ? pairChangesUrl(props.comparisonId, base.id, target.id) : null,
    props.revision,
  );
  const origins = useMemo(
    () => (changes.data?.functions.status === 'ok' ? changes.data.functions.changes.map((c) => c.name) : null),
    [changes.data],
  );
  const onNoise = useCallback((v: number) => setView({ noise: v }), [setView]);
  const onSelectRow = useCallback((fn: string) => setView({ fn, zoom: [] }), [setView]);
  const nameFor = useCallback(
    (d: DiffNode) => {
      // The marker goes after the name: a narrow frame's truncated label still shows the function. When
      // the runs were tested, new or removed only where the test says the change is significant.
      if (tested && d.verdict?.status !== 'significant') return d.name;
      if (d.base === 0 && d.target !== 0) return `${d.name} [new]`;
      if (d.target === 0 && d.base !== 0) return `${d.name} [removed]`;
      return d.name;
    },
    [tested],
  );
  const tooltip = useMemo(() => {
    if (!data) return () => '';
    const bName = base?.name ?? 'base';
    const tName = target?.name ?? 'target';
    const sh = (v: number, t: number) => (data.unit === 'fraction' || !t ? '' : ` (${formatShare(v / t)})`);
    const noise = data.noise;
    return (d: DiffNode) =>
      [
        nameFor(d) + asWritten(d.name, data.fullNames),
        `${bName}: ${formatValue(d.base, data.unit)}${sh(d.base, data.baseTotal)}`,
        `${tName}: ${formatValue(d.target, data.unit)}${sh(d.target, data.targetTotal)}`,
        `Δ ${formatSignedValue(d.delta, data.unit)} (${formatDeltaPercent(d.base, d.target)}) · unit: ${data.unit}`,
        ...(d.verdict && noise
          ? [
              `the function's cum across the profiles (${noise.normalisation === 'raw' ? 'as recorded' : noise.normalisation}): ${verdictWords(fullVerdict(d.verdict, noise, d.base, d.target))}`,
            ]
          : []),
      ].join('\n');
  }, [data, base, target, nameFor]);
  if (!ok)
    return (
      <Empty>
        Pick two stages that both have a{props.kind ? ` ${KIND_LABELS[props.kind]}` : ''} profile to see their diff.
      </Empty>
    );
  const figures = base && target && base.id !== target.id && (
    <PairChanges comparisonId={props.comparisonId} revision={props.revision} base={base} target={target} />
  );
  // The same element around the figures either way, so they are not mounted (and fetched) again when
  // the diff arrives.
  if (!data)
    return (
      <div className="diff-panel" ref={scope}>
        {figures}
        {fetched.loading ? <Loading what="diff" /> : <ErrorBox error={fetched.error} onRetry={fetched.reload} />}
      </div>
    );
  const bName = base?.name ?? 'base';
  const tName = target?.name ?? 'target';
  const untested = untestedReason(data.noise);
  const drawn = stale
    ? { tree: data.tree, rootPath: [], trim: data.trim, pending: false, absent: false }
    : zoomed.drawn;
  return (
    <div className={stale ? 'diff-panel stale' : 'diff-panel'} ref={scope} aria-busy={stale || undefined}>
      {figures}
      {stale && (
        <p className="loading small" role="status" aria-live="polite">
          <span className="spinner" aria-hidden="true" /> Computing the diff
          {view.sampleType ? ` of ${view.sampleType}` : ''}… {elapsed.toFixed(1)} s — the previous one stays below until
          it is ready.
        </p>
      )}
      {data.warnings.length > 0 && (
        <div className="warnings" role="alert" aria-label="Warnings">
          {data.warnings.map((w) => (
            <p key={w}>⚠ {w}</p>
          ))}
        </div>
      )}
      {untested && (
        <p className="callout noise-banner" role="note" data-noise-status={data.noise?.status}>
          <strong>{untested}.</strong> The colours show the size of each change, untested: with more runs per stage each
          function's change gets a verdict.
        </p>
      )}
      <DiffLegend diff={data} baseName={bName} targetName={tName} noise={view.noise} onNoise={onNoise} dark={dark} />
      <div className="panel-head">
        <h3>
          Diff: {bName} → {tName}
        </h3>
        <span className="muted small">{countNodes(drawn?.tree ?? data.tree).toLocaleString()} frames</span>
        <FlameExport scope={scope} name={`diff-${bName}-${tName}`} dark={dark} />
        {base && target && (
          <PprofDownload comparisonId={props.comparisonId} view={view} stage={target} base={base} kind={props.kind} />
        )}
      </div>
      {!stale && (
        <ZoomProblem
          absent={!!zoomed.drawn?.absent}
          error={zoomed.error}
          stage={`${bName} or ${tName}`}
          onRetry={zoomed.reload}
        />
      )}
      {view.search && (
        <SearchMatches answer={searched.data} whole={data.tree} setView={setView} sides={[bName, tName]} />
      )}
      {drawn ? (
        <>
          <ZoomTrail path={drawn.rootPath} setView={setView} />
          <FlameGraph<DiffNode>
            tree={drawn.tree}
            label={`Diff flamegraph ${bName} to ${tName}`}
            tooltipFor={tooltip}
            nameFor={nameFor}
            colorFor={colorFor}
            hatch={tested ? hatch : null}
            search={view.search}
            onFocus={(name, below) => zoomTo(setView, drawn.rootPath, name, below)}
            minFrameSize={MIN_FRAME_PX}
          />
          <TrimNote drawn={drawn} unit={data.unit} />
        </>
      ) : (
        !zoomed.error && <Loading what="the zoomed part of the diff" />
      )}
      <h3>Hot paths: functions ranked by change</h3>
      {/* Drawn once "what changed" has answered (or failed), so the rows do not reorder under a click. */}
      {hotPathsShown && changes.data === null && changes.error == null && <Loading what="hot paths" />}
      {hotPathsShown && (changes.data !== null || changes.error != null) && (
        <HotPathTable
          rows={data.top}
          origins={origins}
          noise={data.noise}
          unit={data.unit}
          baseTotal={data.baseTotal}
          targetTotal={data.targetTotal}
          baseName={bName}
          targetName={tName}
          selected={view.fn}
          onSelect={onSelectRow}
          fullNames={data.fullNames}
        />
      )}
    </div>
  );
}

/** The top functions' cost across all stages. */
export function TrendsPanel(props: PanelProps) {
  const { view, setView, stages } = props;
  const any = stages.some((s) => hasProfile(s, props.kind));
  const { data, error, loading, reload } = useApi(
    'trajectory',
    any
      ? {
          params: { id: props.comparisonId },
          query: { ...profileQuery(view), ...(view.mode !== 'auto' ? { mode: view.mode } : {}), n: 12 },
        }
      : null,
    props.revision,
  );
  if (!any) return <Empty>No stage has a profile yet.</Empty>;
  if (!data) return loading ? <Loading what="trajectory" /> : <ErrorBox error={error} onRetry={reload} />;
  return (
    <>
      <p className="muted small trajectory-unit" data-unit={data.unit} data-unit-mode={data.mode}>
        Cumulative {data.mode === 'per-request' ? 'cost per request' : data.mode === 'share' ? 'share' : 'cost'} of{' '}
        {data.kind ? `${KIND_LABELS[data.kind]} · ` : ''}
        {data.sampleType} (
        {data.mode === 'per-request'
          ? printedUnit(data.functions[0]?.points.find((p) => p)?.cum ?? 0, data.unit)
          : data.unit}
        ) per stage, in stage order: {data.stages.map((s) => s.name).join(' → ')}.
        {data.modeReason ? ` Chosen automatically: ${data.modeReason}.` : ''} Click a function to focus it.
      </p>
      <Trajectory
        data={data}
        selected={view.fn}
        onSelect={(fn) => setView({ fn, zoom: [] })}
        changePoints={props.changePoints ?? []}
      />
    </>
  );
}

/** Callers and callees of the focused function in one stage. */
function OneSandwich(props: PanelProps & { stage: Stage | undefined; side: string }) {
  const { view, setView, stage, side } = props;
  const { data, error, loading, reload } = useApi(
    'sandwich',
    view.fn && hasProfile(stage, props.kind)
      ? {
          params: { id: props.comparisonId },
          query: {
            stage: stage.id,
            ...profileQuery(view),
            ...(view.mode !== 'auto' ? { mode: view.mode } : {}),
            fn: view.fn,
            ...props.filters,
          },
        }
      : null,
    props.revision,
  );
  const tooltip = useMemo(() => (data ? flameTooltip(data.unit, data.total) : () => ''), [data]);
  const onFocus = useCallback((fn: string) => fn && setView({ fn }), [setView]);
  const head = (
    <h3>
      {side}: {stage?.name ?? '—'}
    </h3>
  );
  if (!hasProfile(stage, props.kind))
    return (
      <div>
        {head}
        <Empty>{noProfile(props.kind)}</Empty>
      </div>
    );
  if (!data)
    return (
      <div>
        {head}
        {loading ? <Loading what="sandwich" /> : <ErrorBox error={error} onRetry={reload} />}
      </div>
    );
  if (data.cum === 0 && data.flat === 0)
    return (
      <div>
        {head}
        <Empty>The function does not appear in this stage.</Empty>
      </div>
    );
  return (
    <div className="sandwich">
      {head}
      <UnitNote data={data} stage={stage.name} />
      <p className="sandwich-figures" data-unit={data.unit}>
        <code className="fn-name">{data.name}</code>: flat {formatValue(data.flat, data.unit)} (
        {formatShare(data.total ? data.flat / data.total : 0)}), cum {formatValue(data.cum, data.unit)} (
        {formatShare(data.total ? data.cum / data.total : 0)}).
      </p>
      <h4>Callers (who calls it; the function on top)</h4>
      <FlameGraph<FlameNode>
        tree={data.callers}
        label={`Callers of ${data.name} in ${stage.name}`}
        tooltipFor={tooltip}
        search={view.search}
        onFocus={onFocus}
      />
      <h4>Callees (what it calls)</h4>
      <FlameGraph<FlameNode>
        tree={data.callees}
        label={`Callees of ${data.name} in ${stage.name}`}
        tooltipFor={tooltip}
        search={view.search}
        onFocus={onFocus}
      />
    </div>
  );
}

/** The focused function's callers and callees in both chosen stages. */
export function SandwichPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  if (!props.view.fn)
    return (
      <Empty>Select a function (click a frame, a hot-path row or a trajectory) to see its callers and callees.</Empty>
    );
  return (
    <div className="side-by-side">
      <OneSandwich {...props} stage={props.base} side="Left" />
      <OneSandwich {...props} stage={props.target} side="Right" />
    </div>
  );
}
