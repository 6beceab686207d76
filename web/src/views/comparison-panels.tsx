import { useCallback, useMemo, useRef, useState } from 'react';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { DiffLegend } from '../components/diff-legend.tsx';
import { EChart, textTooltip, type ChartHandle, type ChartOption } from '../components/echart.tsx';
import { FlameGraph } from '../components/flame-graph.tsx';
import { HotPathTable } from '../components/hot-path-table.tsx';
import { Trajectory } from '../components/trajectory.tsx';
import { apiUrl } from '../lib/api.ts';
import type {
  DiffNode,
  DiffResponse,
  FlameGraphResponse,
  FlameNode,
  SandwichResponse,
  Stage,
  TimelineResponse,
  TrajectoryResponse,
} from '../lib/api-types.ts';
import { percentileCurve, relativeSeries, xToPercentileLabel } from '../lib/charts.ts';
import { diffColor } from '../lib/diff-color.ts';
import { downloadBlob, downloadText, slug, standaloneFlameSvg, svgToPng } from '../lib/export-files.ts';
import { formatDeltaPercent, formatMs, formatShare, formatSignedValue, formatValue, sig } from '../lib/format.ts';
import { countNodes } from '../lib/tree.ts';
import type { ViewState } from '../lib/url-state.ts';
import { useFetch } from './use-fetch.ts';

/** Server-side trimming: frames below this fraction of the total are merged away. */
export const MIN_FRACTION = 0.0005;
/** Client-side: frames narrower than this many pixels are not drawn. */
export const MIN_FRAME_PX = 1;

interface PanelProps {
  comparisonId: string;
  view: ViewState;
  setView: (p: Partial<ViewState>) => void;
  filters: { focus: string; ignore: string; hide: string };
  dark: boolean;
  stages: Stage[];
}

const enc = encodeURIComponent;

function hasProfile(s: Stage | undefined): boolean {
  return !!s && s.artifacts.some((a) => a.kind === 'profile');
}

