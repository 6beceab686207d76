import { PanelBoundary } from '../components/panel-boundary.tsx';
import { lazy, memo, Suspense, useCallback, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { formatBytes, formatInt, formatValue } from '../../../server/src/api/format.ts';
import { BusyCaptureWarning, CaptureDetails } from '../components/capture-details.tsx';
import { ConditionsDetails, StageConditionsWarning } from '../components/conditions.tsx';
import { ErrorBox, LazyDetails, Loading, Select, Tabs } from '../components/common.tsx';
import { Link } from '../components/link.tsx';
import {
  type BenchLine,
  benchLines,
  HowToRead,
  StageTable,
  type StageTableGc,
  WhatChangedList,
} from '../components/stage-table.tsx';
import {
  dropEditTokenFromAddress,
  editTokenInAddress,
  ShareEditAccess,
  TokenPaste,
} from '../components/token-paste.tsx';
import { ArtifactList, StageEditor } from '../components/upload.tsx';
import {
  ApiError,
  type Body,
  type Comparison,
  type Stage,
  type StageRow,
  type StageTable as StageTableData,
  type ProfileKind,
  type SampleTypeInfo,
  api,
  apiUrl,
  getJson,
} from '../lib/api.ts';
import { copyText, downloadText, slug } from '../lib/export-files.ts';
import { gcSummaries, hasGcTrace } from '../lib/gc-summary.ts';
import { navigate } from '../lib/navigation.ts';
import { KIND_LABELS, hasProfile, heldKinds, profilesOf, resolveKind, sampleTypesOf } from '../lib/profile-kinds.ts';
import { presentLatencyColumns, stageTableCsv, stageTableMarkdown } from '../lib/stage-table-export.ts';
import { forget, getToken, renameRecent, saveToken } from '../lib/tokens.ts';
import {
  FILTER_KEYS,
  type FilterKey,
  GRANULARITIES,
  GRANULARITY_LABELS,
  MODE_LABELS,
  MODES,
  applyViewPatch,
  filtersToSend,
  parseViewState,
  resolveStages,
  serializeViewState,
  type Tab,
  type ViewState,
} from '../lib/url-state.ts';
import { BenchPanel } from './bench-panel.tsx';
import {
  DiffPanel,
  FlamePanel,
  MAX_ROOT_URL,
  SandwichPanel,
  TrendsPanel,
  flameGraphUrl,
  pairDiffUrl,
} from './comparison-panels.tsx';
import { loadSearchEngine, searchEngineReady, searchTermProblem } from '../lib/tree.ts';
import { prefetchJson, useApi, useFetch } from './use-fetch.ts';
import { type ChangesByStage, useStageChanges } from './use-stage-changes.ts';
import { useStageEditor } from './use-stage-editor.ts';

// ECharts is only needed on the load-test tab: keep it out of the first bundle.
const LoadPanel = lazy(() => import('./load-panel.tsx').then((m) => ({ default: m.LoadPanel })));
const GcPanel = lazy(() => import('./gc-panel.tsx').then((m) => ({ default: m.GcPanel })));
const RuntimePanel = lazy(() => import('./runtime-panel.tsx').then((m) => ({ default: m.RuntimePanel })));
// The Lines tab highlights Go with refractor (Prism's grammars): its own chunk, not the first script's.
const LinesPanel = lazy(() => import('./lines-panel.tsx').then((m) => ({ default: m.LinesPanel })));

const TAB_DEFS: { key: Tab; label: string }[] = [
  { key: 'flame', label: 'Flamegraphs' },
  { key: 'diff', label: 'Diff' },
  { key: 'trends', label: 'Trajectory' },
  { key: 'sandwich', label: 'Sandwich' },
  { key: 'lines', label: 'Lines' },
  { key: 'load', label: 'Load tests' },
  { key: 'runtime', label: 'Runtime' },
  { key: 'bench', label: 'Benchmarks' },
  { key: 'gc', label: 'GC' },
];

/** The view state, read from and written to the query string (replaceState: the address bar is the link). */
function useViewState(): [ViewState, (patch: Partial<ViewState>) => void] {
  const [state, setState] = useState(() => parseViewState(location.search));
  useEffect(() => {
    const onPop = () => setState(parseViewState(location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const update = useCallback((patch: Partial<ViewState>) => {
    setState((s) => {
      const next = applyViewPatch(s, patch);
      const url = `${location.pathname}${serializeViewState(next)}`;
      history.replaceState(null, '', url);
      return next;
    });
  }, []);
  return [state, update];
}

/** A filter expression the server refused: which, the value it refused, and its message. */
interface FilterProblem {
  param: FilterKey;
  value: string;
  message: string;
}

/**
 * Asks the server whether the view's filters are valid Go expressions within its limits (only it can
 * say: Go's syntax is not JavaScript's), so a refused one is shown at its field and not sent.
 */
function useFilterCheck(view: ViewState): FilterProblem | null {
  const any = FILTER_KEYS.some((k) => view[k] !== '');
  const url = any
    ? apiUrl('checkFilters', {
        params: {},
        query: Object.fromEntries(FILTER_KEYS.map((k) => [k, view[k]])),
      })
    : null;
  const [problem, setProblem] = useState<FilterProblem | null>(null);
  useEffect(() => {
    if (url === null) {
      setProblem(null);
      return;
    }
    const ctrl = new AbortController();
    const sent = new URL(url, window.location.origin).searchParams;
    getJson<unknown>(url, ctrl.signal).then(
      () => !ctrl.signal.aborted && setProblem(null),
      (e: unknown) => {
        if (ctrl.signal.aborted) return;
        const param = e instanceof ApiError ? (FILTER_KEYS as readonly string[]).find((k) => k === e.param) : undefined;
        // Anything else (the network, the server) is for the panels' own requests to report.
        setProblem(
          param ? { param: param as FilterKey, value: sent.get(param) ?? '', message: (e as Error).message } : null,
        );
      },
    );
    return () => ctrl.abort();
  }, [url]);
  return problem;
}

/** The tabs worth showing: profile views, load tests, runtime, benchmarks, GC — each when some stage has such a file. */
function visibleTabs(stages: Stage[]): typeof TAB_DEFS {
  const has = (kind: string) => stages.some((s) => s.artifacts.some((a) => a.kind === kind));
  const shown = TAB_DEFS.filter((t) => {
    if (t.key === 'load') return has('loadtest');
    if (t.key === 'bench') return has('benchmark');
    if (t.key === 'gc') return has('gctrace');
    if (t.key === 'runtime') return has('trace') || has('metrics');
    // an execution trace gives profiles of its own kinds (trace-net, -sync, -syscall, -sched)
    return has('profile') || has('trace');
  });
  // Nothing uploaded yet: the flamegraph tab explains what each stage lacks.
  return shown.length > 0 ? shown : TAB_DEFS.filter((t) => t.key === 'flame');
}

/**
 * The stages that have what a tab shows: a profile of the kind read (profile tabs), load tests,
 * benchmarks or GC traces. The default pair is the last two of them.
 */
function stagesWithWhatTheViewNeeds(stages: Stage[], tab: Tab, kind: ProfileKind | null): Set<string> {
  const holds = (s: Stage) => {
    if (tab === 'load') return s.artifacts.some((a) => a.kind === 'loadtest');
    if (tab === 'bench') return s.artifacts.some((a) => a.kind === 'benchmark');
    if (tab === 'gc') return s.artifacts.some((a) => a.kind === 'gctrace');
    return hasProfile(s, kind);
  };
  return new Set(stages.filter(holds).map((s) => s.id));
}

/** An address naming no comparison: say so, and the way home (a retry would only ask again). */
function NoSuchComparison({ id }: { id: string }) {
  return (
    <div className="page not-found">
      <h1>No such comparison</h1>
      <p>
        There is no comparison at <code>/c/{id}</code>: the link may be incomplete or mistyped, or the comparison was
        deleted.
      </p>
      <p>
        <Link href="/" className="button primary">
          Go home
        </Link>{' '}
        <Link href="/c/demo">or open the demo comparison</Link>
      </p>
    </div>
  );
}

/** The first stage's own figures in words: "QPS 7,972 req/s, P99 9.27 ms, CPU per request 208 µs/req (medians of 6 runs)". */
function ownFigures(row: StageRow | undefined): string[] {
  if (!row) return [];
  const f = row.figures;
  const lat = presentLatencyColumns([row]);
  const tail = lat.includes('p95') ? 'p95' : lat.includes('p99') ? 'p99' : null;
  const parts = [
    ...(f.rps ? [`QPS ${formatValue(f.rps.median, 'req/s')}`] : []),
    ...(tail && f[tail] ? [`${tail.toUpperCase()} ${formatValue(f[tail].median, 'ms')}`] : []),
    ...(f.cpuPerRequest ? [`CPU per request ${formatValue(f.cpuPerRequest.median, 'nanoseconds/request')}`] : []),
    ...(f.allocPerRequest ? [`allocated per request ${formatValue(f.allocPerRequest.median, 'bytes/request')}`] : []),
    ...(row.errors ? [`${formatInt(row.errors)} errors`] : []),
  ];
  if (parts.length === 0) return [];
  return [`${parts.join(', ')}${row.summary === 'median' ? ` (medians of ${row.loadTests} runs)` : ''}`];
}

/**
 * Starts the requests the first view of comparison `id` draws from: the comparison, its stage table, and
 * the flamegraphs or the diff of the stages the address names, with the subtree it zooms into (the
 * server names the same requests in the page for the browser to preload: server/src/api/page-requests.ts).
 * Resolves when they have all settled.
 */
export function prefetchFirstView(id: string, view: ViewState): Promise<unknown> {
  const started = [
    prefetchJson(apiUrl('getComparison', { params: { id } })),
    prefetchJson(apiUrl('stageTable', { params: { id } })),
  ];
  const f = filtersToSend(view, null);
  // The subtree zoomed into, when the graphs will ask for it (a path short enough for a URL).
  const zoomed = (url: string) => (view.zoom.length > 0 && url.length <= MAX_ROOT_URL ? [prefetchJson(url)] : []);
  if (view.tab === 'flame')
    for (const stage of new Set([view.base, view.target]))
      if (stage)
        started.push(
          prefetchJson(flameGraphUrl(id, stage, view, f)),
          ...zoomed(flameGraphUrl(id, stage, view, f, view.zoom)),
        );
  if (view.tab === 'diff' && view.base && view.target)
    started.push(
      prefetchJson(pairDiffUrl(id, view.base, view.target, view, f)),
      ...zoomed(pairDiffUrl(id, view.base, view.target, view, f, view.zoom, 1)),
    );
  return Promise.allSettled(started);
}

/** `/c/:id` — the whole story of one comparison. */
export function ComparisonView({ id, dark }: { id: string; dark: boolean }) {
  const [view, setView] = useViewState();
  const [token, setToken] = useState(() => getToken(id));
  const stageTableUrl = apiUrl('stageTable', { params: { id } });
  // What the first view draws starts loading with the page (main.tsx calls this before the first render).
  useState(() => prefetchFirstView(id, view));
  const { data: comparison, error, loading, reload } = useApi('getComparison', { params: { id } });
  const revision = comparison?.revision ?? null;
  const table = useFetch<StageTableData>(comparison ? stageTableUrl : null, revision ?? '');
  const [actionError, setActionError] = useState<unknown>(null);
  const onError = useCallback((e: unknown) => setActionError(e), []);
  const editor = useStageEditor(comparison, token, reload, onError);
  const canEdit = !!token && !!comparison && !comparison.readOnly;
  const [editing, setEditing] = useState(false);
  const [sharing, setSharing] = useState(false);
  const [status, setStatus] = useState('');
  // An edit link (`#edit-token=…`): the token is checked like a pasted one, kept in this browser (the
  // comparison joins "Your comparisons") and taken out of the address.
  const linkToken = useRef<string | null | undefined>(undefined);
  if (linkToken.current === undefined) linkToken.current = editTokenInAddress();
  useEffect(() => {
    const t = linkToken.current;
    if (!t || !comparison) return;
    linkToken.current = null;
    dropEditTokenFromAddress();
    if (comparison.readOnly) return;
    api('checkEditToken', { params: { id }, token: t })
      .then(() => {
        saveToken(id, t, comparison.title);
        setToken(t);
      })
      .catch((e: unknown) =>
        setActionError(
          e instanceof ApiError && (e.status === 401 || e.status === 403)
            ? new Error('The edit link’s token does not open this comparison.')
            : e,
        ),
      );
  }, [comparison, id]);
  const searchRef = useRef<HTMLInputElement>(null);
  const filterProblem = useFilterCheck(view);

  const stages = useMemo(() => [...(comparison?.stages ?? [])].sort((a, b) => a.position - b.position), [comparison]);
  const stageIds = stages.map((s) => s.id);
  const kinds = useMemo(() => heldKinds(stages), [stages]);
  const kind = resolveKind(stages, view);
  // The pair shown: the stages the address names (a link, or the reader's choice); else the last two
  // stages that have what the view needs — the default follows the tab and the profile kind until a
  // stage is picked.
  const [opened] = useState(() => ({ base: view.base, target: view.target }));
  const [chosen, setChosen] = useState(() => opened.base !== '' || opened.target !== '');
  const tabsHeld = visibleTabs(stages);
  const shownTab = tabsHeld.some((t) => t.key === view.tab) ? view.tab : (tabsHeld[0]?.key ?? 'flame');
  const { base, target } = resolveStages(
    chosen ? view : { base: '', target: '' },
    stageIds,
    stagesWithWhatTheViewNeeds(stages, shownTab, kind),
  );
  const goneFromLink = stages.length > 0 ? resolveStages(opened, stageIds).gone : [];
  const [goneNoticeClosed, setGoneNoticeClosed] = useState(false);
  const baseStage = stages.find((s) => s.id === base);
  const targetStage = stages.find((s) => s.id === target);
  const sampleTypes = useMemo(() => (kind ? sampleTypesOf(stages, kind) : []), [stages, kind]);
  const stageOptions = useMemo(() => stages.map((s, i) => ({ value: s.id, label: `${i + 1}. ${s.name}` })), [stages]);
  const onPick = useCallback(() => {
    setChosen(true);
    setGoneNoticeClosed(true);
  }, []);
  const withGc = hasGcTrace(stages);
  // GC figures for the stage table's GC columns (pooled per stage; fetched only when some stage has a trace).
  const gcFetch = useApi('gc', withGc ? { params: { id } } : null, revision ?? '');
  const gcByStage = useMemo(
    () => (gcFetch.data ? new Map(gcSummaries(gcFetch.data).map((g) => [g.stageId, g])) : null),
    [gcFetch.data],
  );
  // The change engine's judgement of each stage against the previous one: "what changed" and benchmarks.
  const changes = useStageChanges(id, stageIds, revision);
  const gcColumns = useMemo(
    () => (withGc ? { byStage: gcByStage, error: gcFetch.error !== null } : null),
    [withGc, gcByStage, gcFetch.error],
  );
  const flash = useCallback((text: string) => {
    setStatus(text);
    setTimeout(() => setStatus(''), 2500);
  }, []);
  const benchByStage = useMemo(() => {
    const m = new Map<string, BenchLine[]>();
    for (const [stageId, c] of changes)
      if ('data' in c && c.data.benchmarks) m.set(stageId, benchLines(c.data.benchmarks));
    return m.size > 0 ? m : null;
  }, [changes]);
  // Pin the stages shown into the address, so a shared link keeps showing them if stages are added later.
  useEffect(() => {
    if (stages.length > 0 && (view.base !== base || view.target !== target)) setView({ base, target });
  }, [stages.length, base, target, view.base, view.target, setView]);

  // Keyboard: "/" focuses the search box, Esc resets the zoom (and leaves the field).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      const typing =
        !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        searchRef.current?.focus();
        searchRef.current?.select();
      } else if (e.key === 'Escape') {
        setView({ fn: '' });
        if (typing) t?.blur();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [setView]);

  if (!comparison) {
    if (!loading && error instanceof ApiError && error.status === 404) return <NoSuchComparison id={id} />;
    return (
      <div className="page">
        {loading ? <Loading what="comparison" /> : <ErrorBox error={error} onRetry={reload} />}
      </div>
    );
  }

  // Tabs only for the kinds of files the stages hold (a link naming a hidden tab shows the first tab).
  const tabs = visibleTabs(stages);
  const tab = tabs.some((t) => t.key === view.tab) ? view.tab : (tabs[0]?.key ?? 'flame');
  const profileTab = tab !== 'bench' && tab !== 'gc' && tab !== 'runtime';
  const filters = filtersToSend(view, filterProblem);
  const common = { comparisonId: id, revision: comparison.revision, view, setView, filters, dark, stages, kind };
  // The chosen sample type (or the kind's default), and whether it accumulates since the process started.
  const defaultType = kind ? stages.flatMap((s) => profilesOf(s, kind))[0]?.defaultSampleType : undefined;
  const sinceStart = sampleTypes.find((t) => t.type === (view.sampleType || defaultType) && t.cumulativeSinceStart);
  const patch = async (body: Body<'patchComparison'>) => {
    try {
      await api('patchComparison', { params: { id }, body, token });
      if (body.title) renameRecent(id, body.title);
    } catch (e) {
      setActionError(e);
    }
    reload();
  };

  return (
    <div className="page comparison">
      <div className="title-row">
        <div>
          {canEdit ? (
            <TitleEditor value={comparison.title} onSave={(title) => patch({ title })} />
          ) : (
            <h1>{comparison.title}</h1>
          )}
          {comparison.description && <p className="lead">{comparison.description}</p>}
          <p className="muted small">
            {stages.length} stages · created {new Date(comparison.createdAt).toLocaleString()}
            {!canEdit && ' · read-only'}
            <StorageUsage usage={comparison.usage} />
          </p>
          {!token && !comparison.readOnly && (
            <TokenPaste
              comparisonId={id}
              title={comparison.title}
              onToken={(t) => {
                setToken(t);
                reload();
              }}
            />
          )}
        </div>
        <div className="actions">
          <button
            type="button"
            className="primary"
            onClick={async () => {
              await copyText(location.href);
              flash('Link copied');
            }}
          >
            Copy link
          </button>
          {canEdit && (
            <button type="button" aria-pressed={editing} onClick={() => setEditing(!editing)}>
              {editing ? 'Done editing' : 'Edit stages'}
            </button>
          )}
          {canEdit && (
            <button type="button" aria-expanded={sharing} onClick={() => setSharing(!sharing)}>
              Share edit access
            </button>
          )}
          <span role="status" aria-live="polite" className="flash">
            {status}
          </span>
        </div>
      </div>
      {actionError !== null && <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />}
      {canEdit && sharing && token && (
        <ShareEditAccess comparisonId={id} token={token} onClose={() => setSharing(false)} />
      )}
      {canEdit && editing && (
        <section className="card" aria-label="Edit comparison">
          <DescriptionEditor value={comparison.description} onSave={(description) => patch({ description })} />
          <label className="keep-toggle">
            <input
              type="checkbox"
              key={String(comparison.keep)}
              defaultChecked={comparison.keep}
              onChange={(e) => patch({ keep: e.currentTarget.checked })}
            />{' '}
            Keep this comparison: the server's retention (RETENTION_DAYS) never removes it
          </label>
          <StageEditor stages={comparison.stages} uploads={editor.uploads} handlers={editor.handlers} />
          <button
            type="button"
            className="danger"
            onClick={async () => {
              if (!confirm(`Delete “${comparison.title}” with all its stages and files?`)) return;
              try {
                await api('deleteComparison', { params: { id }, token });
                forget(id);
                navigate('/');
              } catch (e) {
                setActionError(e);
              }
            }}
          >
            Delete comparison
          </button>
        </section>
      )}
      {stages.length === 0 && (
        <p className="empty">
          No stages yet.{' '}
          {canEdit ? (
            <button type="button" className="link-button" onClick={() => navigate(`/?edit=${encodeURIComponent(id)}`)}>
              Add stages and files
            </button>
          ) : (
            'The owner has not added any yet.'
          )}
        </p>
      )}

      {stages.length > 0 && (
        <StagesSection
          title={comparison.title}
          stages={stages}
          table={table.data}
          tableLoading={table.loading}
          tableError={table.error}
          reloadTable={table.reload}
          gc={gcColumns}
          bench={benchByStage}
          changes={changes}
          flash={flash}
        />
      )}

      {stages.length > 0 && (
        <section className="card" aria-label="Analysis">
          {goneFromLink.length > 0 && !goneNoticeClosed && (
            <p className="callout gone-stages" role="status">
              {goneFromLink.length === 2 ? 'Both stages this link named are' : 'A stage this link named is'} no longer
              in this comparison (deleted since the link was made); showing <strong>{baseStage?.name ?? '—'}</strong> →{' '}
              <strong>{targetStage?.name ?? '—'}</strong> instead.{' '}
              <button type="button" className="link-button" onClick={() => setGoneNoticeClosed(true)}>
                Dismiss
              </button>
            </p>
          )}
          <ViewControls
            view={view}
            setView={setView}
            tab={tab}
            base={base}
            target={target}
            stageOptions={stageOptions}
            kinds={kinds}
            kind={kind}
            sampleTypes={sampleTypes}
            defaultType={defaultType}
            filterProblem={filterProblem}
            searchRef={searchRef}
            onPick={onPick}
          />
          {profileTab && sinceStart && (
            <p className="warnings small" role="note" data-since-start={sinceStart.type}>
              ⚠ {sinceStart.type} of {kind ? KIND_LABELS[kind] : 'these'} profiles accumulates since each process
              started: absolute values compare the processes' uptimes and loads as much as the code. Compare shares, or
              read allocations over a window (allocs?seconds=N, as stagediff capture takes them).
            </p>
          )}
          {profileTab && (
            <div className="focus-row">
              {view.fn ? (
                <>
                  Zoomed to: <code className="fn-name">{view.fn}</code>{' '}
                  {tab !== 'lines' && (
                    <button type="button" className="link-button" onClick={() => setView({ tab: 'lines' })}>
                      its source lines
                    </button>
                  )}{' '}
                </>
              ) : (
                <span className="muted">Click a frame or a hot-path row to zoom to a function. </span>
              )}
              <button type="button" onClick={() => setView({ fn: '' })} disabled={!view.fn} aria-keyshortcuts="Escape">
                Reset zoom
              </button>
            </div>
          )}
          <Tabs label="Views" tabs={tabs} active={tab} onChange={(t) => setView({ tab: t })} />
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
            <PanelBoundary what={`${tab} view`} resetKey={`${tab}|${baseStage?.id}|${targetStage?.id}`}>
              {tab === 'flame' && <FlamePanel {...common} base={baseStage} target={targetStage} />}
              {tab === 'diff' && <DiffPanel {...common} base={baseStage} target={targetStage} />}
              {tab === 'trends' && <TrendsPanel {...common} />}
              {tab === 'sandwich' && <SandwichPanel {...common} target={targetStage} base={baseStage} />}
              {tab === 'lines' && (
                <Suspense fallback={<Loading what="source lines" />}>
                  <LinesPanel {...common} base={baseStage} target={targetStage} />
                </Suspense>
              )}
              {tab === 'load' && (
                <Suspense fallback={<Loading what="charts" />}>
                  <LoadPanel {...common} />
                </Suspense>
              )}
              {tab === 'runtime' && (
                <Suspense fallback={<Loading what="charts" />}>
                  <RuntimePanel {...common} base={baseStage} target={targetStage} />
                </Suspense>
              )}
              {tab === 'bench' && <BenchPanel {...common} base={baseStage} target={targetStage} />}
              {tab === 'gc' && (
                <Suspense fallback={<Loading what="charts" />}>
                  <GcPanel {...common} />
                </Suspense>
              )}
            </PanelBoundary>
          </div>
        </section>
      )}
      <p className="muted small">
        <Link href="/">← all comparisons</Link>
      </p>
    </div>
  );
}

/** The stage table's two export formats, each copied or downloaded. */
const STAGE_TABLE_EXPORTS = [
  { label: 'Markdown', ext: 'md', mime: 'text/markdown', text: stageTableMarkdown },
  { label: 'CSV', ext: 'csv', mime: 'text/csv', text: stageTableCsv },
] as const;

/**
 * The stage table, "what changed", the files and the capture records: a memoised component, so a change
 * of the view (a zoom, a search, another tab) does not render them again.
 */
const StagesSection = memo(function StagesSection({
  title,
  stages,
  table,
  tableLoading,
  tableError,
  reloadTable,
  gc,
  bench,
  changes,
  flash,
}: {
  title: string;
  stages: Stage[];
  table: StageTableData | null;
  tableLoading: boolean;
  tableError: unknown;
  reloadTable: () => void;
  gc: StageTableGc | null;
  bench: Map<string, BenchLine[]> | null;
  changes: ChangesByStage;
  flash: (text: string) => void;
}) {
  const rowOf = (stageId: string) => table?.rows.find((r) => r.stageId === stageId);
  return (
    <section aria-labelledby="stages-h" className="card">
      <div className="section-head">
        <h2 id="stages-h">Stages</h2>
        <div className="actions">
          {STAGE_TABLE_EXPORTS.flatMap((f) => [
            <button
              key={`copy-${f.ext}`}
              type="button"
              disabled={!table}
              onClick={async () => {
                if (!table) return;
                await copyText(f.text(table));
                flash(`${f.label} copied`);
              }}
            >
              {`Copy ${f.label}`}
            </button>,
            <button
              key={`download-${f.ext}`}
              type="button"
              disabled={!table}
              onClick={() => table && downloadText(`${slug(title)}-stages.${f.ext}`, f.text(table), f.mime)}
            >
              {`Download ${f.label}`}
            </button>,
          ])}
        </div>
      </div>
      <PanelBoundary what="capture warning">
        <BusyCaptureWarning stages={stages} />
      </PanelBoundary>
      {table && (
        <PanelBoundary what="conditions warning">
          <StageConditionsWarning rows={table.rows} />
        </PanelBoundary>
      )}
      {table ? (
        <PanelBoundary what="stage table">
          <StageTable table={table} gc={gc} bench={bench} />
        </PanelBoundary>
      ) : tableLoading ? (
        <Loading what="stage table" />
      ) : (
        <ErrorBox error={tableError} onRetry={reloadTable} />
      )}
      {table && <HowToRead alpha={table.alpha} runsNeeded={table.runsNeeded} />}
      <h3>What changed</h3>
      <WhatChangedList
        items={stages.map((s, i) => {
          const c = changes.get(s.id);
          return {
            stageId: s.id,
            name: s.name,
            sentences: i === 0 ? (table ? ownFigures(rowOf(s.id)) : null) : c && 'data' in c ? c.data.sentences : null,
            error: c && 'error' in c ? c.error : null,
          };
        })}
      />
      <LazyDetails className="files" summary="Raw files">
        {stages.map((s) => (
          <div key={s.id}>
            <strong>{s.name}</strong>
            <ArtifactList artifacts={s.artifacts} label={`Files of ${s.name}`} />
          </div>
        ))}
      </LazyDetails>
      <PanelBoundary what="capture details">
        <CaptureDetails stages={stages} />
      </PanelBoundary>
      {table && (
        <PanelBoundary what="conditions">
          <ConditionsDetails rows={table.rows} />
        </PanelBoundary>
      )}
    </section>
  );
});

/** What the view controls read of the view: everything but the zoom, the focused function and the noise floor. */
const NOT_READ_BY_CONTROLS: ReadonlySet<string> = new Set<keyof ViewState>(['zoom', 'fn', 'noise']);

type ViewControlsProps = {
  view: ViewState;
  setView: (patch: Partial<ViewState>) => void;
  tab: Tab;
  base: string;
  target: string;
  stageOptions: { value: string; label: string }[];
  kinds: ProfileKind[];
  kind: ProfileKind | null;
  sampleTypes: SampleTypeInfo[];
  defaultType: string | undefined;
  filterProblem: FilterProblem | null;
  searchRef: React.RefObject<HTMLInputElement | null>;
  /** The reader chose a stage (the pair stops following the defaults). */
  onPick: () => void;
};

/** Same controls: the same props, and the same view but for what the controls do not read (a zoom is not theirs). */
function sameControls(a: ViewControlsProps, b: ViewControlsProps): boolean {
  for (const k of Object.keys(a) as (keyof ViewControlsProps)[]) if (k !== 'view' && a[k] !== b[k]) return false;
  for (const k of Object.keys(a.view) as (keyof ViewState)[])
    if (!NOT_READ_BY_CONTROLS.has(k) && a.view[k] !== b.view[k]) return false;
  return true;
}

/** The stage pickers, profile choices, search and pprof's filters; not rendered again by a zoom. */
const ViewControls = memo(function ViewControls(props: ViewControlsProps) {
  const {
    view,
    setView,
    tab,
    base,
    target,
    stageOptions,
    kinds,
    kind,
    sampleTypes,
    defaultType,
    filterProblem,
    onPick,
  } = props;
  const profileTab = tab !== 'bench' && tab !== 'gc' && tab !== 'runtime';
  const filterError = (k: FilterKey) =>
    filterProblem && filterProblem.param === k && filterProblem.value === view[k] ? filterProblem.message : null;
  return (
    <fieldset className="controls" aria-label="View controls">
      <Select
        label={tab === 'diff' || tab === 'bench' || tab === 'runtime' ? 'Base stage' : 'Left stage'}
        value={base}
        options={stageOptions}
        onChange={(v) => {
          onPick();
          // The focused function stays; the frame of it zoomed into is looked up again.
          setView({ base: v, target, zoom: [] });
        }}
      />
      <Select
        label={tab === 'diff' || tab === 'bench' || tab === 'runtime' ? 'Target stage' : 'Right stage'}
        value={target}
        options={stageOptions}
        onChange={(v) => {
          onPick();
          setView({ base, target: v });
        }}
      />
      {profileTab && (
        <>
          {kinds.length > 0 && (
            <Select
              label="Profile"
              value={kind ?? ''}
              options={kinds.map((k) => ({ value: k, label: KIND_LABELS[k] }))}
              // Sample types belong to a kind: a new kind starts at its own default.
              onChange={(v) => setView({ kind: v || '', sampleType: '' })}
            />
          )}
          <Select
            label="Sample type"
            value={view.sampleType}
            options={[
              { value: '', label: `default${defaultType ? ` (${defaultType})` : ''}` },
              ...sampleTypes.map((t) => ({ value: t.type, label: `${t.type} (${t.unit})` })),
            ]}
            onChange={(v) => setView({ sampleType: v })}
          />
          {(tab === 'diff' || tab === 'flame' || tab === 'sandwich' || tab === 'lines' || tab === 'trends') && (
            // One control for every tab's unit: the diff's mode, read by the flamegraphs, sandwich and lines too.
            <Select
              label={tab === 'diff' ? 'Diff mode' : 'Unit'}
              value={view.mode}
              options={MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }))}
              onChange={(v) => setView({ mode: v })}
            />
          )}
          <Select
            label="Rows by"
            value={view.granularity}
            options={GRANULARITIES.map((g) => ({ value: g, label: GRANULARITY_LABELS[g] }))}
            // A focused frame is named at one granularity: it does not carry over.
            onChange={(v) => setView({ granularity: v, fn: '' })}
          />
          <SearchField inputRef={props.searchRef} value={view.search} onChange={(v) => setView({ search: v })} />
          {FILTER_FIELDS.map((f) => (
            <RegexField
              key={f.key}
              label={f.label}
              hint={f.hint}
              placeholder={f.placeholder}
              value={view[f.key]}
              error={filterError(f.key)}
              onChange={(v) => setView({ [f.key]: v })}
            />
          ))}
        </>
      )}
    </fieldset>
  );
}, sameControls);

function DescriptionEditor({ value, onSave }: { value: string; onSave: (v: string) => void }) {
  const [v, setV] = useState(value);
  return (
    <label className="field description-field">
      <span>Description</span>
      <textarea
        rows={2}
        value={v}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v.trim() !== value && onSave(v.trim())}
      />
    </label>
  );
}

