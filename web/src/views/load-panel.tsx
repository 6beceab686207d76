import { useEffect, useMemo, useState } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import {
  type BandPoint,
  achievedRate,
  band,
  loadModel,
  percentileCurve,
  relativeSeries,
  xToPercentileLabel,
} from '../lib/charts.ts';
import { formatMs, sig } from '../../../server/src/api/format.ts';
import type { TimelineRun } from '../lib/api.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

/** One stage's runs of one load model. */
interface StageRuns {
  name: string;
  color: string;
  runs: TimelineRun[];
}

/** A load model's runs, stage by stage: one set of charts. */
interface ModelGroup {
  key: string;
  title: string;
  fixed: boolean;
  rate: number | null;
  stages: StageRuns[];
}

/** The window's width, for legends and axis labels that fit a phone. */
function useWidth(): number {
  const [w, setW] = useState(() => window.innerWidth);
  useEffect(() => {
    const on = () => setW(window.innerWidth);
    window.addEventListener('resize', on);
    return () => window.removeEventListener('resize', on);
  }, []);
  return w;
}

/** Rows a plain legend of these names takes in a chart about `width` wide (ECharts wraps it). */
function legendRows(names: string[], width: number): number {
  let rows = 1;
  let used = 0;
  for (const n of names) {
    const w = 7 * n.length + 40;
    if (used > 0 && used + w > width) {
      rows++;
      used = 0;
    }
    used += w;
  }
  return rows;
}

type BandDatum = { value: [number, number]; lo: number; hi: number; n: number; what: string };

/**
 * A stage's band as ECharts series: the median as a line, the range as an area between two invisible
 * stacked lines (the low edge, then the height above it). All three carry the stage's name, so its
 * legend entry shows or hides them together.
 */
function bandSeries(
  name: string,
  color: string,
  points: BandPoint[],
  opts: { what: string; dash?: 'solid' | 'dashed' | 'dotted'; symbol?: boolean; id: string },
): object[] {
  const withRange = points.some((p) => p.n > 1);
  const median = {
    type: 'line',
    id: `${opts.id}-median`,
    name,
    showSymbol: !!opts.symbol,
    symbolSize: 5,
    itemStyle: { color },
    lineStyle: { type: opts.dash ?? 'solid', width: 2 },
    data: points.map((p): BandDatum => ({ value: [p.x, p.median], lo: p.lo, hi: p.hi, n: p.n, what: opts.what })),
    z: 3,
  };
  if (!withRange) return [median];
  // The edges carry the stage's colour too: the legend takes its mark from a name's first series.
  const edge = {
    type: 'line',
    name,
    stack: opts.id,
    silent: true,
    showSymbol: false,
    itemStyle: { color },
    lineStyle: { opacity: 0 },
  };
  return [
    { ...edge, id: `${opts.id}-lo`, data: points.map((p) => [p.x, p.lo]), tooltip: { show: false } },
    {
      ...edge,
      id: `${opts.id}-range`,
      data: points.map((p) => [p.x, p.hi - p.lo]),
      areaStyle: { color, opacity: 0.18 },
      tooltip: { show: false },
    },
    median,
  ];
}

/** Tooltip lines of the medians under the pointer: "baseline p99: 1.2 ms (1.1–1.4 ms over 6 runs)". */
/** An axis tooltip of band series: the x's heading, then each series' median and band. */
function axisBandTooltip(head: (x: number) => string, fmt: (v: number) => string) {
  return { trigger: 'axis', formatter: bandTooltip(head, fmt) };
}

function bandTooltip(head: (x: number) => string, fmt: (v: number) => string) {
  return (params: unknown) => {
    const list = (Array.isArray(params) ? params : [params]) as { seriesName: string; data: unknown }[];
    const points = list.filter(
      (p): p is { seriesName: string; data: BandDatum } =>
        !!p.data && typeof p.data === 'object' && 'lo' in (p.data as object),
    );
    const x = points[0]?.data.value[0];
    return textTooltip([
      x === undefined ? '' : head(x),
      ...points.map((p) => {
        const d = p.data;
        const what = d.what ? ` ${d.what}` : '';
        const range = d.n > 1 ? ` (${fmt(d.lo)}–${fmt(d.hi)} over ${d.n} runs)` : '';
        return `${p.seriesName}${what}: ${fmt(d.value[1])}${range}`;
      }),
    ]);
  };
}

