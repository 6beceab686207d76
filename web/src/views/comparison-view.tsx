import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { formatBytes } from '../../../server/src/api/format.ts';
import { ErrorBox, Loading, Select, Tabs } from '../components/common.tsx';
import { Link } from '../components/link.tsx';
import { HowToRead, StageTable, WhatChangedList } from '../components/stage-table.tsx';
import { ArtifactList, StageEditor } from '../components/upload.tsx';
import { ApiError, apiGet, apiSend, apiUrl, gcUrl } from '../lib/api.ts';
import type {
  BenchmarkDiff,
  Comparison,
  DiffMode,
  DiffResponse,
  GcResponse,
  ProfileSummary,
  Stage,
} from '../lib/api-types.ts';
import { benchVerdicts, type StageBenchVerdict } from '../lib/significance.ts';
import { BusyCaptureWarning, CaptureDetails } from '../components/capture-details.tsx';
import { copyText, downloadText, slug } from '../lib/export-files.ts';
import { navigate } from '../lib/navigation.ts';
import { stageTableCsv, stageTableMarkdown } from '../lib/stage-table-export.ts';
import { forget, getToken, renameRecent } from '../lib/tokens.ts';
import {
  FILTER_KEYS,
  type FilterKey,
  MODES,
  filtersToSend,
  parseViewState,
  resolveStages,
  serializeViewState,
  type Tab,
  type ViewState,
} from '../lib/url-state.ts';
import { gcSummaries, hasGcTrace, type GcStageSummary } from '../lib/gc-summary.ts';
import { benchChange, gcChange, whatChanged } from '../lib/what-changed.ts';
import { lazy, Suspense } from 'react';
import { BenchPanel } from './bench-panel.tsx';
import { DiffPanel, FlamePanel, SandwichPanel, TrendsPanel, flameGraphUrl } from './comparison-panels.tsx';

// ECharts is only needed on the load-test tab: keep it out of the first bundle.
const LoadPanel = lazy(() => import('./load-panel.tsx').then((m) => ({ default: m.LoadPanel })));
const GcPanel = lazy(() => import('./gc-panel.tsx').then((m) => ({ default: m.GcPanel })));
import { prefetchJson, useFetch, useFetchAll } from './use-fetch.ts';
import { useStageEditor } from './use-stage-editor.ts';

const TAB_DEFS: { key: Tab; label: string }[] = [
  { key: 'flame', label: 'Flamegraphs' },
  { key: 'diff', label: 'Diff' },
  { key: 'trends', label: 'Trajectory' },
  { key: 'sandwich', label: 'Sandwich' },
  { key: 'load', label: 'Load tests' },
  { key: 'bench', label: 'Benchmarks' },
  { key: 'gc', label: 'GC' },
];

const MODE_LABELS: Record<DiffMode, string> = {
  absolute: 'absolute',
  share: 'share of total',
  normalize: 'normalize',
  'per-request': 'per request',
};

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
      const next = { ...s, ...patch };
      const url = `${location.pathname}${serializeViewState(next)}`;
      history.replaceState(null, '', url);
      return next;
    });
  }, []);
  return [state, update];
}

