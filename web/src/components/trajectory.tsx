import type { Trajectory as TrajectoryData } from '../lib/api.ts';
import { sparklinePoints } from '../lib/charts.ts';
import { formatShare, formatValue } from '../../../server/src/api/format.ts';

/**
 * Small multiples: each top function's cumulative share of the profile across all stages; with several
 * profiles in a stage, a vertical whisker spans the share's range across them.
 */
export function Trajectory(props: { data: TrajectoryData; selected: string; onSelect: (name: string) => void }) {
  const { data, selected, onSelect } = props;
  const W = 220;
  const H = 56;
  return (
    <ul className="trajectory" aria-label="Trajectory of top functions across stages">
      {data.functions.map((f) => {
        const shares = f.points.map((p) => (p && p.total > 0 ? p.cum / p.total : null));
        // The height spans the shares and, with several profiles per stage, their spread.
        const tops = [...shares, ...f.points.map((p) => p?.spread?.max ?? null)].filter((v): v is number => v !== null);
        const range = { min: 0, max: tops.length > 0 ? Math.max(...tops) : 1 };
        const points = sparklinePoints(shares, W, H, 4, range);
        const first = shares.find((s) => s !== null) ?? null;
        const last = [...shares].reverse().find((s) => s !== null) ?? null;
        return (
          <li key={f.name} className={f.name === selected ? 'traj-card selected' : 'traj-card'}>
            <button type="button" className="link-button fn-name" title={f.name} onClick={() => onSelect(f.name)}>
              {f.name}
            </button>
            <svg width={W} height={H} role="img" aria-label={`${f.name}: share of total per stage`}>
              {/* With several profiles per stage: the range of the function's share across them. */}
              {f.points.map((p, i) => {
                if (!p?.spread || p.spread.n < 2) return null;
                const at = (v: number) =>
                  sparklinePoints(
                    shares.map((_, j) => (j === i ? v : null)),
                    W,
                    H,
                    4,
                    range,
                  );
                const lo = at(p.spread.min);
                const hi = at(p.spread.max);
                const [x1, y1] = lo.trim().split(',').map(Number);
                const [, y2] = hi.trim().split(',').map(Number);
                return (
                  <line
                    key={`w-${p.stageId}`}
                    x1={x1}
                    x2={x1}
                    y1={y1}
                    y2={y2}
                    className="traj-whisker"
                    data-spread-n={p.spread.n}
                  >
                    <title>{`${data.stages[i]?.name}: ${formatShare(p.spread.min)} – ${formatShare(p.spread.max)} over ${p.spread.n} profiles`}</title>
                  </line>
                );
              })}
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
                  {p?.spread && p.spread.n > 1
                    ? ` · ${formatShare(p.spread.min)}–${formatShare(p.spread.max)} over ${p.spread.n} profiles`
                    : ''}
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
