import { lazy, type ReactNode, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ErrorBox, Loading, Tabs } from '../components/common.tsx';
import { Link } from '../components/link.tsx';
import { PanelBoundary } from '../components/panel-boundary.tsx';
import { type BenchLine, benchLines } from '../components/stage-table.tsx';
import {
  dropEditTokenFromAddress,
  editTokenInAddress,
  ShareEditAccess,
  TokenPaste,
} from '../components/token-paste.tsx';
import { StageEditor } from '../components/upload.tsx';
import { ApiError, type Body, type Stage, type StageTable as StageTableData, api, apiUrl } from '../lib/api.ts';
import { largestChangeTarget } from '../lib/default-pair.ts';
import { copyText } from '../lib/export-files.ts';
import { gcSummaries, hasGcTrace } from '../lib/gc-summary.ts';
import { navigate } from '../lib/navigation.ts';
import { KIND_LABELS, heldKinds, profilesOf, resolveKind, sampleTypesOf } from '../lib/profile-kinds.ts';
import { forget, getToken, renameRecent, saveToken } from '../lib/tokens.ts';
import { stagesWithWhatTheTabNeeds, tabSpec, visibleTabs } from '../lib/tabs.ts';
import { filtersToSend, resolveStages, type Tab, type ViewState } from '../lib/url-state.ts';
import { BenchPanel } from './bench-panel.tsx';
import { DescriptionEditor, NoSuchComparison, StorageUsage, TitleEditor } from './comparison-header.tsx';
import {
  DiffPanel,
  FlamePanel,
  MAX_ROOT_URL,
  type PanelProps,
  SandwichPanel,
  TrendsPanel,
  flameGraphUrl,
  pairDiffUrl,
} from './comparison-panels.tsx';
import { StagesSection } from './stages-section.tsx';
import { prefetchJson, useApi, useFetch } from './use-fetch.ts';
import { useFilterCheck } from './use-filter-check.ts';
import { useStageChanges } from './use-stage-changes.ts';
import { useStageEditor } from './use-stage-editor.ts';
import { useViewState } from './use-view-state.ts';
import { ViewControls } from './view-controls.tsx';

// ECharts is only needed on the load-test tab: keep it out of the first bundle.
const LoadPanel = lazy(() => import('./load-panel.tsx').then((m) => ({ default: m.LoadPanel })));
const GcPanel = lazy(() => import('./gc-panel.tsx').then((m) => ({ default: m.GcPanel })));
const RuntimePanel = lazy(() => import('./runtime-panel.tsx').then((m) => ({ default: m.RuntimePanel })));
const RequestsPanel = lazy(() => import('./requests-panel.tsx').then((m) => ({ default: m.RequestsPanel })));
// The Lines tab highlights Go with refractor (Prism's grammars): its own chunk, not the first script's.
const LinesPanel = lazy(() => import('./lines-panel.tsx').then((m) => ({ default: m.LinesPanel })));

type TabPanelProps = PanelProps & { base: Stage | undefined; target: Stage | undefined };
/** Each tab's panel, by its slug (lib/tabs.ts TAB_TABLE lists the tabs); the lazy ones load with their tab. */
const TAB_PANELS: Record<Tab, (p: TabPanelProps) => ReactNode> = {
  flame: (p) => <FlamePanel {...p} />,
  diff: (p) => <DiffPanel {...p} />,
  trends: ({ base: _b, target: _t, ...p }) => <TrendsPanel {...p} />,
  sandwich: (p) => <SandwichPanel {...p} />,
  lines: (p) => (
    <Suspense fallback={<Loading what="source lines" />}>
      <LinesPanel {...p} />
    </Suspense>
  ),
  load: ({ base: _b, target: _t, ...p }) => (
    <Suspense fallback={<Loading what="charts" />}>
      <LoadPanel {...p} />
    </Suspense>
  ),
  runtime: (p) => (
    <Suspense fallback={<Loading what="charts" />}>
      <RuntimePanel {...p} />
    </Suspense>
  ),
  requests: (p) => (
    <Suspense fallback={<Loading what="charts" />}>
      <RequestsPanel {...p} />
    </Suspense>
  ),
  bench: (p) => <BenchPanel {...p} />,
  gc: ({ base: _b, target: _t, ...p }) => (
    <Suspense fallback={<Loading what="charts" />}>
      <GcPanel {...p} />
    </Suspense>
  ),
};

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
  const eligible = stagesWithWhatTheTabNeeds(stages, shownTab, kind);
  // Unchosen, the page opens on the pair with the largest significant change of the stage table, once
  // the table says which (until then the panels wait rather than draw a pair they would leave).
  const preferred = chosen ? null : largestChangeTarget(table.data);
  const pairSettled = chosen || table.data !== null || table.error !== null || !table.loading;
  const { base, target } = resolveStages(
    chosen ? view : { base: '', target: preferred !== null && eligible.has(preferred) ? preferred : '' },
    stageIds,
    eligible,
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
    if (stages.length > 0 && pairSettled && (view.base !== base || view.target !== target)) setView({ base, target });
  }, [stages.length, pairSettled, base, target, view.base, view.target, setView]);

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
  const profileTab = tabSpec(tab).profile;
  const filters = filtersToSend(view, filterProblem);
  const changePoints = table.data?.changePoints ?? [];
  const common = {
    comparisonId: id,
    revision: comparison.revision,
    view,
    setView,
    filters,
    dark,
    stages,
    kind,
    changePoints,
  };
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

      {stages.length > 0 && !pairSettled && (
        <section className="card" aria-label="Analysis">
          <Loading what="the pair to open on" />
        </section>
      )}
      {stages.length > 0 && pairSettled && (
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
              {TAB_PANELS[tab]({ ...common, base: baseStage, target: targetStage })}
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
