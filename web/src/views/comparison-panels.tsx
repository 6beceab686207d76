import { useCallback, useId, useMemo, useRef, useState } from 'react';
import { formatDeltaPercent, formatShare, formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { verdictWords } from '../../../server/src/api/words.ts';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { DiffLegend } from '../components/diff-legend.tsx';
import { FlameGraph } from '../components/flame-graph.tsx';
import { HotPathTable } from '../components/hot-path-table.tsx';
import { Trajectory } from '../components/trajectory.tsx';
import { PairChanges } from '../components/pair-changes.tsx';
import { type DiffNode, type Flamegraph, type FlameNode, type ProfileKind, type Stage, apiUrl } from '../lib/api.ts';
import { diffColor, hatchColors, neutralColor } from '../lib/diff-color.ts';
import { fullVerdict, untestedReason } from '../lib/diff-verdicts.ts';
import { downloadBlob, downloadText, slug, standaloneFlameSvg, svgToPng } from '../lib/export-files.ts';
import { KIND_LABELS, hasProfile } from '../lib/profile-kinds.ts';
import { countNodes, pruneTree } from '../lib/tree.ts';
import type { Filters, ViewState } from '../lib/url-state.ts';
import { useApi, useFetch } from './use-fetch.ts';

/** Server-side trimming: frames below this fraction of the total are merged away. */
export const MIN_FRACTION = 0.0005;
/** Client-side: frames narrower than this many pixels are not drawn. */
export const MIN_FRAME_PX = 2;
/** Above this many frames the client prunes too (a safety net should the server send an untrimmed tree). */
const CLIENT_PRUNE_ABOVE = 20_000;

/** The tree to draw: as sent, or pruned at MIN_FRACTION of its root when it is huge. */
function useDrawableTree<T extends { name: string; value: number; children: T[] }>(
  tree: T | undefined,
): { tree: T | undefined; dropped: number } {
  return useMemo(() => {
    if (!tree || countNodes(tree) <= CLIENT_PRUNE_ABOVE) return { tree, dropped: 0 };
    return pruneTree(tree, Math.abs(tree.value) * MIN_FRACTION);
  }, [tree]);
}

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
}

/** The profiles a view asks for: the kind and sample type chosen, if any (else the server's defaults). */
function profileQuery(view: ViewState): { kind?: ProfileKind; sampleType?: string } {
  return {
    ...(view.kind ? { kind: view.kind } : {}),
    ...(view.sampleType ? { sampleType: view.sampleType } : {}),
  };
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
  const getSvg = () => scope.current?.querySelector<SVGSVGElement>('.flame-graph svg') ?? null;
  return (
    <span className="export-buttons">
      <button
        type="button"
        aria-label={`Download ${name} as SVG`}
        onClick={() => {
          const svg = getSvg();
          if (svg) downloadText(`${slug(name)}.svg`, standaloneFlameSvg(svg, dark), 'image/svg+xml');
        }}
      >
        SVG
      </button>
      <button
        type="button"
        aria-label={`Download ${name} as PNG`}
        onClick={async () => {
          const svg = getSvg();
          if (!svg) return;
          const text = standaloneFlameSvg(svg, dark);
          downloadBlob(`${slug(name)}.png`, await svgToPng(text, svg.width.baseVal.value, svg.height.baseVal.value));
        }}
      >
        PNG
      </button>
    </span>
  );
}

function flameTooltip(unit: string, total: number) {
  return (d: FlameNode) =>
    `${d.name}\n${formatValue(d.value, unit)} · ${formatShare(total ? d.value / total : 0)} of total (unit: ${unit})`;
}

/** The flamegraph request of one stage (shared with the prefetch in the comparison view). */
export function flameGraphUrl(comparisonId: string, stageId: string, view: ViewState, filters: Filters): string {
  return apiUrl('flamegraph', {
    params: { id: comparisonId },
    query: { stage: stageId, ...profileQuery(view), minFraction: MIN_FRACTION, ...filters },
  });
}

function flameUrl(p: PanelProps, stage: Stage | undefined): string | null {
  if (!hasProfile(stage, p.kind)) return null;
  return flameGraphUrl(p.comparisonId, stage.id, p.view, p.filters);
}

function TrimNote({ r }: { r: Flamegraph }) {
  if (!r.trim.prunedNodes && !r.trim.depthTruncatedNodes) return null;
  return (
    <p className="muted small">
      {r.trim.nodes.toLocaleString()} frames shown; {r.trim.prunedNodes.toLocaleString()} frames under{' '}
      {formatShare(MIN_FRACTION)} of the total merged away ({formatValue(r.trim.prunedValue, r.unit)})
      {r.trim.depthTruncatedNodes ? `; ${r.trim.depthTruncatedNodes} frames beyond the depth limit` : ''}.
    </p>
  );
}