/** SVG/PNG export buttons for the flamegraph inside `scope`. */
function FlameExport({ scope, name, dark }: { scope: React.RefObject<HTMLElement | null>; name: string; dark: boolean }) {
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

function flameUrl(p: PanelProps, stage: Stage | undefined): string | null {
  if (!stage || !hasProfile(stage)) return null;
  return apiUrl(`/api/comparisons/${enc(p.comparisonId)}/flamegraph`, {
    stage: stage.id,
    sampleType: p.view.sampleType,
    minFraction: MIN_FRACTION,
    ...p.filters,
  });
}

function TrimNote({ r }: { r: FlameGraphResponse }) {
  if (!r.trim.prunedNodes && !r.trim.depthTruncatedNodes) return null;
  return (
    <p className="muted small">
      {r.trim.nodes.toLocaleString()} frames shown; {r.trim.prunedNodes.toLocaleString()} frames under {formatShare(MIN_FRACTION)} of
      the total merged away ({formatValue(r.trim.prunedValue, r.unit)})
      {r.trim.depthTruncatedNodes ? `; ${r.trim.depthTruncatedNodes} frames beyond the depth limit` : ''}.
    </p>
  );
}

function OneFlame(props: PanelProps & { stage: Stage | undefined; side: string }) {
  const { stage, view, setView, side, dark } = props;
  const { data, error, loading, reload } = useFetch<FlameGraphResponse>(flameUrl(props, stage));
  const scope = useRef<HTMLDivElement>(null);
  const [match, setMatch] = useState<string>('');
  const tooltip = useMemo(() => (data ? flameTooltip(data.unit, data.total) : () => ''), [data]);
  const onFocus = useCallback((fn: string) => setView({ fn }), [setView]);
  const onSearchResult = useCallback(
    (sum: number, total: number) => setMatch(view.search ? `search matches ${formatShare(total ? sum / total : 0)}` : ''),
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
            {data.sampleType} · total {formatValue(data.total, data.unit)} · {data.kind} {match && `· ${match}`}
          </span>
        )}
        {data && <FlameExport scope={scope} name={`flamegraph-${stage?.name ?? side}`} dark={dark} />}
      </div>
      {!stage || !hasProfile(stage) ? (
        <Empty>This stage has no profile.</Empty>
      ) : data ? (
        <>
          <FlameGraph<FlameNode>
            tree={data.tree}
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

/** Diff flamegraph with legend, warnings, the hot-path table. */
export function DiffPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { base, target, view, setView, dark } = props;
  const ok = hasProfile(base) && hasProfile(target);
  const url =
    ok && base && target
      ? apiUrl(`/api/comparisons/${enc(props.comparisonId)}/diff`, {
          base: base.id,
          target: target.id,
          sampleType: view.sampleType,
          mode: view.mode,
          minFraction: MIN_FRACTION,
          ...props.filters,
        })
      : null;
  const { data, error, loading, reload } = useFetch<DiffResponse>(url);
  const scope = useRef<HTMLDivElement>(null);
  const reference = data ? Math.max(Math.abs(data.baseTotal), Math.abs(data.targetTotal)) : 1;
  const colorFor = useCallback(
    (d: DiffNode) => diffColor(d, { noiseFloor: view.noise, reference, dark }),
    [view.noise, reference, dark],
  );
  const nameFor = useCallback((d: DiffNode) => {
    if (d.base === 0 && d.target !== 0) return `[new] ${d.name}`;
    if (d.target === 0 && d.base !== 0) return `[removed] ${d.name}`;
    return d.name;
  }, []);
  const tooltip = useMemo(() => {
    if (!data) return () => '';
    const bName = base?.name ?? 'base';
    const tName = target?.name ?? 'target';
    const sh = (v: number, t: number) => (data.unit === 'fraction' || !t ? '' : ` (${formatShare(v / t)})`);
    return (d: DiffNode) =>
      [
        d.name,
        `${bName}: ${formatValue(d.base, data.unit)}${sh(d.base, data.baseTotal)}`,
        `${tName}: ${formatValue(d.target, data.unit)}${sh(d.target, data.targetTotal)}`,
        `Δ ${formatSignedValue(d.delta, data.unit)} (${formatDeltaPercent(d.base, d.target)}) · unit: ${data.unit}`,
      ].join('\n');
  }, [data, base, target]);
  const onFocus = useCallback((fn: string) => setView({ fn }), [setView]);
  if (!ok) return <Empty>Pick two stages that both have a profile to see their diff.</Empty>;
  if (!data) return loading ? <Loading what="diff" /> : <ErrorBox error={error} onRetry={reload} />;
  const bName = base?.name ?? 'base';
  const tName = target?.name ?? 'target';
  return (
    <div className="diff-panel" ref={scope}>
      {data.warnings.length > 0 && (
        <div className="warnings" role="alert" aria-label="Warnings">
          {data.warnings.map((w, i) => (
            <p key={i}>⚠ {w}</p>
          ))}
        </div>
      )}
      <DiffLegend diff={data} baseName={bName} targetName={tName} noise={view.noise} onNoise={(v) => setView({ noise: v })} dark={dark} />
      <div className="panel-head">
        <h3>
          Diff: {bName} → {tName}
        </h3>
        <span className="muted small">{countNodes(data.tree).toLocaleString()} frames</span>
        <FlameExport scope={scope} name={`diff-${bName}-${tName}`} dark={dark} />
      </div>
      <FlameGraph<DiffNode>
        tree={data.tree}
        label={`Diff flamegraph ${bName} to ${tName}`}
        tooltipFor={tooltip}
        nameFor={nameFor}
        colorFor={colorFor}
        search={view.search}
        focus={view.fn}
        onFocus={onFocus}
        minFrameSize={MIN_FRAME_PX}
      />
      <h3>Hot paths: functions ranked by change</h3>
      <HotPathTable
        rows={data.top}
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
  const url = stages.some(hasProfile)
    ? apiUrl(`/api/comparisons/${enc(props.comparisonId)}/trajectory`, { sampleType: view.sampleType, n: 12 })
    : null;
  const { data, error, loading, reload } = useFetch<TrajectoryResponse>(url);
  if (!url) return <Empty>No stage has a profile yet.</Empty>;
  if (!data) return loading ? <Loading what="trajectory" /> : <ErrorBox error={error} onRetry={reload} />;
  return (
    <>
      <p className="muted small">
        Cumulative share of {data.sampleType} ({data.unit}) per stage, in stage order: {data.stages.map((s) => s.name).join(' → ')}. Click a
        function to focus it.
      </p>
      <Trajectory data={data} selected={view.fn} onSelect={(fn) => setView({ fn })} />
    </>
  );
}

/** Callers and callees of the focused function in the target stage. */
export function SandwichPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { view, setView, target } = props;
  const url =
    view.fn && target && hasProfile(target)
      ? apiUrl(`/api/comparisons/${enc(props.comparisonId)}/sandwich`, {
          stage: target.id,
          sampleType: view.sampleType,
          fn: view.fn,
          ...props.filters,
        })
      : null;
  const { data, error, loading, reload } = useFetch<SandwichResponse>(url);
  const callersRef = useRef<HTMLDivElement>(null);
  const tooltip = useMemo(() => (data ? flameTooltip(data.unit, data.total) : () => ''), [data]);
  const onFocus = useCallback((fn: string) => fn && setView({ fn }), [setView]);
  if (!view.fn) return <Empty>Select a function (click a frame, a hot-path row or a trajectory) to see its callers and callees.</Empty>;
  if (!target || !hasProfile(target)) return <Empty>The right/target stage has no profile.</Empty>;
  if (!data) return loading ? <Loading what="sandwich" /> : <ErrorBox error={error} onRetry={reload} />;
  return (
    <div className="sandwich" ref={callersRef}>
      <p>
        <code className="fn-name">{data.name}</code> in <strong>{target.name}</strong>: flat {formatValue(data.flat, data.unit)} (
        {formatShare(data.total ? data.flat / data.total : 0)}), cum {formatValue(data.cum, data.unit)} (
        {formatShare(data.total ? data.cum / data.total : 0)}).
      </p>
      <h3>Callers (who calls it, root = the function)</h3>
      <FlameGraph<FlameNode> tree={data.callers} label={`Callers of ${data.name}`} tooltipFor={tooltip} search={view.search} focus="" onFocus={onFocus} />
      <h3>Callees (what it calls)</h3>
      <FlameGraph<FlameNode> tree={data.callees} label={`Callees of ${data.name}`} tooltipFor={tooltip} search={view.search} focus="" onFocus={onFocus} />
    </div>
  );
}

const PALETTE = ['#5470c6', '#ee6666', '#91cc75', '#fac858', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];

function ChartBox(props: { title: string; option: ChartOption; dark: boolean; height?: number }) {
  const handle = useRef<ChartHandle | null>(null);
  const onHandle = useCallback((h: ChartHandle | null) => {
    handle.current = h;
  }, []);
  return (
    <div className="chart-box">
      <div className="panel-head">
        <h3>{props.title}</h3>
        <span className="export-buttons">
          <button
            type="button"
            aria-label={`Download ${props.title} as SVG`}
            onClick={() => handle.current && downloadText(`${slug(props.title)}.svg`, handle.current.svg(), 'image/svg+xml')}
          >
            SVG
          </button>
          <button
            type="button"
            aria-label={`Download ${props.title} as PNG`}
            onClick={async () => {
              const h = handle.current;
              if (h) downloadBlob(`${slug(props.title)}.png`, await svgToPng(h.svg(), h.width, h.height));
            }}
          >
            PNG
          </button>
        </span>
      </div>
      <EChart option={props.option} label={props.title} dark={props.dark} height={props.height} onHandle={onHandle} />
    </div>
  );
}

function axisText(dark: boolean) {
  return { color: dark ? '#c9ccd3' : '#333' };
}

/** Load-test timelines (QPS, latency per second) overlaid on relative time, and percentile curves. */
export function LoadPanel(props: PanelProps) {
  const { dark } = props;
  const { data, error, loading, reload } = useFetch<TimelineResponse>(`/api/comparisons/${enc(props.comparisonId)}/timeline`);
  const charts = useMemo(() => {
    if (!data) return null;
    const runs = data.stages.flatMap((s, si) =>
      s.runs.map((r) => ({ ...r, label: s.runs.length > 1 ? `${s.name} · ${r.filename}` : s.name, color: PALETTE[si % PALETTE.length] as string })),
    );
    const withTimeline = runs.filter((r) => r.timeline && r.timeline.length > 0);
    const withDist = runs.filter((r) => r.latencyDistribution && r.latencyDistribution.length > 0);
    const base = {
      color: PALETTE,
      textStyle: axisText(dark),
      grid: { left: 64, right: 24, top: 40, bottom: 48 },
      legend: { type: 'scroll', top: 0, textStyle: axisText(dark) },
    };
    const seriesTooltip = (fmt: (v: number) => string) => ({
      trigger: 'axis',
      formatter: (params: unknown) => {
        const list = (Array.isArray(params) ? params : [params]) as { seriesName: string; value: [number, number | null] }[];
        const t = list[0]?.value[0];
        return textTooltip([
          `t = ${t ?? '?'} s`,
          ...list.map((p) => `${p.seriesName}: ${p.value[1] === null ? '—' : fmt(p.value[1])}`),
        ]);
      },
    });
    const qps: ChartOption = {
      ...base,
      tooltip: seriesTooltip((v) => `${sig(v, 4)} req/s`),
      xAxis: { type: 'value', name: 'seconds since start', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'value', name: 'req/s' },
      series: withTimeline.map((r) => ({
        type: 'line',
        name: r.label,
        showSymbol: false,
        itemStyle: { color: r.color },
        data: relativeSeries(r.timeline ?? [], (b) => b.rps),
      })),
    };
    const latency: ChartOption = {
      ...base,
      tooltip: seriesTooltip((v) => formatMs(v)),
      xAxis: { type: 'value', name: 'seconds since start', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'value', name: 'ms' },
      series: withTimeline.flatMap((r) =>
        (['p50', 'p95', 'p99'] as const).map((k, ki) => ({
          type: 'line',
          name: `${r.label} ${k}`,
          showSymbol: false,
          itemStyle: { color: r.color },
          lineStyle: { type: ki === 0 ? 'solid' : ki === 1 ? 'dashed' : 'dotted' },
          data: relativeSeries(r.timeline ?? [], (b) => b.latencyMs[k]),
        })),
      ),
    };
    const curves: ChartOption = {
      ...base,
      tooltip: {
        trigger: 'item',
        formatter: (p: unknown) => {
          const q = p as { seriesName: string; value: [number, number] };
          return textTooltip([q.seriesName, `${xToPercentileLabel(q.value[0])}: ${formatMs(q.value[1])}`]);
        },
      },
      xAxis: {
        type: 'log',
        logBase: 10,
        min: 1,
        name: 'percentile',
        nameLocation: 'middle',
        nameGap: 28,
        axisLabel: { formatter: (x: number) => xToPercentileLabel(x) },
      },
      yAxis: { type: 'value', name: 'latency (ms)' },
      series: withDist.map((r) => ({
        type: 'line',
        name: r.label,
        symbolSize: 5,
        itemStyle: { color: r.color },
        data: percentileCurve(r.latencyDistribution ?? []),
      })),
    };
    return { qps, latency, curves, hasTimeline: withTimeline.length > 0, hasDist: withDist.length > 0, runs: runs.length };
  }, [data, dark]);
  if (!data || !charts) return loading ? <Loading what="timelines" /> : <ErrorBox error={error} onRetry={reload} />;
  if (charts.runs === 0) return <Empty>No load-test runs uploaded yet.</Empty>;
  return (
    <div className="load-panel">
      {charts.hasTimeline ? (
        <>
          <ChartBox title="Throughput per second (QPS)" option={charts.qps} dark={dark} />
          <ChartBox title="Latency per second (p50 solid, p95 dashed, p99 dotted)" option={charts.latency} dark={dark} height={340} />
        </>
      ) : (
        <Empty>
          No per-second data: these load tests only print a summary (wrk, ab text). Upload hey CSV, vegeta results, k6 JSON,
          Locust history or JMeter JTL for timelines.
        </Empty>
      )}
      {charts.hasDist ? (
        <ChartBox title="Latency by percentile (HdrHistogram-style, x = 1/(1−p))" option={charts.curves} dark={dark} height={340} />
      ) : (
        <Empty>No latency distribution in these load tests (wrk --latency, wrk2, k6 and vegeta give one).</Empty>
      )}
    </div>
  );
}
