import type { StageRow } from '../lib/api-types.ts';
import { DASH, formatChange, formatInt, formatMs, formatRatio, formatRps } from '../lib/format.ts';
import { Sparkline } from './sparkline.tsx';

function RatioCell({ ratios, kind }: { ratios: StageRow['vsPrevious']; kind: 'prev' | 'base' }) {
  if (!ratios || Object.values(ratios).every((v) => v === null)) return <td className="num muted">{DASH}</td>;
  const lat = ratios.p95 !== null ? { k: 'P95', v: ratios.p95 } : ratios.p99 !== null ? { k: 'P99', v: ratios.p99 } : null;
  const good = (r: number | null, higherIsBetter: boolean) =>
    r === null ? '' : (higherIsBetter ? r > 1.02 : r < 0.98) ? 'good' : (higherIsBetter ? r < 0.98 : r > 1.02) ? 'bad' : '';
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

/** The write-up table: one row per stage with load-test figures and changes vs previous/baseline. */
export function StageTable({ rows }: { rows: StageRow[] }) {
  const rpsValues = rows.map((r) => r.rps);
  return (
    <div className="table-scroll">
      <table className="stage-table" aria-label="Stage table">
        <thead>
          <tr>
            <th scope="col">Stage</th>
            <th scope="col">Key action</th>
            <th scope="col" className="num">QPS</th>
            <th scope="col" className="num">P50</th>
            <th scope="col" className="num">P95</th>
            <th scope="col" className="num">P99</th>
            <th scope="col" className="num">Errors</th>
            <th scope="col" className="num">vs previous</th>
            <th scope="col" className="num">vs baseline</th>
            <th scope="col">QPS trend</th>
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
              <td className="num" data-field="p50" data-value={r.latencyMs.p50 ?? ''}>
                {formatMs(r.latencyMs.p50)}
              </td>
              <td className="num" data-field="p95" data-value={r.latencyMs.p95 ?? ''}>
                {formatMs(r.latencyMs.p95)}
              </td>
              <td className="num" data-field="p99" data-value={r.latencyMs.p99 ?? ''}>
                {formatMs(r.latencyMs.p99)}
              </td>
              <td className={r.errors ? 'num bad' : 'num'} data-field="errors" data-value={r.errors ?? ''}>
                {formatInt(r.errors)}
              </td>
              <RatioCell ratios={r.vsPrevious} kind="prev" />
              <RatioCell ratios={r.vsBaseline} kind="base" />
              <td>
                <Sparkline values={rpsValues} highlight={i} label={`QPS across stages, ${r.name} marked`} />
              </td>
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