function OneFlame(props: PanelProps & { stage: Stage | undefined; side: string }) {
  const { stage, view, setView, side, dark } = props;
  const { data, error, loading, reload } = useFetch<Flamegraph>(flameUrl(props, stage), props.revision);
  const drawable = useDrawableTree(data?.tree);
  const scope = useRef<HTMLDivElement>(null);
  const [match, setMatch] = useState<string>('');
  const tooltip = useMemo(() => (data ? flameTooltip(data.unit, data.total) : () => ''), [data]);
  const onFocus = useCallback((fn: string) => setView({ fn }), [setView]);
  const onSearchResult = useCallback(
    (sum: number, total: number) =>
      setMatch(view.search ? `search matches ${formatShare(total ? sum / total : 0)}` : ''),
    [view.search],
  );
  return (
    <div className="flame-panel" ref={scope} data-side={side}>
      <div className="panel-head">
        <h3>
          {side}: {stage?.name ?? '—'}
        </h3>
        {data && (
          <span className="muted small">
            {KIND_LABELS[data.kind]} · {data.sampleType} · total {formatValue(data.total, data.unit)}{' '}
            {match && `· ${match}`}
          </span>
        )}
        {data && <FlameExport scope={scope} name={`flamegraph-${stage?.name ?? side}`} dark={dark} />}
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
          <FlameGraph<FlameNode>
            tree={drawable.tree ?? data.tree}
            label={`Flamegraph of ${stage.name}`}
            tooltipFor={tooltip}
            search={view.search}
            focus={view.fn}
            onFocus={onFocus}
            onSearchResult={onSearchResult}
            minFrameSize={MIN_FRAME_PX}
          />
          <TrimNote r={data} />
        </>
      ) : loading ? (
        <Loading what={`flamegraph of ${stage.name}`} />
      ) : (
        <ErrorBox error={error} onRetry={reload} />
      )}
    </div>
  );
}

/** Two stages' flamegraphs side by side; search and zoom (focused function) are shared. */
export function FlamePanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  return (
    <div className="side-by-side">
      <OneFlame {...props} stage={props.base} side="Left" />
      <OneFlame {...props} stage={props.target} side="Right" />
    </div>
  );
}

