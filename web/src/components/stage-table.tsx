import type { StageRow } from '../lib/api-types.ts';
import { DASH, formatChange, formatInt, formatMs, formatRatio, formatRps } from '../lib/format.ts';
import { formatPauseMs, type GcStageSummary } from '../lib/gc-summary.ts';
import { presentLatencyColumns } from '../lib/stage-table-export.ts';
import { Sparkline } from './sparkline.tsx';

function RatioCell({ ratios, kind }: { ratios: StageRow['vsPrevious']; kind: 'prev' | 'base' }) {
  if (!ratios || Object.values(ratios).every((v) => v === null)) return <td className="num muted">{DASH}</td>;
  const lat =
    ratios.p95 !== null ? { k: 'P95', v: ratios.p95 } : ratios.p99 !== null ? { k: 'P99', v: ratios.p99 } : null;
  const good = (r: number | null, higherIsBetter: boolean) =>
    r === null
      ? ''
      : (higherIsBetter ? r > 1.02 : r < 0.98)
        ? 'good'
        : (higherIsBetter ? r < 0.98 : r > 1.02)
          ? 'bad'
          : '';
  return (
    <td className="num" data-kind={kind} data-rps-ratio={ratios.rps ?? ''}>
      <span className={good(ratios.rps, true)}>
        QPS {formatRatio(ratios.rps)} <span className="muted">({formatChange(ratios.rps)})</span>
      </span>
      {lat && (
        <>
          <br />
          <span className={good(lat.v, false)}>
            {lat.k} {formatChange(lat.v)} <span className="muted">({formatRatio(lat.v)})</span>
          </span>
        </>
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
        <td className="num muted gc-col" title={title}>
          {text}
        </td>
        <td className="num muted" title={title}>
          {text}
        </td>
      </>
    );
  }
  const pooled = g.traces > 1 ? ` (${g.traces} traces pooled)` : '';
  return (
    <>
      <td
        className="num gc-col"
        data-field="gc-p99"
        data-value={g.stwPauseMs.p99}
        title={`p99 of ${g.cycles} stop-the-world pauses${pooled}`}
      >
        {formatPauseMs(g.stwPauseMs.p99)}
      </td>
      <td
        className="num"
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
 * The write-up table: one row per stage with load-test figures and changes vs previous/baseline, plus a
 * GC column group (p99 stop-the-world pause, GC CPU %) when some stage has a GC trace (`gc` not null).
 */
export function StageTable({ rows, gc = null }: { rows: StageRow[]; gc?: StageTableGc | null }) {
  const rpsValues = rows.map((r) => r.rps);
  // A latency column no stage has a figure for (wrk prints no P95) is left out rather than shown as dashes.
  const lat = presentLatencyColumns(rows);
  return (
    <div className="table-scroll">
      <table className="stage-table" aria-label="Stage table">
        <thead>
          {gc && (
            <tr className="group-row">
              <td colSpan={7 + lat.length} />
              <th scope="colgroup" colSpan={2} className="gc-col">
                GC
              </th>
            </tr>
          )}
          <tr>
            <th scope="col">Stage</th>
            <th scope="col">Key action</th>
            <th scope="col" className="num">
              QPS
            </th>
            {lat.map((k) => (
              <th key={k} scope="col" className="num">
                {k.toUpperCase()}
              </th>
            ))}
            <th scope="col" className="num">
              Errors
            </th>
            <th scope="col" className="num">
              vs previous
            </th>
            <th scope="col" className="num">
              vs baseline
            </th>
            <th scope="col">QPS trend</th>
            {gc && (
              <>
                <th scope="col" className="num gc-col" title="p99 stop-the-world GC pause">
                  STW p99
                </th>
                <th scope="col" className="num" title="GC CPU share">
                  GC CPU
                </th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={r.stageId} data-stage-id={r.stageId}>
              <th scope="row">{r.name}</th>
              <td className="note">{r.note || <span className="muted">{DASH}</span>}</td>
              <td className="num" data-field="rps" data-value={r.rps ?? ''}>
                {formatRps(r.rps)}
                {(r.loadTests ?? 0) > 1 && (
                  <span className="muted small" title="request-weighted aggregate of several load-test runs">
                    {' '}
                    ({r.loadTests} runs)
                  </span>
                )}
              </td>
              {lat.map((k) => (
                <td key={k} className="num" data-field={k} data-value={r.latencyMs[k] ?? ''}>
                  {formatMs(r.latencyMs[k])}
                </td>
              ))}
              <td className={r.errors ? 'num bad' : 'num'} data-field="errors" data-value={r.errors ?? ''}>
                {formatInt(r.errors)}
              </td>
              <RatioCell ratios={r.vsPrevious} kind="prev" />
              <RatioCell ratios={r.vsBaseline} kind="base" />
              <td>
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
