import type { ChangePointMark, Trajectory as TrajectoryData } from '../lib/api.ts';
import { FIGURES } from '../../../server/src/api/labels.ts';
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
/** A stage where one or more change points start, and its x between that stage and the one before. */
interface ChangeAt {
  stageId: string;
  x: number;
  marks: ChangePointMark[];
  label: string;
}

/**
 * Where the stage table's change points fall on the trajectory's x axis (stage i at pad + i·step): halfway
 * between the last stage before the change and the first after it, one mark per stage however many figures
 * shift there. Marks whose stages the trajectory does not draw are left out.
 */
export function changeMarks(
  marks: readonly ChangePointMark[],
  stageIds: readonly string[],
  width: number,
  pad: number,
): ChangeAt[] {
  const n = stageIds.length;
  const out: ChangeAt[] = [];
  for (const m of marks) {
    const i = stageIds.indexOf(m.stageId);
    if (i < 1 || n < 2) continue;
    let at = out.find((c) => c.stageId === m.stageId);
    if (!at) {
      const x = (k: number) => pad + (k * (width - 2 * pad)) / (n - 1);
      at = { stageId: m.stageId, x: (x(i - 1) + x(i)) / 2, marks: [], label: '' };
      out.push(at);
    }
    at.marks.push(m);
    at.label = at.marks.map((c) => FIGURES[c.figure].short).join(', ');
  }
  return out;
}

function changeWords(m: ChangePointMark): string {
  return `${FIGURES[m.figure].label} ${m.direction === 'worse' ? 'worsens' : 'improves'} between ${m.previousStageName} and ${m.stageName}`;
}

export function Trajectory(props: {
  data: TrajectoryData;
  selected: string;
  onSelect: (name: string) => void;
  /** The stage table's change points: a vertical mark on every card where one starts. */
  changePoints?: readonly ChangePointMark[];
}) {
  const { data, selected, onSelect } = props;
  const W = 220;
  const H = 56;
  const changes = changeMarks(
    props.changePoints ?? [],
    data.stages.map((s) => s.stageId),
    W,
    4,
  );
  // A stage's spread across its profiles: per request when the points are, else of shares.
  const spreadText = (v: number) => (data.mode === 'per-request' ? formatValue(v, data.unit) : formatShare(v));
  return (
    <>
      {changes.length > 0 && (
        <p className="muted small trajectory-change-points">
          Change points (dashed lines):{' '}
          {changes
            .flatMap((c) => c.marks)
            .map((m, i) => (
              <span key={`${m.figure}-${m.stageId}`} data-figure={m.figure} data-stage-id={m.stageId}>
                {i > 0 ? '; ' : ''}
                {changeWords(m)}
              </span>
            ))}
          .
        </p>
      )}
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
                {changes.map((c) => (
                  <g
                    key={`cp-${c.stageId}`}
                    className="traj-change-point"
                    data-stage-id={c.stageId}
                    data-figures={c.marks.map((m) => m.figure).join(' ')}
                  >
                    <line x1={c.x} x2={c.x} y1={0} y2={H} />
                    <text x={c.x > W - 40 ? c.x - 2 : c.x + 2} y={8} textAnchor={c.x > W - 40 ? 'end' : 'start'}>
                      {c.label}
                    </text>
                    <title>{c.marks.map(changeWords).join('; ')}</title>
                  </g>
                ))}
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
    </>
  );
}
