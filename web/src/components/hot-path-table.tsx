import { useState } from 'react';
import type { DiffRow } from '../lib/api-types.ts';
import { formatDeltaPercent, formatShare, formatSignedValue, formatValue } from '../lib/format.ts';
import { formatP } from '../lib/significance.ts';

/** A change neither flat nor cum of which is significant across the stages' profiles. */
function inNoise(r: DiffRow): boolean {
  return !!r.noise && !r.noise.flat.significant && !r.noise.cum.significant;
}

function noiseTitle(r: DiffRow): string | undefined {
  if (!r.noise) return undefined;
  const one = (label: string, v: NonNullable<DiffRow['noise']>['flat']) =>
    `${label}: ${v.significant ? 'significant' : v.status === 'single-run' ? 'one profile: no noise estimate' : '~ within the noise'}${v.p !== null ? ` (${formatP(v.p)})` : ''}`;
  return `${one('flat', r.noise.flat)}; ${one('cum', r.noise.cum)} — Mann–Whitney U over the stages' profiles`;
}

/**
 * Functions ranked by change, flat and cum for both stages; a click focuses the function. With several
 * profiles per stage, rows whose change is inside the noise are greyed (p-values in the row's title).
 */
export function HotPathTable(props: {
  rows: DiffRow[];
  unit: string;
  baseTotal: number;
  targetTotal: number;
  baseName: string;
  targetName: string;
  selected: string;
  onSelect: (name: string) => void;
  limit?: number;
}) {
  const { rows, unit, baseName, targetName, selected, onSelect } = props;
  const [limit, setLimit] = useState(props.limit ?? 25);
  // Keep the selected function visible even when it ranks below the cut.
  const cut = rows.slice(0, limit);
  const selectedRow = rows.findIndex((r) => r.name === selected);
  const shown = selectedRow >= limit ? [...cut, rows[selectedRow] as DiffRow] : cut;
  const share = (v: number, total: number) => (unit === 'fraction' || total === 0 ? '' : formatShare(v / total));
  return (
    <div className="table-scroll">
      <table className="hot-paths" aria-label="Hot-path diff">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Function</th>
            <th scope="col" className="num">
              Flat {baseName}
            </th>
            <th scope="col" className="num">
              Flat {targetName}
            </th>
            <th scope="col" className="num">
              Δ flat
            </th>
            <th scope="col" className="num">
              Δ flat %
            </th>
            <th scope="col" className="num">
              Cum {baseName}
            </th>
            <th scope="col" className="num">
              Cum {targetName}
            </th>
            <th scope="col" className="num">
              Δ cum
            </th>
            <th scope="col" className="num">
              Δ cum %
            </th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr
              key={r.name}
              className={
                [r.name === selected ? 'selected' : '', inNoise(r) ? 'in-noise' : ''].join(' ').trim() || undefined
              }
              aria-selected={r.name === selected}
              data-noise={r.noise ? r.noise.cum.status : undefined}
              title={noiseTitle(r)}
              onClick={() => onSelect(r.name)}
            >
              <td className="num muted">{rows.indexOf(r) + 1}</td>
              <td className="fn">
                <button
                  type="button"
                  className="link-button fn-name"
                  title={r.name}
                  onClick={(e) => {
                    e.stopPropagation();
                    onSelect(r.name);
                  }}
                >
                  {r.name}
                </button>
              </td>
              <td className="num">
                {formatValue(r.base.flat, unit)}{' '}
                <span className="muted small">{share(r.base.flat, props.baseTotal)}</span>
              </td>
              <td className="num">
                {formatValue(r.target.flat, unit)}{' '}
                <span className="muted small">{share(r.target.flat, props.targetTotal)}</span>
              </td>
              <td className={r.deltaFlat > 0 ? 'num more' : r.deltaFlat < 0 ? 'num less' : 'num'}>
                {formatSignedValue(r.deltaFlat, unit)}
              </td>
              <td className="num">{formatDeltaPercent(r.base.flat, r.target.flat)}</td>
              <td className="num">{formatValue(r.base.cum, unit)}</td>
              <td className="num">{formatValue(r.target.cum, unit)}</td>
              <td className={r.deltaCum > 0 ? 'num more' : r.deltaCum < 0 ? 'num less' : 'num'}>
                {formatSignedValue(r.deltaCum, unit)}
              </td>
              <td className="num">{formatDeltaPercent(r.base.cum, r.target.cum)}</td>
              <td>
                <span className={`status status-${r.status}`}>{r.status}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > limit && (
        <p className="muted small">
          Showing the top {limit} of {rows.length} functions.{' '}
          <button type="button" className="link-button" onClick={() => setLimit(limit + 100)}>
            Show 100 more
          </button>
        </p>
      )}
    </div>
  );
}
