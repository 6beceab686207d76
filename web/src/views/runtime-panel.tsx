import { useMemo } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading, NumTh } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import { formatInt, formatNanos, formatOffsetSeconds, formatValue, sig } from '../../../server/src/api/format.ts';
import type { Reply, Stage } from '../lib/api.ts';
import { traceReferenceNote } from '../../../server/src/api/words.ts';
import { relativeSeries } from '../lib/charts.ts';
import { requestCounter } from '../lib/request-counter.ts';
import { changeVerdictText } from '../lib/diff-verdicts.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

type Runtime = Reply<'runtime'>;
type Side = Runtime['base'];
type Figure = Runtime['figures'][number];

/** The metric series each runtime-metrics chart draws, by the names the endpoints give them (first found). */
const METRIC_CHARTS: { title: string; unit: string; names: string[]; read: 'value' | 'rate' | 'p99' }[] = [
  {
    title: 'Goroutines (runtime metrics)',
    unit: 'goroutines',
    names: ['go_sched_goroutines_goroutines', 'go_goroutines'],
    read: 'value',
  },
  {
    title: 'Heap objects (runtime metrics)',
    unit: 'MB',
    names: ['go_memory_classes_heap_objects_bytes', 'go_memstats_heap_alloc_bytes', 'memstats.HeapAlloc'],
    read: 'value',
  },
  {
    title: 'GC CPU (runtime metrics, CPU-s per s)',
    unit: 's/s',
    names: ['go_cpu_classes_gc_total_cpu_seconds_total'],
    read: 'rate',
  },
  {
    title: 'Scheduling latency P99 per second (runtime metrics)',
    unit: 'ms',
    names: ['go_sched_latencies_seconds'],
    read: 'p99',
  },
];

/**
 * What the Go runtime did in the base and target stages: the execution traces' figures side by side with
 * the change engine's verdict across the traces, then on one time axis per stage the goroutines running
 * and runnable, GC and stop-the-world, the runtime metrics and the load test's QPS.
 */
