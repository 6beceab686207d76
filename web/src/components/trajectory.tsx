import type { Trajectory as TrajectoryData } from '../lib/api.ts';
import { sparklinePoints } from '../lib/charts.ts';
import { formatShare, formatValue } from '../../../server/src/api/format.ts';

/** The unit a value of `unit` is printed in ("379 µs/req" → "µs/req"). */
export function printedUnit(v: number, unit: string): string {
  return formatValue(v, unit).replace(/^[-\d.,\s]+/, '');
}

/**
 * Small multiples: each top function's cum across all stages in the view's unit (per request, as
 * recorded, or as a share of the stage's total); as a share, with several profiles in a stage, a vertical
 * whisker spans the share's range across them.
 */
export function Trajectory(props: { data: TrajectoryData; selected: string; onSelect: (name: string) => void }) {
  const { data, selected, onSelect } = props;
  const W = 220;
  const H = 56;
  // A stage's spread across its profiles: per request when the points are, else of shares.
  const spreadText = (v: number) => (data.mode === 'per-request' ? formatValue(v, data.unit) : formatShare(v));
  return (
    <ul className="trajectory" aria-label="Trajectory of top functions across stages">
      {data.functions.map((f) => {
        const share = data.mode === 'share';
        // Per request or as recorded: the cum itself; as a share: of the stage's total.
        const shares = f.points.map((p) => (p && p.total > 0 ? (share ? p.cum / p.total : p.cum) : null));
        // The height spans the values and, as a share with several profiles per stage, their spread.
        // (The spread is of shares, or per request; as recorded, none is drawn.)
        const spread = share || data.mode === 'per-request';
        const tops = [...shares, ...f.points.map((p) => (spread ? (p?.spread?.max ?? null) : null))].filter(
          (v): v is number => v !== null,
        );
        const range = { min: 0, max: tops.length > 0 ? Math.max(...tops) : 1 };
        const points = sparklinePoints(shares, W, H, 4, range);
        const first = shares.find((s) => s !== null) ?? null;
        const last = [...shares].reverse().find((s) => s !== null) ?? null;
        const shown = (v: number | null) => (v === null ? '—' : share ? formatShare(v) : formatValue(v, data.unit));
        return (
          <li key={f.name} className={f.name === selected ? 'traj-card selected' : 'traj-card'}>
            <button type="button" className="link-button fn-name" title={f.name} onClick={() => onSelect(f.name)}>
              {f.name}
            </button>
            <svg
              width={W}
              height={H}
              role="img"
              aria-label={`${f.name}: ${share ? 'share of total' : `cum (${printedUnit(first ?? 0, data.unit)})`} per stage`}
            >
              {/* With several profiles per stage: the range of the function's share across them. */}
              {f.points.map((p, i) => {
                if (!spread || !p?.spread || p.spread.n < 2) return null;
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
                    <title>{`${data.stages[i]?.name}: ${spreadText(p.spread.min)} – ${spreadText(p.spread.max)} over ${p.spread.n} profiles`}</title>
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
                  {p
                    ? share
                      ? formatShare(p.cum)
                      : `${formatValue(p.cum, data.unit)} (${formatShare(p.cum / (p.total || 1))})`
                    : '—'}
                  {p?.spread && p.spread.n > 1
                    ? ` · ${spreadText(p.spread.min)}–${spreadText(p.spread.max)} over ${p.spread.n} profiles`
                    : ''}
                </span>
              ))}
            </div>
            <div className="muted small">
              {shown(first)} → {shown(last)} cum
            </div>
          </li>
        );
      })}
    </ul>
  );
}
