import { sparklinePoints } from '../lib/charts.ts';

/** A tiny line of values with one highlighted point (e.g. QPS across stages, this stage marked). */
export function Sparkline(props: {
  values: (number | null)[];
  highlight?: number;
  label: string;
  width?: number;
  height?: number;
}) {
  const { values, highlight, label, width = 90, height = 22 } = props;
  const points = sparklinePoints(values, width, height);
  const coords = points ? points.split(' ') : [];
  const present = values.map((v, i) => (v === null ? -1 : i)).filter((i) => i >= 0);
  const hiIndex = highlight !== undefined ? present.indexOf(highlight) : -1;
  const hi = hiIndex >= 0 ? coords[hiIndex]?.split(',').map(Number) : undefined;
  return (
    <svg className="sparkline" width={width} height={height} role="img" aria-label={label}>
      {points && <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.5} />}
      {hi && <circle cx={hi[0]} cy={hi[1]} r={2.8} className="spark-dot" />}
    </svg>
  );
}