function profileSampleTypes(stages: Stage[]): { type: string; unit: string }[] {
  const seen = new Map<string, string>();
  for (const s of stages)
    for (const a of s.artifacts)
      if (a.kind === 'profile')
        for (const t of (a.summary as ProfileSummary | null)?.sampleTypes ?? [])
          if (!seen.has(t.type)) seen.set(t.type, t.unit);
  return [...seen].map(([type, unit]) => ({ type, unit }));
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
    ? apiUrl('/api/filters/check', { focus: view.focus, ignore: view.ignore, hide: view.hide, show: view.show })
    : null;
  const [problem, setProblem] = useState<FilterProblem | null>(null);
  useEffect(() => {
    if (url === null) {
      setProblem(null);
      return;
    }
    const ctrl = new AbortController();
    const sent = new URL(url, window.location.origin).searchParams;
    apiGet<unknown>(url, ctrl.signal).then(
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

/** The tabs worth showing: profile views, load tests, benchmarks, GC — each when some stage has such a file. */
function visibleTabs(stages: Stage[]): typeof TAB_DEFS {
  const has = (kind: string) => stages.some((s) => s.artifacts.some((a) => a.kind === kind));
  const shown = TAB_DEFS.filter((t) => {
    if (t.key === 'load') return has('loadtest');
    if (t.key === 'bench') return has('benchmark');
    if (t.key === 'gc') return has('gctrace');
    return has('profile');
  });
  // Nothing uploaded yet: the flamegraph tab explains what each stage lacks.
  return shown.length > 0 ? shown : TAB_DEFS.filter((t) => t.key === 'flame');
}

function hasProfile(s: Stage | undefined): boolean {
  return !!s && s.artifacts.some((a) => a.kind === 'profile');
}

/** `/c/:id` — the whole story of one comparison. */
export function ComparisonView({ id, dark }: { id: string; dark: boolean }) {
  const [view, setView] = useViewState();
  const token = getToken(id);
  // Flamegraphs named in the address start loading together with the comparison, not after it.
  useState(() => {
    if (view.tab !== 'flame') return;
    const f = filtersToSend(view, null);
    for (const stage of new Set([view.base, view.target]))
      if (stage) prefetchJson(flameGraphUrl(id, stage, view.sampleType, f));
  });
  const compUrl = `/api/comparisons/${encodeURIComponent(id)}`;
  const { data: comparison, error, loading, reload } = useFetch<Comparison>(compUrl);
  const [actionError, setActionError] = useState<unknown>(null);
  const onError = useCallback((e: unknown) => setActionError(e), []);
  const editor = useStageEditor(comparison, token, reload, onError);
  const canEdit = !!token && !!comparison && !comparison.readOnly;
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState('');
  const searchRef = useRef<HTMLInputElement>(null);
  const filterProblem = useFilterCheck(view);

  const stages = useMemo(() => [...(comparison?.stages ?? [])].sort((a, b) => a.position - b.position), [comparison]);
  const stageIds = stages.map((s) => s.id);
  const { base, target } = resolveStages(view, stageIds);
  const baseStage = stages.find((s) => s.id === base);
  const targetStage = stages.find((s) => s.id === target);
  const sampleTypes = useMemo(() => profileSampleTypes(stages), [stages]);
  const withGc = hasGcTrace(stages);
  // GC figures for the stage table's GC columns (pooled per stage; fetched only when some stage has a trace).
  const gcFetch = useFetch<GcResponse>(withGc ? `${gcUrl(id)}?rev=${comparison?.revision ?? 0}` : null);
  const gcByStage = useMemo(
    () => (gcFetch.data ? new Map(gcSummaries(gcFetch.data).map((g) => [g.stageId, g])) : null),
    [gcFetch.data],
  );
  // benchstat verdicts of each stage's go test -bench output against the previous stage's, for the table.
  const benchPairs = useMemo(
    () =>
      stages.flatMap((s, i) => {
        const prev = stages[i - 1];
        const has = (x: Stage | undefined) => !!x && x.artifacts.some((a) => a.kind === 'benchmark');
        return prev && has(prev) && has(s) ? [{ stageId: s.id, prev: prev.id }] : [];
      }),
    [stages],
  );
  const benchFetch = useFetchAll<BenchmarkDiff>(
    useMemo(
      () =>
        benchPairs.map((p) =>
          apiUrl(`/api/comparisons/${encodeURIComponent(id)}/benchmarks`, { base: p.prev, target: p.stageId }),
        ),
      [benchPairs, id],
    ),
  );
  const benchByStage = useMemo(() => {
    if (benchPairs.length === 0 || !benchFetch.data) return null;
    const m = new Map<string, StageBenchVerdict[]>();
    benchPairs.forEach((p, i) => {
      const d = benchFetch.data?.[i];
      if (d) m.set(p.stageId, benchVerdicts(d));
    });
    return m;
  }, [benchPairs, benchFetch.data]);
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

  const flash = (text: string) => {
    setStatus(text);
    setTimeout(() => setStatus(''), 2500);
  };

  if (!comparison) {
    return (
      <div className="page">
        {loading ? <Loading what="comparison" /> : <ErrorBox error={error} onRetry={reload} />}
      </div>
    );
  }

  const rows = comparison.stageTable;
  // Tabs only for the kinds of files the stages hold (a link naming a hidden tab shows the first tab).
  const tabs = visibleTabs(stages);
  const tab = tabs.some((t) => t.key === view.tab) ? view.tab : (tabs[0]?.key ?? 'flame');
  const profileTab = tab !== 'bench' && tab !== 'gc';
  const filterError = (k: FilterKey) =>
    filterProblem && filterProblem.param === k && filterProblem.value === view[k] ? filterProblem.message : null;
  const filters = filtersToSend(view, filterProblem);
  const stageOptions = stages.map((s, i) => ({ value: s.id, label: `${i + 1}. ${s.name}` }));
  const common = { comparisonId: id, view, setView, filters, dark, stages };

  return (
    <div className="page comparison">
      <div className="title-row">
        <div>
          {canEdit ? (
            <TitleEditor
              value={comparison.title}
              onSave={async (title) => {
                try {
                  await apiSend('PATCH', compUrl, { title }, token);
                  renameRecent(id, title);
                } catch (e) {
                  setActionError(e);
                }
                reload();
              }}
            />
          ) : (
            <h1>{comparison.title}</h1>
          )}
          {comparison.description && <p className="lead">{comparison.description}</p>}
          <p className="muted small">
            {stages.length} stages · created {new Date(comparison.createdAt).toLocaleString()}
            {!canEdit && ' · read-only'}
            <StorageUsage usage={(comparison as { usage?: Usage }).usage} />
          </p>
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
          <span role="status" aria-live="polite" className="flash">
            {status}
          </span>
        </div>
      </div>
      {actionError !== null && <ErrorBox error={actionError} onRetry={() => setActionError(null)} />}
      {canEdit && editing && (
        <section className="card" aria-label="Edit comparison">
          <DescriptionEditor
            value={comparison.description}
            onSave={async (description) => {
              try {
                await apiSend('PATCH', compUrl, { description }, token);
              } catch (e) {
                setActionError(e);
              }
              reload();
            }}
          />
          <StageEditor stages={comparison.stages} uploads={editor.uploads} handlers={editor.handlers} />
          <button
            type="button"
            className="danger"
            onClick={async () => {
              if (!confirm(`Delete “${comparison.title}” with all its stages and files?`)) return;
              try {
                await apiSend('DELETE', compUrl, undefined, token);
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
        <section aria-labelledby="stages-h" className="card">
          <div className="section-head">
            <h2 id="stages-h">Stages</h2>
            <div className="actions">
              <button
                type="button"
                onClick={async () => {
                  await copyText(stageTableMarkdown(rows));
                  flash('Markdown copied');
                }}
              >
                Copy Markdown
              </button>
              <button
                type="button"
                onClick={() =>
                  downloadText(`${slug(comparison.title)}-stages.md`, stageTableMarkdown(rows), 'text/markdown')
                }
              >
                Download Markdown
              </button>
              <button
                type="button"
                onClick={async () => {
                  await copyText(stageTableCsv(rows));
                  flash('CSV copied');
                }}
              >
                Copy CSV
              </button>
              <button
                type="button"
                onClick={() => downloadText(`${slug(comparison.title)}-stages.csv`, stageTableCsv(rows), 'text/csv')}
              >
                Download CSV
              </button>
            </div>
          </div>
          <BusyCaptureWarning stages={stages} />
          <StageTable
            rows={rows}
            gc={withGc ? { byStage: gcByStage, error: gcFetch.error !== null } : null}
            bench={benchByStage}
          />
          <HowToRead />
          <WhatChanged
            comparisonId={id}
            stages={stages}
            comparison={comparison}
            sampleType={view.sampleType}
            gc={gcByStage}
            bench={benchByStage}
          />
          <details className="files">
            <summary>Raw files</summary>
            {stages.map((s) => (
              <div key={s.id}>
                <strong>{s.name}</strong>
                <ArtifactList artifacts={s.artifacts} label={`Files of ${s.name}`} />
              </div>
            ))}
          </details>
          <CaptureDetails stages={stages} />
        </section>
      )}

      {stages.length > 0 && (
        <section className="card" aria-label="Analysis">
          <fieldset className="controls" aria-label="View controls">
            <Select
              label={tab === 'diff' || tab === 'bench' ? 'Base stage' : 'Left stage'}
              value={base}
              options={stageOptions}
              onChange={(v) => setView({ base: v, fn: view.fn })}
            />
            <Select
              label={tab === 'diff' || tab === 'bench' ? 'Target stage' : 'Right stage'}
              value={target}
              options={stageOptions}
              onChange={(v) => setView({ target: v })}
            />
            {profileTab && (
              <>
                <Select
                  label="Sample type"
                  value={view.sampleType}
                  options={[
                    { value: '', label: 'default' },
                    ...sampleTypes.map((t) => ({ value: t.type, label: `${t.type} (${t.unit})` })),
                  ]}
                  onChange={(v) => setView({ sampleType: v })}
                />
                {tab === 'diff' && (
                  <Select
                    label="Diff mode"
                    value={view.mode}
                    options={MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }))}
                    onChange={(v) => setView({ mode: v })}
                  />
                )}
                <SearchField inputRef={searchRef} value={view.search} onChange={(v) => setView({ search: v })} />
                {FILTER_FIELDS.map((f) => (
                  <RegexField
                    key={f.key}
                    label={f.label}
                    hint={f.hint}
                    value={view[f.key]}
                    error={filterError(f.key)}
                    onChange={(v) => setView({ [f.key]: v })}
                  />
                ))}
              </>
            )}
          </fieldset>
          {profileTab && (
            <div className="focus-row">
              {view.fn ? (
                <>
                  Focused: <code className="fn-name">{view.fn}</code>{' '}
                </>
              ) : (
                <span className="muted">Click a frame or a hot-path row to focus a function. </span>
              )}
              <button type="button" onClick={() => setView({ fn: '' })} disabled={!view.fn} aria-keyshortcuts="Escape">
                Reset zoom
              </button>
            </div>
          )}
          <Tabs label="Views" tabs={tabs} active={tab} onChange={(t) => setView({ tab: t })} />
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
            {tab === 'flame' && <FlamePanel {...common} base={baseStage} target={targetStage} />}
            {tab === 'diff' && <DiffPanel {...common} base={baseStage} target={targetStage} />}
            {tab === 'trends' && <TrendsPanel {...common} />}
            {tab === 'sandwich' && <SandwichPanel {...common} target={targetStage} base={baseStage} />}
            {tab === 'load' && (
              <Suspense fallback={<Loading what="charts" />}>
                <LoadPanel {...common} />
              </Suspense>
            )}
            {tab === 'bench' && <BenchPanel {...common} base={baseStage} target={targetStage} />}
            {tab === 'gc' && (
              <Suspense fallback={<Loading what="charts" />}>
                <GcPanel {...common} />
              </Suspense>
            )}
          </div>
        </section>
      )}
      <p className="muted small">
        <Link href="/">← all comparisons</Link>
      </p>
    </div>
  );
}

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
  return (
    <label className="field">
      <span>Search</span>
      <input
        ref={props.inputRef}
        type="search"
        value={v}
        placeholder="regex or text  ( / )"
        aria-keyshortcuts="/"
        onChange={(e) => setV(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && onChange(v)}
      />
    </label>
  );
}

/**
 * pprof's filters. Each is a Go regular expression matched against a frame's function name, its source
 * file and its binary's file, as `go tool pprof -focus/-ignore/-hide/-show` match them.
 */
const FILTER_FIELDS: { key: FilterKey; label: string; hint: string }[] = [
  { key: 'focus', label: 'Focus', hint: 'keep only samples with a matching frame (function, file or binary)' },
  { key: 'ignore', label: 'Ignore', hint: 'drop samples with a matching frame (function, file or binary)' },
  { key: 'hide', label: 'Hide', hint: 'remove matching frames; their time moves to the caller' },
  { key: 'show', label: 'Show', hint: 'keep only matching frames; the others’ time moves to the caller' },
];

/** A Go regex filter field that applies on Enter or blur and shows the server's objection inline. */
function RegexField(props: {
  label: string;
  hint: string;
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
  return (
    <label className="field" title={props.hint}>
      <span>{props.label}</span>
      <input
        value={v}
        placeholder="Go regexp"
        aria-invalid={props.error ? true : undefined}
        aria-description={props.hint}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v !== props.value && props.onChange(v)}
        onKeyDown={(e) => e.key === 'Enter' && props.onChange(v)}
      />
      {props.error && (
        <span className="bad small" role="alert">
          {props.error}
        </span>
      )}
    </label>
  );
}

/** Rows of each "what changed" diff (the server ranks functions by |Δ flat|). */
const WHAT_CHANGED_ROWS = 20;

/** Fetches the diff of each stage against the previous one and renders the generated summaries. */
function WhatChanged(props: {
  comparisonId: string;
  stages: Stage[];
  comparison: Comparison;
  sampleType: string;
  gc: Map<string, GcStageSummary> | null;
  bench: Map<string, StageBenchVerdict[]> | null;
}) {
  const { comparisonId, stages, comparison, sampleType } = props;
  const [diffs, setDiffs] = useState<Record<string, DiffResponse | null>>({});
  const key = `${comparison.createdAt}|${stages.map((s) => `${s.id}:${s.artifacts.length}`).join(',')}|${sampleType}`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed on the stages' content (ids, file counts, sample type), so a re-fetched but unchanged comparison does not start the diff chain again
  useEffect(() => {
    const ctrl = new AbortController();
    const needsDiff = (i: number) => {
      const prev = stages[i - 1];
      return !!prev && hasProfile(prev) && hasProfile(stages[i]);
    };
    // Stages without a profile pair are summarised from the table alone, right away.
    setDiffs(Object.fromEntries(stages.flatMap((s, i) => (needsDiff(i) ? [] : [[s.id, null]]))));
    // Summaries are secondary: let the flamegraphs fetch and draw first.
    // One diff at a time: each can be heavy for the server on large profiles.
    const timer = setTimeout(async () => {
      for (const [i, s] of stages.entries()) {
        if (ctrl.signal.aborted) return;
        const prev = stages[i - 1];
        if (!prev || !needsDiff(i)) continue;
        const url = apiUrl(`/api/comparisons/${encodeURIComponent(comparisonId)}/diff`, {
          base: prev.id,
          target: s.id,
          sampleType,
          mode: 'absolute',
          minFraction: 0.05,
          // Only the functions whose cumulative cost changed most are read; the full list can run to
          // thousands of rows.
          limit: WHAT_CHANGED_ROWS,
          sort: 'cum',
        });
        await fetch(url, { signal: ctrl.signal })
          .then((r) => (r.ok ? (r.json() as Promise<DiffResponse>) : null))
          .then((d) => setDiffs((x) => ({ ...x, [s.id]: d })))
          .catch(() => {
            if (!ctrl.signal.aborted) setDiffs((x) => ({ ...x, [s.id]: null }));
          });
      }
    }, 1200);
    return () => {
      clearTimeout(timer);
      ctrl.abort();
    };
  }, [key]);
  const items = stages.map((s, i) => {
    const row = comparison.stageTable.find((r) => r.stageId === s.id);
    const d = diffs[s.id];
    const prev = stages[i - 1];
    const gc = props.gc ? gcChange(prev && props.gc.get(prev.id), props.gc.get(s.id)) : [];
    const bench = benchChange(props.bench?.get(s.id));
    return {
      stageId: s.id,
      name: s.name,
      text: row && d !== undefined ? whatChanged(row, d, [...gc, ...bench]) : null,
    };
  });
  return (
    <>
      <h3>What changed</h3>
      <WhatChangedList items={items} />
    </>
  );
}

/** Storage the comparison's files take, and the server's bound on it (MAX_COMPARISON_BYTES). */
type Usage = { bytes: number; maxBytes: number | null };

function StorageUsage({ usage }: { usage: Usage | undefined }) {
  if (!usage) return null;
  return (
    <span className="storage-usage" title="storage the comparison's files take on this server">
      {' · '}files {formatBytes(usage.bytes)}
      {usage.maxBytes !== null && ` of ${formatBytes(usage.maxBytes)}`}
    </span>
  );
}
