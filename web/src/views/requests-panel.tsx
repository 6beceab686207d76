import { useMemo, useState } from 'react';
import { ChartBox, PALETTE, axisText } from '../components/chart-box.tsx';
import { Empty, ErrorBox, Loading, NumTh } from '../components/common.tsx';
import { textTooltip, type ChartOption } from '../components/echart.tsx';
import { formatInt, formatNanos, formatValue } from '../../../server/src/api/format.ts';
import { REQUEST_PART_WORDS } from '../../../server/src/api/request-parts.ts';
import type { Reply, Stage } from '../lib/api.ts';
import { changeVerdictText } from '../lib/diff-verdicts.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

type View = Reply<'requests'>;
type Side = View['base'];
type Trace = Side['traces'][number];
type Figure = View['figures'][number];
type Part = keyof typeof REQUEST_PART_WORDS;

/** One colour per part of a request's time (running warm, waits cool, the unseen grey). */
const PART_COLORS: Record<Part, string> = {
  running: '#e8684a',
  runnable: '#f6bd16',
  syscall: '#9270ca',
  network: '#5b8ff9',
  sync: '#d0342c',
  channel: '#5ad8a6',
  select: '#269a99',
  sleep: '#9fb40f',
  gcWait: '#ff9d4d',
  other: '#8c8c8c',
  unknown: '#d9d9d9',
};

const METHOD_WORDS: Record<Side['method'], string> = {
  tasks: 'runtime/trace tasks (annotated requests)',
  'http-connections': 'net/http connection goroutines (request read → response written)',
  mixed: 'tasks in some traces, connection goroutines in others',
  none: 'no traced requests',
};

/** A list laid out as wrapping inline items (long Go names break anywhere rather than widen the page). */
const INLINE_LIST = {
  display: 'flex',
  flexWrap: 'wrap',
  gap: '0.15rem 0.9rem',
  listStyle: 'none',
  padding: 0,
  margin: '0.2rem 0 0.6rem',
  overflowWrap: 'anywhere',
} as const;

const partWords = (p: string) => REQUEST_PART_WORDS[p as Part] ?? p;

/** The trace a stage's parts and slowest requests are drawn from (the server's choice: the median P99). */
function medianTrace(side: Side): Trace | null {
  return side.traces.find((t) => t.artifactId === side.shownTrace) ?? null;
}

/**
 * The requests of the base and target stages' execution traces: their latency histograms overlaid, the
 * parts of the median and the slowest 1 % side by side, the slowest requests' critical paths as a
 * timeline of goroutines, and where those paths went (linking to the flamegraph and sandwich).
 */
export function RequestsPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { dark, base, target, setView } = props;
  const pair = base && target && base.id !== target.id ? { base: base.id, target: target.id } : null;
  const rq = useApi('requests', pair ? { params: { id: props.comparisonId }, query: pair } : null, props.revision);
  const histogram = useMemo(() => (rq.data ? histogramChart(rq.data, dark) : null), [rq.data, dark]);
  if (!pair) return <Empty>Pick two different stages to compare their traced requests.</Empty>;
  if (!rq.data) return rq.loading ? <Loading what="requests" /> : <ErrorBox error={rq.error} onRetry={rq.reload} />;
  const d = rq.data;
  if (d.status !== 'ok') return <Empty>{d.reason}</Empty>;
  const open = (tab: 'sandwich' | 'flame', fn: string) => setView({ tab, fn, zoom: [] });
  return (
    <div className="requests-panel">
      <ul className="small muted" aria-label="How requests were found">
        {[d.base, d.target].map((s) => (
          <li key={s.stageId} data-method={s.method}>
            <strong>{s.name}</strong>: {formatInt(s.requests)} requests in {formatInt(s.traces.length)} trace
            {s.traces.length === 1 ? '' : 's'}, from {METHOD_WORDS[s.method]}
            {s.traces.some((t) => t.status !== 'ok') &&
              `; ${s.traces
                .filter((t) => t.status !== 'ok')
                .map((t) => `${t.filename}: ${t.reason}`)
                .join('; ')}`}
          </li>
        ))}
      </ul>
      <FigureTable d={d} />
      {histogram && (
        <ChartBox
          title="Request latency: requests per bin (ns to s, log-scale bins, ten a decade), every trace of each stage"
          option={histogram}
          dark={dark}
          height={260}
        />
      )}
      <PartsBars d={d} />
      <Timelines d={d} />
      <TailWaits d={d} open={open} />
    </div>
  );
}

