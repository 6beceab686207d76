import { tabSpec } from '../lib/tabs.ts';
import { memo, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { Select } from '../components/common.tsx';
import type { ProfileKind, SampleTypeInfo } from '../lib/api.ts';
import { KIND_LABELS } from '../lib/profile-kinds.ts';
import { loadSearchEngine, searchEngineReady, searchTermProblem } from '../lib/tree.ts';
import {
  type FilterKey,
  GRANULARITIES,
  GRANULARITY_LABELS,
  MODE_LABELS,
  MODES,
  type Tab,
  type ViewState,
} from '../lib/url-state.ts';
import type { FilterProblem } from './use-filter-check.ts';

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
export const ViewControls = memo(function ViewControls(props: ViewControlsProps) {
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
  const profileTab = tabSpec(tab).profile;
  const filterError = (k: FilterKey) =>
    filterProblem && filterProblem.param === k && filterProblem.value === view[k] ? filterProblem.message : null;
  return (
    <fieldset className="controls" aria-label="View controls">
      <Select
        label={tabSpec(tab).directed ? 'Base stage' : 'Left stage'}
        value={base}
        options={stageOptions}
        onChange={(v) => {
          onPick();
          // The focused function stays; the frame of it zoomed into is looked up again.
          setView({ base: v, target, zoom: [] });
        }}
      />
      <Select
        label={tabSpec(tab).directed ? 'Target stage' : 'Right stage'}
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

/**
 * A field's own text, which follows its value when that changes from outside (a link, another control)
 * and keeps what is being typed otherwise.
 */
function useEcho(value: string): [string, (v: string) => void] {
  const [v, setV] = useState(value);
  const [last, setLast] = useState(value);
  if (value !== last) {
    setLast(value);
    setV(value);
  }
  return [v, setV];
}

/** The shared flamegraph search; typing is debounced so both graphs re-render once per pause. */
function SearchField(props: {
  inputRef: React.RefObject<HTMLInputElement | null>;
  value: string;
  onChange: (v: string) => void;
}) {
  const [v, setV] = useEcho(props.value);
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
  const [v, setV] = useEcho(props.value);
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