/** Diff flamegraph with the pair's figures, legend, warnings, the hot-path table. */
export function DiffPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { base, target, view, setView, dark } = props;
  const ok = hasProfile(base, props.kind) && hasProfile(target, props.kind);
  const { data, error, loading, reload } = useApi(
    'diff',
    ok
      ? {
          params: { id: props.comparisonId },
          query: {
            base: base.id,
            target: target.id,
            ...profileQuery(view),
            // auto (the default) lets the server choose: per request when every profile has its own run.
            ...(view.mode !== 'auto' ? { mode: view.mode } : {}),
            minFraction: MIN_FRACTION,
            ...props.filters,
          },
        }
      : null,
    props.revision,
  );
  const drawable = useDrawableTree(data?.tree);
  const scope = useRef<HTMLDivElement>(null);
  const hatchId = `hatch${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const hatch = useMemo(() => ({ id: hatchId, ...hatchColors(dark) }), [hatchId, dark]);
  const reference = data ? Math.max(Math.abs(data.baseTotal), Math.abs(data.targetTotal)) : 1;
  const tested = data?.noise?.status === 'tested';
  const colorFor = useCallback(
    // Below the noise floor: grey. Tested across the runs and within their noise: hatched. Else the
    // colour of the change's size — also when too few runs were recorded to test it at all.
    (d: DiffNode) => {
      const c = diffColor(d, { noiseFloor: view.noise, reference, dark });
      if (c === neutralColor(dark)) return c;
      return tested && d.verdict?.status === 'no-change' ? `url(#${hatch.id})` : c;
    },
    [view.noise, reference, dark, tested, hatch.id],
  );
  const nameFor = useCallback((d: DiffNode) => {
    // The marker goes after the name: a narrow frame's truncated label still shows the function.
    if (d.base === 0 && d.target !== 0) return `${d.name} [new]`;
    if (d.target === 0 && d.base !== 0) return `${d.name} [removed]`;
    return d.name;
  }, []);
  const tooltip = useMemo(() => {
    if (!data) return () => '';
    const bName = base?.name ?? 'base';
    const tName = target?.name ?? 'target';
    const sh = (v: number, t: number) => (data.unit === 'fraction' || !t ? '' : ` (${formatShare(v / t)})`);
    const noise = data.noise;
    return (d: DiffNode) =>
      [
        d.name,
        `${bName}: ${formatValue(d.base, data.unit)}${sh(d.base, data.baseTotal)}`,
        `${tName}: ${formatValue(d.target, data.unit)}${sh(d.target, data.targetTotal)}`,
        `Δ ${formatSignedValue(d.delta, data.unit)} (${formatDeltaPercent(d.base, d.target)}) · unit: ${data.unit}`,
        ...(d.verdict && noise
          ? [
              `the function's cum across the profiles (${noise.normalisation === 'raw' ? 'as recorded' : noise.normalisation}): ${verdictWords(fullVerdict(d.verdict, noise, d.base, d.target))}`,
            ]
          : []),
      ].join('\n');
  }, [data, base, target]);
  const onFocus = useCallback((fn: string) => setView({ fn }), [setView]);
  if (!ok)
    return (
      <Empty>
        Pick two stages that both have a{props.kind ? ` ${KIND_LABELS[props.kind]}` : ''} profile to see their diff.
      </Empty>
    );
  const figures = base && target && base.id !== target.id && (
    <PairChanges comparisonId={props.comparisonId} revision={props.revision} base={base} target={target} />
  );
  if (!data)
    return (
      <>
        {figures}
        {loading ? <Loading what="diff" /> : <ErrorBox error={error} onRetry={reload} />}
      </>
    );
  const bName = base?.name ?? 'base';
  const tName = target?.name ?? 'target';
  const untested = untestedReason(data.noise);
  return (
    <div className="diff-panel" ref={scope}>
      {figures}
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
      <DiffLegend
        diff={data}
        baseName={bName}
        targetName={tName}
        noise={view.noise}
        onNoise={(v) => setView({ noise: v })}
        dark={dark}
      />
      <div className="panel-head">
        <h3>
          Diff: {bName} → {tName}
        </h3>
        <span className="muted small">{countNodes(data.tree).toLocaleString()} frames</span>
        <FlameExport scope={scope} name={`diff-${bName}-${tName}`} dark={dark} />
      </div>
      <FlameGraph<DiffNode>
        tree={drawable.tree ?? data.tree}
        label={`Diff flamegraph ${bName} to ${tName}`}
        tooltipFor={tooltip}
        nameFor={nameFor}
        colorFor={colorFor}
        hatch={tested ? hatch : null}
        search={view.search}
        focus={view.fn}
        onFocus={onFocus}
        minFrameSize={MIN_FRAME_PX}
      />
      <h3>Hot paths: functions ranked by change</h3>
      <HotPathTable
        rows={data.top}
        noise={data.noise}
        unit={data.unit}
        baseTotal={data.baseTotal}
        targetTotal={data.targetTotal}
        baseName={bName}
        targetName={tName}
        selected={view.fn}
        onSelect={(fn) => setView({ fn })}
      />
    </div>
  );
}

/** The top functions' cost across all stages. */
export function TrendsPanel(props: PanelProps) {
  const { view, setView, stages } = props;
  const any = stages.some((s) => hasProfile(s, props.kind));
  const { data, error, loading, reload } = useApi(
    'trajectory',
    any ? { params: { id: props.comparisonId }, query: { ...profileQuery(view), n: 12 } } : null,
    props.revision,
  );
  if (!any) return <Empty>No stage has a profile yet.</Empty>;
  if (!data) return loading ? <Loading what="trajectory" /> : <ErrorBox error={error} onRetry={reload} />;
  return (
    <>
      <p className="muted small">
        Cumulative share of {data.kind ? `${KIND_LABELS[data.kind]} · ` : ''}
        {data.sampleType} ({data.unit}) per stage, in stage order: {data.stages.map((s) => s.name).join(' → ')}. Click a
        function to focus it.
      </p>
      <Trajectory data={data} selected={view.fn} onSelect={(fn) => setView({ fn })} />
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
          query: { stage: stage.id, ...profileQuery(view), fn: view.fn, ...props.filters },
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
      <p>
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
        focus=""
        onFocus={onFocus}
      />
      <h4>Callees (what it calls)</h4>
      <FlameGraph<FlameNode>
        tree={data.callees}
        label={`Callees of ${data.name} in ${stage.name}`}
        tooltipFor={tooltip}
        search={view.search}
        focus=""
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