function FigureTable({ d }: { d: View }) {
  const cell = (f: Figure, side: 'base' | 'target') => {
    const e = f[side];
    if (!e) return <span className="muted">—</span>;
    return (
      <>
        {formatValue(e.median, f.unit)}
        {e.n > 1 && <span className="muted small"> (median of {e.n} traces)</span>}
      </>
    );
  };
  if (d.figures.length === 0) return null;
  return (
    <div className="table-scroll">
      <table className="runtime-table" aria-label="Traced request figures of both stages">
        <thead>
          <tr>
            <th scope="col">Figure (per request)</th>
            <NumTh>{d.base.name}</NumTh>
            <NumTh>{d.target.name}</NumTh>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {d.figures.map((f) => (
            <tr key={f.metric} data-metric={f.metric} data-status={f.verdict.status}>
              <th scope="row">{f.label}</th>
              <td className="num">{cell(f, 'base')}</td>
              <td className="num">{cell(f, 'target')}</td>
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

/** Both stages' histograms as steps over the shared log-scale bins (x: latency, log axis). */
function histogramChart(d: View, dark: boolean): ChartOption | null {
  const e = d.edgesNanos;
  if (e.length < 2) return null;
  const steps = (h: number[]) => {
    const pts: [number, number][] = h.map((c, i) => [e[i]! / 1e6, c]);
    pts.push([e[e.length - 1]! / 1e6, h[h.length - 1] ?? 0]);
    return pts;
  };
  return {
    color: PALETTE,
    textStyle: axisText(dark),
    grid: { left: 56, right: 16, top: 40, bottom: 48 },
    legend: { type: 'scroll', top: 0, textStyle: axisText(dark) },
    tooltip: {
      trigger: 'item',
      formatter: (p: unknown) => {
        const q = p as { seriesName: string; dataIndex: number; value: [number, number] };
        const lo = e[q.dataIndex];
        const hi = e[q.dataIndex + 1];
        return textTooltip([
          q.seriesName,
          lo !== undefined && hi !== undefined ? `${formatNanos(lo)} – ${formatNanos(hi)}` : '',
          `${formatInt(q.value[1])} requests`,
        ]);
      },
    },
    xAxis: {
      type: 'log',
      name: 'latency (ms, log scale)',
      nameLocation: 'middle',
      nameGap: 28,
      min: e[0]! / 1e6,
      max: e[e.length - 1]! / 1e6,
      axisLabel: { formatter: (v: number) => formatNanos(v * 1e6) },
    },
    yAxis: { type: 'value', name: 'requests per bin', minInterval: 1 },
    series: [d.base, d.target].map((s) => ({
      type: 'line',
      name: `${s.name} (${formatInt(s.requests)} requests)`,
      step: 'end',
      symbolSize: 3,
      areaStyle: { opacity: 0.15 },
      data: steps(s.histogram),
    })),
  };
}

/** Stacked bars of the mean parts of the median requests and of the slowest 1 %, each stage's median-P99 trace. */
function PartsBars({ d }: { d: View }) {
  const rows = [d.base, d.target].flatMap((s) => {
    const t = medianTrace(s);
    if (!t) return [];
    return [
      { stage: s.name, trace: t.filename, band: 'median (ranks 45–55 %)', p: t.median },
      { stage: s.name, trace: t.filename, band: 'slowest 1 %', p: t.tail },
    ];
  });
  if (rows.length === 0) return null;
  const longest = Math.max(1, ...rows.map((r) => r.p.durationNanos));
  const parts = d.parts as Part[];
  return (
    <section className="requests-parts" aria-label="Parts of the median and the slowest requests">
      <h3>Where a request's time went: mean parts along the critical path (ms per request)</h3>
      <p className="muted small">
        Each stage's trace with the median P99 of its traces; bars to one scale (the longest {formatNanos(longest)}).
      </p>
      <PartLegend parts={parts} />
      {rows.map((r) => (
        <div key={`${r.stage}\u0000${r.band}`} className="parts-row" data-band={r.band} data-stage={r.stage}>
          <div className="small">
            <strong>{r.stage}</strong>, {r.band}: {formatNanos(r.p.durationNanos)} over {formatInt(r.p.requests)}{' '}
            request{r.p.requests === 1 ? '' : 's'} <span className="muted">({r.trace})</span>
          </div>
          <div
            style={{
              display: 'flex',
              height: 14,
              width: `${(100 * r.p.durationNanos) / longest}%`,
              minWidth: 2,
              background: 'var(--border, #ccc)',
            }}
          >
            {parts.map((p) =>
              r.p[p] > 0 ? (
                <span
                  key={p}
                  title={`${partWords(p)}: ${formatNanos(r.p[p])}`}
                  style={{ width: `${(100 * r.p[p]) / Math.max(1, r.p.durationNanos)}%`, background: PART_COLORS[p] }}
                />
              ) : null,
            )}
          </div>
          <ul className="small parts-list" style={INLINE_LIST} aria-label={`${r.stage}, ${r.band}: parts`}>
            {parts
              .filter((p) => r.p[p] > 0)
              .sort((a, b) => r.p[b] - r.p[a])
              .slice(0, 4)
              .map((p) => (
                <li key={p} data-part={p}>
                  {partWords(p)} {formatNanos(r.p[p])}
                </li>
              ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

function PartLegend({ parts }: { parts: Part[] }) {
  return (
    <ul className="small part-legend" style={INLINE_LIST} aria-label="Part colours">
      {parts.map((p) => (
        <li key={p}>
          <span
            aria-hidden="true"
            style={{ display: 'inline-block', width: 10, height: 10, background: PART_COLORS[p] }}
          />{' '}
          {partWords(p)}
        </li>
      ))}
    </ul>
  );
}

/** The slowest requests of each stage's median-P99 trace: one lane per goroutine of the critical path. */
function Timelines({ d }: { d: View }) {
  const [shown, setShown] = useState(3);
  const sides = [d.base, d.target].map((s) => ({ s, t: medianTrace(s) }));
  return (
    <section className="requests-timelines" aria-label="Slowest requests' critical paths">
      <h3>The slowest requests: their critical path, one lane per goroutine (time in ms from the request's start)</h3>
      <p className="muted small">
        A wait another goroutine ended (a lock released, a channel sent to) is followed into that goroutine: its lane
        shows what it did meanwhile.
      </p>
      {sides.map(({ s, t }) => (
        <div key={s.stageId} className="timeline-stage">
          <h4>
            {s.name} <span className="muted small">({t ? t.filename : 'no trace with requests'})</span>
          </h4>
          {t?.slowest
            .filter((q) => q.segments.length > 0)
            .slice(0, shown)
            .map((q, i) => (
              <RequestTimeline key={`${q.goroutine}-${q.startNanos}`} rank={i + 1} q={q} />
            ))}
        </div>
      ))}
      {shown < 5 && (
        <button type="button" onClick={() => setShown(5)}>
          Show the 5 slowest of each stage
        </button>
      )}
    </section>
  );
}

function RequestTimeline({ rank, q }: { rank: number; q: Trace['slowest'][number] }) {
  const lanes: { goroutine: number; entry: string }[] = [];
  for (const s of q.segments)
    if (!lanes.some((l) => l.goroutine === s.goroutine)) lanes.push({ goroutine: s.goroutine, entry: s.entry });
  const lane = new Map(lanes.map((l, i) => [l.goroutine, i]));
  const H = 12;
  const W = 1000;
  const span = Math.max(1, q.durationNanos);
  return (
    <figure className="request-timeline" data-rank={rank} style={{ margin: '0.4rem 0' }}>
      <figcaption className="small">
        #{rank}: {formatNanos(q.durationNanos)}, goroutine {q.goroutine}, started {formatNanos(q.startNanos)} into the
        trace{q.segmentsOmitted > 0 ? ` (${q.segmentsOmitted} short stretches not drawn)` : ''}
      </figcaption>
      <svg
        style={{ display: 'block', background: 'var(--border)' }}
        viewBox={`0 0 ${W} ${lanes.length * H}`}
        preserveAspectRatio="none"
        width="100%"
        height={lanes.length * H}
        role="img"
        aria-label={`Critical path of request #${rank} across ${lanes.length} goroutines`}
      >
        {q.segments.map((s) => (
          <rect
            key={`${s.goroutine}-${s.startNanos}`}
            x={(W * s.startNanos) / span}
            y={(lane.get(s.goroutine) ?? 0) * H + 1}
            width={Math.max(0.5, (W * (s.endNanos - s.startNanos)) / span)}
            height={H - 2}
            fill={PART_COLORS[s.part as Part] ?? '#999'}
          >
            <title>
              {`${s.entry || `goroutine ${s.goroutine}`}: ${partWords(s.part)} ${formatNanos(s.endNanos - s.startNanos)} (at ${formatNanos(s.startNanos)})`}
            </title>
          </rect>
        ))}
      </svg>
      <ol className="small lane-names" style={{ ...INLINE_LIST, listStyle: 'decimal inside' }}>
        {lanes.map((l) => (
          <li key={l.goroutine} className="fn-name">
            {l.entry || '(no stack seen)'} <span className="muted">g{l.goroutine}</span>
          </li>
        ))}
      </ol>
    </figure>
  );
}

/** A function name that opens its sandwich, with a second button for its flamegraph. */
function FunctionLinks({ fn, open }: { fn: string; open: (tab: 'sandwich' | 'flame', fn: string) => void }) {
  return (
    <>
      <button type="button" className="link-button fn-name" onClick={() => open('sandwich', fn)}>
        {fn}
      </button>{' '}
      <button
        type="button"
        className="link-button small"
        aria-label={`${fn} in the flamegraph`}
        onClick={() => open('flame', fn)}
      >
        flamegraph
      </button>
    </>
  );
}

/** Where the slowest requests' critical paths spent their time: goroutine entry function, part, wait stack. */
function TailWaits({ d, open }: { d: View; open: (tab: 'sandwich' | 'flame', fn: string) => void }) {
  const rows = [d.base, d.target].flatMap((s) => s.tailWaits.slice(0, 8).map((w) => ({ stage: s.name, w })));
  if (rows.length === 0) return null;
  return (
    <section aria-label="Where the slowest requests waited">
      <h3>Where the slowest requests waited: the stacks on their critical paths</h3>
      <p className="muted small">
        The five slowest requests of every trace of each stage, waits first: the goroutine the path was in (its entry
        function), what it did, and the stack it waited at (innermost first, the runtime's own frames left out). Each
        function opens in the sandwich or the flamegraph of the profile kind chosen.
      </p>
      <div className="table-scroll">
        <table className="runtime-table tail-waits" aria-label="Tail waits">
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col">Part</th>
              <th scope="col">Waited at (stack, innermost first)</th>
              <th scope="col">Goroutine entry function</th>
              <NumTh>Time (summed)</NumTh>
              <NumTh>Requests</NumTh>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ stage, w }) => (
              <tr key={`${stage}\u0000${w.entry}\u0000${w.part}\u0000${w.stack.join('\n')}`} data-part={w.part}>
                <td>{stage}</td>
                <td>{partWords(w.part)}</td>
                <td>
                  {w.stack.length > 0 ? (
                    <ol className="small tail-stack" aria-label={`Stack of ${stage}, ${partWords(w.part)}`}>
                      {w.stack.slice(0, 4).map((fn, i) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: a stack may repeat a function (recursion)
                        <li key={i}>
                          <FunctionLinks fn={fn} open={open} />
                        </li>
                      ))}
                    </ol>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
                <td>{w.entry ? <FunctionLinks fn={w.entry} open={open} /> : '(no stack seen)'}</td>
                <td className="num">{formatNanos(w.nanos)}</td>
                <td className="num">{formatInt(w.requests)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
