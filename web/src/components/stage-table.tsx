import type { StageRow } from '../lib/api-types.ts';
import { DASH, formatInt, formatMs, formatRps } from '../lib/format.ts';
import { formatPauseMs, type GcStageSummary } from '../lib/gc-summary.ts';
import { estimateTitle, formatCi, type StageBenchVerdict, verdictOrSingle, verdictText } from '../lib/significance.ts';
import { presentLatencyColumns } from '../lib/stage-table-export.ts';
import { Sparkline } from './sparkline.tsx';

type Figure = 'rps' | 'p50' | 'p95' | 'p99';

/**
 * One change line of a verdict cell. Only a significant change is coloured (good/bad by direction); a
 * change inside the noise, or of a single run, stays plain.
 */
function VerdictLine({
  label,
  row,
  side,
  k,
}: {
  label: string;
  row: StageRow;
  side: 'vsPrevious' | 'vsBaseline';
  k: Figure;
}) {
  const v = row.significance?.[side]?.[k] ?? null;
  const ratio = row[side]?.[k] ?? null;
  const t = verdictText(verdictOrSingle(ratio, v), k === 'rps' ? 'ratio' : 'percent');
  const better = ratio === null ? null : k === 'rps' ? ratio > 1 : ratio < 1;
  const cls = t.significant ? (better ? 'good' : 'bad') : t.change === '~' ? 'muted' : '';
  return (
    <span className={`verdict ${cls}`} data-figure={k} data-verdict={v?.status ?? 'single-run'} title={t.title}>
      {label} {t.text}
    </span>
  );
}

function VerdictCell({
  row,
  side,
  lat,
  bench,
  className,
}: {
  row: StageRow;
  side: 'vsPrevious' | 'vsBaseline';
  lat: Figure | null;
  bench: StageBenchVerdict[] | null;
  className?: string;
}) {
  const ratios = row[side];
  const cls = `num verdicts${className ? ` ${className}` : ''}`;
  const hasLoad = ratios && Object.values(ratios).some((v) => v !== null);
  if (!hasLoad && !bench?.length)
    return (
      <td className={`${cls} muted`} data-kind={side === 'vsPrevious' ? 'prev' : 'base'}>
        {DASH}
      </td>
    );
  return (
    <td className={cls} data-kind={side === 'vsPrevious' ? 'prev' : 'base'} data-rps-ratio={ratios?.rps ?? ''}>
      {hasLoad && ratios.rps !== null && <VerdictLine label="QPS" row={row} side={side} k="rps" />}
      {hasLoad && lat && ratios[lat] !== null && (
        <VerdictLine label={lat.toUpperCase()} row={row} side={side} k={lat} />
      )}
      {bench?.map((b, i) => (
        <span
          key={b.unit}
          className={`verdict ${b.significant ? (b.better ? 'good' : 'bad') : 'muted'}${i > 0 ? ' phone-hide' : ''}`}
          data-figure={`bench:${b.unit}`}
          title={b.title}
        >
          {b.text}
        </span>
      ))}
    </td>
  );
}

/** "9,742 req/s", the unit in its own span (a phone leaves it out: the column head says QPS). */
function RpsText({ v }: { v: number | null }) {
  const text = formatRps(v);
  const m = / req\/s$/.exec(text);
  if (!m) return <>{text}</>;
  return (
    <>
      {text.slice(0, m.index)}
      <span className="unit"> req/s</span>
    </>
  );
}

/** A figure of a row: the median across runs with its ± on a second line, or the single run's figure. */
function FigureCell({ row, k, className }: { row: StageRow; k: Figure; className?: string }) {
  const v = k === 'rps' ? row.rps : row.latencyMs[k];
  const fmt = k === 'rps' ? formatRps : formatMs;
  const e = row.estimates?.[k] ?? null;
  return (
    <td
      className={`num${className ? ` ${className}` : ''}`}
      data-field={k}
      data-value={v ?? ''}
      title={
        e
          ? estimateTitle(e, fmt)
          : row.aggregated
            ? 'request-weighted aggregate of runs with different settings'
            : undefined
      }
    >
      {k === 'rps' ? <RpsText v={v} /> : fmt(v)}
      {e && e.n > 1 && (
        <span className="muted small spread" data-ci={e.ci ?? ''}>
          {formatCi(e)} · {e.n} runs
        </span>
      )}
      {k === 'rps' && row.aggregated && (
        <span className="muted small spread">{row.loadTests} runs, mixed settings</span>
      )}
    </td>
  );
}

/** GC figures per stage for the table's GC columns; `byStage` null while loading. */
export interface StageTableGc {
  byStage: Map<string, GcStageSummary> | null;
  error: boolean;
}

function GcCells({ gc, stageId }: { gc: StageTableGc; stageId: string }) {
  const g = gc.byStage?.get(stageId);
  if (!g) {
    const text = gc.byStage ? DASH : gc.error ? '!' : '…';
    const title = gc.byStage
      ? 'no GC trace in this stage'
      : gc.error
        ? 'GC traces failed to load'
        : 'loading GC traces';
    return (
      <>
        <td className="num muted gc-col phone-hide" title={title}>
          {text}
        </td>
        <td className="num muted phone-hide" title={title}>
          {text}
        </td>
      </>
    );
  }
  const pooled = g.traces > 1 ? ` (${g.traces} traces pooled)` : '';
  return (
    <>
      <td
        className="num gc-col phone-hide"
        data-field="gc-p99"
        data-value={g.stwPauseMs.p99}
        title={`p99 of ${g.cycles} stop-the-world pauses${pooled}`}
      >
        {formatPauseMs(g.stwPauseMs.p99)}
      </td>
      <td
        className="num phone-hide"
        data-field="gc-cpu"
        data-value={g.cpuPercent}
        title={`the runtime's cumulative GC CPU share at the last cycle${pooled}`}
      >
        {Number(g.cpuPercent.toFixed(1))} %
      </td>
    </>
  );
}

