import { useMemo } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import { percentileCurve, relativeSeries, xToPercentileLabel } from '../lib/charts.ts';
import { formatMs, sig } from '../../../server/src/api/format.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

/** Load-test timelines (QPS, latency per second) overlaid on relative time, and percentile curves. */
export function LoadPanel(props: PanelProps) {
  const { dark } = props;
  const { data, error, loading, reload } = useApi('timeline', { params: { id: props.comparisonId } }, props.revision);
  const charts = useMemo(() => {
    if (!data) return null;
    const runs = data.stages.flatMap((s, si) =>
      s.runs.map((r, ri) => ({
        ...r,
        label: s.runs.length > 1 ? `${s.name} · ${r.filename}` : s.name,
        color: PALETTE[si % PALETTE.length] as string,
        // Runs of one stage share its colour; later runs are dashed so they stay apart.
        dash: ri === 0 ? 'solid' : ri === 1 ? 'dashed' : 'dotted',
      })),
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
        const list = (Array.isArray(params) ? params : [params]) as {
          seriesName: string;
          value: [number, number | null];
        }[];
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
        lineStyle: { type: r.dash },
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
        lineStyle: { type: r.dash },
        data: percentileCurve(r.latencyDistribution ?? []),
      })),
    };
    return {
      qps,
      latency,
      curves,
      hasTimeline: withTimeline.length > 0,
      hasDist: withDist.length > 0,
      runs: runs.length,
    };
  }, [data, dark]);
  if (!data || !charts) return loading ? <Loading what="timelines" /> : <ErrorBox error={error} onRetry={reload} />;
  if (charts.runs === 0) return <Empty>No load-test runs uploaded yet.</Empty>;
  return (
    <div className="load-panel">
      {charts.hasTimeline ? (
        <>
          <ChartBox title="Throughput per second (QPS)" option={charts.qps} dark={dark} />
          <ChartBox
            title="Latency per second (p50 solid, p95 dashed, p99 dotted)"
            option={charts.latency}
            dark={dark}
            height={340}
          />
        </>
      ) : (
        <Empty>
          No per-second data: these load tests only print a summary (wrk, ab text). Upload hey CSV, vegeta results, k6
          JSON, Locust history or JMeter JTL for timelines.
        </Empty>
      )}
      {charts.hasDist ? (
        <ChartBox
          title="Latency by percentile (HdrHistogram-style, x = 1/(1−p))"
          option={charts.curves}
          dark={dark}
          height={340}
        />
      ) : (
        <Empty>No latency distribution in these load tests (wrk --latency, wrk2, k6 and vegeta give one).</Empty>
      )}
    </div>
  );
}