function TitleEditor({ value, onSave }: { value: string; onSave: (v: string) => void }) {
  const [v, setV] = useState(value);
  return (
    <h1>
      <input
        className="title-input"
        aria-label="Comparison title"
        value={v}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v.trim() && v.trim() !== value && onSave(v.trim())}
        onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()}
      />
    </h1>
  );
}

/**
 * A field's message, in place: under the field, over what follows it (the toolbar does not move when it
 * comes or goes), and kept inside the window (shifted left where the field is near the right edge).
 */
function FieldMessage({ id, tone, children }: { id: string; tone: 'error' | 'note'; children: React.ReactNode }) {
  const ref = useRef<HTMLSpanElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.left = '0px';
    const over = el.getBoundingClientRect().right - (document.documentElement.clientWidth - 8);
    if (over > 0) el.style.left = `${-over}px`;
  });
  return (
    <span ref={ref} id={id} className={`field-message ${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </span>
  );
}

/** The shared flamegraph search; typing is debounced so both graphs re-render once per pause. */
function SearchField(props: {
  inputRef: React.RefObject<HTMLInputElement | null>;
  value: string;
  onChange: (v: string) => void;
}) {
  const [v, setV] = useState(props.value);
  const [last, setLast] = useState(props.value);
  if (props.value !== last) {
    setLast(props.value);
    setV(props.value);
  }
  const { onChange } = props;
  useEffect(() => {
    if (v === props.value) return;
    const t = setTimeout(() => onChange(v), 180);
    return () => clearTimeout(t);
  }, [v, props.value, onChange]);
  // A term that is not a valid expression is searched as the text typed; say so, once the engine that
  // judges it has loaded.
  const [engineReady, setEngineReady] = useState(searchEngineReady);
  useEffect(() => {
    if (props.value && !engineReady) void loadSearchEngine().then(() => setEngineReady(true));
  }, [props.value, engineReady]);
  const problem = engineReady ? searchTermProblem(props.value) : null;
  const messageId = useId();
  return (
    <label className="field">
      <span>Search</span>
      <input
        ref={props.inputRef}
        type="search"
        value={v}
        placeholder="regex or text  ( / )"
        aria-keyshortcuts="/"
        aria-describedby={problem ? messageId : undefined}
        data-search-problem={problem ? '1' : undefined}
        onChange={(e) => setV(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && onChange(v)}
      />
      {problem && v === props.value && (
        <FieldMessage id={messageId} tone="note">
          Not a regular expression ({problem.replace(/^error parsing regexp: /, '')}): searching for the text as typed.
        </FieldMessage>
      )}
    </label>
  );
}

/**
 * pprof's filters. Each is a Go regular expression matched against a frame's function name, its source
 * file and its binary's file, as `go tool pprof -focus/-ignore/-hide/-show` match them.
 */
const FILTER_FIELDS: { key: FilterKey; label: string; hint: string; placeholder?: string }[] = [
  { key: 'focus', label: 'Focus', hint: 'keep only samples with a matching frame (function, file or binary)' },
  { key: 'ignore', label: 'Ignore', hint: 'drop samples with a matching frame (function, file or binary)' },
  { key: 'hide', label: 'Hide', hint: 'remove matching frames; their time moves to the caller' },
  { key: 'show', label: 'Show', hint: 'keep only matching frames; the others’ time moves to the caller' },
  {
    key: 'tagfocus',
    label: 'Tag focus',
    hint: 'keep samples whose labels match: KEY=REGEXP,… (pprof.Do labels) or a range such as 1kb:64kb',
    placeholder: 'key=regexp or range',
  },
  {
    key: 'tagignore',
    label: 'Tag ignore',
    hint: 'drop samples whose labels match (as Tag focus)',
    placeholder: 'key=regexp or range',
  },
  { key: 'tagshow', label: 'Tag show', hint: 'keep only labels whose key matches (figures unchanged)' },
  { key: 'taghide', label: 'Tag hide', hint: 'remove labels whose key matches (figures unchanged)' },
];

/** A Go regex filter field that applies on Enter or blur and shows the server's objection in place. */
function RegexField(props: {
  label: string;
  hint: string;
  placeholder?: string | undefined;
  value: string;
  error: string | null;
  onChange: (v: string) => void;
}) {
  const [v, setV] = useState(props.value);
  const [last, setLast] = useState(props.value);
  if (props.value !== last) {
    setLast(props.value);
    setV(props.value);
  }
  const messageId = useId();
  return (
    <label className="field" title={props.hint}>
      <span>{props.label}</span>
      <input
        value={v}
        placeholder={props.placeholder ?? 'Go regexp'}
        aria-invalid={props.error ? true : undefined}
        aria-description={props.hint}
        aria-describedby={props.error ? messageId : undefined}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v !== props.value && props.onChange(v)}
        onKeyDown={(e) => e.key === 'Enter' && props.onChange(v)}
      />
      {props.error && (
        <FieldMessage id={messageId} tone="error">
          {props.error}
        </FieldMessage>
      )}
    </label>
  );
}

/** Storage the comparison's files take, and the server's bound on it (MAX_COMPARISON_BYTES). */
type Usage = Comparison['usage'];

function StorageUsage({ usage }: { usage: Usage }) {
  return (
    <span className="storage-usage" title="storage the comparison's files take on this server">
      {' · '}files {formatBytes(usage.bytes)}
      {usage.maxBytes !== null && ` of ${formatBytes(usage.maxBytes)}`}
    </span>
  );
}