/** The charts of one load model. */
function ModelCharts({ group, dark, width }: { group: ModelGroup; dark: boolean; width: number }) {
  const charts = useMemo(() => {
    const phone = width < 600;
    const chartWidth = Math.min(width, 1400) - (phone ? 40 : 120);
    const names = group.stages.map((s) => s.name);
    const top = 16 + 24 * legendRows(names, chartWidth) + 18;
    const base = {
      textStyle: axisText(dark),
      grid: { left: phone ? 44 : 64, right: phone ? 12 : 24, top, bottom: 48 },
      legend: { type: 'plain', top: 0, data: names, textStyle: axisText(dark), itemGap: phone ? 8 : 10 },
    };
    const timeAxis = { type: 'value', name: 'seconds since start', nameLocation: 'middle', nameGap: 28 };
    const runsOf = (s: StageRuns) => s.runs.filter((r) => r.timeline && r.timeline.length > 0);
    const withTimeline = group.stages.filter((s) => runsOf(s).length > 0);

    // Throughput: a closed loop's is the result; a fixed rate's only says something when it was not held.
    // At a fixed rate the requests per second are the rate asked for: charted only when it was not held.
    const timelines = withTimeline.flatMap((s) => runsOf(s).map((r) => r.timeline ?? []));
    const achieved = group.fixed ? achievedRate(timelines, group.rate ?? 1) : null;
    const chartQps = withTimeline.length > 0 && (!group.fixed || (group.rate !== null && !achieved?.held));
    const qps: ChartOption | null = !chartQps
      ? null
      : {
          ...base,
          tooltip: axisBandTooltip(
            (x) => `t = ${x} s`,
            (v) => `${sig(v, 4)} req/s`,
          ),
          xAxis: timeAxis,
          yAxis: { type: 'value', name: 'req/s' },
          series: [
            ...withTimeline.flatMap((s, i) =>
              bandSeries(s.name, s.color, band(runsOf(s).map((r) => relativeSeries(r.timeline ?? [], (b) => b.rps))), {
                what: '',
                id: `q${i}`,
              }),
            ),
            ...(group.rate !== null
              ? [
                  {
                    type: 'line',
                    id: 'offered',
                    name: 'offered',
                    silent: true,
                    showSymbol: false,
                    lineStyle: { type: 'dashed', color: dark ? '#c9ccd3' : '#555', width: 1 },
                    data: [
                      [0, group.rate],
                      [
                        Math.max(...withTimeline.flatMap((s) => runsOf(s).map((r) => (r.timeline?.length ?? 1) - 1))),
                        group.rate,
                      ],
                    ],
                    tooltip: { show: false },
                  },
                ]
              : []),
          ],
        };
    const latency: ChartOption | null =
      withTimeline.length === 0
        ? null
        : {
            ...base,
            tooltip: axisBandTooltip(
              (x) => `t = ${x} s`,
              (v) => formatMs(v),
            ),
            xAxis: timeAxis,
            yAxis: { type: 'value', name: 'ms' },
            series: withTimeline.flatMap((s, i) =>
              (['p50', 'p99'] as const).flatMap((k) =>
                bandSeries(
                  s.name,
                  s.color,
                  band(runsOf(s).map((r) => relativeSeries(r.timeline ?? [], (b) => b.latencyMs[k]))),
                  { what: k, dash: k === 'p50' ? 'solid' : 'dotted', id: `l${i}${k}` },
                ),
              ),
            ),
          };
    const withDist = group.stages.filter((s) => s.runs.some((r) => (r.latencyDistribution?.length ?? 0) > 0));
    const curves = withDist.map((s) => ({
      s,
      points: band(s.runs.map((r) => percentileCurve(r.latencyDistribution ?? []))),
    }));
    const maxX = Math.max(1, ...curves.flatMap((c) => c.points.map((p) => p.x)));
    const percentiles: ChartOption | null =
      withDist.length === 0
        ? null
        : {
            ...base,
            tooltip: axisBandTooltip(
              (x) => xToPercentileLabel(x),
              (v) => formatMs(v),
            ),
            xAxis: {
              type: 'log',
              logBase: 10,
              min: 1,
              // Up to the next power of ten above the last percentile reported.
              max: 10 ** Math.ceil(Math.log10(maxX) - 1e-9),
              name: phone ? 'percentile (%)' : 'percentile',
              nameLocation: 'middle',
              nameGap: 28,
              axisLabel: {
                hideOverlap: true,
                fontSize: phone ? 10 : 12,
                formatter: (x: number) => (phone ? xToPercentileLabel(x).replace(' %', '') : xToPercentileLabel(x)),
              },
            },
            yAxis: { type: 'value', name: 'latency (ms)' },
            series: curves.flatMap(({ s, points }, i) =>
              bandSeries(s.name, s.color, points, { what: '', id: `p${i}`, symbol: true }),
            ),
          };
    return { qps, latency, percentiles, achieved, withTimeline: withTimeline.length > 0 };
  }, [group, dark, width]);
  const runs = group.stages.map((s) => s.runs.length);
  const same = runs.every((n) => n === runs[0]);
  const runWords = same ? `${runs[0]} run${runs[0] === 1 ? '' : 's'} a stage` : `${runs.join(' / ')} runs`;
  const banded = runs.some((n) => n > 1);
  return (
    <section className="load-model" aria-label={group.title}>
      <h3>
        {group.title} <span className="muted small">· {runWords}</span>
      </h3>
      {banded && <p className="muted small">Each stage: the median of its runs as a line, their range as a band.</p>}
      {group.fixed && !charts.qps && charts.achieved && (
        <p className="small load-held">
          {group.rate !== null
            ? `Throughput held the offered ${group.rate.toLocaleString('en-US')} req/s`
            : 'Throughput is the rate the tool was set to send at'}{' '}
          ({sig(charts.achieved.min, 4)}–{sig(charts.achieved.max, 4)} req/s in every full second of every run), so it
          is not charted: at a fixed rate, latency tells the stages apart.
        </p>
      )}
      {charts.qps && (
        <ChartBox
          title={
            group.rate !== null
              ? `Achieved vs offered throughput — ${group.title}`
              : `Throughput per second — ${group.title}`
          }
          option={charts.qps}
          dark={dark}
        />
      )}
      {charts.latency && (
        <ChartBox
          title={`Latency per second (p50 solid, p99 dotted) — ${group.title}`}
          option={charts.latency}
          dark={dark}
          height={340}
        />
      )}
      {!charts.withTimeline && (
        <p className="muted small">
          No per-second data: this tool's output is a summary (wrk, ab text). hey CSV, vegeta results, k6 JSON, Locust
          history or JMeter JTL have timelines.
        </p>
      )}
      {charts.percentiles ? (
        <ChartBox
          title={`Latency by percentile (x = 1/(1−p)) — ${group.title}`}
          option={charts.percentiles}
          dark={dark}
          height={340}
        />
      ) : (
        <p className="muted small">
          No latency distribution in these runs (wrk --latency, wrk2, k6 and vegeta give one).
        </p>
      )}
    </section>
  );
}

