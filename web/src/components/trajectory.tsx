import type { TrajectoryResponse } from '../lib/api-types.ts';
import { sparklinePoints } from '../lib/charts.ts';
import { formatShare, formatValue } from '../lib/format.ts';

/** Small multiples: each top function's cumulative share of the profile across all stages. */
export function Trajectory(props: { data: TrajectoryResponse; selected: string; onSelect: (name: string) => void }) {
  const { data, selected, onSelect } = props;
  const W = 220;
  const H = 56;
  return (
    <ul className="trajectory" aria-label="Trajectory of top functions across stages">
      {data.functions.map((f) => {
        const shares = f.points.map((p) => (p && p.total > 0 ? p.cum / p.total : null));
        const points = sparklinePoints(shares, W, H, 4);
        const first = shares.find((s) => s !== null) ?? null;
        const last = [...shares].reverse().find((s) => s !== null) ?? null;
        return (
          <li key={f.name} className={f.name === selected ? 'traj-card selected' : 'traj-card'}>
            <button type="button" className="link-button fn-name" title={f.name} onClick={() => onSelect(f.name)}>
              {f.name}
            </button>
            <svg width={W} height={H} role="img" aria-label={`${f.name}: share of total per stage`}>
              <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.6} />
              {points
                .split(' ')
                .filter(Boolean)
                .map((pt) => {
                  const [x, y] = pt.split(',').map(Number);
                  return <circle key={pt} cx={x} cy={y} r={2.2} className="spark-dot" />;
                })}
            </svg>
            <div className="traj-values small">
              {f.points.map((p, i) => (
                <span key={data.stages[i]?.stageId ?? i} title={data.stages[i]?.name}>
                  {data.stages[i]?.name}:{' '}
                  {p ? `${formatShare(p.cum / (p.total || 1))} (${formatValue(p.cum, data.unit)})` : '—'}
                </span>
              ))}
            </div>
            <div className="muted small">
              {formatShare(first)} → {formatShare(last)} cum
            </div>
          </li>
        );
      })}
    </ul>
  );
}
