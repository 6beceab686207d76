import { useMemo } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import { GcTable } from '../components/gc-table.tsx';
import { formatMs } from '../../../server/src/api/format.ts';
import { gcSeries, gcSummaries } from '../lib/gc-summary.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

/** GODEBUG=gctrace=1 traces: the pause summary per stage and a timeline of pauses and heap sizes. */
export function GcPanel(props: PanelProps) {
  const { dark } = props;
  const { data, error, loading, reload } = useApi('gc', { params: { id: props.comparisonId } }, props.revision);
  const view = useMemo(() => {
    if (!data) return null;
    const series = gcSeries(data);
    const colorOf = new Map(data.stages.map((s, i) => [s.stageId, PALETTE[i % PALETTE.length] as string]));
    const base = {
      color: PALETTE,
      textStyle: axisText(dark),
      grid: { left: 64, right: 24, top: 40, bottom: 48 },
      legend: { type: 'scroll', top: 0, textStyle: axisText(dark) },
      xAxis: { type: 'value', name: 'seconds since program start', nameLocation: 'middle', nameGap: 28 },
    };
    const itemTooltip = (fmt: (v: number) => string) => ({
      trigger: 'item',
      formatter: (p: unknown) => {
        const q = p as { seriesName: string; value: [number, number] };
        return textTooltip([q.seriesName, `at ${q.value[0]} s: ${fmt(q.value[1])}`]);
      },
    });
    const pauses: ChartOption = {
      ...base,
      tooltip: itemTooltip(formatMs),
      yAxis: { type: 'value', name: 'STW pause (ms)' },
      series: series.map((s) => ({
        type: 'line',
        name: s.label,
        symbolSize: 4,
        showAllSymbol: true,
        itemStyle: { color: colorOf.get(s.stageId) },
        lineStyle: { width: 1 },
        data: s.pauses,
      })),
    };
    const heap: ChartOption = {
      ...base,
      tooltip: itemTooltip((v) => `${v} MB`),
      yAxis: { type: 'value', name: 'MB' },
      series: series.flatMap((s) => [
        {
          type: 'line',
          name: `${s.label} heap at GC start`,
          showSymbol: false,
          itemStyle: { color: colorOf.get(s.stageId) },
          data: s.heapStart,
        },
        {
          type: 'line',
          name: `${s.label} goal`,
          showSymbol: false,
          itemStyle: { color: colorOf.get(s.stageId) },
          lineStyle: { type: 'dashed' },
          data: s.goal,
        },
      ]),
    };
    return { rows: gcSummaries(data), pauses, heap };
  }, [data, dark]);
  if (!data || !view) return loading ? <Loading what="GC traces" /> : <ErrorBox error={error} onRetry={reload} />;
  if (view.rows.length === 0) return <Empty>No stage has a GC trace (GODEBUG=gctrace=1 output) yet.</Empty>;
  return (
    <div className="gc-panel">
      <p className="muted small">
        Stop-the-world (STW) pause per GC cycle = sweep termination + mark termination wall clock, as the runtime
        printed them; percentiles are nearest-rank over the cycles; GC CPU is the runtime's cumulative share at the last
        cycle.
      </p>
      <GcTable rows={view.rows} />
      <ChartBox title="STW pause per GC cycle" option={view.pauses} dark={dark} />
      <ChartBox title="Heap at GC start (solid) and heap goal (dashed)" option={view.heap} dark={dark} />
    </div>
  );
}
