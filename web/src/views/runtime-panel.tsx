import { useMemo } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import { formatChange, formatInt, formatNanos, formatValue, sig } from '../../../server/src/api/format.ts';
import type { Reply, Stage } from '../lib/api.ts';
import { relativeSeries } from '../lib/charts.ts';
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
    <div className="runtime-panel">
      <p className="muted small">
        From each stage's Go execution traces, one a run: scheduling wait is the delay from runnable to running;
        stop-the-world, blocked and syscall times and goroutines created are totals over each trace,{' '}
        {d.normalisation === 'per-request'
          ? 'divided by the requests served during it (its own run’s req/s, else the stage’s, × its span)'
          : 'per second of trace (a stage has a trace without its load run)'}
        . Verdicts compare the traces as runs (benchstat's test, α = {d.alpha}).
      </p>
      <RuntimeTable d={d} />
      {d.sentences.length > 0 && (
        <ul className="runtime-sentences" aria-label="Runtime changes in words">
          {d.sentences.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      )}
      <EntryTable d={d} />
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
  const verdictText = (f: Figure) => {
    if (f.deltaPercent === null) return f.reason ?? '';
    const change = formatChange(f.verdict.ratio ?? 1);
    if (f.verdict.status === 'significant') return `${change} (p=${sig(f.verdict.p ?? 0, 2)})`;
    if (f.verdict.status === 'no-change') return `~ within the noise (p=${sig(f.verdict.p ?? 0, 2)})`;
    return `${change} · ${f.reason ?? ''}`;
  };
  return (
    <div className="table-scroll">
      <table className="runtime-table" aria-label="Runtime figures of both stages">
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <th scope="col" className="num">
              {d.base.name} ({formatInt(d.base.traces.length)} trace{d.base.traces.length === 1 ? '' : 's'})
            </th>
            <th scope="col" className="num">
              {d.target.name} ({formatInt(d.target.traces.length)} trace{d.target.traces.length === 1 ? '' : 's'})
            </th>
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
                {verdictText(f)}
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
            <th scope="col" className="num">
              Created
            </th>
            <th scope="col" className="num">
              Lifetime p50
            </th>
            <th scope="col" className="num">
              p99
            </th>
            <th scope="col" className="num">
              max
            </th>
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

/** Both stages' charts; each stage its colour, a stage's later traces dashed apart. */
function runtimeCharts(d: Runtime, load: Reply<'timeline'> | null, dark: boolean) {
  const sides: { side: Side; color: string }[] = [
    { side: d.base, color: PALETTE[0] as string },
    { side: d.target, color: PALETTE[1] as string },
  ];
  const base = {
    color: PALETTE,
    textStyle: axisText(dark),
    grid: { left: 64, right: 24, top: 40, bottom: 48 },
    legend: { type: 'scroll', top: 0, textStyle: axisText(dark) },
  };
  const axisTooltip = (fmt: (v: number) => string, xName: string) => ({
    trigger: 'axis',
    formatter: (params: unknown) => {
      const list = (Array.isArray(params) ? params : [params]) as {
        seriesName: string;
        value: [number, number | null];
      }[];
      return textTooltip([
        `${xName} ${sig(list[0]?.value[0] ?? 0, 3)} s`,
        ...list.map((p) => `${p.seriesName}: ${p.value[1] === null ? '—' : fmt(p.value[1])}`),
      ]);
    },
  });
  const traces = sides.flatMap(({ side, color }) =>
    side.traces.map((t, i) => ({
      t,
      color,
      label: side.traces.length > 1 ? `${side.name} · ${t.filename}` : side.name,
      first: i === 0,
    })),
  );
  const xTrace = { type: 'value', name: 'seconds since the trace started', nameLocation: 'middle', nameGap: 28 };
  const bucketSeries = (t: (typeof traces)[number]['t'], pick: (b: (typeof t.timeline.buckets)[number]) => number) =>
    t.timeline.buckets.map((b) => [b.startNanos / 1e9, pick(b)] as [number, number]);
  // Only a stage's first trace is drawn: traces of one stage overlap in time and would hide each other.
  const drawn = traces.filter((x) => x.first);
  const goroutines: ChartOption | null =
    drawn.length === 0
      ? null
      : {
          ...base,
          tooltip: axisTooltip((v) => sig(v, 3), 't ='),
          xAxis: xTrace,
          yAxis: { type: 'value', name: 'goroutines' },
          series: drawn.flatMap((x) => [
            {
              type: 'line',
              name: `${x.label} running`,
              showSymbol: false,
              itemStyle: { color: x.color },
              data: bucketSeries(x.t, (b) => b.running),
            },
            {
              type: 'line',
              name: `${x.label} runnable`,
              showSymbol: false,
              itemStyle: { color: x.color },
              lineStyle: { type: 'dashed' },
              data: bucketSeries(x.t, (b) => b.runnable),
            },
          ]),
        };
  const gc: ChartOption | null =
    drawn.length === 0
      ? null
      : {
          ...base,
          tooltip: axisTooltip((v) => sig(v, 3), 't ='),
          xAxis: xTrace,
          yAxis: [
            { type: 'value', name: 'GC mark share', min: 0, max: 1 },
            { type: 'value', name: 'STW ms' },
          ],
          series: drawn.flatMap((x) => [
            {
              type: 'line',
              name: `${x.label} GC mark`,
              showSymbol: false,
              step: 'start',
              areaStyle: { opacity: 0.15 },
              itemStyle: { color: x.color },
              data: bucketSeries(x.t, (b) => b.gcMark),
            },
            {
              type: 'line',
              name: `${x.label} STW`,
              yAxisIndex: 1,
              showSymbol: false,
              step: 'start',
              itemStyle: { color: x.color },
              lineStyle: { type: 'dotted' },
              data: bucketSeries(x.t, (b) => b.stwNanos / 1e6),
            },
          ]),
        };
  const metrics = METRIC_CHARTS.flatMap((c) => {
    const series = sides.flatMap(({ side, color }) =>
      side.metrics.flatMap((m, mi) => {
        const s = c.names.map((n) => m.series.find((x) => x.name === n)).find((x) => x !== undefined);
        if (!s) return [];
        const ys: (number | null)[] =
          c.read === 'value' && (s.type === 'gauge' || s.type === 'untyped')
            ? s.values.map((v) => (v === null ? null : c.unit === 'MB' ? v / 1e6 : v))
            : c.read === 'rate' && s.type === 'counter'
              ? s.rates
              : c.read === 'p99' && s.type === 'histogram'
                ? s.perInterval.map((p) => (p?.p99 == null ? null : p.p99 * 1e3))
                : [];
        if (ys.length === 0) return [];
        return [
          {
            type: 'line',
            name: side.metrics.length > 1 ? `${side.name} · ${m.filename}` : side.name,
            showSymbol: true,
            symbolSize: 4,
            itemStyle: { color },
            lineStyle: { type: mi === 0 ? 'solid' : 'dashed' },
            data: m.times.map((t, i) => [t, ys[i] ?? null]),
          },
        ];
      }),
    );
    if (series.length === 0) return [];
    const option: ChartOption = {
      ...base,
      tooltip: axisTooltip((v) => `${sig(v, 4)} ${c.unit}`, 't ='),
      xAxis: { type: 'value', name: 'seconds since the first scrape', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'value', name: c.unit },
      series,
    };
    return [{ title: c.title, option }];
  });
  let qps: ChartOption | null = null;
  if (load) {
    const runs = sides.flatMap(({ side, color }) => {
      const st = load.stages.find((s) => s.stageId === side.stageId);
      return (st?.runs ?? [])
        .filter((r) => r.timeline && r.timeline.length > 0)
        .map((r, i) => ({ r, color, label: `${side.name} · ${r.filename}`, dash: i === 0 ? 'solid' : 'dashed' }));
    });
    if (runs.length > 0)
      qps = {
        ...base,
        tooltip: axisTooltip((v) => `${sig(v, 4)} req/s`, 't ='),
        xAxis: { type: 'value', name: 'seconds since the load test started', nameLocation: 'middle', nameGap: 28 },
        yAxis: { type: 'value', name: 'req/s' },
        series: runs.map((x) => ({
          type: 'line',
          name: x.label,
          showSymbol: false,
          itemStyle: { color: x.color },
          lineStyle: { type: x.dash },
          data: relativeSeries(x.r.timeline ?? [], (b) => b.rps),
        })),
      };
  }
  return { goroutines, gc, metrics, qps };
}