/**
 * Load-test charts by load model, as the stage table reads them: a closed loop and a fixed rate are
 * never drawn together; a stage's repeated runs are one band (median and range), not a line each.
 */
export function LoadPanel(props: PanelProps) {
  const { dark } = props;
  const width = useWidth();
  const { data, error, loading, reload } = useApi('timeline', { params: { id: props.comparisonId } }, props.revision);
  const groups = useMemo(() => {
    if (!data) return null;
    const byKey = new Map<string, ModelGroup>();
    data.stages.forEach((s, si) => {
      for (const r of s.runs) {
        const m = loadModel(r);
        let g = byKey.get(m.key);
        if (!g) {
          g = { key: m.key, title: m.title, fixed: m.fixed, rate: m.rate, stages: [] };
          byKey.set(m.key, g);
        }
        let st = g.stages.find((x) => x.name === s.name && x.color === PALETTE[si % PALETTE.length]);
        if (!st) {
          st = { name: s.name, color: PALETTE[si % PALETTE.length] as string, runs: [] };
          g.stages.push(st);
        }
        st.runs.push(r);
      }
    });
    // The load with the most runs first (the stage table's headline load).
    return [...byKey.values()].sort(
      (a, b) => b.stages.reduce((n, s) => n + s.runs.length, 0) - a.stages.reduce((n, s) => n + s.runs.length, 0),
    );
  }, [data]);
  if (!data || !groups) return loading ? <Loading what="timelines" /> : <ErrorBox error={error} onRetry={reload} />;
  if (groups.length === 0) return <Empty>No load-test runs uploaded yet.</Empty>;
  return (
    <div className="load-panel">
      {groups.map((g) => (
        <ModelCharts key={g.key} group={g} dark={dark} width={width} />
      ))}
    </div>
  );
}