export function RuntimePanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { dark, base, target } = props;
  const pair = base && target && base.id !== target.id ? { base: base.id, target: target.id } : null;
  const rt = useApi('runtime', pair ? { params: { id: props.comparisonId }, query: pair } : null, props.revision);
  const load = useApi('timeline', { params: { id: props.comparisonId } }, props.revision);
  const charts = useMemo(
    () => (rt.data ? runtimeCharts(rt.data, load.data ?? null, dark) : null),
    [rt.data, load.data, dark],
  );
  if (!pair) return <Empty>Pick two different stages to compare what the runtime did.</Empty>;
  if (!rt.data || !charts)
    return rt.loading ? <Loading what="runtime" /> : <ErrorBox error={rt.error} onRetry={rt.reload} />;
  const d = rt.data;
  if (d.base.traces.length + d.target.traces.length + d.base.metrics.length + d.target.metrics.length === 0)
    return (
      <Empty>
        Neither stage has an execution trace or runtime metrics (stagediff capture --trace S --metrics URL records
        them).
      </Empty>
    );
  return (
    <div
      className="runtime-panel"
      data-axis={`${charts.axis.min},${charts.axis.max}`}
      data-trace-axis={`${charts.traceAxis.min},${charts.traceAxis.max}`}
    >
      <p className="muted small">
        From each stage's Go execution traces and runtime-metrics windows, one value a run: scheduling wait and latency
        as measured; stop-the-world, blocked and syscall times, goroutines created, GC CPU and bytes allocated are
        totals over each window,{' '}
        {d.normalisation === 'per-request'
          ? 'divided by the requests its own load run served during it'
          : 'per second of window (a window lacks its own load run)'}
        . Verdicts compare the windows as runs (benchstat's test, α = {d.alpha}).
      </p>
      {d.base.traces.length + d.target.traces.length > 0 && (
        <ul className="small muted" aria-label="Trace notes">
          {[d.base, d.target].flatMap((side) =>
            side.traces.map((t) => (
              <li key={t.artifactId}>
                <strong>{side.name}</strong>, {t.filename}: {traceReferenceNote(t.summary.goVersion)}
              </li>
            )),
          )}
        </ul>
      )}
      <RuntimeTable d={d} />
      {d.sentences.length > 0 && (
        <ul className="runtime-sentences" aria-label="Runtime changes in words">
          {d.sentences.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      )}
      <EntryTable d={d} />
      {charts.placements.length > 0 && (
        <div className="runtime-clock">
          <p className="muted small">
            The timelines below share one time axis placed by the wall clock: each stage from the earliest of its
            timelines (the window of its first trace), every piece where its own clock puts it. The execution-trace
            charts show only the traces' span of that axis.
            {charts.approximate ? ' Some pieces are placed approximately; each says how.' : ''}
          </p>
          <ul className="small" aria-label="Timeline alignment">
            {charts.placements.map((p) => (
              <li key={p.side.stageId} data-exact={p.exact ? 'yes' : 'no'}>
                <strong>{p.side.name}</strong>: {p.notes.join('; ')}
              </li>
            ))}
          </ul>
        </div>
      )}
      {charts.qps && <ChartBox title="Throughput per second (QPS)" option={charts.qps} dark={dark} height={240} />}
      {charts.goroutines && (
        <ChartBox
          title="Goroutines running (solid) and runnable (dashed), execution trace"
          option={charts.goroutines}
          dark={dark}
          height={280}
        />
      )}
      {charts.gc && (
        <ChartBox
          title="GC mark phase (share, shaded) and stop-the-world (ms, dotted), execution trace"
          option={charts.gc}
          dark={dark}
          height={240}
        />
      )}
      {charts.metrics.map((m) => (
        <ChartBox key={m.title} title={m.title} option={m.option} dark={dark} height={220} />
      ))}
    </div>
  );
}

/** "4 traces, 4 metrics windows": what a stage's runtime rows are medians of. */
function windows(side: Side): string {
  const n = (k: number, what: string) => `${formatInt(k)} ${what}${k === 1 ? '' : 's'}`;
  const parts = [n(side.traces.length, 'trace')];
  if (side.metrics.length > 0) parts.push(n(side.metrics.length, 'metrics window'));
  return parts.join(', ');
}

function RuntimeTable({ d }: { d: Runtime }) {
  const cell = (f: Figure, side: 'base' | 'target') => {
    const e = f[side];
    if (!e) return <span className="muted">—</span>;
    return (
      <>
        {formatValue(e.median, f.unit)}
        {e.n > 1 && <span className="muted small"> (median of {e.n})</span>}
      </>
    );
  };
  return (
    <div className="table-scroll">
      <table className="runtime-table" aria-label="Runtime figures of both stages">
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <NumTh>
              {d.base.name} ({windows(d.base)})
            </NumTh>
            <NumTh>
              {d.target.name} ({windows(d.target)})
            </NumTh>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {d.figures.map((f) => (
            <tr key={f.metric} data-metric={f.metric} data-status={f.verdict.status}>
              <th scope="row">{f.label}</th>
              <td className="num" data-side="base">
                {cell(f, 'base')}
              </td>
              <td className="num" data-side="target">
                {cell(f, 'target')}
              </td>
              <td className={f.direction === 'improvement' ? 'good' : f.direction === 'regression' ? 'bad' : undefined}>
                {changeVerdictText(f)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Goroutines by the function they started in (the request handlers among them), each stage's first
 * trace: how many were created and how long those that ended lived — the tail a P99 comes from.
 */
function EntryTable({ d }: { d: Runtime }) {
  const rows = [d.base, d.target].flatMap((side) => {
    const t = side.traces[0];
    if (!t) return [];
    return t.summary.entryFunctions.functions
      .filter((f) => f.lifetime.count > 0)
      .slice(0, 5)
      .map((f) => ({ stage: side.name, f }));
  });
  if (rows.length === 0) return null;
  return (
    <div className="table-scroll">
      <table className="runtime-table" aria-label="Goroutine lifetimes by entry function">
        <thead>
          <tr>
            <th scope="col">Stage (first trace)</th>
            <th scope="col">Entry function</th>
            <NumTh>Created</NumTh>
            <NumTh>Lifetime p50</NumTh>
            <NumTh>p99</NumTh>
            <NumTh>max</NumTh>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ stage, f }) => (
            <tr key={`${stage}\u0000${f.name}`}>
              <td>{stage}</td>
              <td className="fn-name">{f.name || '(no stack)'}</td>
              <td className="num">{formatInt(f.created)}</td>
              <td className="num">{formatNanos(f.lifetime.p50Nanos)}</td>
              <td className="num">{formatNanos(f.lifetime.p99Nanos)}</td>
              <td className="num">{formatNanos(f.lifetime.maxNanos)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type LoadRun = Reply<'timeline'>['stages'][number]['runs'][number];
type Trace = Side['traces'][number];
type Metrics = Side['metrics'][number];

/**
 * Where a stage's timelines sit on one wall-clock axis: its first trace, the metrics window and the
 * load-test runs around it, each at `at` seconds after the stage's origin (the earliest of them); null
 * when a piece has no wall clock and is drawn from the origin instead.
 */
interface Placement {
  side: Side;
  color: string;
  trace: { t: Trace; at: number | null } | null;
  metrics: { m: Metrics; at: number | null } | null;
  runs: { r: LoadRun; at: number | null }[];
  /** QPS from the service's own request counter in the metrics, when no load run's timeline covers the window. */
  counter: { name: string; rates: (number | null)[] } | null;
  notes: string[];
  exact: boolean;
}

function startedAt(r: LoadRun): number | null {
  const v = r.summary.meta.startedAt;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A stage's pieces placed on the wall clock (see Placement). */
export function placeStage(side: Side, color: string, loadRuns: LoadRun[]): Placement {
  const t = side.traces[0] ?? null;
  const tWall = t?.wallClock.start ? Date.parse(t.wallClock.start) : null;
  const mWall = (m: Metrics) => Date.parse(m.start);
  const mEnd = (m: Metrics) => mWall(m) + (m.times[m.times.length - 1] ?? 0) * 1000;
  // The metrics window and load runs of the trace's own run: those around its start.
  const mMatch =
    tWall !== null ? (side.metrics.find((x) => mWall(x) - 1000 <= tWall && tWall <= mEnd(x) + 1000) ?? null) : null;
  const m = mMatch ?? side.metrics[0] ?? null;
  // Without a trace on the wall clock, the metrics window is the reference.
  const mAligned = m !== null && (mMatch !== null || tWall === null);
  const ref = tWall ?? (m ? mWall(m) : null);
  const timed = loadRuns.filter((r) => r.timeline && r.timeline.length > 0);
  const covering =
    ref === null
      ? []
      : timed.filter((r) => {
          const w = startedAt(r);
          return w !== null && w - 1000 <= ref && ref <= w + ((r.timeline?.length ?? 0) + 1) * 1000;
        });
  const runsAligned = covering.length > 0;
  // Without a load run's timeline in the window (wrk prints none), the service's own request counter
  // scraped over the window gives its QPS; a run from another window is then not drawn at all.
  const counter = !runsAligned && m !== null && mAligned ? requestCounter(m) : null;
  const runs = runsAligned ? covering : counter ? [] : timed.slice(0, 1);
  const walls = [tWall, mAligned ? mWall(m!) : null, ...(runsAligned ? runs.map(startedAt) : [])].filter(
    (x): x is number => x !== null,
  );
  const origin = walls.length > 0 ? Math.min(...walls) : null;
  const rel = (w: number | null) => (w === null || origin === null ? null : (w - origin) / 1000);
  const notes: string[] = [];
  let exact = true;
  const apart = (what: string, why: string) => {
    exact = false;
    notes.push(`${what} not aligned: ${why}, drawn from the axis’ zero`);
  };
  if (t) {
    const at = rel(tWall);
    if (t.wallClock.source === 'trace-clock')
      notes.push(`trace at ${formatOffsetSeconds(at ?? 0)} by its own wall clock (Go 1.25+, to the millisecond)`);
    else if (t.wallClock.source === 'capture') {
      exact = false;
      notes.push(
        `trace at ${formatOffsetSeconds(at ?? 0)}, approximately: when stagediff capture asked for it (a trace before Go 1.25 has no wall clock; it starts when the service gets the request)`,
      );
    } else apart('trace', 'it has no wall clock (Go before 1.25, uploaded without its capture record)');
  }
  if (m) {
    if (mAligned) notes.push(`metrics from ${formatOffsetSeconds(rel(mWall(m)) ?? 0)}, at each scrape’s time`);
    else apart(`metrics (${m.filename})`, 'its window is not the trace’s');
  }
  if (counter) notes.push(`QPS from the service’s own counter ${counter.name} in the metrics, between scrapes`);
  for (const r of runs) {
    if (runsAligned)
      notes.push(
        `QPS of ${r.filename} from ${formatOffsetSeconds(rel(startedAt(r)) ?? 0)}, at its requests’ own times`,
      );
    else
      apart(
        `QPS of ${r.filename}`,
        startedAt(r) === null ? 'its log has no wall-clock times' : 'it was not running during this window',
      );
  }
  return {
    side,
    color,
    trace: t ? { t, at: rel(tWall) } : null,
    metrics: m ? { m, at: mAligned ? rel(mWall(m)) : null } : null,
    runs: runs.map((r) => ({ r, at: runsAligned ? rel(startedAt(r)) : null })),
    counter,
    notes,
    exact,
  };
}

/** Both stages' charts on one wall-clock axis; each stage its colour. */
function runtimeCharts(d: Runtime, load: Reply<'timeline'> | null, dark: boolean) {
  const runsOf = (side: Side) => load?.stages.find((s) => s.stageId === side.stageId)?.runs ?? [];
  const placements = [
    placeStage(d.base, PALETTE[0] as string, runsOf(d.base)),
    placeStage(d.target, PALETTE[1] as string, runsOf(d.target)),
  ].filter((p) => p.trace || p.metrics || p.runs.length > 0);
  const base = {
    color: PALETTE,
    textStyle: axisText(dark),
    grid: { left: 64, right: 64, top: 40, bottom: 48 },
    legend: { type: 'scroll', top: 0, textStyle: axisText(dark) },
  };
  const axisTooltip = (fmt: (v: number) => string) => ({
    trigger: 'axis',
    formatter: (params: unknown) => {
      const list = (Array.isArray(params) ? params : [params]) as {
        seriesName: string;
        value: [number, number | null];
      }[];
      return textTooltip([
        `t = ${sig(list[0]?.value[0] ?? 0, 3)} s`,
        ...list.map((p) => `${p.seriesName}: ${p.value[1] === null ? '—' : fmt(p.value[1])}`),
      ]);
    },
  });
  // Every x of every chart, so all charts share one axis range.
  const xs: number[] = [];
  const pts = (data: [number, number | null][]) => {
    for (const [x] of data) xs.push(x);
    return data;
  };
  const traced = placements.filter((p) => p.trace !== null);
  // The traces' own x range: a trace is often a fraction of a second of a window of several.
  const traceXs: number[] = [];
  const bucketSeries = (p: Placement, pick: (b: Trace['timeline']['buckets'][number]) => number) => {
    const data = p.trace!.t.timeline.buckets.map(
      (b) => [(p.trace!.at ?? 0) + b.startNanos / 1e9, pick(b)] as [number, number | null],
    );
    for (const [x] of data) traceXs.push(x);
    return pts(data);
  };
  const goroutineSeries = traced.flatMap((p) => [
    {
      type: 'line',
      name: `${p.side.name} running`,
      showSymbol: false,
      itemStyle: { color: p.color },
      data: bucketSeries(p, (b) => b.running),
    },
    {
      type: 'line',
      name: `${p.side.name} runnable`,
      showSymbol: false,
      itemStyle: { color: p.color },
      lineStyle: { type: 'dashed' },
      data: bucketSeries(p, (b) => b.runnable),
    },
  ]);
  const gcSeries = traced.flatMap((p) => [
    {
      type: 'line',
      name: `${p.side.name} GC mark`,
      showSymbol: false,
      step: 'start',
      areaStyle: { opacity: 0.15 },
      itemStyle: { color: p.color },
      data: bucketSeries(p, (b) => b.gcMark),
    },
    {
      type: 'line',
      name: `${p.side.name} STW`,
      yAxisIndex: 1,
      showSymbol: false,
      step: 'start',
      itemStyle: { color: p.color },
      lineStyle: { type: 'dotted' },
      data: bucketSeries(p, (b) => b.stwNanos / 1e6),
    },
  ]);
  const metricSeries = METRIC_CHARTS.map((c) => {
    const series = placements.flatMap((p) => {
      if (!p.metrics) return [];
      const { m, at } = p.metrics;
      const s = c.names.map((n) => m.series.find((x) => x.name === n)).find((x) => x !== undefined);
      if (!s) return [];
      const ys: (number | null)[] =
        c.read === 'value' && (s.type === 'gauge' || s.type === 'untyped')
          ? s.values.map((v) => (v === null ? null : c.unit === 'MB' ? v / 1e6 : v))
          : c.read === 'rate' && s.type === 'counter'
            ? s.rates
            : c.read === 'p99' && s.type === 'histogram'
              ? s.perInterval.map((q) => (q?.p99 == null ? null : q.p99 * 1e3))
              : [];
      if (ys.length === 0) return [];
      return [
        {
          type: 'line',
          name: p.side.name,
          showSymbol: true,
          symbolSize: 4,
          itemStyle: { color: p.color },
          data: pts(m.times.map((t, i) => [(at ?? 0) + t, ys[i] ?? null])),
        },
      ];
    });
    return { c, series };
  });
  const qpsSeries = placements.flatMap((p) =>
    p.runs.map((x, i) => ({
      type: 'line',
      name: p.runs.length > 1 ? `${p.side.name} · ${x.r.filename}` : p.side.name,
      showSymbol: false,
      itemStyle: { color: p.color },
      lineStyle: { type: i === 0 ? 'solid' : 'dashed' },
      // a second's requests drawn at the middle of that second
      data: pts(relativeSeries(x.r.timeline ?? [], (b) => b.rps).map(([t, v]) => [(x.at ?? 0) + t + 0.5, v])),
    })),
  );
  for (const p of placements) {
    if (!p.counter || !p.metrics) continue;
    const { m, at } = p.metrics;
    // A rate covers the interval from the previous scrape: drawn at the interval's end, as the metrics'
    // other rates are.
    const data: [number, number | null][] = [];
    for (let i = 1; i < m.times.length; i++) data.push([(at ?? 0) + m.times[i]!, p.counter.rates[i] ?? null]);
    qpsSeries.push({
      type: 'line',
      name: `${p.side.name} · ${p.counter.name}`,
      showSymbol: true,
      itemStyle: { color: p.color },
      lineStyle: { type: 'solid' },
      data: pts(data),
    });
  }
  const xAxis = {
    type: 'value',
    name: 'seconds on the wall clock, from each stage’s earliest timeline',
    nameLocation: 'middle',
    nameGap: 28,
    min: xs.length > 0 ? Math.floor(Math.min(...xs)) : 0,
    max: xs.length > 0 ? Math.ceil(Math.max(...xs)) : 1,
  };
  // The trace charts keep the shared origin but show only the traces' span (to the hundredth of a
  // second), so a 0.1 s trace in a 5 s window is not a sliver.
  const traceAxis =
    traceXs.length > 0
      ? {
          ...xAxis,
          name: 'seconds on the wall clock, from each stage’s earliest timeline (the traces’ span)',
          min: Math.floor(Math.min(...traceXs) * 100) / 100,
          max: Math.ceil(Math.max(...traceXs) * 100) / 100,
        }
      : xAxis;
  const goroutines: ChartOption | null =
    goroutineSeries.length === 0
      ? null
      : {
          ...base,
          tooltip: axisTooltip((v) => sig(v, 3)),
          xAxis: traceAxis,
          yAxis: { type: 'value', name: 'goroutines' },
          series: goroutineSeries,
        };
  const gc: ChartOption | null =
    gcSeries.length === 0
      ? null
      : {
          ...base,
          tooltip: axisTooltip((v) => sig(v, 3)),
          xAxis: traceAxis,
          yAxis: [
            { type: 'value', name: 'GC mark share', min: 0, max: 1 },
            { type: 'value', name: 'STW ms' },
          ],
          series: gcSeries,
        };
  const metrics = metricSeries
    .filter((x) => x.series.length > 0)
    .map(({ c, series }) => ({
      title: c.title,
      option: {
        ...base,
        tooltip: axisTooltip((v) => `${sig(v, 4)} ${c.unit}`),
        xAxis,
        yAxis: { type: 'value', name: c.unit },
        series,
      } as ChartOption,
    }));
  const qps: ChartOption | null =
    qpsSeries.length === 0
      ? null
      : {
          ...base,
          tooltip: axisTooltip((v) => `${sig(v, 4)} req/s`),
          xAxis,
          yAxis: { type: 'value', name: 'req/s' },
          series: qpsSeries,
        };
  return {
    goroutines,
    gc,
    metrics,
    qps,
    placements,
    approximate: placements.some((p) => !p.exact),
    axis: { min: xAxis.min, max: xAxis.max },
    traceAxis: { min: traceAxis.min, max: traceAxis.max },
  };
}