/**
 * The write-up table: one row per stage with load-test figures (medians ± 95 % interval across repeated
 * runs) and benchstat verdicts vs previous/baseline, plus a GC column group (p99 stop-the-world pause, GC
 * CPU %) when some stage has a GC trace (`gc` not null) and benchmark verdicts in the vs-previous cell
 * (`bench`: per stage id, vs the previous stage). On a phone only stage, QPS, P99 and the vs-previous
 * verdicts stay (CSS: `.phone-hide`).
 */
export function StageTable({
  rows,
  gc = null,
  bench = null,
}: {
  rows: StageRow[];
  gc?: StageTableGc | null;
  bench?: Map<string, StageBenchVerdict[]> | null;
}) {
  const rpsValues = rows.map((r) => r.rps);
  // A latency column no stage has a figure for (wrk prints no P95) is left out rather than shown as dashes.
  const lat = presentLatencyColumns(rows);
  // The verdict cells name one latency: P95 where there is one, else P99, else P50.
  const verdictLat: Figure | null = lat.includes('p95') ? 'p95' : lat.includes('p99') ? 'p99' : (lat[0] ?? null);
  // On a phone the tail latency stays: P99 where there is one.
  const phoneLat = lat.includes('p99') ? 'p99' : lat[lat.length - 1];
  return (
    <div className="table-scroll stage-table-wrap">
      <table className="stage-table" aria-label="Stage table">
        <thead>
          {gc && (
            <tr className="group-row phone-hide">
              <td colSpan={7 + lat.length} />
              <th scope="colgroup" colSpan={2} className="gc-col">
                GC
              </th>
            </tr>
          )}
          <tr>
            <th scope="col">Stage</th>
            <th scope="col" className="phone-hide">
              Key action
            </th>
            <th scope="col" className="num">
              QPS
            </th>
            {lat.map((k) => (
              <th key={k} scope="col" className={k === phoneLat ? 'num' : 'num phone-hide'}>
                {k.toUpperCase()}
              </th>
            ))}
            <th scope="col" className="num phone-hide">
              Errors
            </th>
            <th scope="col" className="num">
              vs previous
            </th>
            <th scope="col" className="num phone-hide">
              vs baseline
            </th>
            <th scope="col" className="phone-hide">
              QPS trend
            </th>
            {gc && (
              <>
                <th scope="col" className="num gc-col phone-hide" title="p99 stop-the-world GC pause">
                  STW p99
                </th>
                <th scope="col" className="num phone-hide" title="GC CPU share">
                  GC CPU
                </th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={r.stageId} data-stage-id={r.stageId} data-summary={r.summary}>
              <th scope="row" title={r.note || undefined}>
                {r.name}
              </th>
              <td className="note phone-hide">{r.note || <span className="muted">{DASH}</span>}</td>
              <FigureCell row={r} k="rps" />
              {lat.map((k) => (
                <FigureCell key={k} row={r} k={k} className={k === phoneLat ? undefined : 'phone-hide'} />
              ))}
              <td
                className={r.errors ? 'num bad phone-hide' : 'num phone-hide'}
                data-field="errors"
                data-value={r.errors ?? ''}
              >
                {formatInt(r.errors)}
              </td>
              <VerdictCell row={r} side="vsPrevious" lat={verdictLat} bench={bench?.get(r.stageId) ?? null} />
              <VerdictCell row={r} side="vsBaseline" lat={verdictLat} bench={null} className="phone-hide" />
              <td className="phone-hide">
                <Sparkline values={rpsValues} highlight={i} label={`QPS across stages, ${r.name} marked`} />
              </td>
              {gc && <GcCells gc={gc} stageId={r.stageId} />}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What n, the ± and p mean, in a few lines beside the table. */
export function HowToRead() {
  return (
    <details className="how-to-read">
      <summary>How to read this</summary>
      <ul>
        <li>
          <strong>n</strong>: runs per stage (load-test runs of the same tool and settings, e.g. from{' '}
          <code>stagediff capture --runs 5</code>). With several, each figure is the <strong>median</strong> of the
          runs.
        </li>
        <li>
          <strong>± CI</strong>: the 95 % confidence interval of that median, as benchstat computes it; “± ∞” means too
          few runs for one (it needs 6).
        </li>
        <li>
          <strong>p</strong>: how likely a difference this large is if nothing changed (Mann–Whitney U test on the runs,
          as benchstat). A change is <strong>significant</strong>, and coloured, only when p ≤ 0.05; <strong>~</strong>{' '}
          means it is within the noise. Fewer than 4 runs per stage can never reach p ≤ 0.05.
        </li>
        <li>
          <strong>1 run: no noise estimate</strong>: a single run says nothing about how much the next one would differ,
          so its change is shown but not judged.
        </li>
        <li>
          Benchmarks: benchstat's geomean of the medians of every benchmark the two stages share, and how many of them
          changed significantly.
        </li>
      </ul>
    </details>
  );
}

/** Generated one-line summaries per stage. */
export function WhatChangedList({ items }: { items: { stageId: string; name: string; text: string | null }[] }) {
  return (
    <ol className="what-changed" aria-label="What changed">
      {items.map((it) => (
        <li key={it.stageId}>
          <strong>{it.name}</strong>: {it.text ?? <span className="muted">computing…</span>}
        </li>
      ))}
    </ol>
  );
}
